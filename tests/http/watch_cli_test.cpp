// `kinformer watch` (issue 15, item 4) as the real binary against the embedded API
// server: each change printed with its key, resourceVersion and changed fields,
// the label selector, and the summary after SIGINT / SIGTERM.
#include <csignal>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/apiserver/kinformer_process.hpp"
#include "tests/apiserver/test_server.hpp"
#include "tests/support/text.hpp"
#include "tests/support/objects.hpp"

using kinformer::testing::KinformerProcess;
using kinformer::testing::TestServer;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

using kinformer::testing::pods_path;

std::string pod(const std::string& name, const std::string& app) {
  return json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"labels", {{"app", app}}}}},
              {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "nginx"}}})}}}}
      .dump();
}

std::string rv_of(const kinformer::testing::HttpReply& reply) {
  return json::parse(reply.body)["metadata"]["resourceVersion"].get<std::string>();
}

using kinformer::testing::contains;

}  // namespace

TEST_CASE("kinformer watch prints each change as json and a summary on SIGINT",
          "[watch][cli][item-4][integration]") {
  REQUIRE_BINARY();
  TestServer server;
  auto first = server.request("POST", pods_path, pod("web-0", "web"));
  REQUIRE(first.status == 201);
  KinformerProcess watch({"watch", "pods", "--server", server.server().url(), "-n", "default", "-o", "json"});
  auto line = watch.first_line(20s);
  INFO("stderr: " << watch.stderr_text());
  REQUIRE(!line.empty());
  CHECK(json::parse(line) ==
        json{{"type", "ADDED"}, {"key", "default/web-0"}, {"rv", rv_of(first)}, {"initial", true}});

  // One change at a time: the informer keeps each key's order, not the order across keys.
  std::vector<json> events;
  auto next_event = [&] {
    auto next = watch.first_line(20s);
    REQUIRE(!next.empty());
    events.push_back(json::parse(next));
  };
  auto second = server.request("POST", pods_path, pod("web-1", "web"));
  REQUIRE(second.status == 201);
  next_event();
  auto patched = server.request("PATCH", pods_path + "/web-0", R"({"metadata":{"labels":{"tier":"frontend"}}})",
                                "application/merge-patch+json");
  REQUIRE(patched.status == 200);
  next_event();
  REQUIRE(server.request("DELETE", pods_path + "/web-1").status == 200);
  next_event();
  CHECK(events[0] == json{{"type", "ADDED"}, {"key", "default/web-1"}, {"rv", rv_of(second)}});
  CHECK(events[1] == json{{"type", "UPDATED"},
                          {"key", "default/web-0"},
                          {"rv", rv_of(patched)},
                          {"changed", json::array({"metadata.labels.tier"})}});
  CHECK(events[2]["type"] == "DELETED");
  CHECK(events[2]["key"] == "default/web-1");

  ::kill(watch.pid(), SIGINT);
  auto summary = watch.first_line(20s);
  REQUIRE(!summary.empty());
  CHECK(json::parse(summary) ==
        json{{"summary", {{"added", 2}, {"updated", 1}, {"deleted", 1}, {"relists", 0}, {"cache", 1}}}});
  CHECK(watch.wait_exit(20s) == 0);
  auto log = watch.stderr_text();
  // The synced line is written on the first 100 ms tick after the sync, when web-1 (created as
  // soon as the first line came) may already be in the cache: 1 or 2, never anything else.
  CHECK((contains(log, "info watch synced informer=watch resource=pods cache=1") ||
         contains(log, "info watch synced informer=watch resource=pods cache=2")));
  CHECK(contains(log, "info watch stopping signal=SIGINT"));
}

TEST_CASE("kinformer watch lines follow the label selector and SIGTERM ends with the summary",
          "[watch][cli][item-4][integration]") {
  REQUIRE_BINARY();
  TestServer server;
  REQUIRE(server.request("POST", pods_path, pod("db-0", "db")).status == 201);
  KinformerProcess watch({"watch", "pods", "--server", server.server().url(), "-l", "app=web"});
  INFO("stderr: " << watch.stderr_text());
  REQUIRE(server.request("POST", pods_path, pod("db-1", "db")).status == 201);
  auto web = server.request("POST", pods_path, pod("web-0", "web"));
  REQUIRE(web.status == 201);
  auto line = watch.first_line(20s);  // db-0 and db-1 never show
  CHECK(line.rfind("ADDED   default/web-0 rv=" + rv_of(web), 0) == 0);
  ::kill(watch.pid(), SIGTERM);
  CHECK(watch.first_line(20s) == "summary: added=1 updated=0 deleted=0 relists=0 cache=1");
  CHECK(watch.wait_exit(20s) == 0);
}

TEST_CASE("kinformer watch refuses bad usage with exit code 2", "[watch][cli][item-4][integration]") {
  REQUIRE_BINARY();
  CHECK(KinformerProcess({"watch"}).wait_exit(10s) == 2);
  CHECK(KinformerProcess({"watch", "pods", "-o", "yaml", "--server", "http://127.0.0.1:1"}).wait_exit(10s) ==
        2);
  CHECK(KinformerProcess({"watch", "a/b/c/d"}).wait_exit(10s) == 2);
  CHECK(KinformerProcess({"watch", "pods", "-l", "app in (", "--server", "http://127.0.0.1:1"})
            .wait_exit(10s) == 2);
  CHECK(KinformerProcess({"watch", "pods", "--server", "http://x", "--context", "c"}).wait_exit(10s) == 2);
}
