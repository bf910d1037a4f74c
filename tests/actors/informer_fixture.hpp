// tests/actors/informer_fixture.hpp
//
// The informer's actor tests' fixture: tests/support/virtual_time.hpp's
// deterministic actor system (caf-0.17.md §11) plus requests whose answers may
// come later (parked pops).
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "tests/support/virtual_time.hpp"

namespace kinformer::testing {

/// VirtualTimeFixture plus request helpers for actors that answer later.
struct DeterministicFixture : VirtualTimeFixture {
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
