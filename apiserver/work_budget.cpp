#include "apiserver/work_budget.hpp"

#include <ctime>
#include <string>

namespace kinformer::apiserver {

namespace {

// Reading the thread's CPU clock is a system call (~0.3 µs); a unit is a step of tens
// of nanoseconds, so the clock is read about every 100 µs of work.
constexpr std::size_t units_per_check = 4096;

}  // namespace

WorkBudget::WorkBudget(const WorkLimits& limits)
    : bounded_(true),
      per_byte_ns_(limits.per_byte.count()),
      allowed_ns_(std::chrono::nanoseconds(limits.base).count()) {}

WorkBudget WorkBudget::unbounded() { return WorkBudget(); }

void WorkBudget::allow_bytes(std::size_t bytes) { allowed_ns_ += per_byte_ns_ * static_cast<std::int64_t>(bytes); }

bool WorkBudget::charge(std::size_t units) {
  if (exhausted_) return false;
  if (!bounded_) return true;
  if (start_ns_ < 0) start_ns_ = thread_cpu_ns();
  units_since_check_ += units;
  if (units_since_check_ < units_per_check) return true;
  units_since_check_ = 0;
  if (thread_cpu_ns() - start_ns_ > allowed_ns_) exhausted_ = true;
  return !exhausted_;
}

ApiError WorkBudget::error() const {
  ApiError error = ApiError::too_large(0);
  error.message = "the request needs more work than the server spends on a request of its size (" +
                  std::to_string(allowed_ns_ / 1000000) +
                  " ms of CPU time); split it into smaller requests";
  return error;
}

std::int64_t WorkBudget::thread_cpu_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

}  // namespace kinformer::apiserver
