// tests/actors/live_fixture.hpp
//
// A real-scheduler fixture for the SharedInformer tests: two worker threads, the
// fake source (tests/support/fake_source.hpp), a thread-safe event log, and
// tests/support/eventually.hpp's poll.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <catch2/catch.hpp>

#include "actors/errors.hpp"
#include "actors/scheduler.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/fake_source.hpp"

namespace kinformer::testing {

/// Lines appended from handler actors, read from the test thread.
class EventLog {
 public:
  void add(std::string line) {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.push_back(std::move(line));
  }
  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;  // guarded by mu_
};

struct LiveFixture {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  std::shared_ptr<FakeSource> source = std::make_shared<FakeSource>();

  static caf::actor_system_config& prepare(caf::actor_system_config& c) {
    actors::configure_scheduler(c);  // lazy_wake: jobs change threads under JobQueue's mutex, which TSan sees
    actors::register_errors(c);
    return c;
  }

  LiveFixture() : sys(prepare(cfg)) {}
};

}  // namespace kinformer::testing
