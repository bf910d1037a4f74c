// Tests of the scheduler's one-shot timer (actors/wake_alarm.hpp): when it fires, and that
// it does not fire when disarmed or replaced (issue 29). Each "did not fire" check waits
// first for a later arming's fire, never on a sleep.
#include "actors/wake_alarm.hpp"

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/eventually.hpp"

using kinformer::actors::WakeAlarm;
using kinformer::testing::eventually;
using namespace std::chrono_literals;

namespace {

// The times at which the alarm fired, and on which thread.
class Fires {
 public:
  void record() {
    std::lock_guard<std::mutex> lock(mu_);
    times_.push_back(WakeAlarm::Clock::now());
    threads_.push_back(std::this_thread::get_id());
  }
  std::vector<WakeAlarm::Clock::time_point> times() const {
    std::lock_guard<std::mutex> lock(mu_);
    return times_;
  }
  std::vector<std::thread::id> threads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return threads_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<WakeAlarm::Clock::time_point> times_;
  std::vector<std::thread::id> threads_;
};

}  // namespace

TEST_CASE("an armed alarm fires once, on its own thread, at or after its deadline", "[scheduler][unit]") {
  Fires fires;
  WakeAlarm alarm([&] { fires.record(); });
  const auto first = WakeAlarm::Clock::now() + 5ms;
  alarm.arm(first);
  REQUIRE(eventually([&] { return fires.times().size() == 1; }, "the armed alarm did not fire", 10s));
  const auto second = WakeAlarm::Clock::now() + 5ms;
  alarm.arm(second);
  REQUIRE(eventually([&] { return fires.times().size() == 2; }, "the alarm armed again did not fire", 10s));
  const auto times = fires.times();
  CHECK(times[0] >= first);
  CHECK(times[1] >= second);  // no second fire for the first arming came before it
  CHECK(fires.threads()[0] != std::this_thread::get_id());
}

TEST_CASE("an alarm disarmed or re-armed later does not fire at its first deadline", "[scheduler][unit]") {
  Fires fires;
  WakeAlarm alarm([&] { fires.record(); });
  const auto start = WakeAlarm::Clock::now();
  alarm.arm(start + 100ms);
  SECTION("disarm()") { alarm.disarm(); }
  SECTION("arm() for a later deadline") { alarm.arm(start + 1h); }
  if (WakeAlarm::Clock::now() >= start + 100ms) {
    WARN("this thread was preempted past the first deadline before it could cancel it: nothing to judge");
    return;
  }
  // The fire for this later arming is the signal that the first deadline has passed.
  alarm.arm(start + 300ms);
  REQUIRE(eventually([&] { return !fires.times().empty(); }, "the alarm armed last did not fire", 10s));
  const auto times = fires.times();
  CHECK(times.size() == 1);
  CHECK(times[0] >= start + 300ms);  // not at the cancelled 100 ms
}

TEST_CASE("an alarm armed for a deadline already past fires at once", "[scheduler][unit]") {
  Fires fires;
  WakeAlarm alarm([&] { fires.record(); });
  alarm.arm(WakeAlarm::Clock::now() - 1s);
  CHECK(eventually([&] { return fires.times().size() == 1; }, "the alarm armed in the past did not fire", 10s));
}
