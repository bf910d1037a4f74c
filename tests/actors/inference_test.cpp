// Actor tests of the inference actor (actors/inference.hpp): deterministic ones on
// the test coordinator (worker on the scheduler, virtual time), then one on the
// real scheduler with the detached worker.
#include "actors/inference.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <catch2/catch.hpp>

#include "actors/errors.hpp"
#include "actors/scheduler.hpp"
#include "models/informer_weights.hpp"
#include "runtime/home_cpu.hpp"
#include "tests/actors/informer_fixture.hpp"
#include "tests/support/failing_backend.hpp"
#include "tests/support/forecast_windows.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/metrics_text.hpp"
#include "tests/support/thread_affinity.hpp"

namespace actors = kinformer::actors;
namespace models = kinformer::models;
using kinformer::Errc;
using kinformer::testing::eventually;
using kinformer::testing::small_informer;
using kinformer::testing::stack;
using kinformer::testing::window;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<const models::InformerWeights> small_weights() {
  static auto w = models::random_weights(small_informer(), 5);
  return w;
}

std::vector<actors::LoadedModel> two_models() {
  return {{"a", small_informer(), small_weights()}, {"b", small_informer(), small_weights()}};
}

// The direct call the actor's batch must equal: the same windows stacked, on the same backend.
models::Tensor direct(const std::vector<actors::ForecastRequest>& windows,
                      const std::string& backend = "onednn") {
  auto b = models::make_backend(backend, small_informer(), small_weights());
  auto s = stack(windows, small_informer());
  models::Tensor out;
  b->forecast({s.x_enc, s.x_mark_enc, s.x_dec, s.x_mark_dec}, out);
  return out;
}

struct InferenceFixture : kinformer::testing::DeterministicFixture {
  actors::InferenceActor start(std::size_t max_batch, std::chrono::milliseconds max_delay,
                               std::size_t max_queue = 64,
                               std::vector<actors::LoadedModel> models = two_models(),
                               kinformer::MetricsRegistry* registry = nullptr) {
    actors::InferenceOptions o;
    o.metrics = registry;
    o.name = "test";
    o.backend = "onednn";
    o.batching.max_batch = max_batch;
    o.batching.max_delay = max_delay;
    o.batching.max_queue = max_queue;
    o.detached_worker = false;  // the worker runs in run(), deterministically
    o.quiet = true;
    auto actor = actors::spawn_inference(sys, std::move(models), o);
    if (!actor) FAIL(actor.error().to_string());
    return track(*actor);
  }

  using Pending = std::shared_ptr<Answer<actors::ForecastReply>>;

  Pending forecast(const actors::InferenceActor& a, actors::ForecastRequest r) {
    return ask_later<actors::ForecastReply>(a, actors::forecast_atom::value, std::move(r));
  }

  actors::InferenceMetrics metrics(const actors::InferenceActor& a) {
    return ask<actors::InferenceMetrics>(a, actors::metrics_atom::value);
  }

  Errc code(const Pending& p) {
    if (!p->error) FAIL("expected an error, got " << (p->value ? "a forecast" : "no answer"));
    return kinformer::actors::from_caf_error(*p->error).code;
  }
};

}  // namespace

TEST_CASE_METHOD(InferenceFixture,
                 "windows arriving within max delay form one batch and each gets its slice of a direct call",
                 "[inference][actor]") {
  auto inference = start(4, 10ms);
  auto c = small_informer();
  std::vector<actors::ForecastRequest> windows = {window("a", c, 1), window("a", c, 2), window("a", c, 3)};
  std::vector<Pending> answers;
  for (const auto& w : windows) answers.push_back(forecast(inference, w));
  for (const auto& p : answers) CHECK_FALSE(p->answered());  // waiting for company
  CHECK(metrics(inference).queued == 3);
  advance(10ms, 1ms);
  auto expected = direct(windows);
  for (std::size_t i = 0; i < answers.size(); ++i) {
    REQUIRE(answers[i]->value.has_value());
    const auto& reply = *answers[i]->value;
    CHECK(reply.pred_len == 10);
    CHECK(reply.c_out == 3);
    std::vector<float> slice(expected.data.begin() + static_cast<long>(i * 30),
                             expected.data.begin() + static_cast<long>((i + 1) * 30));
    CHECK(reply.values == slice);  // bit-identical to the direct batched call
    // ...and, up to float reassociation, to the window run alone.
    auto alone = direct({windows[i]});
    for (std::size_t k = 0; k < alone.data.size(); ++k)
      CHECK(reply.values[k] == Approx(alone.data[k]).margin(1e-5));
  }
  auto m = metrics(inference);
  CHECK(m.batch_sizes[3] == 1);
  CHECK(m.answered == 3);
  CHECK(m.queue_delay.count == 3);
  // virtual time: the max delay less the close margin, half of it while the margin is learned
  CHECK(m.queue_delay.max_ms == Approx(5).margin(1e-6));
  CHECK(m.model_time.count == 1);
  CHECK(m.queued == 0);
  CHECK(m.overhead.count == 1);  // a deadline batch on an idle worker: its overhead was learned
  CHECK(m.overhead.max_ms == 0);  // virtual time: no timer or hand-over delay
  CHECK(m.close_margin_ms == 5);  // one batch observed: too few to estimate a 99th percentile
}

TEST_CASE_METHOD(InferenceFixture, "a full bucket runs at once without waiting for the delay",
                 "[inference][actor]") {
  auto inference = start(2, 1h);
  auto c = small_informer();
  auto p1 = forecast(inference, window("a", c, 1));
  auto p2 = forecast(inference, window("a", c, 2));
  CHECK(p1->value.has_value());
  CHECK(p2->value.has_value());
  auto m = metrics(inference);
  CHECK(m.batch_sizes[2] == 1);
  CHECK(m.overhead.count == 0);  // full, not due: nothing to learn about the overhead
}

TEST_CASE_METHOD(InferenceFixture, "different models and shapes never share a batch", "[inference][actor]") {
  auto inference = start(8, 5ms);
  auto c = small_informer();
  std::vector<actors::ForecastRequest> windows = {window("a", c, 1), window("b", c, 2), window("a", c, 3, 32),
                                                  window("a", c, 4, 40, 16), window("a", c, 5)};
  std::vector<Pending> answers;
  for (const auto& w : windows) answers.push_back(forecast(inference, w));
  advance(50ms, 1ms);
  for (const auto& p : answers) REQUIRE(p->value.has_value());
  auto m = metrics(inference);
  CHECK(m.batch_sizes[1] == 3);
  CHECK(m.batch_sizes[2] == 1);  // the two "a" windows of the default shape
  CHECK(answers[3]->value->pred_len == 10);
  CHECK(answers[2]->value->values == direct({windows[2]}).data);
}

TEST_CASE_METHOD(InferenceFixture, "bad requests get an error for that requester alone",
                 "[inference][actor]") {
  auto inference = start(8, 5ms);
  auto c = small_informer();
  auto nan = window("a", c, 2);
  nan.x_enc[5] = std::nanf("");
  auto wrong = window("a", c, 3);
  wrong.x_mark_dec.resize(7);
  auto good = forecast(inference, window("a", c, 1));
  auto bad_nan = forecast(inference, nan);
  auto bad_shape = forecast(inference, wrong);
  auto unknown = forecast(inference, window("zzz", c, 4));
  auto good2 = forecast(inference, window("a", c, 5));
  CHECK(code(bad_nan) == Errc::invalid_input);
  CHECK(code(bad_shape) == Errc::invalid_input);
  CHECK(code(unknown) == Errc::unknown_model);
  CHECK_THAT(sys.render(*unknown->error), Catch::Contains("no model 'zzz'"));
  advance(5ms, 1ms);
  REQUIRE(good->value.has_value());
  REQUIRE(good2->value.has_value());
  auto both = direct({window("a", c, 1), window("a", c, 5)});
  CHECK(good->value->values == std::vector<float>(both.data.begin(), both.data.begin() + 30));
  auto m = metrics(inference);
  CHECK(m.batch_sizes[2] == 1);
  CHECK(m.rejected_invalid == 2);
  CHECK(m.rejected_unknown == 1);
}

TEST_CASE_METHOD(InferenceFixture, "a full queue answers overloaded and serves the queued windows",
                 "[inference][actor]") {
  auto inference = start(8, 5ms, 2);
  auto c = small_informer();
  auto p1 = forecast(inference, window("a", c, 1));
  auto p2 = forecast(inference, window("a", c, 2));
  auto p3 = forecast(inference, window("a", c, 3));
  CHECK(code(p3) == Errc::overloaded);
  CHECK_THAT(sys.render(*p3->error), Catch::Contains("queue is full"));
  advance(5ms, 1ms);
  CHECK(p1->value.has_value());
  CHECK(p2->value.has_value());
  CHECK(metrics(inference).rejected_overload == 1);
  CHECK(forecast(inference, window("a", c, 4))->error == std::nullopt);  // room again
}

TEST_CASE_METHOD(InferenceFixture, "a failing model call fails its own batch only and the actor serves on",
                 "[inference][actor]") {
  auto models = two_models();
  models.push_back({"broken", small_informer(), small_weights(), models::Precision::fp32,
                    std::make_shared<kinformer::testing::FailingBackend>(small_informer(), small_weights())});
  auto inference = start(8, 5ms, 64, models);
  auto c = small_informer();
  auto broken1 = forecast(inference, window("broken", c, 1));
  auto broken2 = forecast(inference, window("broken", c, 2));
  auto fine = forecast(inference, window("a", c, 3));
  advance(20ms, 1ms);
  CHECK(code(broken1) == Errc::model_failed);
  CHECK(code(broken2) == Errc::model_failed);
  CHECK_THAT(sys.render(*broken1->error),
             Catch::Contains("batch of 2") && Catch::Contains("injected failure"));
  REQUIRE(fine->value.has_value());
  CHECK(fine->value->values == direct({window("a", c, 3)}).data);
  auto m = metrics(inference);
  CHECK(m.failed == 2);
  CHECK(m.answered == 1);
  CHECK(forecast(inference, window("a", c, 4))->error == std::nullopt);  // still serving
}

TEST_CASE_METHOD(InferenceFixture,
                 "a shutdown fails the waiting requests with stopped instead of dropping them",
                 "[inference][actor]") {
  auto inference = start(8, 1h);
  auto c = small_informer();
  auto p = forecast(inference, window("a", c, 1));
  CHECK_FALSE(p->answered());
  caf::anon_send_exit(inference, caf::exit_reason::user_shutdown);
  run();
  CHECK(code(p) == Errc::stopped);
}

TEST_CASE("concurrent requesters on the real scheduler share batches of the detached worker",
          "[inference][actor]") {
  caf::actor_system_config cfg;
  actors::configure_scheduler(cfg);
  actors::register_errors(cfg);
  caf::actor_system sys{cfg};
  actors::InferenceOptions o;
  o.backend = "onednn";
  o.batching.max_batch = 8;
  o.batching.max_delay = 50ms;  // generous: the 16 sends below land well within it
  o.quiet = true;
  auto inference = actors::spawn_inference(sys, two_models(), o);
  REQUIRE(inference);
  auto c = small_informer();
  caf::scoped_actor self{sys};
  std::vector<actors::ForecastRequest> windows;
  for (uint32_t i = 0; i < 16; ++i) windows.push_back(window("a", c, 100 + i));
  std::vector<decltype(self->request(*inference, 30s, actors::forecast_atom::value, windows[0]))> handles;
  for (const auto& w : windows)
    handles.push_back(self->request(*inference, 30s, actors::forecast_atom::value, w));
  for (std::size_t i = 0; i < handles.size(); ++i)
    handles[i].receive(
        [&](const actors::ForecastReply& reply) {
          auto alone = direct({windows[i]});
          for (std::size_t k = 0; k < alone.data.size(); ++k)
            CHECK(reply.values[k] == Approx(alone.data[k]).margin(1e-5));
        },
        [&](const caf::error& e) {
          FAIL("forecast " << i << " failed (worker stuck or lost promise?): " << sys.render(e));
        });
  actors::InferenceMetrics m;
  self->request(*inference, 30s, actors::metrics_atom::value)
      .receive([&](const actors::InferenceMetrics& x) { m = x; },
               [&](const caf::error& e) { FAIL("no metrics: " << sys.render(e)); });
  uint64_t windows_run = 0;
  std::size_t largest = 0;
  for (std::size_t n = 1; n < m.batch_sizes.size(); ++n) {
    windows_run += n * m.batch_sizes[n];
    if (m.batch_sizes[n]) largest = n;
  }
  CHECK(windows_run == 16);
  CHECK(largest >= 2);  // requests were batched, not run one by one
  caf::anon_send_exit(*inference, caf::exit_reason::user_shutdown);
}

TEST_CASE("the detached model worker gives back the home CPU's pin it inherits from the worker that spawned it",
          "[inference][home_cpu][actor]") {
  caf::actor_system_config cfg;
  actors::configure_scheduler(cfg);
  actors::register_errors(cfg);
  cfg.set("scheduler.max-threads", 1);  // worker 0 alone runs the front actor, which spawns the model worker
  caf::actor_system sys{cfg};
  std::thread([] { (void)kinformer::home_cpu::join(); }).join();  // as a client's I/O thread chooses it
  const int home = kinformer::home_cpu::chosen();
  REQUIRE(home >= 0);
  REQUIRE(std::thread::hardware_concurrency() >= 2);  // with one CPU every thread is "pinned"
  actors::InferenceOptions o;
  o.backend = "onednn";
  o.quiet = true;
  auto inference = actors::spawn_inference(sys, two_models(), o);
  REQUIRE(inference);
  // Polled, not asked through a request: a reply read on the test thread from the real
  // scheduler is invisible to ThreadSanitizer (scripts/test). CAF 0.17 names its scheduler
  // workers "caf.multiplexer" and a detached actor's thread "caf.actor"; the OpenMP threads
  // that earlier cases' model workers started carry that name too.
  eventually(
      [&] {
        std::size_t workers_pinned = 0, model_threads = 0, model_pinned = 0;
        for (const auto& thread : kinformer::testing::thread_pins(home)) {
          if (thread.name == "caf.multiplexer") workers_pinned += thread.pinned ? 1 : 0;
          if (thread.name != "caf.actor") continue;
          ++model_threads;
          model_pinned += thread.pinned ? 1 : 0;
        }
        return workers_pinned == 1 && model_threads >= 1 && model_pinned == 0;
      },
      "worker 0 pinned to the home CPU and the model worker it spawned not");
  caf::anon_send_exit(*inference, caf::exit_reason::user_shutdown);
}

TEST_CASE_METHOD(InferenceFixture, "the inference actor's queue batches delays and model time reach its registry",
                 "[inference][item-2][actor]") {
  kinformer::MetricsRegistry registry;
  auto inference = start(4, 10ms, 2, two_models(), &registry);
  auto c = small_informer();
  auto value = [&](const std::string& series) {
    return kinformer::testing::sample(registry.render(), series).value_or(-1);
  };
  auto p1 = forecast(inference, window("a", c, 1));
  auto p2 = forecast(inference, window("a", c, 2));
  CHECK(value(R"(kinformer_inference_queue_depth{inference="test"})") == 2);
  auto overloaded = forecast(inference, window("a", c, 3));
  auto unknown = forecast(inference, window("zzz", c, 4));
  CHECK(code(overloaded) == Errc::overloaded);
  CHECK(code(unknown) == Errc::unknown_model);
  advance(10ms, 1ms);
  REQUIRE(p1->value.has_value());
  REQUIRE(p2->value.has_value());
  CHECK(value(R"(kinformer_inference_requests_total{inference="test"})") == 4);
  CHECK(value(R"(kinformer_inference_rejected_total{inference="test",reason="overloaded"})") == 1);
  CHECK(value(R"(kinformer_inference_rejected_total{inference="test",reason="unknown_model"})") == 1);
  CHECK(value(R"(kinformer_inference_queue_depth{inference="test"})") == 0);
  CHECK(value(R"(kinformer_inference_batch_size_bucket{inference="test",le="1"})") == 0);
  CHECK(value(R"(kinformer_inference_batch_size_bucket{inference="test",le="2"})") == 1);
  CHECK(value(R"(kinformer_inference_batch_size_sum{inference="test"})") == 2);
  CHECK(value(R"(kinformer_inference_queue_delay_seconds_count{inference="test"})") == 2);
  // two windows, each 5 ms: the max delay less the close margin of the learning period
  CHECK(value(R"(kinformer_inference_queue_delay_seconds_sum{inference="test"})") == Approx(0.01).margin(1e-6));
  CHECK(value(R"(kinformer_inference_model_duration_seconds_count{inference="test"})") == 1);
  CHECK(value(R"(kinformer_inference_failed_total{inference="test"})") == 0);
}
