// Tests of actors/informer_metrics.hpp through a SharedInformer over the fake
// source (tests/support), on the real scheduler: every stage's counts after a
// known workload, relists by cause and watch restarts by reason, handler
// failures with their log line, unique informer names, and the readiness check.
#include "actors/informer_metrics.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/shared_informer.hpp"
#include "runtime/metrics.hpp"
#include "tests/actors/live_fixture.hpp"
#include "tests/support/captured_log.hpp"
#include "tests/support/metrics_text.hpp"
#include "tests/support/objects.hpp"

using namespace std::chrono_literals;

namespace kinformer::testing {
namespace {

struct MetricsFixture : LiveFixture {
  MetricsRegistry registry;

  SharedInformerOptions options(const std::string& name = "shop") {
    SharedInformerOptions o;
    o.source = source;
    o.metrics = &registry;
    o.name = name;
    o.reflector.backoff.initial = 10ms;
    o.reflector.backoff.cap = 20ms;
    return o;
  }

  /// The value of one series of the registry now, -1 when it is absent.
  double value(const std::string& name, const std::string& extra_labels = "") {
    const std::string series = name + "{informer=\"shop\",resource=\"pods\"" +
                               (extra_labels.empty() ? "" : "," + extra_labels) + "}";
    return sample(registry.render(), series).value_or(-1);
  }
};

TEST_CASE_METHOD(MetricsFixture, "every stage counts a known workload under the informer's labels",
                 "[informer_metrics][item-2][actor]") {
  for (const char* name : {"p1", "p2", "p3"}) source->add(pod(name, "0"));
  SharedInformer informer(sys, options());
  std::atomic<int> seen{0};
  HandlerFuncs funcs;
  funcs.on_add = [&](const ObjectPtr&, bool) { ++seen; };
  funcs.on_update = [&](const ObjectPtr&, const ObjectPtr&) { ++seen; };
  funcs.on_delete = [&](const DeletedObject&) { ++seen; };
  HandlerOptions handler_options;
  handler_options.name = "recorder";
  REQUIRE(informer.add_handler(funcs, handler_options));
  CHECK(value("kinformer_informer_synced") == 0);
  informer.run();
  REQUIRE(informer.wait_for_sync(10s));
  REQUIRE(eventually([&] { return seen == 3; }, "the handler never saw the initial list"));
  source->add(pod("p4", "0"));
  source->modify(pod("p1", "0", {{"tier", "web"}}));
  source->remove("default/p2");
  REQUIRE(eventually([&] { return seen == 6; }, "the handler never saw the three changes"));
  REQUIRE(
      eventually([&] { return value("kinformer_fifo_depth") == 0; }, "the FIFO depth never came back to 0"));

  CHECK(value("kinformer_reflector_lists_total") == 1);
  CHECK(value("kinformer_reflector_events_total", "type=\"added\"") == 1);
  CHECK(value("kinformer_reflector_events_total", "type=\"modified\"") == 1);
  CHECK(value("kinformer_reflector_events_total", "type=\"deleted\"") == 1);
  CHECK(value("kinformer_fifo_adds_total") == 6);  // three listed, three events
  CHECK(value("kinformer_fifo_pops_total") == 6);  // six distinct keys
  CHECK(value("kinformer_controller_notifications_total") == 6);
  CHECK(value("kinformer_controller_batches_total") >= 2);  // the list, then at least one batch of changes
  CHECK(value("kinformer_controller_apply_duration_seconds_count") ==
        value("kinformer_controller_batches_total"));
  CHECK(value("kinformer_indexer_objects") == 3);
  CHECK(value("kinformer_indexer_index_values", "index=\"namespace\"") == 1);
  CHECK(value("kinformer_informer_synced") == 1);
  CHECK(value("kinformer_reflector_last_resource_version_age_seconds") >= 0);
  CHECK(value("kinformer_handler_deliveries_total", "handler=\"recorder\"") == 6);
  CHECK(value("kinformer_handler_batch_duration_seconds_count", "handler=\"recorder\"") >= 2);
  CHECK(value("kinformer_handler_failures_total", "handler=\"recorder\"") == 0);
  CHECK(value("kinformer_handler_backlog", "group=\"recorder\"") == 0);
  CHECK(value("kinformer_reflector_relists_total", "cause=\"gone\"") == -1);  // never relisted
}

TEST_CASE_METHOD(MetricsFixture, "relists are counted by cause and watch restarts by reason",
                 "[informer_metrics][item-2][actor]") {
  SharedInformer informer(sys, options());
  std::atomic<int> seen{0};
  HandlerFuncs funcs;
  funcs.on_add = [&](const ObjectPtr&, bool) { ++seen; };
  REQUIRE(informer.add_handler(funcs));
  informer.run();
  REQUIRE(informer.wait_for_sync(10s));
  REQUIRE(eventually([&] { return source->open_watch_count() == 1; }, "the first watch never opened"));

  // A clean end after events: the same watch goes on from the last RV, no relist.
  source->add(pod("a", "0"));
  REQUIRE(eventually([&] { return seen == 1; }, "the add never arrived"));
  source->close_watches();
  REQUIRE(
      eventually([&] { return value("kinformer_reflector_watch_restarts_total", "reason=\"closed\"") == 1; },
                 "the clean end was not counted as a watch restart"));

  // 410 on the watch: back off, relist; counted under its cause and as an error.
  REQUIRE(eventually([&] { return source->open_watch_count() == 1; }, "the second watch never opened"));
  source->close_watches(Error{Errc::gone, "too old resource version"});
  REQUIRE(eventually([&] { return value("kinformer_reflector_relists_total", "cause=\"gone\"") == 1; },
                     "the relist after 410 was not counted"));
  CHECK(value("kinformer_reflector_errors_total", "reason=\"gone\"") == 1);
  REQUIRE(eventually([&] { return value("kinformer_reflector_lists_total") == 2; },
                     "the relist never completed"));
  CHECK(informer.metrics().relists() == 1);
}

TEST_CASE_METHOD(MetricsFixture,
                 "handler failures and dead letters are counted and logged with informer and key",
                 "[informer_metrics][item-2][item-3][actor]") {
  CapturedLog captured;
  SharedInformer informer(sys, options());
  HandlerOptions handler_options;
  handler_options.name = "thrower";
  handler_options.supervision.policy = FailurePolicy::skip;
  HandlerFuncs funcs;
  funcs.on_add = [](const ObjectPtr& o, bool) {
    if (o->name() == "bad") throw std::runtime_error("cannot handle it");
  };
  auto handle = informer.add_handler(funcs, handler_options);
  REQUIRE(handle);
  informer.run();
  REQUIRE(informer.wait_for_sync(10s));
  source->add(pod("bad", "0"));
  source->add(pod("good", "0"));
  REQUIRE(eventually([&] { return handle->dead_letters() == 1 && handle->handled_batches() >= 2; },
                     "the failing add was never dead-lettered"));
  CHECK(value("kinformer_handler_failures_total", "handler=\"thrower\"") == 1);
  CHECK(value("kinformer_handler_dead_letters_total", "handler=\"thrower\"") == 1);
  CHECK(value("kinformer_handler_restarts_total", "handler=\"thrower\"") == 0);
  informer.stop();
  auto text = captured.out.str();
  INFO(text);
  CHECK(text.find("warn processor dead letter: add default/bad") != std::string::npos);
  CHECK(text.find("informer=shop resource=pods handler=thrower group=\"\" key=default/bad") !=
        std::string::npos);
}

TEST_CASE_METHOD(MetricsFixture, "two live informers of one registry never share a name",
                 "[informer_metrics][item-2][actor]") {
  auto first = std::make_unique<SharedInformer>(sys, options(""));
  SharedInformer second(sys, options(""));
  CHECK(first->name() == "pods");  // the source's resource
  CHECK(second.name() == "pods-2");
  first.reset();
  SharedInformer third(sys, options(""));
  CHECK(third.name() == "pods");  // free again
}

TEST_CASE_METHOD(MetricsFixture, "the registry is not ready until every informer has synced",
                 "[informer_metrics][item-2][actor]") {
  auto informer = std::make_unique<SharedInformer>(sys, options());
  SharedInformer other(sys, options("other"));
  CHECK(registry.not_ready() == std::vector<std::string>{"informer shop (pods) has not synced",
                                                         "informer other (pods) has not synced"});
  informer->run();
  REQUIRE(informer->wait_for_sync(10s));
  CHECK(registry.not_ready() == std::vector<std::string>{"informer other (pods) has not synced"});
  other.run();
  REQUIRE(other.wait_for_sync(10s));
  CHECK(registry.not_ready().empty());
  informer.reset();
  CHECK(registry.not_ready().empty());
  CHECK(registry.render().find("kinformer_indexer_objects{informer=\"shop\"") != std::string::npos);
}

}  // namespace
}  // namespace kinformer::testing
