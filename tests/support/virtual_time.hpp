// tests/support/virtual_time.hpp
//
// VirtualTimeFixture: an actor system on CAF's test_coordinator (caf-0.17.md §11):
// no worker threads, messages run only in run(), timers fire only when the test
// advances virtual time. Everything spawned through spawn() is killed at teardown,
// so an actor with a pending timer cannot make ~actor_system spin.
#pragma once

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "actors/errors.hpp"

namespace kinformer::testing {

class VirtualTimeFixture {
 public:
  VirtualTimeFixture()
      : sys(prepare(cfg)), self(sys, true), sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())) {}

  ~VirtualTimeFixture() {
    for (auto& hdl : spawned_) caf::anon_send_exit(hdl, caf::exit_reason::kill);
    sched.run();
  }

  /// Registers `hdl` for the teardown kill and returns it.
  template <class Handle>
  Handle track(Handle hdl) {
    spawned_.push_back(caf::actor_cast<caf::actor>(hdl));
    return hdl;
  }

  /// Runs every queued message (timers do not fire); returns how many ran.
  std::size_t run() { return sched.run(); }

  /// Moves virtual time forward in `step`s up to `total`, running messages after each.
  void advance(std::chrono::milliseconds total, std::chrono::milliseconds step = std::chrono::milliseconds(100)) {
    for (std::chrono::milliseconds done{0}; done < total; done += step) {
      sched.advance_time(std::min(step, total - done));
      sched.run();
    }
  }

  /// The next pending timer's delay from now; zero if none is pending.
  std::chrono::milliseconds next_timeout() {
    if (!sched.has_pending_timeout()) return std::chrono::milliseconds(0);
    auto& clock = sched.clock();
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock.schedule().begin()->first - clock.now());
  }

  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scoped_actor self;
  caf::scheduler::test_coordinator& sched;

 private:
  static caf::actor_system_config& prepare(caf::actor_system_config& c) {
    c.set("scheduler.policy", caf::atom("testing"));
    c.set("logger.inline-output", true);
    actors::register_errors(c);
    return c;
  }

  std::vector<caf::actor> spawned_;
};

}  // namespace kinformer::testing
