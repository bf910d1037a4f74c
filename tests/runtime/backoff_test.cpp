// Tests for runtime/backoff.hpp: client-go 1.32's reflector back-off numbers.
#include "runtime/backoff.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

namespace kinformer {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using TimePoint = Backoff::TimePoint;

std::vector<long> waits(Backoff& backoff, int n, TimePoint start, milliseconds gap) {
  std::vector<long> out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<long>(backoff.next(start + gap * i).count()));
  return out;
}

TEST_CASE("back-off doubles from 800 ms and stays at the 30 s cap", "[backoff][item-37][unit]") {
  Backoff backoff({}, [] { return 0.0; });
  CHECK(waits(backoff, 8, TimePoint{}, milliseconds(1000)) ==
        std::vector<long>{800, 1600, 3200, 6400, 12800, 25600, 30000, 30000});
}

TEST_CASE("jitter stretches a wait by up to the factor of the random number", "[backoff][unit]") {
  double r = 0.5;
  Backoff backoff({}, [&] { return r; });
  CHECK(backoff.next(TimePoint{}) == milliseconds(1200));
  r = 0.999;
  const auto second = backoff.next(TimePoint{} + seconds(1));
  CHECK(second >= milliseconds(3196));
  CHECK(second < milliseconds(3200));
}

TEST_CASE("back-off starts over after two quiet minutes", "[backoff][unit]") {
  Backoff backoff({}, [] { return 0.0; });
  const TimePoint t0{};
  CHECK(backoff.next(t0) == milliseconds(800));
  CHECK(backoff.next(t0 + seconds(1)) == milliseconds(1600));
  CHECK(backoff.next(t0 + seconds(1) + seconds(120)) == milliseconds(3200));  // exactly 2 min: no reset
  CHECK(backoff.next(t0 + seconds(242)) == milliseconds(800));
  backoff.next(t0 + seconds(243));
  backoff.reset();
  CHECK(backoff.next(t0 + seconds(244)) == milliseconds(800));
}

}  // namespace
}  // namespace kinformer
