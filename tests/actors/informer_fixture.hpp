// tests/actors/informer_fixture.hpp
//
// A deterministic CAF fixture for the informer's actor tests (caf-0.17.md §11):
// the test_coordinator scheduler, a hidden scoped actor, and teardown that kills
// everything spawned through it so a failed REQUIRE cannot leave the test binary
// spinning in ~actor_system.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "actors/errors.hpp"

namespace kinformer::testing {

struct DeterministicFixture {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scoped_actor self;
  caf::scheduler::test_coordinator& sched;
  std::vector<caf::actor> spawned;

  static caf::actor_system_config& prepare(caf::actor_system_config& c) {
    c.set("scheduler.policy", caf::atom("testing"));
    c.set("logger.inline-output", true);
    actors::register_errors(c);
    return c;
  }

  DeterministicFixture()
      : sys(prepare(cfg)), self(sys, true), sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())) {}

  ~DeterministicFixture() {
    for (auto& hdl : spawned) caf::anon_send_exit(hdl, caf::exit_reason::kill);
    sched.run();
  }

  /// Remembers `hdl` for teardown and returns it.
  template <class Handle>
  Handle track(Handle hdl) {
    spawned.push_back(caf::actor_cast<caf::actor>(hdl));
    return hdl;
  }

  /// Runs messages only (no timers).
  void run() { sched.run(); }

  /// The answer to a request made by ask_later(), once it came.
  template <class T>
  struct Answer {
    std::optional<T> value;
    std::optional<caf::error> error;
    bool answered() const { return value.has_value() || error.has_value(); }
  };

  /// Sends a request from a helper actor and runs the messages; the answer may
  /// come later (a parked pop), so it lands in the returned slot.
  template <class T, class Handle, class... Ts>
  std::shared_ptr<Answer<T>> ask_later(const Handle& hdl, Ts... xs) {
    auto answer = std::make_shared<Answer<T>>();
    sys.spawn([=](caf::event_based_actor* asker) {
      asker->request(hdl, caf::infinite, xs...)
          .then([=](const T& x) { answer->value = x; }, [=](caf::error& err) { answer->error = err; });
    });
    run();
    return answer;
  }

  /// A request whose answer comes at once; fails the test otherwise.
  template <class T, class Handle, class... Ts>
  T ask(const Handle& hdl, Ts... xs) {
    auto answer = ask_later<T>(hdl, xs...);
    if (!answer->value) FAIL("no immediate answer" << (answer->error ? ": " + sys.render(*answer->error) : ""));
    return *answer->value;
  }
};

}  // namespace kinformer::testing
