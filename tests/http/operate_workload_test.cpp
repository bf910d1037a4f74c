// Issue 15, item 2: a known workload — an informer with two handlers and a work
// queue with workers, reading over HTTP from the embedded API server — then a
// scrape of the MetricsServer parsed by Debian's python3-prometheus-client
// (prometheus_client.parser.text_string_to_metric_families), whose values must
// equal what was written.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "actors/workqueue_worker.hpp"
#include "apiserver/server_metrics.hpp"
#include "runtime/metrics.hpp"
#include "runtime/metrics_server.hpp"
#include "runtime/workqueue.hpp"
#include "tests/apiserver/test_server.hpp"
#include "tests/http/http_fixture.hpp"

using kinformer::testing::eventually;
using kinformer::testing::HttpFixture;
using kinformer::testing::make_client;
using kinformer::testing::TestServer;
using namespace std::chrono_literals;

namespace {

std::string python() { return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

// GET /metrics and /readyz with urllib, parse the scrape with prometheus_client's
// text parser; every sample as "name{k=v,...} value" (labels sorted), and the
// readyz status as "readyz <code>".
std::map<std::string, double> scrape(std::uint16_t port, int& readyz) {
  const std::string script =
      "import sys, urllib.request, urllib.error\n"
      "from prometheus_client.parser import text_string_to_metric_families\n"
      "base = \"http://127.0.0.1:%s\" % sys.argv[1]\n"
      "text = urllib.request.urlopen(base + \"/metrics\", timeout=10).read().decode()\n"
      "for family in text_string_to_metric_families(text):\n"
      "  for s in family.samples:\n"
      "    labels = \",\".join(\"%s=%s\" % kv for kv in sorted(s.labels.items()))\n"
      "    print(\"%s{%s} %r\" % (s.name, labels, s.value))\n"
      "try:\n"
      "  code = urllib.request.urlopen(base + \"/readyz\", timeout=10).status\n"
      "except urllib.error.HTTPError as e:\n"
      "  code = e.code\n"
      "print(\"readyz\", code)\n";
  FILE* pipe = popen((python() + " -c '" + script + "' " + std::to_string(port)).c_str(), "r");
  REQUIRE(pipe);
  std::string out;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  INFO(out);
  REQUIRE(pclose(pipe) == 0);
  std::map<std::string, double> samples;
  for (std::size_t at = 0; at < out.size();) {
    auto end = out.find('\n', at);
    auto line = out.substr(at, end - at);
    at = end == std::string::npos ? out.size() : end + 1;
    auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    if (line.rfind("readyz ", 0) == 0)
      readyz = std::stoi(line.substr(space + 1));
    else
      samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

}  // namespace

TEST_CASE_METHOD(HttpFixture,
                 "a scrape after a known workload parses with prometheus_client and counts what was written",
                 "[operate][metrics][item-2][integration]") {
  kinformer::MetricsRegistry registry;
  kinformer::apiserver::ServerOptions server_options;
  server_options.observer = std::make_shared<kinformer::apiserver::ServerMetrics>(registry);
  TestServer server(server_options);
  const std::string collection = "/api/v1/namespaces/default/configmaps";
  for (const char* name : {"a", "b"}) server.create_configmap(name);

  kinformer::SharedInformerOptions options;
  options.source =
      std::make_shared<kinformer::http::HttpListWatch>(make_client(server.server().url()), collection);
  options.metrics = &registry;
  options.name = "cms";
  kinformer::SharedInformer informer(sys, options);

  // The controller: a handler puts keys on the queue; workers reconcile them, "default/flaky" failing once.
  kinformer::WorkQueueOptions queue_options;
  queue_options.name = "cms-reconcile";
  queue_options.metrics = &registry;
  queue_options.base_delay = 1ms;
  auto queue = std::make_shared<kinformer::WorkQueue>(queue_options);
  std::mutex reconciled_mu;
  std::set<std::string> reconciled;  // guarded by reconciled_mu
  std::atomic<bool> flaky_failed{false};
  kinformer::actors::WorkQueueWorkerOptions workers;
  workers.queue = queue;
  workers.reconcile = [&](const std::string& key) -> kinformer::Result<void> {
    if (key == "default/flaky" && !flaky_failed.exchange(true))
      return kinformer::Error{kinformer::Errc::server_error, "first attempt fails"};
    std::lock_guard<std::mutex> lock(reconciled_mu);
    reconciled.insert(key);
    return {};
  };
  auto worker_actors = kinformer::actors::spawn_workqueue_workers(sys, workers, 2);  // alive while held
  kinformer::HandlerFuncs enqueue;
  enqueue.on_add = [&](const kinformer::ObjectPtr& o, bool) { queue->add(std::string(o->key())); };
  enqueue.on_update = [&](const kinformer::ObjectPtr&, const kinformer::ObjectPtr& o) {
    queue->add(std::string(o->key()));
  };
  enqueue.on_delete = [&](const kinformer::DeletedObject& d) { queue->add(std::string(d.key())); };
  kinformer::HandlerOptions enqueuer;
  enqueuer.name = "enqueuer";
  REQUIRE(informer.add_handler(enqueue, enqueuer));
  std::atomic<int> counted{0};
  kinformer::HandlerFuncs count;
  count.on_add = [&](const kinformer::ObjectPtr&, bool) { ++counted; };
  count.on_update = [&](const kinformer::ObjectPtr&, const kinformer::ObjectPtr&) { ++counted; };
  count.on_delete = [&](const kinformer::DeletedObject&) { ++counted; };
  kinformer::HandlerOptions counter;
  counter.name = "counter";
  REQUIRE(informer.add_handler(count, counter));

  kinformer::MetricsServer endpoint({&registry, {}});
  auto port = endpoint.start();
  REQUIRE(port);
  int readyz = 0;
  scrape(*port, readyz);
  CHECK(readyz == 503);  // the informer has not synced yet

  informer.run();
  REQUIRE(informer.wait_for_sync(10s));
  // The workload: 3 creates, 2 updates, 1 delete (8 notifications with the 2 listed).
  for (const char* name : {"c", "d", "flaky"}) server.create_configmap(name);
  for (const char* name : {"a", "c"})
    REQUIRE(server
                .request("PATCH", collection + "/" + name, R"({"data":{"k":"2"}})",
                         "application/merge-patch+json")
                .status == 200);
  REQUIRE(server.request("DELETE", collection + "/b").status == 200);
  REQUIRE(eventually([&] { return counted == 8; }, "the counting handler never saw the 8 notifications"));
  auto reconciled_keys = [&] {
    std::lock_guard<std::mutex> lock(reconciled_mu);
    std::string keys;
    for (const auto& key : reconciled) keys += key + " ";
    return keys;
  };
  const bool all_reconciled = eventually(
      [&] {
        return reconciled_keys() == "default/a default/b default/c default/d default/flaky " &&
               queue->len() == 0;
      },
      "the workers never reconciled the 5 keys (flaky after its retry)");
  INFO("reconciled: " << reconciled_keys() << "; queue length " << queue->len());
  REQUIRE(all_reconciled);

  auto samples = scrape(*port, readyz);
  CHECK(readyz == 200);
  auto at = [&](const std::string& series) {
    INFO(series);
    auto found = samples.find(series);
    CHECK(found != samples.end());
    return found == samples.end() ? -1.0 : found->second;
  };
  const std::string cms = "informer=cms,resource=configmaps";
  CHECK(at("kinformer_reflector_events_total{" + cms + ",type=added}") == 3);
  CHECK(at("kinformer_reflector_events_total{" + cms + ",type=modified}") == 2);
  CHECK(at("kinformer_reflector_events_total{" + cms + ",type=deleted}") == 1);
  CHECK(at("kinformer_reflector_lists_total{" + cms + "}") == 1);
  CHECK(at("kinformer_fifo_adds_total{" + cms + "}") == 8);
  CHECK(at("kinformer_controller_notifications_total{" + cms + "}") == 8);
  CHECK(at("kinformer_indexer_objects{" + cms + "}") == 4);
  CHECK(at("kinformer_informer_synced{" + cms + "}") == 1);
  CHECK(at("kinformer_handler_deliveries_total{handler=counter," + cms + "}") == 8);
  CHECK(at("kinformer_handler_deliveries_total{handler=enqueuer," + cms + "}") == 8);
  CHECK(at("kinformer_handler_failures_total{handler=counter," + cms + "}") == 0);
  CHECK(at("kinformer_handler_batch_duration_seconds_count{handler=counter," + cms + "}") >= 2);
  CHECK(at("kinformer_workqueue_retries_total{name=cms-reconcile}") == 1);
  CHECK(at("kinformer_workqueue_adds_total{name=cms-reconcile}") >= 6);  // each key once, flaky twice
  CHECK(at("kinformer_workqueue_depth{name=cms-reconcile}") == 0);
  CHECK(at("kinformer_workqueue_work_duration_seconds_count{name=cms-reconcile}") >=
        at("kinformer_workqueue_adds_total{name=cms-reconcile}"));
  CHECK(at("kinformer_apiserver_requests_total{code=201,resource=configmaps,verb=create}") == 5);
  CHECK(at("kinformer_apiserver_requests_total{code=200,resource=configmaps,verb=patch}") == 2);
  CHECK(at("kinformer_apiserver_requests_total{code=200,resource=configmaps,verb=delete}") == 1);
  CHECK(at("kinformer_apiserver_requests_total{code=200,resource=configmaps,verb=list}") == 1);
  CHECK(at("kinformer_apiserver_watch_events_sent_total{resource=configmaps}") == 6);
  CHECK(at("kinformer_apiserver_watchers{resource=configmaps}") == 1);
  queue->shut_down();
  informer.stop();
}
