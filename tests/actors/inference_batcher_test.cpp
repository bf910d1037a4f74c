// Unit tests of the inference actor's queue (actors/inference_batcher.hpp).
#include "actors/inference_batcher.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include "tests/support/forecast_windows.hpp"

namespace actors = kinformer::actors;
using kinformer::Errc;
using kinformer::testing::small_informer;
using kinformer::testing::window;
using namespace std::chrono_literals;

namespace {

actors::InferenceBatcher make_batcher(std::size_t max_batch = 4, std::size_t max_queue = 16) {
  actors::BatcherOptions o;
  o.max_batch = max_batch;
  o.max_delay = 5ms;
  o.max_queue = max_queue;
  actors::InferenceBatcher b(o);
  b.add_model("a", small_informer());
  b.add_model("b", small_informer());
  return b;
}

const auto t0 = actors::BatchClock::time_point{} + 1h;

// Past the margin's learning period with no overhead seen: windows wait the whole max delay.
void learn_no_overhead(actors::InferenceBatcher& b) {
  for (int i = 0; i < 256; ++i) b.observe_lateness(1, 0us, 1ms);
}

}  // namespace

TEST_CASE("a bucket is ready when full or when its oldest window waited max delay",
          "[inference][batcher][unit]") {
  auto b = make_batcher(3);
  learn_no_overhead(b);
  auto c = small_informer();
  REQUIRE(b.admit(1, window("a", c, 1), t0));
  REQUIRE(b.admit(2, window("a", c, 2), t0 + 1ms));
  CHECK_FALSE(b.take_ready(t0 + 4ms).has_value());
  CHECK(b.next_deadline() == t0 + 5ms);
  auto batch = b.take_ready(t0 + 5ms);
  REQUIRE(batch.has_value());
  CHECK(batch->tickets == std::vector<actors::Ticket>{1, 2});
  CHECK(batch->x_enc.shape == kinformer::models::Shape{2, 40, 3});
  CHECK(batch->x_dec.shape == kinformer::models::Shape{2, 30, 3});
  CHECK(b.queued() == 0);
  for (actors::Ticket t = 3; t <= 5; ++t)
    REQUIRE(b.admit(t, window("a", c, static_cast<uint32_t>(t)), t0 + 10ms));
  CHECK(b.next_deadline() == t0 + 10ms);  // full: due at once
  auto full = b.take_ready(t0 + 10ms);
  REQUIRE(full.has_value());
  CHECK(full->tickets.size() == 3);
}

TEST_CASE("a window's max delay counts from its requester's send when the stamp is plausible",
          "[inference][batcher][unit]") {
  auto b = make_batcher(3);
  learn_no_overhead(b);
  auto c = small_informer();
  const auto stamped = [&](uint32_t seed, actors::BatchClock::time_point sent) {
    auto w = window("a", c, seed);
    w.sent_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(sent.time_since_epoch()).count();
    return w;
  };
  REQUIRE(b.admit(1, stamped(1, t0 - 300us), t0));  // 300 us on its way to the actor
  CHECK(b.next_deadline() == t0 + 5ms - 300us);
  auto batch = b.take_ready(t0 + 5ms - 300us);
  REQUIRE(batch.has_value());
  CHECK(batch->way_in == 300us);
  CHECK(batch->arrived == std::vector<actors::BatchClock::time_point>{t0 - 300us});

  // Another host's clock, or a simulated one: a stamp after `now`, or over 1 s before it.
  REQUIRE(b.admit(2, stamped(2, t0 + 1ms), t0));
  CHECK(b.next_deadline() == t0 + 5ms);
  REQUIRE(b.take_ready(t0 + 5ms).has_value());
  REQUIRE(b.admit(3, stamped(3, t0 - 2s), t0));
  CHECK(b.next_deadline() == t0 + 5ms);
  auto unstamped = b.take_ready(t0 + 5ms);
  REQUIRE(unstamped.has_value());
  CHECK(unstamped->way_in == 0us);

  // A hostile remote requester's extremes: ignored, without overflow (UBSan checks the arithmetic).
  for (const int64_t extreme : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    auto w = window("a", c, 4);
    w.sent_ns = extreme;
    REQUIRE(b.admit(4, std::move(w), t0));
    CHECK(b.next_deadline() == t0 + 5ms);
    auto batch = b.take_ready(t0 + 5ms);
    REQUIRE(batch.has_value());
    CHECK(batch->way_in == 0us);
  }
}

TEST_CASE("a bucket closes early by the overhead the actor observed so its answers leave by max delay",
          "[inference][batcher][unit]") {
  auto b = make_batcher(3);
  auto c = small_informer();
  for (int i = 0; i < 256; ++i) b.observe_lateness(1, 1ms, 2ms);
  CHECK(b.close_margin() == 1ms);
  REQUIRE(b.admit(1, window("a", c, 1), t0));
  REQUIRE(b.admit(2, window("a", c, 2), t0 + 2ms));  // later company does not move the deadline
  CHECK(b.next_deadline() == t0 + 4ms);               // the first arrival + 5 ms - 1 ms
  CHECK_FALSE(b.take_ready(t0 + 3999us).has_value());
  auto batch = b.take_ready(t0 + 4ms);
  REQUIRE(batch.has_value());
  CHECK(batch->tickets == std::vector<actors::Ticket>{1, 2});
  CHECK(batch->by_deadline);
  CHECK(batch->due == t0 + 4ms);
  for (actors::Ticket t = 3; t <= 5; ++t)
    REQUIRE(b.admit(t, window("a", c, static_cast<uint32_t>(t)), t0 + 10ms));
  auto full = b.take_ready(t0 + 10ms);
  REQUIRE(full.has_value());
  CHECK_FALSE(full->by_deadline);  // full: its lateness says nothing about the overhead
}

TEST_CASE("the close margin is half the max delay until 256 batches were observed", "[inference][batcher][unit]") {
  // The largest of fewer samples is passed too often by the next one.
  auto b = make_batcher();
  CHECK(b.close_margin() == 2500us);  // nothing observed yet
  REQUIRE(b.admit(1, window("a", small_informer(), 1), t0));
  CHECK(b.next_deadline() == t0 + 2500us);
  for (int i = 0; i < 255; ++i) b.observe_lateness(1, 300us, 1ms);
  CHECK(b.close_margin() == 2500us);
  b.observe_lateness(1, 300us, 1ms);
  CHECK(b.close_margin() == 300us);
  CHECK(b.next_deadline() == t0 + 4700us);
}

TEST_CASE("the close margin is the largest lateness of the last 256 batches and at most half the max delay",
          "[inference][batcher][unit]") {
  auto b = make_batcher();
  for (int i = 0; i < 256; ++i) b.observe_lateness(1, 500us, 1ms);
  CHECK(b.close_margin() == 500us);
  b.observe_lateness(1, 1200us, 1ms);  // one slow wake-up
  CHECK(b.close_margin() == 1200us);
  b.observe_lateness(1, 4ms, 1ms);  // a stall: capped at max_delay / 2
  CHECK(b.close_margin() == 2500us);
  for (int i = 0; i < 255; ++i) b.observe_lateness(1, 200us, 1ms);
  CHECK(b.close_margin() == 2500us);  // the stall is still among the last 256
  b.observe_lateness(1, 200us, 1ms);  // it ages out
  CHECK(b.close_margin() == 200us);
  for (int i = 0; i < 256; ++i) b.observe_lateness(1, -1ms, 1ms);  // model calls that started early
  CHECK(b.close_margin() == 0ms);
}

TEST_CASE("the close margin covers a model call's excess over the typical time of its batch size",
          "[inference][batcher][unit]") {
  auto b = make_batcher();
  b.observe_lateness(1, 100us, 50ms);  // the first call of a shape builds its plan
  for (int i = 0; i < 255; ++i) b.observe_lateness(1, 100us, 1ms);
  CHECK(b.close_margin() == 100us);  // the plan's build is not what a call typically takes
  for (int i = 0; i < 3; ++i) b.observe_lateness(8, 100us, 5ms);  // larger batches take longer: no excess
  CHECK(b.close_margin() == 100us);
  b.observe_lateness(1, 100us, 1300us);  // a slow lone window: 300 us over the typical 1 ms
  CHECK(b.close_margin() == 400us);
  b.observe_lateness(1, 100us, 800us);  // a fast one is no excess
  CHECK(b.close_margin() == 400us);
}

TEST_CASE("windows are stacked in ticket order with their own values", "[inference][batcher][unit]") {
  auto b = make_batcher(2);
  auto c = small_informer();
  auto w1 = window("a", c, 7), w2 = window("a", c, 8);
  REQUIRE(b.admit(10, w1, t0));
  REQUIRE(b.admit(11, w2, t0));
  auto batch = b.take_ready(t0);
  REQUIRE(batch.has_value());
  const auto per = w1.x_mark_dec.size();
  CHECK(std::equal(w2.x_mark_dec.begin(), w2.x_mark_dec.end(),
                   batch->x_mark_dec.data.begin() + static_cast<long>(per)));
  CHECK(std::equal(w1.x_enc.begin(), w1.x_enc.end(), batch->x_enc.data.begin()));
}

TEST_CASE("models and shapes go to separate buckets and the oldest ready bucket goes first",
          "[inference][batcher][unit]") {
  auto b = make_batcher(4);
  auto c = small_informer();
  REQUIRE(b.admit(1, window("b", c, 1), t0));
  REQUIRE(b.admit(2, window("a", c, 2), t0 + 1ms));
  REQUIRE(b.admit(3, window("a", c, 3, 32), t0 + 2ms));      // other seq_len
  REQUIRE(b.admit(4, window("a", c, 4, 40, 16), t0 + 3ms));  // other label_len
  std::vector<std::vector<actors::Ticket>> order;
  while (auto batch = b.take_ready(t0 + 1s)) order.push_back(batch->tickets);
  CHECK(order == std::vector<std::vector<actors::Ticket>>{{1}, {2}, {3}, {4}});
}

TEST_CASE("bad windows are rejected alone with a message naming the fault", "[inference][batcher][unit]") {
  auto b = make_batcher();
  auto c = small_informer();
  auto unknown = window("nope", c, 1);
  auto nan = window("a", c, 2);
  nan.x_dec[3 * 3 + 1] = std::nanf("");  // row 3, channel 1 of 3
  auto short_enc = window("a", c, 3);
  short_enc.x_enc.pop_back();
  auto no_horizon = window("a", c, 4);
  no_horizon.dec_len = c.pred_len;
  auto r1 = b.admit(1, unknown, t0);
  auto r2 = b.admit(2, nan, t0);
  auto r3 = b.admit(3, short_enc, t0);
  auto r4 = b.admit(4, no_horizon, t0);
  REQUIRE_FALSE(r1);
  REQUIRE_FALSE(r2);
  REQUIRE_FALSE(r3);
  REQUIRE_FALSE(r4);
  CHECK(r1.error().code == Errc::unknown_model);
  CHECK_THAT(r1.error().message, Catch::Contains("'nope'") && Catch::Contains("loaded: a, b"));
  CHECK(r2.error().code == Errc::invalid_input);
  CHECK_THAT(r2.error().message,
             Catch::Contains("x_dec has a non-finite value") && Catch::Contains("[3, 1]"));
  CHECK_THAT(r3.error().message, Catch::Contains("x_enc has 119 values, expected 40 rows x 3"));
  CHECK_THAT(r4.error().message, Catch::Contains("dec_len 10 must be above the model's pred_len 10"));
  CHECK(b.queued() == 0);
  CHECK(b.admit(5, window("a", c, 5), t0));
}

TEST_CASE("a full queue rejects with overloaded instead of growing", "[inference][batcher][unit]") {
  auto b = make_batcher(8, 2);
  auto c = small_informer();
  REQUIRE(b.admit(1, window("a", c, 1), t0));
  REQUIRE(b.admit(2, window("b", c, 2), t0));
  auto r = b.admit(3, window("a", c, 3), t0);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::overloaded);
  CHECK(b.queued() == 2);
  CHECK(b.drain().size() == 2);
  CHECK(b.admit(4, window("a", c, 4), t0));
}

TEST_CASE("the latency histogram counts into its bounds", "[inference][batcher][unit]") {
  actors::LatencyHistogram h;
  h.add(0.05);
  h.add(3);
  h.add(5000);
  CHECK(h.count == 3);
  CHECK(h.counts.front() == 1);
  CHECK(h.counts[5] == 1);  // (2.5, 5]
  CHECK(h.counts.back() == 1);
  CHECK(h.max_ms == 5000);
}
