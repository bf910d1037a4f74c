// runtime/backoff.hpp
//
// Backoff: how long the Reflector waits between list/watch attempts — client-go
// 1.32's reflector back-off manager (informer-semantics.md §5.1): 800 ms, doubling,
// capped at 30 s, each wait stretched by up to +100 % jitter, back to 800 ms when
// the previous wait began more than 2 minutes ago.
//
// Contract
//   * next(now) returns d·(1 + jitter·r) where d is the current step and r the
//     injected random number in [0, 1); d starts at `initial`, is multiplied by
//     `factor` after each call and stays at `cap` once it reaches it.
//   * A call whose `now` is more than `reset_after` past the previous call's `now`
//     starts again from `initial` (so does the first call, and reset()).
// Threading: a plain value; one owner. Errors: none.
#pragma once

#include <chrono>
#include <functional>

namespace kinformer {

struct BackoffOptions {
  std::chrono::milliseconds initial{800};        // client-go 1.32 reflector default
  double factor = 2.0;
  std::chrono::milliseconds cap{30'000};
  double jitter = 1.0;                           // a wait lies in [d, d·(1 + jitter))
  std::chrono::milliseconds reset_after{120'000};  // quiet this long → start over
};

class Backoff {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  /// Uniform in [0, 1); called once per next() when jitter > 0.
  using Random = std::function<double()>;

  Backoff(BackoffOptions options, Random random);

  /// The wait that starts at `now`; advances the step.
  std::chrono::milliseconds next(TimePoint now);
  /// The next call returns a wait based on `initial` again.
  void reset() noexcept { started_ = false; }

 private:
  BackoffOptions options_;
  Random random_;
  std::chrono::milliseconds step_;  // the un-jittered wait of the next call
  TimePoint last_start_{};          // the `now` of the previous call; valid iff started_
  bool started_ = false;
};

}  // namespace kinformer
