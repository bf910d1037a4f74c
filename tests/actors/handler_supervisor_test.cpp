// Tests of a registration's supervision bookkeeping (actors/handler_supervisor.hpp):
// the back-off and restart intensity actors/processor.hpp documents ("Supervision").
#include "actors/handler_supervisor.hpp"

#include <chrono>
#include <vector>

#include <catch2/catch.hpp>

using kinformer::actors::HandlerSupervisor;
using kinformer::actors::SupervisionOptions;
using namespace std::chrono_literals;
using Waits = std::vector<std::chrono::milliseconds>;

namespace {

const HandlerSupervisor::TimePoint start{};

Waits backoffs(HandlerSupervisor& supervisor, int n) {
  Waits waits;
  for (int i = 0; i < n; ++i) waits.push_back(supervisor.next_backoff(start + std::chrono::hours(i)));
  return waits;
}

}  // namespace

TEST_CASE("the back-off doubles from its initial wait up to its cap without jitter",
          "[processor][supervision][unit]") {
  SupervisionOptions options;  // 1 s doubling to 16 s
  HandlerSupervisor supervisor(options);
  CHECK(backoffs(supervisor, 7) == Waits{1s, 2s, 4s, 8s, 16s, 16s, 16s});
}

TEST_CASE("a batch handled without failure starts the back-off over", "[processor][supervision][unit]") {
  HandlerSupervisor supervisor(SupervisionOptions{});
  backoffs(supervisor, 3);
  supervisor.handled();
  CHECK(backoffs(supervisor, 2) == Waits{1s, 2s});
}

TEST_CASE("a replaced registration keeps its back-off unless the back-off options changed",
          "[processor][supervision][unit]") {
  SupervisionOptions options;
  HandlerSupervisor supervisor(options);
  backoffs(supervisor, 2);
  options.retries = 7;
  supervisor.update(options);
  CHECK(supervisor.next_backoff(start) == 4s);
  options.backoff_initial = 100ms;
  supervisor.update(options);
  CHECK(supervisor.next_backoff(start) == 100ms);
}

TEST_CASE("restarts beyond max_restarts within the window are refused, older ones age out",
          "[processor][supervision][unit]") {
  SupervisionOptions options;
  options.max_restarts = 2;
  options.restart_window = 10s;
  HandlerSupervisor supervisor(options);
  CHECK_FALSE(supervisor.refuse_restart(start));
  CHECK_FALSE(supervisor.refuse_restart(start + 1s));
  auto refused = supervisor.refuse_restart(start + 2s);
  REQUIRE(refused);
  CHECK(*refused == "more than 2 restarts within 10000 ms");
  CHECK_FALSE(supervisor.refuse_restart(start + 11s));  // the first one aged out
}
