// Several `kinformer apiserver` processes on one etcd (issue 16): what one replica
// acknowledges, the others serve and stream; a replica killed with SIGKILL loses
// nothing it acknowledged; while etcd is away requests get a 503/504 Status and
// everything resumes when it returns. The test starts its own etcd.
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/apiserver/kinformer_process.hpp"
#include "tests/support/loopback_http.hpp"
#include "tests/apiserver/test_server.hpp"
#include "tests/support/etcd_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/widget_crd.hpp"
#include "tests/support/objects.hpp"

namespace kinformer::testing {
namespace {

using nlohmann::json;

TEST_CASE("Two API server processes on one etcd share objects and watches and survive a SIGKILL",
          "[apiserver][item-16][integration]") {
  REQUIRE(kinformer_binary_built());
  EtcdProcess etcd;
  if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
  EtcdReplica a(etcd.endpoint());
  EtcdReplica b(etcd.endpoint());

  auto first = http_request(a.port, "POST", configmaps_path, configmap_text("first"));
  REQUIRE(first.status == 201);
  const auto rv = json::parse(first.body)["metadata"]["resourceVersion"].get<std::string>();
  auto on_b = http_request(b.port, "GET", configmaps_path + "/first");
  REQUIRE(on_b.status == 200);
  CHECK(json::parse(on_b.body)["metadata"]["resourceVersion"] == rv);

  WatchStream watch(b.port, configmaps_path + "?watch=1&resourceVersion=" + rv);
  REQUIRE(watch.status() == 200);
  REQUIRE(http_request(a.port, "POST", configmaps_path, configmap_text("second")).status == 201);
  auto line = watch.next_line(std::chrono::seconds(10));
  REQUIRE(line);
  auto event = json::parse(*line);
  CHECK(event["type"] == "ADDED");
  CHECK(event["object"]["metadata"]["name"] == "second");

  // Every create A acknowledged survives A's SIGKILL; clients move on to B.
  std::vector<std::string> acknowledged;
  for (int i = 0; i < 20; ++i) {
    auto name = "acked-" + std::to_string(i);
    if (http_request(a.port, "POST", configmaps_path, configmap_text(name)).status == 201) acknowledged.push_back(name);
  }
  ::kill(a.process.pid(), SIGKILL);
  CHECK(a.process.wait_exit(std::chrono::seconds(10)) == 128 + SIGKILL);
  REQUIRE(acknowledged.size() == 20);
  auto list = http_request(b.port, "GET", configmaps_path);
  REQUIRE(list.status == 200);
  std::vector<std::string> listed;
  const auto items = json::parse(list.body)["items"];
  for (const auto& item : items) listed.push_back(item["metadata"]["name"].get<std::string>());
  for (const auto& name : acknowledged) CHECK(std::find(listed.begin(), listed.end(), name) != listed.end());
  for (int seen = 0; seen < 20;) {  // B's watcher streamed them too
    auto next = watch.next_line(std::chrono::seconds(10));
    REQUIRE(next);
    if (json::parse(*next)["object"]["metadata"]["name"].get<std::string>().rfind("acked-", 0) == 0) ++seen;
  }
  CHECK(http_request(b.port, "POST", configmaps_path, configmap_text("after-the-kill")).status == 201);
}

TEST_CASE("An API server on etcd answers 503 or 504 while etcd is away and resumes when it returns",
          "[apiserver][item-16][integration]") {
  REQUIRE(kinformer_binary_built());
  EtcdProcess etcd;
  if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
  EtcdReplica server(etcd.endpoint());
  auto kept = http_request(server.port, "POST", configmaps_path, configmap_text("kept"));
  REQUIRE(kept.status == 201);
  const auto rv = json::parse(kept.body)["metadata"]["resourceVersion"].get<std::string>();
  WatchStream watch(server.port, configmaps_path + "?watch=1&resourceVersion=" + rv);
  REQUIRE(watch.status() == 200);

  etcd.stop();
  auto refused = http_request(server.port, "POST", configmaps_path, configmap_text("refused"));
  CHECK((refused.status == 503 || refused.status == 504));
  auto status = json::parse(refused.body, nullptr, false);
  REQUIRE(status.is_object());
  CHECK(status["kind"] == "Status");
  CHECK(status["code"] == refused.status);
  // The watcher is not left silent: it gets a 410 ERROR event and the stream ends.
  auto line = watch.next_line(std::chrono::seconds(15));
  INFO("the server's log: " << server.process.stderr_text());
  REQUIRE(line);
  auto event = json::parse(*line);
  CHECK(event["type"] == "ERROR");
  CHECK(event["object"]["code"] == 410);

  REQUIRE(etcd.start());
  eventually([&] { return http_request(server.port, "POST", configmaps_path, configmap_text("back")).status == 201; },
             "creates to succeed again once etcd is back");
  auto read = http_request(server.port, "GET", configmaps_path + "/kept");
  REQUIRE(read.status == 200);
  CHECK(json::parse(read.body)["metadata"]["resourceVersion"] == rv);
}

TEST_CASE("An idle watch on etcd bookmarks at etcd's progress, past writes it does not watch",
          "[apiserver][item-16][integration]") {
  REQUIRE(kinformer_binary_built());
  EtcdProcess etcd;
  if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
  EtcdReplica server(etcd.endpoint(), {"--bookmark-interval", "1"});
  auto kept = http_request(server.port, "POST", configmaps_path, configmap_text("kept"));
  REQUIRE(kept.status == 201);
  const auto rv = json::parse(kept.body)["metadata"]["resourceVersion"].get<std::string>();
  WatchStream watch(server.port, configmaps_path + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv);
  REQUIRE(watch.status() == 200);
  // A write outside the server's prefix: only etcd's progress notifications tell the server of it.
  auto put = http_request(etcd.client_port(), "POST", "/v3/kv/put",
                          json{{"key", "L290aGVyL2tleQ=="}, {"value", "eA=="}}.dump());  // "/other/key" = "x"
  REQUIRE(put.status == 200);
  const auto outside = std::stoull(json::parse(put.body)["header"]["revision"].get<std::string>());
  const auto problem = watch.bookmark_past(outside);
  INFO(problem.value_or(""));
  CHECK_FALSE(problem);
}

}  // namespace
// Issue 17 on etcd: a CRD written through one replica is served by every other one
// (from its watch), by a server started later (from etcd at start), and its deletion
// stops them all serving the kind.
TEST_CASE("Servers on one etcd serve the CRDs etcd holds at start and learn those another replica writes",
          "[apiserver][crd][item-17][integration]") {
  EtcdProcess etcd;
  if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
  apiserver::ServerOptions options;
  options.etcd.endpoints = {etcd.endpoint()};
  const std::string group_path = "/apis/example.com/v1";
  const std::string widgets = group_path + "/namespaces/default/widgets";
  TestServer a(options);
  TestServer b(options);  // running before the CRD exists
  REQUIRE(a.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd().dump()).status ==
          201);
  eventually([&] { return b.request("GET", group_path).status == 200; },
             "replica B to serve the kind of the CRD written through A (from its etcd watch)");
  REQUIRE(a.request("POST", widgets, widget("w1", {{"size", 1}}).dump()).status == 201);
  eventually([&] { return b.request("GET", widgets + "/w1").status == 200; }, "replica B to read A's widget");
  CHECK(b.request("POST", widgets, widget("bad", {{"size", "big"}}).dump()).status == 422);  // B has the schema

  TestServer c(options);  // started on an etcd that already holds the CRD: serves it at once
  CHECK(c.request("GET", widgets + "/w1").status == 200);
  auto discovery = c.request("GET", group_path);
  CHECK(discovery.status == 200);
  CHECK_THAT(discovery.body, Catch::Contains("\"widgets\""));

  REQUIRE(a.request("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
              .status == 200);
  for (auto* server : {&b, &c})
    eventually([&] { return server->request("GET", group_path).status == 404; },
               "every replica to stop serving the kind of the deleted CRD");
}

}  // namespace kinformer::testing
