// tests/support/eventually.hpp
//
// eventually(pred, why): polls a condition another thread makes true, and fails the
// test saying what it waited for when the deadline passes (style.md §6.5).
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

namespace kinformer::testing {

/// Polls `done` until true (true), or fails the test with `why` after `deadline`.
template <class Pred>
bool eventually(Pred done, const std::string& why,
                std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) {
      FAIL_CHECK("timed out waiting: " << why);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace kinformer::testing
