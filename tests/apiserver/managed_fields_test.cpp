// Server-side apply's field sets (apiserver/managed_fields.hpp): what an applied
// configuration owns in FieldsV1, and what the next apply of the same manager removes.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apiserver/managed_fields.hpp"

using kinformer::apiserver::Applier;
using nlohmann::json;

namespace {

const Applier builtin{"tool", "v1", "", true, false};
const Applier pod_applier{"tool", "v1", "", true, true};

json pod_config(json containers) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "web"}, {"namespace", "default"}, {"labels", {{"app", "demo"}}}}},
          {"spec", {{"containers", std::move(containers)}, {"args", {"a", "b"}}}},
          {"status", {{"phase", "Running"}}}};
}

// The object after `config` is applied by `applier` to `object` (which must succeed).
json applied(json object, const json& config, const Applier& applier = builtin) {
  auto unbounded = kinformer::apiserver::WorkBudget::unbounded();
  auto failed = kinformer::apiserver::apply_configuration(object, config, applier, "2026-12-01T00:00:00Z", unbounded);
  INFO("the apply failed: " << (failed ? failed->message : ""));
  REQUIRE_FALSE(failed);
  return object;
}

}  // namespace

TEST_CASE("the owned fields of a configuration: f: per field, k: per keyed element, leaves for replaced lists",
          "[apiserver][ssa][unit]") {
  auto fields = kinformer::apiserver::owned_fields(
      pod_config({{{"name", "main"}, {"image", "busybox"}, {"ports", {{{"containerPort", 80}}}}}}), pod_applier);
  CHECK(fields == json::parse(R"({
    "f:metadata": {"f:labels": {"f:app": {}}},
    "f:spec": {
      "f:args": {},
      "f:containers": {"k:{\"name\":\"main\"}": {
        ".": {}, "f:name": {}, "f:image": {},
        "f:ports": {"k:{\"containerPort\":80}": {".": {}, "f:containerPort": {}}}}}}})"));
  SECTION("status belongs to the /status subresource of a kind that has one") {
    auto on_status = pod_applier;
    on_status.subresource = "status";
    CHECK(kinformer::apiserver::owned_fields(pod_config(json::array()), on_status) ==
          json::parse(R"({"f:status": {"f:phase": {}}})"));
    CHECK(kinformer::apiserver::owned_fields(pod_config(json::array()), builtin).contains("f:status"));
  }
  SECTION("finalizers are a set of values; custom kinds replace every list") {
    json config = {{"metadata", {{"finalizers", {"a/b"}}}}, {"spec", {{"containers", {{{"name", "x"}}}}}}};
    CHECK(kinformer::apiserver::owned_fields(config, builtin) ==
          json::parse(R"({"f:metadata": {"f:finalizers": {"v:\"a/b\"": {}}},
                          "f:spec": {"f:containers": {"k:{\"name\":\"x\"}": {".": {}, "f:name": {}}}}})"));
    auto custom = builtin;
    custom.strategic = false;
    CHECK(kinformer::apiserver::owned_fields(config, custom) ==
          json::parse(R"({"f:metadata": {"f:finalizers": {}}, "f:spec": {"f:containers": {}}})"));
  }
}

TEST_CASE("set difference and union of FieldsV1 sets keep a member's own path apart from its children",
          "[apiserver][ssa][unit]") {
  auto a = json::parse(R"({"f:spec": {"f:x": {}, "f:y": {}, "f:list": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:v": {}}}}})");
  auto b = json::parse(R"({"f:spec": {"f:x": {}, "f:list": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}}}}})");
  CHECK(kinformer::apiserver::fields_difference(a, b) ==
        json::parse(R"({"f:spec": {"f:y": {}, "f:list": {"k:{\"name\":\"a\"}": {"f:v": {}}}}})"));
  CHECK(kinformer::apiserver::fields_difference(b, a).empty());
  CHECK(kinformer::apiserver::fields_union(b, json::parse(R"({"f:spec": {"f:y": {}}})")) ==
        json::parse(R"({"f:spec": {"f:x": {}, "f:y": {}, "f:list": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}}}}})"));
}

TEST_CASE("a second apply of the same manager removes what it no longer applies, and nothing else",
          "[apiserver][ssa][unit]") {
  json live = applied(json::object(), pod_config({{{"name", "main"}, {"image", "busybox"}}, {{"name", "side"}, {"image", "nginx"}}}));
  REQUIRE(live["metadata"]["managedFields"].size() == 1);
  const auto first_entry = live["metadata"]["managedFields"][0];
  CHECK(first_entry["time"] == "2026-12-01T00:00:00Z");
  // Someone else's label and a field of the kept container that the manager never set.
  live["metadata"]["labels"]["owner"] = "other";
  live["spec"]["containers"][0]["imagePullPolicy"] = "Always";

  auto trimmed = pod_config({{{"name", "main"}, {"image", "busybox:2"}}});
  trimmed["metadata"].erase("labels");
  trimmed["spec"].erase("args");
  auto after = applied(live, trimmed);
  CHECK(after["metadata"]["labels"] == json({{"owner", "other"}}));
  CHECK_FALSE(after["spec"].contains("args"));
  REQUIRE(after["spec"]["containers"].size() == 1);
  CHECK(after["spec"]["containers"][0] ==
        json({{"name", "main"}, {"image", "busybox:2"}, {"imagePullPolicy", "Always"}}));
  REQUIRE(after["metadata"]["managedFields"].size() == 1);
  CHECK(after["metadata"]["managedFields"][0]["fieldsV1"] == kinformer::apiserver::owned_fields(trimmed, builtin));

  SECTION("a map the removal empties goes with it") {
    auto only_mine = applied(json::object(), pod_config({{{"name", "main"}}}));
    CHECK_FALSE(applied(only_mine, trimmed)["metadata"].contains("labels"));
  }
  SECTION("the same apply again changes nothing, not even the entry's time") {
    json once = applied(json::object(), trimmed);
    auto twice = once;
    auto unbounded = kinformer::apiserver::WorkBudget::unbounded();
    auto failed = kinformer::apiserver::apply_configuration(twice, trimmed, builtin, "2027-01-01T00:00:00Z", unbounded);
    REQUIRE_FALSE(failed);
    CHECK(twice == once);
  }
}

TEST_CASE("a field another manager's entry owns survives, and another manager's apply gets an entry of its own",
          "[apiserver][ssa][unit]") {
  json config = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "c"}}}, {"data", {{"a", "1"}, {"b", "2"}}}};
  auto live = applied(json::object(), config);
  auto other = builtin;
  other.manager = "other";
  live = applied(live, {{"data", {{"a", "1"}}}}, other);
  REQUIRE(live["metadata"]["managedFields"].size() == 2);
  config["data"] = json::object();
  CHECK(applied(live, config)["data"] == json({{"a", "1"}}));
}

TEST_CASE("an apply that changes another manager's field takes it over, so its own later removal removes it",
          "[apiserver][ssa][unit]") {
  auto other = builtin;
  other.manager = "other";
  auto live = applied(json::object(), {{"metadata", {{"name", "c"}}}, {"data", {{"x", "1"}, {"y", "1"}}}});
  live = applied(live, {{"metadata", {{"name", "c"}}}, {"data", {{"x", "2"}, {"y", "1"}}}}, other);
  REQUIRE(live["metadata"]["managedFields"].size() == 2);
  CHECK(live["metadata"]["managedFields"][0]["fieldsV1"] == json::parse(R"({"f:data": {"f:y": {}}})"));
  auto after = applied(live, {{"metadata", {{"name", "c"}}}, {"data", {{"y", "1"}}}}, other);
  CHECK(after["data"] == json({{"y", "1"}}));  // "x" was other's alone
  SECTION("an entry left with nothing goes") {
    auto taken = applied(live, {{"metadata", {{"name", "c"}}}, {"data", {{"x", "3"}, {"y", "3"}}}}, other);
    REQUIRE(taken["metadata"]["managedFields"].size() == 1);
    CHECK(taken["metadata"]["managedFields"][0]["manager"] == "other");
  }
}

TEST_CASE("malformed managedFields in a stored object own nothing and break nothing", "[apiserver][ssa][unit]") {
  for (const char* entries : {R"(5)", R"([1, "x", null])", R"([{"manager":"tool","operation":"Apply","fieldsV1":7}])",
                              R"([{"manager":"tool","operation":"Apply","fieldsV1":{"f:data":5,"k:nonsense":{},"v:[":{}}}])",
                              R"([{"manager":"other","operation":"Update","fieldsV1":{"f:data":{"k:{}":{".":{}}}}}])"}) {
    INFO("managedFields: " << entries);
    json live = {{"metadata", {{"name", "c"}, {"managedFields", json::parse(entries)}}}, {"data", {{"a", "1"}}}};
    auto after = applied(live, {{"data", {{"b", "2"}}}});
    CHECK(after["data"] == json({{"a", "1"}, {"b", "2"}}));
  }
  SECTION("an entry that claims the object's identity or its whole metadata takes neither away") {
    auto claims = json::parse(R"([{"manager":"tool","operation":"Apply",
        "fieldsV1":{"f:kind":{},"f:metadata":{".":{},"f:name":{},"f:labels":{"f:a":{}}}}}])");
    json live = {{"kind", "ConfigMap"}, {"metadata", {{"name", "c"}, {"labels", {{"a", "1"}, {"b", "2"}}}, {"managedFields", claims}}}};
    auto after = applied(live, {{"data", {{"b", "2"}}}});
    CHECK(after["kind"] == "ConfigMap");
    CHECK(after["metadata"]["name"] == "c");
    CHECK(after["metadata"]["labels"] == json({{"b", "2"}}));  // what the entry did own goes
  }
}

TEST_CASE("managedFields written by clients: validated, kept when left out, cleared by [{}]", "[apiserver][ssa][unit]") {
  using kinformer::apiserver::keep_managed_fields;
  using kinformer::apiserver::managed_fields_problem;
  CHECK_FALSE(managed_fields_problem(json::parse(R"([{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{}}])")));
  CHECK_FALSE(managed_fields_problem(json::parse(R"([{}])")));
  CHECK(managed_fields_problem(json::parse(R"([{"manager":"m","operation":"Merge"}])"))->field ==
        "metadata.managedFields[0].operation");
  CHECK(managed_fields_problem(json::parse(R"([{"operation":"Apply","fieldsType":"FieldsV2"}])"))->field ==
        "metadata.managedFields[0].fieldsType");
  CHECK(managed_fields_problem(json::parse(R"([{"operation":"Apply","fieldsV1":[]}])"))->field ==
        "metadata.managedFields[0].fieldsV1");
  CHECK(managed_fields_problem(json::parse(R"({"operation":"Apply"})")));

  const json current = {{"name", "c"}, {"managedFields", {{{"manager", "m"}, {"operation", "Apply"}}}}};
  for (const char* sent : {R"({})", R"({"managedFields":null})", R"({"managedFields":[]})"}) {
    json meta = json::parse(sent);
    keep_managed_fields(meta, &current);
    CHECK(meta["managedFields"] == current["managedFields"]);
  }
  json cleared = {{"managedFields", {json::object()}}};
  keep_managed_fields(cleared, &current);
  CHECK_FALSE(cleared.contains("managedFields"));
  json own = {{"managedFields", {{{"manager", "x"}, {"operation", "Update"}}}}};
  keep_managed_fields(own, &current);
  CHECK(own["managedFields"][0]["manager"] == "x");
  json created = {{"managedFields", json::array()}};
  keep_managed_fields(created, nullptr);
  CHECK_FALSE(created.contains("managedFields"));
}

TEST_CASE("an apply configuration that carries managedFields is 400, as in kube-apiserver", "[apiserver][ssa][unit]") {
  auto refused = kinformer::apiserver::managed_fields_refused(json::parse(R"({"metadata":{"managedFields":[]}})"));
  REQUIRE(refused);
  CHECK(refused->code == 400);
  CHECK(refused->message == "metadata.managedFields must be nil");
  CHECK_FALSE(kinformer::apiserver::managed_fields_refused(json::parse(R"({"metadata":{"managedFields":null}})")));
  CHECK_FALSE(kinformer::apiserver::managed_fields_refused(json::parse(R"({"metadata":{"name":"x"}})")));
}
