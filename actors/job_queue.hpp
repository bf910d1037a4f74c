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
// as soon as its current job ends.
//
// Contract
//   * push(job, from_worker = false), from outside the workers (an I/O thread, the
//     timer, main): wakes one sleeping worker, as sharing does.
//   * push(job, from_worker = true), from a job running on a worker: wakes a sleeping
//     worker only when there is backlog: more than `backlog_jobs` jobs queued, or the
//     oldest queued one waiting longer than `backlog_wait`.
//   * take(): the oldest job; blocks while the queue is empty. It checks the same
//     backlog rule for the jobs it leaves, so a backlog built by silent pushes gets a
//     helper when the next job starts.
//   * The latency price: a job pushed silently waits until its pusher's current job
//     ends (CAF: one resume of an actor, i.e. its mailbox up to
//     scheduler.max-throughput messages), also while that thread is preempted, unless
//     a later push or take finds a backlog.
//   * FIFO order among all jobs.
// Threading: every member is thread-safe. Jobs are handed over under one mutex, so
//   ThreadSanitizer sees the hand-over (libcaf_core is not instrumented).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

#include <caf/fwd.hpp>

namespace kinformer::actors {

class JobQueue {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    /// Queued jobs beyond which a push or take wakes a sleeping worker. Default 4:
    /// with 1 or 2, the other worker woke as often as under sharing (actors/scheduler.cpp).
    std::size_t backlog_jobs = 4;
    /// Age of the oldest queued job beyond which a push or take wakes a sleeping
    /// worker. Default 200 µs: with 20 or 50 µs, the other worker woke as often as
    /// under sharing (actors/scheduler.cpp).
    std::chrono::microseconds backlog_wait{200};
  };

  JobQueue() : JobQueue(Options{}) {}
  explicit JobQueue(Options options) : options_(options) {}
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  /// Queues `job`; see the contract for whom it wakes. Never blocks beyond the mutex.
  void push(caf::resumable* job, bool from_worker = false);

  /// The oldest job; blocks while there is none.
  [[nodiscard]] caf::resumable* take();

  /// Calls `f` on every queued job and empties the queue (CAF's shutdown clean-up).
  void drain(const std::function<void(caf::resumable*)>& f);

  /// Workers blocked in take() now.
  [[nodiscard]] std::size_t sleeping() const;
  /// How many times a push or take woke a sleeping worker so far.
  [[nodiscard]] std::uint64_t wakeups() const;

 private:
  struct Queued {
    caf::resumable* job;
    Clock::time_point since;
  };

  void wake_one_if_backlog_locked(Clock::time_point now);

  const Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Queued> queue_;  // guarded by mu_; oldest first
  std::size_t sleeping_ = 0;  // guarded by mu_; workers in take()'s wait
  std::uint64_t wakeups_ = 0; // guarded by mu_
};

}  // namespace kinformer::actors
