// actors/handler_supervisor.hpp
//
// HandlerSupervisor: one registration's supervision bookkeeping in the Processor
// (actors/processor.hpp "Supervision"; SupervisionOptions in actors/registration.hpp):
// how long to back off before a restart or a retry, and whether one more restart
// is allowed. The Processor decides what a failure means; this only counts.
//
// Contract
//   * next_backoff(now) returns backoff_initial, then doubles up to backoff_cap, on
//     runtime's Backoff (runtime/backoff.hpp) without jitter and never started over
//     by quiet time; handled() starts it over (a batch came back with nothing failed).
//     An initial above the cap counts as the cap.
//   * refuse_restart(now) says why, when max_restarts restarts already lie within
//     restart_window before `now` (the registration must fail then); otherwise it
//     counts this restart and returns nothing.
//   * update(options) follows a replaced registration: the back-off starts over only
//     when its initial or cap changed; the restarts counted stay.
// Threading: a plain value; one owner (the Processor actor). Errors: none.
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <string>

#include "actors/registration.hpp"
#include "runtime/backoff.hpp"

namespace kinformer::actors {

class HandlerSupervisor {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  explicit HandlerSupervisor(const SupervisionOptions& options = {});

  /// The wait before the next restart or retry; each call doubles the next one, up to the cap.
  std::chrono::milliseconds next_backoff(TimePoint now) { return backoff_.next(now); }
  /// A batch was handled without failure: the next back-off is backoff_initial again.
  void handled() noexcept { backoff_.reset(); }
  /// Why one more restart at `now` is refused, or nothing (and the restart is counted).
  [[nodiscard]] std::optional<std::string> refuse_restart(TimePoint now);
  /// Takes a replaced registration's options (see the contract).
  void update(const SupervisionOptions& options);

 private:
  SupervisionOptions options_;
  Backoff backoff_;
  std::deque<TimePoint> restarts_;  // the restarts counted, oldest first; pruned to restart_window
};

}  // namespace kinformer::actors
