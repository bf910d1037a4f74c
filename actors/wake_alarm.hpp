// actors/wake_alarm.hpp
//
// WakeAlarm: the one-shot timer behind JobQueue's bound on how long a job waits behind
// a busy worker (actors/job_queue.hpp, issue 29), after Go's sysmon.
//
// Why a timerfd and not a thread in a timed condition-variable wait: the queue arms the
// timer whenever a job is left behind a running worker, a few times per informer event.
// A waiting thread learns a new deadline only by being woken, a context switch per arming,
// which is what the queue exists to save. timerfd_settime() is one system call and wakes
// nobody; the alarm's thread runs only when a deadline passes while still armed.
//
// Contract
//   * arm(deadline): `on_fire` runs once on the alarm's own thread after `deadline`
//     (steady_clock), unless disarm() or another arm() comes first; an arm() replaces
//     the deadline. A deadline already past fires at once.
//   * disarm(): no call for the current arming, unless it has already begun or its
//     expiry was already read; `on_fire` must therefore tolerate a late call.
//   * Never armed, the thread sleeps in read() without a timeout: an idle alarm costs no CPU.
//   * The destructor stops and joins the thread; `on_fire` must not destroy the alarm.
// Threading: arm() and disarm() are thread-safe (the kernel orders them); `on_fire` runs
//   on the thread named "job_queue.alarm", never two at a time.
// Errors: throws std::system_error when the timerfd or the thread cannot be created.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace kinformer::actors {

class WakeAlarm {
 public:
  using Clock = std::chrono::steady_clock;

  explicit WakeAlarm(std::function<void()> on_fire);
  ~WakeAlarm();
  WakeAlarm(const WakeAlarm&) = delete;
  WakeAlarm& operator=(const WakeAlarm&) = delete;

  /// Fires once at `deadline`; replaces an earlier deadline. One system call, wakes nobody.
  void arm(Clock::time_point deadline);
  /// Cancels the current arming. One system call, wakes nobody.
  void disarm();

 private:
  void run();
  void set(Clock::time_point deadline);

  const std::function<void()> on_fire_;
  const int fd_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;  // started last, after fd_ exists
};

}  // namespace kinformer::actors
