#include "actors/handler_supervisor.hpp"

#include <algorithm>

namespace kinformer::actors {
namespace {

Backoff backoff_of(const SupervisionOptions& options) {
  BackoffOptions backoff;
  backoff.initial = std::min(options.backoff_initial, options.backoff_cap);
  backoff.factor = 2.0;
  backoff.cap = options.backoff_cap;
  backoff.jitter = 0.0;
  // The longest quiet time steady_clock can tell: a handler's back-off starts over on
  // success only, however long ago its last failure was.
  backoff.reset_after = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::duration::max());
  return Backoff(backoff, nullptr);
}

}  // namespace

HandlerSupervisor::HandlerSupervisor(const SupervisionOptions& options)
    : options_(options), backoff_(backoff_of(options)) {}

std::optional<std::string> HandlerSupervisor::refuse_restart(TimePoint now) {
  while (!restarts_.empty() && now - restarts_.front() > options_.restart_window) restarts_.pop_front();
  if (restarts_.size() >= options_.max_restarts)
    return "more than " + std::to_string(options_.max_restarts) + " restarts within " +
           std::to_string(options_.restart_window.count()) + " ms";
  restarts_.push_back(now);
  return std::nullopt;
}

void HandlerSupervisor::update(const SupervisionOptions& options) {
  const bool same_backoff =
      options.backoff_initial == options_.backoff_initial && options.backoff_cap == options_.backoff_cap;
  options_ = options;
  if (!same_backoff) backoff_ = backoff_of(options);
}

}  // namespace kinformer::actors
