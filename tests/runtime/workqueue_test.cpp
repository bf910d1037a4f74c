// Tests of the work queue (runtime/workqueue.hpp), with a fake clock where time
// matters and real threads where blocking does (client-go util/workqueue tests).
#include "runtime/workqueue.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/eventually.hpp"
#include "tests/support/metrics_text.hpp"

using kinformer::WorkQueue;
using kinformer::WorkQueueOptions;
using kinformer::testing::eventually;
using namespace std::chrono_literals;

namespace {

/// A clock the test moves by hand.
struct FakeClock {
  std::shared_ptr<WorkQueue::Clock::time_point> t = std::make_shared<WorkQueue::Clock::time_point>();
  std::function<WorkQueue::Clock::time_point()> fn() const {
    auto now = t;
    return [now] { return *now; };
  }
  void step(WorkQueue::Clock::duration d) { *t += d; }
};

WorkQueueOptions fake(const FakeClock& clock) {
  WorkQueueOptions options;
  options.now = clock.fn();
  return options;
}

}  // namespace

// upstream: queue_test.go TestCollapse, TestBasic
TEST_CASE("a key added twice before get is handed out once", "[workqueue][item-61][unit]") {
  WorkQueue queue;
  queue.add("a");
  queue.add("a");
  queue.add("b");
  CHECK(queue.len() == 2);
  CHECK(queue.try_get() == std::optional<std::string>("a"));
  CHECK(queue.try_get() == std::optional<std::string>("b"));
  CHECK_FALSE(queue.try_get());
}

// upstream: TestAddWhileProcessing, TestCollapseWhileProcessing, TestReinsert
TEST_CASE("a key added while processing is handed out again only after done", "[workqueue][item-62][unit]") {
  WorkQueue queue;
  queue.add("a");
  auto key = queue.try_get();
  REQUIRE(key == std::optional<std::string>("a"));
  queue.add("a");
  queue.add("a");
  CHECK(queue.len() == 0);
  CHECK_FALSE(queue.try_get());  // never twice at once
  queue.done("a");
  CHECK(queue.len() == 1);
  CHECK(queue.try_get() == std::optional<std::string>("a"));
  queue.done("a");
  CHECK_FALSE(queue.try_get());
}

// upstream: TestQueueDrainageUsingShutDownWithDrain, TestNoQueueDrainageUsingShutDown
TEST_CASE("shut down with drain waits for keys in processing and shut down does not",
          "[workqueue][item-63][unit]") {
  SECTION("with drain") {
    WorkQueue queue;
    queue.add("a");
    REQUIRE(queue.try_get());
    std::atomic<bool> drained{false};
    std::thread closer([&] {
      queue.shut_down_with_drain();
      drained = true;
    });
    // The closer is inside shut_down_with_drain once the queue shuts down; "a" is not done.
    REQUIRE(eventually([&] { return queue.shutting_down(); }, "shut_down_with_drain never began"));
    CHECK_FALSE(drained);
    queue.add("b");  // ignored while shutting down
    queue.done("a");
    CHECK(eventually([&] { return drained.load(); }, "shut_down_with_drain did not return after done"));
    closer.join();
    CHECK_FALSE(queue.get());
  }
  SECTION("without drain") {
    WorkQueue queue;
    queue.add("a");
    queue.add("b");
    REQUIRE(queue.try_get());
    queue.shut_down();  // returns at once
    CHECK(queue.shutting_down());
    CHECK(queue.get() == std::optional<std::string>("b"));  // what is ready still comes out
    CHECK_FALSE(queue.get());
  }
}

TEST_CASE("a blocked get returns a key added from another thread, or nothing at shut down",
          "[workqueue][item-63][unit]") {
  WorkQueue queue;
  std::optional<std::string> got;
  std::thread getter([&] { got = queue.get(); });
  std::this_thread::sleep_for(20ms);
  queue.add("x");
  getter.join();
  CHECK(got == std::optional<std::string>("x"));
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    got = queue.get();
    returned = true;
  });
  std::this_thread::sleep_for(20ms);
  queue.shut_down();
  CHECK(eventually([&] { return returned.load(); }, "get did not return after shut_down"));
  waiter.join();
  CHECK_FALSE(got);
}

// upstream: delaying_queue_test.go TestDeduping, TestAddTwoFireEarly, TestSimpleQueue
TEST_CASE("add after twice for one key delivers once at the earlier time", "[workqueue][item-64][unit]") {
  FakeClock clock;
  WorkQueue queue(fake(clock));
  queue.add_after("a", 50ms);
  queue.add_after("a", 20ms);
  queue.add_after("a", 70ms);
  CHECK(queue.next_ready_in() == std::optional<WorkQueue::Clock::duration>(20ms));
  clock.step(19ms);
  CHECK_FALSE(queue.try_get());
  clock.step(1ms);
  CHECK(queue.try_get() == std::optional<std::string>("a"));
  queue.done("a");
  clock.step(100ms);
  CHECK_FALSE(queue.try_get());  // no second delivery
  queue.add_after("b", 0ms);     // <= 0: at once
  CHECK(queue.len() == 1);
}

TEST_CASE("a blocked get wakes for a delayed key on the real clock", "[workqueue][item-64][unit]") {
  WorkQueue queue;
  auto start = std::chrono::steady_clock::now();
  queue.add_after("later", 30ms);
  auto key = queue.get();
  CHECK(key == std::optional<std::string>("later"));
  CHECK(std::chrono::steady_clock::now() - start >= 30ms);
}

// upstream: default_rate_limiters_test.go TestItemExponentialFailureRateLimiter, ...OverFlow,
// TestMaxOfRateLimiter
TEST_CASE("repeated failures of one key back off 5 10 20 ms capped, and forget resets",
          "[workqueue][item-65][unit]") {
  FakeClock clock;
  auto options = fake(clock);
  options.max_delay = 1s;
  WorkQueue queue(options);
  auto delay_of_next = [&](const std::string& key) {
    queue.add_rate_limited(key);
    auto in = queue.next_ready_in();
    REQUIRE(in);
    clock.step(*in);
    REQUIRE(queue.try_get() == std::optional<std::string>(key));
    queue.done(key);
    return std::chrono::duration_cast<std::chrono::milliseconds>(*in);
  };
  CHECK(delay_of_next("a") == 5ms);
  CHECK(delay_of_next("a") == 10ms);
  CHECK(delay_of_next("a") == 20ms);
  CHECK(queue.num_requeues("a") == 3);
  for (int i = 0; i < 60; ++i) queue.add_rate_limited("a");  // overflow-safe, capped
  CHECK(queue.next_ready_in() <= std::optional<WorkQueue::Clock::duration>(1s));
  clock.step(1s);
  REQUIRE(queue.try_get());
  queue.done("a");
  queue.forget("a");
  CHECK(queue.num_requeues("a") == 0);
  CHECK(delay_of_next("a") == 5ms);
}

TEST_CASE("the shared token bucket delays keys once its burst is spent", "[workqueue][item-65][unit]") {
  FakeClock clock;
  auto options = fake(clock);
  options.qps = 10;
  options.burst = 2;
  options.base_delay = 1ms;
  WorkQueue queue(options);
  queue.add_rate_limited("a");
  queue.add_rate_limited("b");
  queue.add_rate_limited("c");  // the bucket is empty: 100 ms for a token at 10 qps
  clock.step(1ms);
  CHECK(queue.len() == 2);
  clock.step(99ms);
  CHECK(queue.len() == 3);
}

TEST_CASE("a named queue counts adds retries depth and work duration in its registry",
          "[workqueue][item-2][unit]") {
  FakeClock clock;
  kinformer::MetricsRegistry registry;
  auto options = fake(clock);
  options.name = "reconcile";
  options.metrics = &registry;
  options.qps = 0;  // only the per-key back-off
  WorkQueue queue(options);
  auto value = [&](const std::string& series) {
    return kinformer::testing::sample(registry.render(), series).value_or(-1);
  };
  queue.add("a");
  queue.add("b");
  queue.add("a");  // deduplicated: not an add
  CHECK(value(R"(kinformer_workqueue_adds_total{name="reconcile"})") == 2);
  CHECK(value(R"(kinformer_workqueue_depth{name="reconcile"})") == 2);
  auto a = queue.try_get();
  REQUIRE(a == std::optional<std::string>("a"));
  CHECK(value(R"(kinformer_workqueue_depth{name="reconcile"})") == 1);
  clock.step(250ms);
  queue.add_rate_limited("a");  // a failure: retried after its back-off
  queue.done("a");
  CHECK(value(R"(kinformer_workqueue_retries_total{name="reconcile"})") == 1);
  CHECK(value(R"(kinformer_workqueue_work_duration_seconds_count{name="reconcile"})") == 1);
  CHECK(value(R"(kinformer_workqueue_work_duration_seconds_sum{name="reconcile"})") == Approx(0.25));
  CHECK(value(R"(kinformer_workqueue_work_duration_seconds_bucket{name="reconcile",le="0.25"})") == 1);
  clock.step(1s);
  CHECK(queue.len() == 2);  // b, and a after its back-off
  CHECK(value(R"(kinformer_workqueue_adds_total{name="reconcile"})") == 3);
  CHECK(value(R"(kinformer_workqueue_depth{name="reconcile"})") == 2);
}

TEST_CASE("a queue without a name registers no metrics", "[workqueue][item-2][unit]") {
  kinformer::MetricsRegistry registry;
  WorkQueueOptions options;
  options.metrics = &registry;
  WorkQueue queue(options);
  queue.add("a");
  CHECK(registry.render().empty());
}
