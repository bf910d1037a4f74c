// tests/support/eventually.hpp
//
// eventually(pred, why): the tests' one poll for a condition another thread makes
// true. When the deadline passes it fails the test saying what it waited for
// (style.md §5 "Tests": every wait says what it waited for). It returns whether the
// condition came true, so that a caller can REQUIRE it to stop the test there.
// A "nothing arrived" check waits with it on a positive signal first (a later marker
// that did arrive, a counter the actor bumps), never on a sleep.
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

namespace kinformer::testing {

/// Polls `done` every millisecond until true (true), or fails the test with `why` after `deadline`.
template <class Pred>
bool eventually(Pred done, const std::string& why,
                std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) {
      FAIL_CHECK("gave up waiting after " << deadline.count() << " ms: " << why);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace kinformer::testing
