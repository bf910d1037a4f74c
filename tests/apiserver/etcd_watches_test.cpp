// The etcd storage's watches (apiserver/storage/etcd/etcd_watches.hpp): one etcd watch per
// resource type, shared by every watcher of the type on the server, as
// kube-apiserver's watch cache does. Each test starts its own etcd and counts what
// etcd itself reports (its /metrics), so a watch per client or one for the whole
// prefix shows.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/loopback_http.hpp"
#include "tests/apiserver/test_server.hpp"
#include "tests/support/etcd_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/metrics_text.hpp"
#include "tests/support/widget_crd.hpp"
#include "tests/support/objects.hpp"

namespace kinformer::testing {
namespace {

using nlohmann::json;

/// One of etcd's own gauges from its /metrics (-1: none).
int etcd_gauge(const EtcdProcess& etcd, const std::string& name) {
  auto reply = http_request(etcd.client_port(), "GET", "/metrics");
  if (reply.status != 200) return -1;
  auto value = sample(reply.body, name);
  return value ? static_cast<int>(*value) : -1;
}

/// etcd's count of open watchers, of every watch stream.
int etcd_watchers(const EtcdProcess& etcd) { return etcd_gauge(etcd, "etcd_debugging_mvcc_watcher_total"); }

apiserver::ServerOptions on_etcd(const EtcdProcess& etcd) {
  apiserver::ServerOptions options;
  options.etcd.endpoints = {etcd.endpoint()};
  options.etcd.compaction_interval = std::chrono::milliseconds(0);
  options.etcd.watch_failure_grace = std::chrono::milliseconds(1000);
  return options;
}

std::string secret(const std::string& name) {
  return json{{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", name}}}, {"data", {{"k", "dg=="}}}}
      .dump();
}

std::string rv_of(const HttpReply& reply) {
  return json::parse(reply.body)["metadata"]["resourceVersion"].get<std::string>();
}

const std::string configmaps = "/api/v1/namespaces/default/configmaps";
const std::string secrets = "/api/v1/namespaces/default/secrets";

TEST_CASE("An API server on etcd has one etcd watch per served type however many clients watch",
          "[apiserver][etcd][item-16][integration]") {
  EtcdProcess etcd;
  if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
  TestServer server(on_etcd(etcd));
  const int types = static_cast<int>(server.server().registry().all().size());
  eventually([&] { return etcd_watchers(etcd) == types; }, "etcd to count one watcher per served type");

  // 40 clients on two types, each shown live by the event of a create.
  auto first = server.request("POST", configmaps, configmap_text("first"));
  REQUIRE(first.status == 201);
  const auto rv = rv_of(first);
  std::vector<std::unique_ptr<WatchStream>> watches;
  for (int i = 0; i < 20; ++i)
    for (const auto* path : {&configmaps, &secrets}) {
      watches.push_back(std::make_unique<WatchStream>(server.port(), *path + "?watch=1&resourceVersion=" + rv));
      REQUIRE(watches.back()->status() == 200);
    }
  REQUIRE(server.request("POST", configmaps, configmap_text("second")).status == 201);
  REQUIRE(server.request("POST", secrets, secret("s")).status == 201);
  for (auto& watch : watches) {
    auto line = watch->next_line(std::chrono::seconds(10));
    REQUIRE(line);
    CHECK(json::parse(*line)["type"] == "ADDED");
  }
  CHECK(etcd_watchers(etcd) == types);
  CHECK(etcd_gauge(etcd, "etcd_debugging_mvcc_watch_stream_total") == types);  // one gateway stream each

  // A kind served at run time gets its own watch; its retirement closes it.
  REQUIRE(server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd().dump())
              .status == 201);
  eventually([&] { return etcd_watchers(etcd) == types + 1; }, "a watch for the CRD's kind");
  REQUIRE(server.request("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
              .status == 200);
  eventually([&] { return etcd_watchers(etcd) == types; }, "the retired kind's watch to close");
}

TEST_CASE("On etcd a busy type does not push an idle type's events out of the watch window",
          "[apiserver][etcd][item-16][integration]") {
  EtcdProcess etcd;
  if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
  auto options = on_etcd(etcd);
  options.watch_history = 5;
  TestServer server(options);
  auto quiet = server.request("POST", configmaps, configmap_text("quiet"));
  REQUIRE(quiet.status == 201);
  for (int i = 0; i < 20; ++i) REQUIRE(server.request("POST", secrets, secret("s" + std::to_string(i))).status == 201);
  auto next = server.request("POST", configmaps, configmap_text("next"));
  REQUIRE(next.status == 201);

  // 21 writes after `quiet`, 2 of them configmaps: within the configmaps' window of 5.
  WatchStream watch(server.port(), configmaps + "?watch=1&resourceVersion=" + rv_of(quiet));
  REQUIRE(watch.status() == 200);
  auto line = watch.next_line(std::chrono::seconds(10));
  REQUIRE(line);
  auto event = json::parse(*line);
  CHECK(event["type"] == "ADDED");
  CHECK(event["object"]["metadata"]["name"] == "next");
  // The secrets' own window did move on: a watch from before its 5 newest is 410.
  WatchStream stale(server.port(), secrets + "?watch=1&resourceVersion=" + rv_of(quiet));
  REQUIRE(stale.status() == 200);
  auto gone = stale.next_line(std::chrono::seconds(10));
  REQUIRE(gone);
  CHECK(json::parse(*gone)["object"]["code"] == 410);
}

TEST_CASE("On etcd an idle type's watcher bookmarks as other types change",
          "[apiserver][etcd][item-16][integration]") {
  EtcdProcess etcd;
  if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
  auto options = on_etcd(etcd);
  options.bookmark_interval = std::chrono::seconds(1);
  TestServer server(options);
  auto idle = server.request("POST", secrets, secret("idle"));
  REQUIRE(idle.status == 201);
  WatchStream watch(server.port(), secrets + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv_of(idle));
  REQUIRE(watch.status() == 200);
  auto busy = server.request("POST", configmaps, configmap_text("busy"));
  REQUIRE(busy.status == 201);
  const auto target = std::stoull(rv_of(busy));
  const auto problem = watch.bookmark_past(target);
  INFO(problem.value_or(""));
  CHECK_FALSE(problem);
}

TEST_CASE("A CRD's kind created through one replica on etcd is watchable on another",
          "[apiserver][etcd][crd][item-16][integration]") {
  EtcdProcess etcd;
  if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
  TestServer a(on_etcd(etcd));
  TestServer b(on_etcd(etcd));
  const std::string widgets = "/apis/example.com/v1/namespaces/default/widgets";
  REQUIRE(a.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd().dump()).status ==
          201);
  eventually([&] { return b.request("GET", widgets).status == 200; }, "replica B to serve the CRD's kind");
  auto listed = b.request("GET", widgets);
  WatchStream watch(b.port(), widgets + "?watch=1&resourceVersion=" + rv_of(listed));
  REQUIRE(watch.status() == 200);
  REQUIRE(a.request("POST", widgets, widget("w1", {{"size", 1}}).dump()).status == 201);
  auto line = watch.next_line(std::chrono::seconds(10));
  REQUIRE(line);
  auto event = json::parse(*line);
  CHECK(event["type"] == "ADDED");
  CHECK(event["object"]["metadata"]["name"] == "w1");

  // The kind's retirement ends B's watch with 410 (the client relists: 404).
  REQUIRE(a.request("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
              .status == 200);
  bool expired = false;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (!expired && std::chrono::steady_clock::now() < end) {
    auto next = watch.next_line(std::chrono::seconds(5));
    REQUIRE(next);  // the DELETED of w1 may come first
    auto parsed = json::parse(*next);
    expired = parsed["type"] == "ERROR" && parsed["object"]["code"] == 410;
  }
  CHECK(expired);
}

TEST_CASE("On etcd the watchers of every type get 410 once etcd is away longer than the grace",
          "[apiserver][etcd][item-16][integration]") {
  EtcdProcess etcd;
  if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
  TestServer server(on_etcd(etcd));
  auto kept = server.request("POST", configmaps, configmap_text("kept"));
  REQUIRE(kept.status == 201);
  std::vector<std::unique_ptr<WatchStream>> watches;
  for (const auto* path : {&configmaps, &secrets}) {
    watches.push_back(std::make_unique<WatchStream>(server.port(), *path + "?watch=1&resourceVersion=" + rv_of(kept)));
    REQUIRE(watches.back()->status() == 200);
  }
  etcd.stop();
  for (auto& watch : watches) {
    auto line = watch->next_line(std::chrono::seconds(10));  // the grace is 1 s
    REQUIRE(line);
    auto event = json::parse(*line);
    CHECK(event["type"] == "ERROR");
    CHECK(event["object"]["code"] == 410);
  }
  REQUIRE(etcd.start());
  eventually([&] { return server.request("POST", secrets, secret("after")).status == 201; },
             "creates to work again once etcd is back");
  auto relisted = server.request("GET", configmaps);
  REQUIRE(relisted.status == 200);
  WatchStream again(server.port(), configmaps + "?watch=1&resourceVersion=" + rv_of(relisted));
  REQUIRE(again.status() == 200);
  REQUIRE(server.request("POST", configmaps, configmap_text("later")).status == 201);
  auto line = again.next_line(std::chrono::seconds(10));
  REQUIRE(line);
  CHECK(json::parse(*line)["object"]["metadata"]["name"] == "later");
}

}  // namespace
}  // namespace kinformer::testing
