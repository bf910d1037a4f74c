// actors/job_queue.hpp
//
// JobQueue: the run queue of kinformer's CAF scheduler (actors/scheduler.hpp), one
// queue shared by all workers that wakes a sleeping worker only when a job would
// otherwise wait (issue 29).
//
// Why: CAF's "sharing" policy wakes an idle worker on every enqueue. An informer event
// crosses five actors in about nine messages, each a job of a few µs, and those
// wake-ups, not the jobs, were about half of the informer's CPU (actors/scheduler.cpp has the
// profile). Here a job a running worker creates stays with that worker, which takes it
// as soon as its current job ends. So that a job queued behind one that blocks (a handler
// that sleeps, the Processor's fan-out to two handlers) does not wait for it, an alarm
// (actors/wake_alarm.hpp, after Go's sysmon) wakes a sleeping worker for a job that has
// waited longer than `left_behind_wait`, unless the job running is a brief one.
//
// Contract
//   * push(job, from_worker = false), from outside the workers (an I/O thread, the
//     timer, main): wakes one sleeping worker, as sharing does: the home worker when it
//     sleeps (below).
//   * push(job, from_worker = true), from a job running on a worker: wakes a sleeping
//     worker only when there is backlog: more than `backlog_jobs` jobs queued, or the
//     oldest queued one waiting longer than `backlog_wait`.
//   * The home worker: the one worker that calls take(/*home=*/true). A push from
//     outside the workers wakes it first: it shares a CPU with the I/O threads
//     (runtime/home_cpu.hpp), so the wake-up crosses no CPU. Every other wake-up (backlog,
//     alarm, MayBlock) goes to another sleeping worker first, so that help runs on
//     another CPU than the home one. Without a home worker, all workers are alike.
//   * take(): the oldest job; blocks while the queue is empty. It checks the same
//     backlog rule for the jobs it leaves, so a backlog built by silent pushes gets a
//     helper when the next job starts.
//   * Brief jobs: declare_brief_type(typeid(*self)) says that actors of that dynamic type
//     return to the scheduler within microseconds (the informer's own actors,
//     every_actor.hpp's declare_brief()), except inside a MayBlock scope (a handler's user
//     code). While a worker runs such a job outside a MayBlock scope, what it pushes and
//     what its take left queued stays with it: no alarm, no wake-up, since it takes
//     those jobs next. Entering a MayBlock scope protects what is queued as below.
//     An actor that does not declare itself is never brief.
//   * Jobs left behind: when a push or take leaves jobs queued beside a sleeping worker
//     without waking it, and the worker's job is not brief, the alarm is armed for the
//     oldest job's time plus `left_behind_wait`. If that job is still queued then (its
//     pusher's current job still runs, or its thread is preempted) and a worker sleeps,
//     the alarm wakes it, and re-arms while jobs stay queued beside a sleeper. A worker
//     that finds the queue empty disarms it. So a queued job waits at most about
//     `left_behind_wait` (plus the alarm thread's and the woken worker's scheduling)
//     while a worker sleeps, or until a brief job's worker takes it.
//   * Idle costs nothing: with the queue empty the alarm is disarmed and every thread
//     sleeps without a timeout. Arming and disarming are one system call each and wake
//     no thread; the alarm thread runs only when a deadline passes.
//   * A worker is woken after the queue's mutex is released, so that it does not wake
//     only to block on that mutex.
//   * FIFO order among all jobs.
// Threading: every member is thread-safe. Jobs are handed over under one mutex, so
//   ThreadSanitizer sees the hand-over (libcaf_core is not instrumented). A worker's
//   brief state is thread-local: set by take(), changed by MayBlock.
// Errors: the constructor throws std::system_error when the alarm cannot be created.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <typeinfo>

#include <semaphore.h>

#include <caf/fwd.hpp>

#include "actors/wake_alarm.hpp"

namespace kinformer::actors {

class JobQueue {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    /// Queued jobs beyond which a push or take wakes a sleeping worker. Default 4:
    /// with 1 or 2, the other worker woke as often as under sharing (actors/scheduler.cpp).
    std::size_t backlog_jobs = 4;
    /// Age of the oldest queued job beyond which a push or take wakes a sleeping
    /// worker: in a flood, the second worker joins once jobs wait this long. Default
    /// 50 µs: with 200 µs, since brief jobs arm no alarm, floods ran on one worker
    /// (bench_pipeline's informer_pipeline 363k against sharing's 538k events/s); with
    /// 50 µs 545k, and still 2.3 context switches per event at 1000 writes/s
    /// (actors/scheduler.cpp). Stop 37, before brief jobs, measured 20 and 50 µs waking
    /// the other worker as often as sharing.
    std::chrono::microseconds backlog_wait{50};
    /// Age beyond which a job queued beside a sleeping worker wakes it through the
    /// alarm. Default 1 ms: see actors/scheduler.cpp for what was measured.
    std::chrono::microseconds left_behind_wait{1000};
  };

  /// Selects the constructor whose caller plays the alarm (tests): no alarm thread; the
  /// caller reads armed_until() and calls on_alarm() itself.
  struct ManualAlarm {};

  JobQueue() : JobQueue(Options{}) {}
  /// With its own alarm thread (WakeAlarm).
  explicit JobQueue(Options options);
  JobQueue(Options options, ManualAlarm) : options_(options) {}
  /// Clears the destroying thread's worker state if it last took a job from this queue
  /// (tests take jobs on their own thread); a worker thread must not outlive its queue.
  ~JobQueue();
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  /// Queues `job`; see the contract for whom it wakes. Never blocks beyond the mutex.
  void push(caf::resumable* job, bool from_worker = false);

  /// The oldest job; blocks while there is none. `home`: the caller is the home worker
  /// (one thread at most).
  [[nodiscard]] caf::resumable* take(bool home = false);

  /// Jobs of this dynamic type (typeid of the resumable) are brief; see the contract.
  /// Idempotent. At most 64 types: more throws std::length_error.
  static void declare_brief_type(const std::type_info& type);
  /// Whether `type` was declared brief.
  [[nodiscard]] static bool is_brief_type(const std::type_info& type) noexcept;

  /// The worker's job may block from construction to destruction (user code inside a
  /// brief job): what is queued beside a sleeper gets the alarm (or a helper, when there
  /// is backlog) now, and pushes in the scope arm it as a non-brief job's do. Nests; on a
  /// thread that is not a worker of a JobQueue it does nothing.
  class MayBlock {
   public:
    MayBlock();
    ~MayBlock();
    MayBlock(const MayBlock&) = delete;
    MayBlock& operator=(const MayBlock&) = delete;

   private:
    bool was_brief_;
  };

  /// Calls `f` on every queued job and empties the queue (CAF's shutdown clean-up).
  void drain(const std::function<void(caf::resumable*)>& f);

  /// Workers blocked in take() now.
  [[nodiscard]] std::size_t sleeping() const;
  /// How many times a push, take or the alarm woke a sleeping worker so far.
  [[nodiscard]] std::uint64_t wakeups() const;

  /// When the alarm is armed for; nothing while it is disarmed.
  [[nodiscard]] std::optional<Clock::time_point> armed_until() const;
  /// The alarm's expiry: wakes a sleeping worker if the oldest job is older than
  /// `left_behind_wait` at `now`, and re-arms while jobs stay queued beside a sleeper.
  /// A call for a deadline since disarmed or moved later does nothing.
  void on_alarm(Clock::time_point now);

 private:
  struct Queued {
    caf::resumable* job;
    Clock::time_point since;
  };

  // Whether a worker is to be woken (after the mutex is released).
  bool backlog_locked(Clock::time_point now);
  // Arms the alarm, or returns true when a worker is to be woken for backlog instead.
  bool protect_left_behind_locked(Clock::time_point now);
  class Wakeup;
  enum class Prefer { home, other };
  // Picks a sleeping worker (the preferred kind when one sleeps), counts the wake-up and
  // takes it out of sleeping_; post the Wakeup returned after the unlock.
  Wakeup* wake_one_locked(Prefer prefer);

  // Where sleeping workers wait: a POSIX semaphore. post() costs one system call, and
  // only when a worker waits; a woken worker returns without the mutex. (A
  // std::condition_variable re-takes the mutex marked contended, so that every unlock
  // after a wait-up cost a futex wake: one system call per event, issue 29.)
  class Wakeup {
   public:
    Wakeup();
    ~Wakeup();
    Wakeup(const Wakeup&) = delete;
    Wakeup& operator=(const Wakeup&) = delete;
    void post();
    void wait();

   private:
    sem_t sem_;
  };
  void arm_locked(Clock::time_point deadline);
  void disarm_locked();

  const Options options_;
  mutable std::mutex mu_;
  Wakeup wakeup_;       // the workers but the home one
  Wakeup home_wakeup_;  // the home worker
  std::deque<Queued> queue_;  // guarded by mu_; oldest first
  std::size_t sleeping_ = 0;  // guarded by mu_; workers in take()'s wait, not yet woken
  bool home_sleeping_ = false;  // guarded by mu_; the home worker is one of sleeping_
  std::atomic<std::uint64_t> wakeups_{0};
  // guarded by mu_; set iff the alarm is armed, to its deadline
  std::optional<Clock::time_point> armed_until_;
  // Last: destroyed first, so that its thread stops before the state it reads goes.
  // Null with ManualAlarm.
  std::unique_ptr<WakeAlarm> alarm_;
};

}  // namespace kinformer::actors
