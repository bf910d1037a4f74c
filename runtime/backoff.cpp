#include "runtime/backoff.hpp"

#include <algorithm>
#include <utility>

namespace kinformer {

Backoff::Backoff(BackoffOptions options, Random random)
    : options_(options), random_(std::move(random)), step_(options.initial) {}

std::chrono::milliseconds Backoff::next(TimePoint now) {
  if (!started_ || now - last_start_ > options_.reset_after) step_ = options_.initial;
  started_ = true;
  last_start_ = now;
  const auto step = step_;
  const auto grown = std::chrono::duration<double, std::milli>(step_) * options_.factor;
  step_ = grown >= std::chrono::duration<double, std::milli>(options_.cap)
              ? options_.cap
              : std::chrono::duration_cast<std::chrono::milliseconds>(grown);
  if (options_.jitter <= 0 || !random_) return step;
  const double stretch = options_.jitter * std::clamp(random_(), 0.0, 1.0);
  return step + std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::duration<double, std::milli>(step) * stretch);
}

}  // namespace kinformer
