// Tests for apiserver/server_metrics.hpp and the server's observer hook: request
// labels, a known workload's counts over real loopback HTTP, and `kinformer apiserver
// --metrics-port` serving them (with a token that never reaches its log).
#include "apiserver/server_metrics.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "apiserver/server.hpp"
#include "runtime/metrics.hpp"
#include "tests/apiserver/kinformer_process.hpp"
#include "tests/support/loopback_http.hpp"
#include "tests/support/text.hpp"

using namespace std::chrono_literals;

namespace kinformer::apiserver {
namespace {

using kinformer::testing::contains;

TEST_CASE("request labels follow kube-apiserver's verbs and resources",
          "[apiserver][server_metrics][item-2][unit]") {
  struct Case {
    const char* method;
    const char* target;
    const char* verb;
    const char* resource;
  };
  const Case cases[] = {
      {"GET", "/api/v1/pods", "list", "pods"},
      {"GET", "/api/v1/namespaces/shop/pods?labelSelector=a%3Db", "list", "pods"},
      {"GET", "/api/v1/namespaces/shop/pods?watch=true&resourceVersion=5", "watch", "pods"},
      {"GET", "/api/v1/watch/namespaces/shop/pods", "watch", "pods"},
      {"GET", "/api/v1/namespaces/shop/pods/web-0", "get", "pods"},
      {"PUT", "/api/v1/namespaces/shop/pods/web-0/status", "update", "pods/status"},
      {"POST", "/apis/apps/v1/namespaces/shop/deployments", "create", "deployments"},
      {"PATCH", "/apis/apps/v1/namespaces/shop/deployments/web", "patch", "deployments"},
      {"DELETE", "/api/v1/namespaces/shop/configmaps/c", "delete", "configmaps"},
      {"DELETE", "/api/v1/namespaces/shop/configmaps", "deletecollection", "configmaps"},
      {"GET", "/api/v1/namespaces", "list", "namespaces"},
      {"GET", "/api/v1/namespaces/shop", "get", "namespaces"},
      {"PUT", "/api/v1/namespaces/shop/finalize", "update", "namespaces/finalize"},
      {"GET", "/api", "get", ""},
      {"GET", "/version", "get", ""},
      {"OPTIONS", "/api/v1/pods", "options", "pods"},
  };
  for (const auto& c : cases) {
    INFO(c.method << " " << c.target);
    auto labels = request_labels(c.method, c.target);
    CHECK(labels.verb == c.verb);
    CHECK(labels.resource == c.resource);
  }
}

TEST_CASE("the server counts requests by verb resource and code and tracks its watchers",
          "[apiserver][server_metrics][item-2][integration]") {
  MetricsRegistry registry;
  ServerOptions options;
  options.observer = std::make_shared<ServerMetrics>(registry);
  Server server(options);
  auto port = server.start();
  REQUIRE(port);
  using testing::http_request;
  const std::string cm =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"a":"1"}})";
  REQUIRE(http_request(*port, "POST", "/api/v1/namespaces/default/configmaps", cm).status == 201);
  REQUIRE(http_request(*port, "POST", "/api/v1/namespaces/default/configmaps", cm).status == 409);
  for (int i = 0; i < 3; ++i)
    REQUIRE(http_request(*port, "GET", "/api/v1/namespaces/default/configmaps").status == 200);
  REQUIRE(http_request(*port, "GET", "/api/v1/namespaces/default/configmaps/missing").status == 404);
  // A watch from RV 0 gets the existing configmap as ADDED, then ends after a second.
  auto watch =
      http_request(*port, "GET", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1");
  REQUIRE(watch.status == 200);
  REQUIRE(contains(watch.body, "ADDED"));

  auto text = registry.render();
  INFO(text);
  CHECK(contains(
      text, "kinformer_apiserver_requests_total{verb=\"create\",resource=\"configmaps\",code=\"201\"} 1\n"));
  CHECK(contains(
      text, "kinformer_apiserver_requests_total{verb=\"create\",resource=\"configmaps\",code=\"409\"} 1\n"));
  CHECK(contains(
      text, "kinformer_apiserver_requests_total{verb=\"list\",resource=\"configmaps\",code=\"200\"} 3\n"));
  CHECK(contains(
      text, "kinformer_apiserver_requests_total{verb=\"get\",resource=\"configmaps\",code=\"404\"} 1\n"));
  CHECK(contains(
      text, "kinformer_apiserver_requests_total{verb=\"watch\",resource=\"configmaps\",code=\"200\"} 1\n"));
  CHECK(contains(
      text, "kinformer_apiserver_request_duration_seconds_count{verb=\"list\",resource=\"configmaps\"} 3\n"));
  CHECK_FALSE(contains(text, "kinformer_apiserver_request_duration_seconds_count{verb=\"watch\""));
  CHECK(contains(text, "kinformer_apiserver_watch_events_sent_total{resource=\"configmaps\"} 1\n"));
  // The watch's stream has ended: the gauge is back to 0 (the server notices the end on its strand).
  bool closed = false;
  for (int i = 0; i < 500 && !closed; ++i, std::this_thread::sleep_for(10ms))
    closed = contains(registry.render(), "kinformer_apiserver_watchers{resource=\"configmaps\"} 0\n");
  INFO("waited 5 s for the watchers gauge to return to 0 after the watch ended");
  CHECK(closed);
}

TEST_CASE("kinformer apiserver --metrics-port serves its metrics and never logs its token",
          "[apiserver][server_metrics][cli][item-2][item-3][integration]") {
  if (!testing::kinformer_binary_built()) {
    WARN("skipped: " << testing::kinformer_binary() << " is not built (build the kinformer target)");
    return;
  }
  char pattern[] = "/tmp/kinformer-metrics-XXXXXX";
  std::string dir = ::mkdtemp(pattern);
  const std::string token = "tok-3f9a1c-never-logged";
  std::ofstream(dir + "/token") << token << "\n";
  testing::KinformerProcess server(
      {"apiserver", "--port", "0", "--metrics-port", "0", "--token-file", dir + "/token", "--log-requests"});
  auto port = testing::port_of(server.first_line(20s));
  auto metrics_line = server.first_line(20s);
  INFO("stderr: " << server.stderr_text());
  REQUIRE(port != 0);
  auto at = metrics_line.find("metrics on http://127.0.0.1:");
  REQUIRE(at != std::string::npos);
  auto metrics_port = static_cast<std::uint16_t>(std::stoi(metrics_line.substr(at + 28)));

  using testing::http_request;
  CHECK(http_request(port, "GET", "/api/v1/pods").status == 401);
  CHECK(http_request(port, "GET", "/api/v1/pods", "", "application/json",
                     {{"Authorization", "Bearer " + token}})
            .status == 200);
  auto scrape = http_request(metrics_port, "GET", "/metrics");
  REQUIRE(scrape.status == 200);
  CHECK(scrape.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(contains(scrape.body,
                 "kinformer_apiserver_requests_total{verb=\"list\",resource=\"pods\",code=\"401\"} 1\n"));
  CHECK(contains(scrape.body,
                 "kinformer_apiserver_requests_total{verb=\"list\",resource=\"pods\",code=\"200\"} 1\n"));
  CHECK(http_request(metrics_port, "GET", "/readyz").status == 200);
  CHECK(http_request(metrics_port, "GET", "/healthz").status == 200);

  ::kill(server.pid(), SIGTERM);
  REQUIRE(server.wait_exit(15s) == 0);
  auto log = server.stderr_text();
  INFO(log);
  CHECK(contains(log, "info apiserver serving url=http://127.0.0.1:"));
  CHECK(contains(log, "auth=\"bearer token\""));
  CHECK(contains(log, "info apiserver request peer="));
  CHECK(contains(log, "info apiserver shutting down signal=SIGTERM"));
  CHECK_FALSE(contains(log, token));
  std::remove((dir + "/token").c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace kinformer::apiserver
