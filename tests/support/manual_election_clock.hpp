// tests/support/manual_election_clock.hpp
//
// ManualElectionClock: an ElectionClock (runtime/leader_election.hpp) whose time
// moves only when the test calls advance(); due tasks then run on the test's
// thread, in due order. With it a leader-election test steps through 15 s leases
// in milliseconds and reads who leads at every instant.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <utility>

#include "runtime/leader_election.hpp"

namespace kinformer::testing {

class ManualElectionClock final : public ElectionClock {
 public:
  std::chrono::system_clock::time_point now() const override {
    std::lock_guard lock(mu_);
    return now_;
  }

  void after(std::chrono::milliseconds delay, std::function<void()> task) override {
    std::lock_guard lock(mu_);
    tasks_.emplace(now_ + delay, std::move(task));
  }

  /// Moves time forward by `step`, running every task that falls due (tasks those
  /// tasks add run too when due within the step).
  void advance(std::chrono::milliseconds step) {
    std::unique_lock lock(mu_);
    const auto until = now_ + step;
    while (!tasks_.empty() && tasks_.begin()->first <= until) {
      auto due = tasks_.begin()->first;
      auto task = std::move(tasks_.begin()->second);
      tasks_.erase(tasks_.begin());
      if (due > now_) now_ = due;
      lock.unlock();
      task();
      lock.lock();
    }
    now_ = until;
  }

  /// Elapsed virtual time since construction.
  std::chrono::milliseconds elapsed() const {
    std::lock_guard lock(mu_);
    return std::chrono::duration_cast<std::chrono::milliseconds>(now_ - start_);
  }

 private:
  mutable std::mutex mu_;
  const std::chrono::system_clock::time_point start_{std::chrono::seconds(1'800'000'000)};
  std::chrono::system_clock::time_point now_{start_};                                  // guarded by mu_
  std::multimap<std::chrono::system_clock::time_point, std::function<void()>> tasks_;  // guarded by mu_
};

}  // namespace kinformer::testing
