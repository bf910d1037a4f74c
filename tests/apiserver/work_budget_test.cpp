// Issue 33: WorkBudget, the CPU time a request may spend in the patch engines and
// validation (apiserver/work_budget.hpp).
#include <chrono>
#include <ctime>

#include <catch2/catch.hpp>

#include "apiserver/work_budget.hpp"

using kinformer::apiserver::WorkBudget;
using kinformer::apiserver::WorkLimits;
using namespace std::chrono_literals;

namespace {

double thread_cpu_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

// Charges `budget` one unit per step of busy work until it refuses (true) or `cap` ms of
// CPU time passed (false: the budget never ran out).
bool spend_until_refused(WorkBudget& budget, double cap_ms) {
  const double start = thread_cpu_ms();
  volatile unsigned sink = 0;
  while (thread_cpu_ms() - start < cap_ms) {
    for (unsigned i = 0; i < 64; ++i) sink = sink + i;
    if (!budget.charge()) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a budget runs out after its base CPU time and stays spent", "[apiserver][issue-33][unit]") {
  WorkBudget budget(WorkLimits{20ms, 0ns});
  const double start = thread_cpu_ms();
  REQUIRE(spend_until_refused(budget, 2000));
  const double spent = thread_cpu_ms() - start;
  CHECK(spent >= 20);
  CHECK(spent < 200);  // a clock read every 4096 units of a few ns each
  CHECK(budget.exhausted());
  CHECK_FALSE(budget.charge());
  CHECK(budget.error().code == 413);
  CHECK_THAT(budget.error().message, Catch::Contains("20 ms of CPU time"));
}

TEST_CASE("the bytes a request brings buy it time in proportion", "[apiserver][issue-33][unit]") {
  WorkBudget budget(WorkLimits{1ms, 1000ns});
  budget.allow_bytes(40000);  // + 40 ms
  const double start = thread_cpu_ms();
  REQUIRE(spend_until_refused(budget, 2000));
  CHECK(thread_cpu_ms() - start >= 41);
  CHECK_THAT(budget.error().message, Catch::Contains("41 ms"));
}

TEST_CASE("an unbounded budget never runs out", "[apiserver][issue-33][unit]") {
  auto budget = WorkBudget::unbounded();
  CHECK_FALSE(spend_until_refused(budget, 50));
  CHECK_FALSE(budget.exhausted());
}
