// Protocol tests over real loopback HTTP (kube-api-protocol.md Part A).
#include <random>
#include <thread>

#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/apiserver/test_server.hpp"

using kinformer::testing::TestServer;
using kinformer::testing::WatchStream;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

json line_json(const std::optional<std::string>& line) {
  REQUIRE(line.has_value());
  return json::parse(*line);
}

std::string rv_of(const json& object) { return object["metadata"]["resourceVersion"].get<std::string>(); }

// A protobuf length-delimited field (lengths below 128 only).
std::string pb(int number, const std::string& bytes) {
  return std::string(1, static_cast<char>(number << 3 | 2)) + static_cast<char>(bytes.size()) + bytes;
}

}  // namespace

TEST_CASE("version reports Kubernetes 1.32 so the kubectl dispatcher runs kubectl 1.32", "[apiserver][integration]") {
  TestServer t;
  auto reply = t.request("GET", "/version?timeout=5s");
  REQUIRE(reply.status == 200);
  auto v = TestServer::json_of(reply);
  CHECK(v["major"] == "1");
  CHECK(v["minor"] == "32");
}

TEST_CASE("discovery answers aggregated documents with the aggregated content type and legacy ones otherwise",
          "[apiserver][integration]") {
  auto registry = kinformer::apiserver::ResourceRegistry::with_builtins();
  auto type = kinformer::apiserver::ResourceRegistry::parse_spec("metrics.kinformer.io/v1/MetricSeries/metricseries");
  REQUIRE(type);
  REQUIRE(registry.add(type.value()));
  TestServer t({}, std::move(registry));
  const std::string agg =
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;"
      "v=v2beta1;as=APIGroupDiscoveryList,application/json";

  auto core = t.request("GET", "/api", "", "", {{"Accept", agg}});
  REQUIRE(core.status == 200);
  CHECK(core.headers["content-type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  auto core_json = TestServer::json_of(core);
  std::vector<std::string> resources;
  for (const auto& r : core_json["items"][0]["versions"][0]["resources"]) resources.push_back(r["resource"]);
  CHECK(resources == std::vector<std::string>{"namespaces", "pods", "configmaps", "services", "events", "secrets",
                                              "serviceaccounts", "persistentvolumeclaims", "endpoints", "persistentvolumes",
                                              "replicationcontrollers", "nodes"});

  auto groups = t.request("GET", "/apis", "", "", {{"Accept", agg}});
  auto groups_json = TestServer::json_of(groups);
  nlohmann::json metrics;
  for (const auto& g : groups_json["items"])
    if (g["metadata"]["name"] == "metrics.kinformer.io") metrics = g;
  REQUIRE(metrics.is_object());
  CHECK(metrics["versions"][0]["resources"][0]["scope"] == "Namespaced");

  auto legacy = TestServer::json_of(t.request("GET", "/api"));
  CHECK(legacy["kind"] == "APIVersions");
  auto v1 = TestServer::json_of(t.request("GET", "/api/v1"));
  CHECK(v1["kind"] == "APIResourceList");
  CHECK(v1["resources"][0]["name"] == "namespaces");
  CHECK(v1["resources"][0]["namespaced"] == false);
  auto group = TestServer::json_of(t.request("GET", "/apis/metrics.kinformer.io/v1"));
  CHECK(group["resources"][0]["kind"] == "MetricSeries");
  CHECK(t.request("GET", "/apis/nope.example.com/v1").status == 404);
}

TEST_CASE("the OpenAPI v3 stub declares a PATCH with fieldValidation for every kind", "[apiserver][integration]") {
  TestServer t;
  auto root = TestServer::json_of(t.request("GET", "/openapi/v3"));
  std::string url = root["paths"]["api/v1"]["serverRelativeURL"];
  auto doc = TestServer::json_of(t.request("GET", url));
  const auto& pod = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"];
  CHECK(pod["x-kubernetes-group-version-kind"]["kind"] == "Pod");
  CHECK(pod["parameters"][0]["name"] == "fieldValidation");
  CHECK(doc["paths"].contains("/api/v1/namespaces/{name}"));
  CHECK(t.request("GET", "/openapi/v2").status == 404);
}

TEST_CASE("create fills server metadata and one global revision orders every write", "[apiserver][integration]") {
  TestServer t;
  auto a = t.create_configmap("a");
  auto b = t.create_configmap("b");
  CHECK(a["metadata"]["uid"].get<std::string>().size() == 36);
  CHECK(a["metadata"]["creationTimestamp"].get<std::string>().back() == 'Z');
  CHECK(a["metadata"]["namespace"] == "default");
  CHECK(std::stoull(rv_of(b)) == std::stoull(rv_of(a)) + 1);

  auto again = t.request("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"a"}})");
  CHECK(again.status == 409);
  CHECK(TestServer::json_of(again)["reason"] == "AlreadyExists");
  CHECK(TestServer::json_of(again)["message"] == "configmaps \"a\" already exists");

  auto generated = t.request("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"generateName":"gen-"}})");
  REQUIRE(generated.status == 201);
  auto name = TestServer::json_of(generated)["metadata"]["name"].get<std::string>();
  CHECK(name.size() == 9);
  CHECK(name.rfind("gen-", 0) == 0);

  auto missing_ns = t.request("POST", "/api/v1/namespaces/nowhere/configmaps", R"({"metadata":{"name":"x"}})");
  CHECK(missing_ns.status == 404);
  auto mismatch = t.request("POST", "/api/v1/namespaces/default/configmaps",
                            R"({"metadata":{"name":"x","namespace":"other"}})");
  CHECK(mismatch.status == 400);
  CHECK(TestServer::json_of(mismatch)["message"] ==
        "the namespace of the provided object does not match the namespace sent on the request");
}

TEST_CASE("get returns the object and a missing one is a NotFound Status", "[apiserver][integration]") {
  TestServer t;
  t.create_configmap("present");
  auto got = t.request("GET", "/api/v1/namespaces/default/configmaps/present");
  REQUIRE(got.status == 200);
  CHECK(TestServer::json_of(got)["kind"] == "ConfigMap");
  auto missing = t.request("GET", "/api/v1/namespaces/default/configmaps/absent");
  CHECK(missing.status == 404);
  auto status = TestServer::json_of(missing);
  CHECK(status["kind"] == "Status");
  CHECK(status["reason"] == "NotFound");
  CHECK(status["message"] == "configmaps \"absent\" not found");
  CHECK(status["details"]["kind"] == "configmaps");
}

TEST_CASE("list pages with limit and continue read one snapshot", "[apiserver][integration]") {
  TestServer t;
  for (int i = 0; i < 5; ++i) t.create_configmap("cm-" + std::to_string(i));
  auto first = TestServer::json_of(t.request("GET", "/api/v1/namespaces/default/configmaps?limit=2"));
  CHECK(first["kind"] == "ConfigMapList");
  REQUIRE(first["items"].size() == 2);
  CHECK_FALSE(first["items"][0].contains("kind"));  // built-in list items omit kind/apiVersion
  CHECK(first["metadata"]["remainingItemCount"] == 3);
  std::string list_rv = first["metadata"]["resourceVersion"];
  // A write between pages must not show up in later pages.
  t.create_configmap("cm-9");
  std::vector<std::string> names;
  for (auto& item : first["items"]) names.push_back(item["metadata"]["name"]);
  std::string token = first["metadata"]["continue"];
  while (!token.empty()) {
    auto page = TestServer::json_of(t.request("GET", "/api/v1/namespaces/default/configmaps?limit=2&continue=" + token));
    CHECK(page["metadata"]["resourceVersion"] == list_rv);
    for (auto& item : page["items"]) names.push_back(item["metadata"]["name"]);
    token = page["metadata"].value("continue", "");
  }
  CHECK(names == std::vector<std::string>{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4"});

  auto with_rv = t.request("GET", "/api/v1/namespaces/default/configmaps?limit=2&resourceVersion=5&continue=" +
                                      first["metadata"]["continue"].get<std::string>());
  CHECK(with_rv.status == 400);
  CHECK(TestServer::json_of(with_rv)["message"] == "specifying resource version is not allowed when using continue");
}

TEST_CASE("an expired continue token is 410 Expired with a token for an inconsistent continuation",
          "[apiserver][integration]") {
  kinformer::apiserver::ServerOptions options;
  options.watch_history = 3;
  TestServer t(options);
  for (int i = 0; i < 4; ++i) t.create_configmap("cm-" + std::to_string(i));
  auto first = TestServer::json_of(t.request("GET", "/api/v1/namespaces/default/configmaps?limit=1"));
  for (int i = 0; i < 4; ++i) t.create_configmap("later-" + std::to_string(i));  // compacts the snapshot away
  auto expired = t.request("GET", "/api/v1/namespaces/default/configmaps?limit=1&continue=" +
                                      first["metadata"]["continue"].get<std::string>());
  REQUIRE(expired.status == 410);
  auto status = TestServer::json_of(expired);
  CHECK(status["reason"] == "Expired");
  CHECK(status["message"].get<std::string>().rfind("The provided continue parameter is too old", 0) == 0);
  std::string fresh = status["metadata"]["continue"];
  auto rest = t.request("GET", "/api/v1/namespaces/default/configmaps?limit=100&continue=" + fresh);
  REQUIRE(rest.status == 200);
  CHECK(TestServer::json_of(rest)["items"][0]["metadata"]["name"] == "cm-1");
}

TEST_CASE("list resourceVersion semantics: exact snapshots, too large is 504, bad match is 422",
          "[apiserver][integration]") {
  TestServer t;
  auto a = t.create_configmap("a");
  t.create_configmap("b");
  auto exact = TestServer::json_of(
      t.request("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=" + rv_of(a) + "&resourceVersionMatch=Exact"));
  CHECK(exact["items"].size() == 1);
  CHECK(exact["metadata"]["resourceVersion"] == rv_of(a));
  auto not_older = TestServer::json_of(t.request("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=" + rv_of(a)));
  CHECK(not_older["items"].size() == 2);
  auto too_large = t.request("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=999999");
  CHECK(too_large.status == 504);
  CHECK(TestServer::json_of(too_large)["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge");
  CHECK(t.request("GET", "/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact").status == 422);
  CHECK(t.request("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=0&resourceVersionMatch=Exact").status == 422);
  CHECK(t.request("GET", "/api/v1/namespaces/default/configmaps?sendInitialEvents=true").status == 422);
  CHECK(t.request("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=abc").status == 400);
  CHECK(t.request("GET", "/api/v1/namespaces/default/configmaps?limit=-1").status == 400);
}

TEST_CASE("a watch from a resourceVersion streams every later change in order, newline-terminated",
          "[apiserver][integration]") {
  TestServer t;
  auto a = t.create_configmap("a");
  WatchStream watch(t.port(), "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" + rv_of(a));
  REQUIRE(watch.status() == 200);
  t.create_configmap("b");
  CHECK(t.request("PATCH", "/api/v1/namespaces/default/configmaps/a", R"({"data":{"k":"changed"}})",
                  "application/merge-patch+json").status == 200);
  CHECK(t.request("DELETE", "/api/v1/namespaces/default/configmaps/b").status == 200);
  auto e1 = line_json(watch.next_line());
  auto e2 = line_json(watch.next_line());
  auto e3 = line_json(watch.next_line());
  CHECK(e1["type"] == "ADDED");
  CHECK(e1["object"]["metadata"]["name"] == "b");
  CHECK(e2["type"] == "MODIFIED");
  CHECK(e2["object"]["data"]["k"] == "changed");
  CHECK(e3["type"] == "DELETED");
  CHECK(e3["object"]["metadata"]["name"] == "b");
  CHECK(std::stoull(rv_of(e3["object"])) == std::stoull(rv_of(e2["object"])) + 1);
}

TEST_CASE("a watch without resourceVersion starts with synthetic ADDED events", "[apiserver][integration]") {
  TestServer t;
  t.create_configmap("a");
  t.create_configmap("b");
  WatchStream watch(t.port(), "/api/v1/namespaces/default/configmaps?watch=True");
  auto e1 = line_json(watch.next_line());
  auto e2 = line_json(watch.next_line());
  CHECK(e1["type"] == "ADDED");
  CHECK(e2["type"] == "ADDED");
  CHECK(e2["object"]["metadata"]["name"] == "b");
  t.create_configmap("c");
  CHECK(line_json(watch.next_line())["object"]["metadata"]["name"] == "c");
}

TEST_CASE("a watch from a compacted resourceVersion gets HTTP 200 and one ERROR 410 event, then the end",
          "[apiserver][integration]") {
  kinformer::apiserver::ServerOptions options;
  options.watch_history = 2;
  TestServer t(options);
  auto a = t.create_configmap("a");
  for (int i = 0; i < 3; ++i) t.create_configmap("x" + std::to_string(i));
  WatchStream watch(t.port(), "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + rv_of(a));
  REQUIRE(watch.status() == 200);
  auto error = line_json(watch.next_line());
  CHECK(error["type"] == "ERROR");
  CHECK(error["object"]["code"] == 410);
  CHECK(error["object"]["reason"] == "Expired");
  CHECK(error["object"]["message"].get<std::string>().rfind("too old resource version: " + rv_of(a), 0) == 0);
  CHECK_FALSE(watch.next_line(2s).has_value());
  CHECK(watch.ended());
}

TEST_CASE("bookmarks arrive periodically and the watch ends cleanly at timeoutSeconds", "[apiserver][integration]") {
  kinformer::apiserver::ServerOptions options;
  options.bookmark_interval = 200ms;
  TestServer t(options);
  auto a = t.create_configmap("a");
  auto started = std::chrono::steady_clock::now();
  WatchStream watch(t.port(), "/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=1"
                              "&resourceVersion=" + rv_of(a));
  t.create_configmap("other", {}, "kube-system");  // other namespace: the bookmark still advances past it
  auto bookmark = line_json(watch.next_line(3s));
  CHECK(bookmark["type"] == "BOOKMARK");
  CHECK(bookmark["object"]["kind"] == "ConfigMap");
  CHECK(std::stoull(rv_of(bookmark["object"])) == std::stoull(rv_of(a)) + 1);
  while (watch.next_line(3s)) {
  }
  CHECK(watch.ended());
  auto took = std::chrono::steady_clock::now() - started;
  CHECK(took >= 900ms);
  CHECK(took < 5s);
}

TEST_CASE("sendInitialEvents ends the initial state with an initial-events-end bookmark", "[apiserver][integration]") {
  TestServer t;
  t.create_configmap("a");
  WatchStream watch(t.port(), "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true"
                              "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true");
  CHECK(line_json(watch.next_line())["type"] == "ADDED");
  auto end = line_json(watch.next_line());
  CHECK(end["type"] == "BOOKMARK");
  CHECK(end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true");
  CHECK(t.request("GET", "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true").status == 422);
}

TEST_CASE("update with a stale resourceVersion is 409 Conflict and a no-op update keeps the revision",
          "[apiserver][integration]") {
  TestServer t;
  auto a = t.create_configmap("a");
  auto fresh = a;
  fresh["data"]["k"] = "v2";
  auto ok = t.request("PUT", "/api/v1/namespaces/default/configmaps/a", fresh.dump());
  REQUIRE(ok.status == 200);
  auto updated = TestServer::json_of(ok);
  CHECK(updated["data"]["k"] == "v2");
  CHECK(updated["metadata"]["uid"] == a["metadata"]["uid"]);
  auto stale = t.request("PUT", "/api/v1/namespaces/default/configmaps/a", fresh.dump());  // carries a's old RV
  CHECK(stale.status == 409);
  CHECK(TestServer::json_of(stale)["reason"] == "Conflict");
  CHECK(TestServer::json_of(stale)["message"].get<std::string>().find("the object has been modified") != std::string::npos);
  auto same = t.request("PUT", "/api/v1/namespaces/default/configmaps/a", updated.dump());
  CHECK(rv_of(TestServer::json_of(same)) == rv_of(updated));
  CHECK(t.request("PUT", "/api/v1/namespaces/default/configmaps/missing", R"({"metadata":{"name":"missing"}})").status == 404);
  CHECK(t.request("PUT", "/api/v1/namespaces/default/configmaps/a", R"({"metadata":{"name":"other"}})").status == 400);
}

TEST_CASE("patches: merge, strategic merge by container name, JSON patch with test, apply creates",
          "[apiserver][integration]") {
  TestServer t;
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}, {"labels", {{"app", "a"}}}}},
              {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox"}}, {{"name", "side"}, {"image", "nginx"}}}}}}};
  REQUIRE(t.request("POST", "/api/v1/namespaces/default/pods", pod.dump()).status == 201);
  const std::string item = "/api/v1/namespaces/default/pods/p";

  auto merged = TestServer::json_of(t.request("PATCH", item, R"({"metadata":{"labels":{"app":null,"tier":"web"}}})",
                                              "application/merge-patch+json"));
  CHECK_FALSE(merged["metadata"]["labels"].contains("app"));
  CHECK(merged["metadata"]["labels"]["tier"] == "web");

  auto strategic = TestServer::json_of(t.request(
      "PATCH", item, R"({"spec":{"$setElementOrder/containers":[{"name":"main"},{"name":"side"}],"containers":[{"name":"side","image":"nginx:2"}]}})",
      "application/strategic-merge-patch+json"));
  REQUIRE(strategic["spec"]["containers"].size() == 2);
  CHECK(strategic["spec"]["containers"][0]["image"] == "busybox");
  CHECK(strategic["spec"]["containers"][1]["image"] == "nginx:2");
  auto removed = TestServer::json_of(t.request("PATCH", item, R"({"spec":{"containers":[{"name":"side","$patch":"delete"}]}})",
                                               "application/strategic-merge-patch+json"));
  CHECK(removed["spec"]["containers"].size() == 1);

  auto jp = t.request("PATCH", item, R"([{"op":"test","path":"/metadata/labels/tier","value":"web"},{"op":"replace","path":"/metadata/labels/tier","value":"db"}])",
                      "application/json-patch+json");
  REQUIRE(jp.status == 200);
  CHECK(TestServer::json_of(jp)["metadata"]["labels"]["tier"] == "db");
  auto failed_test = t.request("PATCH", item, R"([{"op":"test","path":"/metadata/labels/tier","value":"web"}])",
                               "application/json-patch+json");
  CHECK(failed_test.status == 422);

  auto status_ignored = TestServer::json_of(t.request("PATCH", item, R"({"status":{"phase":"Running"}})",
                                                      "application/merge-patch+json"));
  CHECK(status_ignored["status"]["phase"] == "Pending");  // the main resource does not write status
  auto status_sub = TestServer::json_of(t.request("PATCH", item + "/status", R"({"status":{"phase":"Running"},"spec":{"nodeName":"n1"}})",
                                                  "application/merge-patch+json"));
  CHECK(status_sub["status"]["phase"] == "Running");
  CHECK_FALSE(status_sub["spec"].contains("nodeName"));  // ...and /status writes nothing else

  auto apply = t.request("PATCH", "/api/v1/namespaces/default/configmaps/applied?fieldManager=test",
                         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  x: \"1\"\n",
                         "application/apply-patch+yaml");
  CHECK(apply.status == 201);
  auto reapply = t.request("PATCH", "/api/v1/namespaces/default/configmaps/applied?fieldManager=test",
                           R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied"},"data":{"x":"2"}})",
                           "application/apply-patch+yaml");
  CHECK(reapply.status == 200);
  CHECK(TestServer::json_of(reapply)["data"]["x"] == "2");
  CHECK(t.request("PATCH", "/api/v1/namespaces/default/configmaps/applied", "{}", "application/apply-patch+yaml").status == 422);
}

TEST_CASE("server-side apply removes what the same field manager applied before and no longer applies",
          "[apiserver][integration]") {
  TestServer t;
  const std::string item = "/api/v1/namespaces/default/pods/ssa?fieldManager=tool";
  json config = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "ssa"}, {"labels", {{"a", "1"}, {"b", "2"}}}}},
                 {"spec", {{"containers", {{{"name", "one"}, {"image", "busybox"}}, {{"name", "two"}, {"image", "nginx"}}}}}}};
  REQUIRE(t.request("PATCH", item, config.dump(), "application/apply-patch+yaml").status == 201);
  // Another manager's label survives the first manager's removals.
  REQUIRE(t.request("PATCH", "/api/v1/namespaces/default/pods/ssa", R"({"metadata":{"labels":{"other":"x"}}})",
                    "application/merge-patch+json").status == 200);
  config["metadata"]["labels"].erase("b");
  config["spec"]["containers"] = {{{"name", "one"}, {"image", "busybox:2"}}};
  auto reply = t.request("PATCH", item, config.dump(), "application/apply-patch+yaml");
  REQUIRE(reply.status == 200);
  auto pod = TestServer::json_of(reply);
  CHECK(pod["metadata"]["labels"] == json({{"a", "1"}, {"other", "x"}}));
  REQUIRE(pod["spec"]["containers"].size() == 1);
  CHECK(pod["spec"]["containers"][0]["image"] == "busybox:2");
}

TEST_CASE("server-side apply keeps each field manager's fields in metadata.managedFields, shared fields stay",
          "[apiserver][ssa][integration]") {
  TestServer t;
  const std::string item = "/api/v1/namespaces/default/configmaps/owned";
  const std::string apply_content = "application/apply-patch+yaml";
  json config = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "owned"}, {"labels", {{"team", "a"}}}}},
                 {"data", {{"a", "1"}}}};
  auto created = t.request("PATCH", item + "?fieldManager=tool", config.dump(), apply_content);
  REQUIRE(created.status == 201);
  auto entries = TestServer::json_of(created)["metadata"]["managedFields"];
  REQUIRE(entries.size() == 1);
  CHECK(entries[0]["manager"] == "tool");
  CHECK(entries[0]["operation"] == "Apply");
  CHECK(entries[0]["apiVersion"] == "v1");
  CHECK(entries[0]["fieldsType"] == "FieldsV1");
  CHECK(entries[0]["time"].is_string());
  CHECK(entries[0]["fieldsV1"] == json::parse(R"({"f:data":{"f:a":{}},"f:metadata":{"f:labels":{"f:team":{}}}})"));
  const auto rv = TestServer::json_of(created)["metadata"]["resourceVersion"];
  auto again = t.request("PATCH", item + "?fieldManager=tool", config.dump(), apply_content);
  CHECK(TestServer::json_of(again)["metadata"]["resourceVersion"] == rv);  // the same apply changes nothing

  json other = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "owned"}}}, {"data", {{"a", "1"}, {"b", "2"}}}};
  REQUIRE(t.request("PATCH", item + "?fieldManager=other", other.dump(), apply_content).status == 200);
  config["data"] = {{"c", "3"}};
  config["metadata"].erase("labels");
  auto reapplied = TestServer::json_of(t.request("PATCH", item + "?fieldManager=tool", config.dump(), apply_content));
  CHECK(reapplied["data"] == json({{"a", "1"}, {"b", "2"}, {"c", "3"}}));  // "a" is still other's
  CHECK_FALSE(reapplied["metadata"].contains("labels"));
  CHECK(reapplied["metadata"]["managedFields"].size() == 2);

  auto refused = t.request("PATCH", item + "?fieldManager=tool",
                           R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owned","managedFields":[]}})",
                           apply_content);
  CHECK(refused.status == 400);
  CHECK(TestServer::json_of(refused)["message"] == "metadata.managedFields must be nil");

  // An update that leaves managedFields out keeps them; one that sets them to [{}] clears them.
  auto replacement = reapplied;
  replacement["metadata"].erase("managedFields");
  replacement["data"]["d"] = "4";
  auto updated = TestServer::json_of(t.request("PUT", item, replacement.dump()));
  CHECK(updated["metadata"]["managedFields"] == reapplied["metadata"]["managedFields"]);
  auto cleared = TestServer::json_of(t.request("PATCH", item, R"([{"op":"replace","path":"/metadata/managedFields","value":[{}]}])",
                                               "application/json-patch+json"));
  CHECK_FALSE(cleared["metadata"].contains("managedFields"));
  auto invalid = t.request("PATCH", item, R"({"metadata":{"managedFields":[{"manager":"x","operation":"Sideways"}]}})",
                           "application/merge-patch+json");
  CHECK(invalid.status == 422);
}

TEST_CASE("server-side apply to /status records an entry for the subresource and removes only status fields",
          "[apiserver][ssa][integration]") {
  TestServer t;
  const std::string pod = "/api/v1/namespaces/default/pods/p";
  REQUIRE(t.request("PATCH", pod + "?fieldManager=user", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"name":"main","image":"busybox"}]}})", "application/apply-patch+yaml").status == 201);
  auto status = [&](const char* body) {
    auto reply = t.request("PATCH", pod + "/status?fieldManager=kubelet", body, "application/apply-patch+yaml");
    INFO(reply.body);
    REQUIRE(reply.status == 200);
    return TestServer::json_of(reply);
  };
  auto running = status(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"status":{"phase":"Running","message":"up"}})");
  auto entries = running["metadata"]["managedFields"];
  REQUIRE(entries.size() == 2);
  CHECK(entries[1]["manager"] == "kubelet");
  CHECK(entries[1]["subresource"] == "status");
  CHECK(entries[1]["fieldsV1"] == json::parse(R"({"f:status": {"f:phase": {}, "f:message": {}}})"));
  auto later = status(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"status":{"phase":"Running"}})");
  CHECK(later["status"] == json({{"phase", "Running"}}));
  CHECK(later["spec"]["containers"].size() == 1);  // the main resource's fields are not the subresource's
}

TEST_CASE("custom resources: CRUD, generation, strategic merge refused with 415", "[apiserver][integration]") {
  auto registry = kinformer::apiserver::ResourceRegistry::with_builtins();
  REQUIRE(registry.add(kinformer::apiserver::ResourceRegistry::parse_spec("metrics.kinformer.io/v1/MetricSeries/metricseries").value()));
  TestServer t({}, std::move(registry));
  const std::string base = "/apis/metrics.kinformer.io/v1/namespaces/default/metricseries";
  auto created = t.request("POST", base, R"({"apiVersion":"metrics.kinformer.io/v1","kind":"MetricSeries","metadata":{"name":"cpu"},"spec":{"v":[1]}})");
  REQUIRE(created.status == 201);
  CHECK(TestServer::json_of(created)["metadata"]["generation"] == 1);
  auto patched = TestServer::json_of(t.request("PATCH", base + "/cpu", R"({"spec":{"v":[1,2]}})", "application/merge-patch+json"));
  CHECK(patched["metadata"]["generation"] == 2);
  auto labelled = TestServer::json_of(t.request("PATCH", base + "/cpu", R"({"metadata":{"labels":{"a":"b"}}})", "application/merge-patch+json"));
  CHECK(labelled["metadata"]["generation"] == 2);
  CHECK(t.request("PATCH", base + "/cpu", "{}", "application/strategic-merge-patch+json").status == 415);
  auto list = TestServer::json_of(t.request("GET", "/apis/metrics.kinformer.io/v1/metricseries"));
  CHECK(list["kind"] == "MetricSeriesList");
  CHECK(list["items"][0]["kind"] == "MetricSeries");  // custom resource list items keep kind
  auto deleted = TestServer::json_of(t.request("DELETE", base + "/cpu"));
  CHECK(deleted["kind"] == "Status");
  CHECK(deleted["status"] == "Success");
  CHECK(deleted["details"]["kind"] == "metricseries");
}

TEST_CASE("delete returns pods, a Status for others, honours preconditions, and cascades namespaces",
          "[apiserver][integration]") {
  TestServer t;
  REQUIRE(t.request("POST", "/api/v1/namespaces", R"({"metadata":{"name":"team"}})").status == 201);
  t.create_configmap("inside", {}, "team");
  REQUIRE(t.request("POST", "/api/v1/namespaces/team/pods", R"({"metadata":{"name":"p"},"spec":{"containers":[]}})").status == 201);
  auto wrong = t.request("DELETE", "/api/v1/namespaces/team/pods/p", R"({"preconditions":{"uid":"nope"}})");
  CHECK(wrong.status == 409);
  auto pod = TestServer::json_of(t.request("DELETE", "/api/v1/namespaces/team/pods/p", R"({"propagationPolicy":"Background"})"));
  CHECK(pod["kind"] == "Pod");
  CHECK(t.request("GET", "/api/v1/namespaces/team/pods/p").status == 404);
  CHECK(t.request("DELETE", "/api/v1/namespaces/team/pods/p").status == 404);
  CHECK(t.request("DELETE", "/api/v1/namespaces/team").status == 200);
  CHECK(t.request("GET", "/api/v1/namespaces/team/configmaps/inside").status == 404);
}

TEST_CASE("deletecollection deletes what the selector matches", "[apiserver][integration]") {
  TestServer t;
  t.create_configmap("a", {{"app", "x"}});
  t.create_configmap("b", {{"app", "y"}});
  auto reply = t.request("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=app%3Dx");
  REQUIRE(reply.status == 200);
  CHECK(TestServer::json_of(reply)["items"].size() == 1);
  auto left = TestServer::json_of(t.request("GET", "/api/v1/namespaces/default/configmaps"));
  REQUIRE(left["items"].size() == 1);
  CHECK(left["items"][0]["metadata"]["name"] == "b");
}

TEST_CASE("label and field selectors filter lists and watches, with DELETED when an object stops matching",
          "[apiserver][integration]") {
  TestServer t;
  t.create_configmap("a", {{"app", "demo"}});
  t.create_configmap("b", {{"app", "other"}});
  auto list = TestServer::json_of(t.request("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app%3Ddemo"));
  REQUIRE(list["items"].size() == 1);
  CHECK(list["items"][0]["metadata"]["name"] == "a");
  CHECK_FALSE(list["metadata"].contains("remainingItemCount"));
  auto set_based = TestServer::json_of(t.request("GET", "/api/v1/configmaps?labelSelector=app+in+(demo,other)"));
  CHECK(set_based["items"].size() == 2);
  auto by_name = TestServer::json_of(t.request("GET", "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Db"));
  REQUIRE(by_name["items"].size() == 1);
  CHECK(by_name["items"][0]["metadata"]["name"] == "b");

  WatchStream watch(t.port(), "/api/v1/namespaces/default/configmaps?watch=true&labelSelector=app%3Ddemo&resourceVersion=" +
                                  list["metadata"]["resourceVersion"].get<std::string>());
  t.request("PATCH", "/api/v1/namespaces/default/configmaps/b", R"({"metadata":{"labels":{"app":"demo"}}})",
            "application/merge-patch+json");
  t.request("PATCH", "/api/v1/namespaces/default/configmaps/a", R"({"metadata":{"labels":{"app":"gone"}}})",
            "application/merge-patch+json");
  auto started = line_json(watch.next_line());
  CHECK(started["type"] == "ADDED");
  CHECK(started["object"]["metadata"]["name"] == "b");
  auto stopped = line_json(watch.next_line());
  CHECK(stopped["type"] == "DELETED");
  CHECK(stopped["object"]["metadata"]["name"] == "a");
  CHECK(stopped["object"]["metadata"]["labels"]["app"] == "demo");  // the previous content...

  auto bad_label = t.request("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app%3D%3D%3D");
  CHECK(bad_label.status == 400);
  auto bad_field = t.request("GET", "/api/v1/namespaces/default/configmaps?fieldSelector=spec.nodeName%3Dx");
  CHECK(bad_field.status == 400);
  CHECK(TestServer::json_of(bad_field)["message"] == "field label not supported: spec.nodeName");
  CHECK(t.request("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dx").status == 200);
}

TEST_CASE("bad input gets a clear Status and leaves stored objects intact", "[apiserver][integration]") {
  kinformer::apiserver::ServerOptions options;
  options.max_body_bytes = 4096;
  TestServer t(options);
  auto a = t.create_configmap("a");
  const std::string item = "/api/v1/namespaces/default/configmaps/a";
  SECTION("malformed JSON is 400") {
    auto r = t.request("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":)");
    CHECK(r.status == 400);
    CHECK(TestServer::json_of(r)["message"].get<std::string>().find("not valid JSON") != std::string::npos);
  }
  SECTION("malformed YAML is 400") {
    CHECK(t.request("POST", "/api/v1/namespaces/default/configmaps", "metadata: [unclosed", "application/yaml").status == 400);
  }
  SECTION("a YAML body creates an object") {
    CHECK(t.request("POST", "/api/v1/namespaces/default/configmaps", "metadata:\n  name: from-yaml\n", "application/yaml").status == 201);
  }
  SECTION("an unknown body type is 415") {
    CHECK(t.request("POST", "/api/v1/namespaces/default/configmaps", "x", "text/plain").status == 415);
  }
  SECTION("an unknown resource or path is 404") {
    CHECK(t.request("GET", "/api/v1/namespaces/default/widgets").status == 404);
    CHECK(t.request("GET", "/nothing/here").status == 404);
    CHECK(t.request("GET", "/api/v1/configmaps/a").status == 404);
  }
  SECTION("an oversized body is 413") {
    auto r = t.request("POST", "/api/v1/namespaces/default/configmaps", std::string(8192, ' '));
    CHECK(r.status == 413);
    CHECK(TestServer::json_of(r)["reason"] == "RequestEntityTooLarge");
  }
  SECTION("bad patch documents are 400") {
    CHECK(t.request("PATCH", item, "[1,2]", "application/merge-patch+json").status == 400);
    CHECK(t.request("PATCH", item, R"({"op":"add"})", "application/json-patch+json").status == 400);
    CHECK(t.request("PATCH", item, R"({"data":)", "application/strategic-merge-patch+json").status == 400);
    CHECK(t.request("PATCH", item, R"({"metadata":null})", "application/merge-patch+json").status == 400);
    CHECK(t.request("PATCH", item, R"({"metadata":{"labels":{"a":1}}})", "application/merge-patch+json").status == 422);
    CHECK(t.request("PATCH", item, "{}", "application/x-unknown").status == 415);
  }
  SECTION("invalid names and wrong kinds are rejected") {
    CHECK(t.request("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"Not_Valid"}})").status == 422);
    CHECK(t.request("POST", "/api/v1/namespaces/default/configmaps", R"({"kind":"Pod","metadata":{"name":"x"}})").status == 400);
    CHECK(t.request("POST", "/api/v1/namespaces/default/configmaps", R"([1])").status == 400);
    CHECK(t.request("POST", "/api/v1/namespaces/default/configmaps", R"({})").status == 422);
  }
  SECTION("unsupported methods are 405") {
    CHECK(t.request("PUT", "/api/v1/namespaces/default/configmaps", "{}").status == 405);
    CHECK(t.request("POST", "/version", "{}").status == 405);
  }
  SECTION("deeply nested JSON and YAML are 400, not a stack overflow") {
    std::string deep = R"({"metadata":{"name":"deep"},"data":)" + std::string(1500, '[') + std::string(1500, ']') + "}";
    CHECK(t.request("POST", "/api/v1/namespaces/default/configmaps", deep).status == 400);
    CHECK(t.request("POST", "/api/v1/namespaces/default/configmaps", std::string(3000, '['), "application/yaml").status == 400);
    CHECK(t.request("PATCH", item, std::string(3000, '{'), "application/merge-patch+json").status == 400);
  }
  SECTION("random bytes to every write endpoint never take the server down") {
    std::mt19937 rng(42);
    const char* types[] = {"application/json", "application/yaml", "application/merge-patch+json",
                           "application/strategic-merge-patch+json", "application/json-patch+json",
                           "application/apply-patch+yaml", "application/vnd.kubernetes.protobuf"};
    for (int i = 0; i < 120; ++i) {
      std::string body(rng() % 200, '\0');
      for (auto& c : body) c = "{}[]\":,ab01 \n-k8s\0"[rng() % 17];
      const char* type = types[rng() % 7];
      auto r = i % 3 == 0   ? t.request("POST", "/api/v1/namespaces/default/configmaps", body, type)
               : i % 3 == 1 ? t.request("PUT", item, body, type)
                            : t.request("PATCH", item + "?fieldManager=fuzz", body, type);
      CHECK(r.status >= 200);
      CHECK(r.status < 500);
    }
    // whatever was accepted, the server still serves
    CHECK(t.request("GET", "/version").status == 200);
    return;  // the object may legitimately have been changed by an accepted random patch
  }
  SECTION("garbage instead of HTTP gets 400 and a closed connection") {
    int fd = kinformer::testing::connect_loopback(t.port());
    REQUIRE(fd >= 0);
    const char garbage[] = "\x01\x02 not http at all\r\n\r\n";
    REQUIRE(::send(fd, garbage, sizeof garbage - 1, MSG_NOSIGNAL) > 0);
    char buffer[512] = {};
    auto n = ::recv(fd, buffer, sizeof buffer - 1, 0);
    ::close(fd);
    CHECK(std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0).rfind("HTTP/1.1 400", 0) == 0);
  }
  auto after = t.request("GET", item);
  REQUIRE(after.status == 200);
  CHECK(TestServer::json_of(after) == a);
}

TEST_CASE("protobuf bodies of ConfigMaps and Namespaces decode and other kinds are refused with 415",
          "[apiserver][integration]") {
  TestServer t;
  const std::string magic("k8s\0", 4);
  auto envelope = [&](const std::string& kind, const std::string& raw) {
    return magic + pb(1, pb(1, "v1") + pb(2, kind)) + pb(2, raw);
  };
  auto cm = envelope("ConfigMap", pb(1, pb(1, "from-pb") + pb(11, pb(1, "app") + pb(2, "x"))) + pb(2, pb(1, "k") + pb(2, "v")));
  auto created = t.request("POST", "/api/v1/namespaces/default/configmaps", cm, "application/vnd.kubernetes.protobuf");
  REQUIRE(created.status == 201);
  auto object = TestServer::json_of(created);
  CHECK(object["data"] == json({{"k", "v"}}));
  CHECK(object["metadata"]["labels"] == json({{"app", "x"}}));
  auto ns = envelope("Namespace", pb(1, pb(1, "pb-team")));
  CHECK(t.request("POST", "/api/v1/namespaces", ns, "application/vnd.kubernetes.protobuf").status == 201);
  auto pod = envelope("Pod", pb(1, pb(1, "p")));
  auto refused = t.request("POST", "/api/v1/namespaces/default/pods", pod, "application/vnd.kubernetes.protobuf");
  CHECK(refused.status == 415);
  CHECK(TestServer::json_of(refused)["message"].get<std::string>().find("send the object as JSON") != std::string::npos);
  CHECK(t.request("POST", "/api/v1/namespaces/default/configmaps", magic + "\x12\x7f",
                  "application/vnd.kubernetes.protobuf").status == 400);
  CHECK(t.request("POST", "/api/v1/namespaces/default/configmaps", "garbage", "application/vnd.kubernetes.protobuf").status == 400);
}

TEST_CASE("Server::call serves requests in-process with the same answers as HTTP", "[apiserver][integration]") {
  kinformer::apiserver::ServerOptions options;
  options.token = "not-needed-in-process";
  TestServer t(options);
  auto created = t.server().call("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"inproc"}})");
  CHECK(created.status == 201);
  auto over_http = t.request("GET", "/api/v1/namespaces/default/configmaps/inproc", "", "",
                             {{"Authorization", "Bearer not-needed-in-process"}});
  CHECK(json::parse(over_http.body) == json::parse(created.body));
  CHECK(t.server().call("GET", "/api/v1/namespaces/default/configmaps?watch=true").status == 400);
}

TEST_CASE("with a token every request needs the bearer token", "[apiserver][integration]") {
  kinformer::apiserver::ServerOptions options;
  options.token = "s3cret";
  TestServer t(options);
  auto denied = t.request("GET", "/api/v1/namespaces");
  CHECK(denied.status == 401);
  CHECK(TestServer::json_of(denied)["reason"] == "Unauthorized");
  CHECK(t.request("GET", "/api/v1/namespaces", "", "", {{"Authorization", "Bearer wrong"}}).status == 401);
  CHECK(t.request("GET", "/api/v1/namespaces", "", "", {{"Authorization", "Bearer s3cret"}}).status == 200);
}
