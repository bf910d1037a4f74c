// The built-in kinds people's manifests contain, their /status subresources, and
// CustomResourceDefinitions served at run time (issue 17, items 1-3), over real
// loopback HTTP against the embedded server.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "apiserver/schema.hpp"
#include "tests/apiserver/test_server.hpp"
#include "tests/support/widget_crd.hpp"

using kinformer::testing::TestServer;
using kinformer::testing::widget;
using kinformer::testing::widget_crd;
using kinformer::testing::WatchStream;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

json body_of(const kinformer::testing::HttpReply& reply) { return json::parse(reply.body, nullptr, false); }

json deployment(const std::string& name, int replicas) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", name}, {"labels", {{"app", name}}}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", {{"app", name}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", name}}}}},
              {"spec", {{"containers", {{{"name", "main"}, {"image", "nginx:1.27"}}}}}}}}}}};
}

json aggregated(TestServer& t, const std::string& root) {
  auto reply =
      t.request("GET", root, "", "application/json",
                {{"Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}});
  REQUIRE(reply.status == 200);
  return body_of(reply);
}

// The aggregated discovery entry of one resource, or null.
json aggregated_resource(const json& list, const std::string& group, const std::string& plural) {
  for (const auto& g : list["items"])
    if (g["metadata"].value("name", "") == group)
      for (const auto& v : g["versions"])
        for (const auto& r : v["resources"])
          if (r["resource"] == plural) return r;
  return nullptr;
}

}  // namespace

TEST_CASE("every built-in kind of the issue is in legacy and aggregated discovery with its scope",
          "[apiserver][kinds][integration]") {
  TestServer t;
  struct Expected {
    std::string group, version, plural, kind;
    bool namespaced;
  };
  const Expected kinds[] = {
      {"apps", "v1", "deployments", "Deployment", true},
      {"apps", "v1", "statefulsets", "StatefulSet", true},
      {"apps", "v1", "daemonsets", "DaemonSet", true},
      {"apps", "v1", "replicasets", "ReplicaSet", true},
      {"batch", "v1", "jobs", "Job", true},
      {"batch", "v1", "cronjobs", "CronJob", true},
      {"", "v1", "secrets", "Secret", true},
      {"", "v1", "serviceaccounts", "ServiceAccount", true},
      {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true},
      {"", "v1", "endpoints", "Endpoints", true},
      {"", "v1", "nodes", "Node", false},
      {"networking.k8s.io", "v1", "ingresses", "Ingress", true},
      {"coordination.k8s.io", "v1", "leases", "Lease", true},
      {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false}};
  auto core = aggregated(t, "/api");
  auto named = aggregated(t, "/apis");
  for (const auto& k : kinds) {
    INFO("resource " << k.plural << " in group \"" << k.group << "\"");
    auto path = k.group.empty() ? "/api/" + k.version : "/apis/" + k.group + "/" + k.version;
    auto legacy = t.request("GET", path);
    REQUIRE(legacy.status == 200);
    json found;
    const json listed = body_of(legacy);
    for (const auto& r : listed["resources"])
      if (r["name"] == k.plural) found = r;
    REQUIRE(found.is_object());
    CHECK(found["kind"] == k.kind);
    CHECK(found["namespaced"] == k.namespaced);
    auto agg = aggregated_resource(k.group.empty() ? core : named, k.group, k.plural);
    REQUIRE(agg.is_object());
    CHECK(agg["scope"] == (k.namespaced ? "Namespaced" : "Cluster"));
  }
  auto deploy = aggregated_resource(named, "apps", "deployments");
  CHECK(deploy["shortNames"] == json{"deploy"});
  CHECK(deploy["categories"] == json{"all"});
  CHECK(deploy["subresources"][0]["subresource"] == "status");
}

TEST_CASE("a deployment is created, listed by label, watched, patched in every way and deleted",
          "[apiserver][kinds][integration]") {
  TestServer t;
  const std::string base = "/apis/apps/v1/namespaces/default/deployments";
  auto created = t.request("POST", base, deployment("web", 2).dump());
  REQUIRE(created.status == 201);
  auto web = body_of(created);
  CHECK(web["metadata"]["generation"] == 1);
  auto api = t.request("POST", base, deployment("api", 1).dump());
  REQUIRE(api.status == 201);

  auto listed = body_of(t.request("GET", base + "?labelSelector=app%3Dweb"));
  CHECK(listed["kind"] == "DeploymentList");
  REQUIRE(listed["items"].size() == 1);
  CHECK(listed["items"][0]["metadata"]["name"] == "web");
  CHECK_FALSE(listed["items"][0].contains("kind"));  // built-in list items omit kind (§A3)

  WatchStream watch(t.port(), base + "?watch=true&resourceVersion=" +
                                  body_of(api)["metadata"]["resourceVersion"].get<std::string>());
  REQUIRE(watch.status() == 200);

  SECTION("merge, strategic merge, JSON patch and server-side apply all change the deployment") {
    CHECK(t.request("PATCH", base + "/web", R"({"spec":{"replicas":3}})", "application/merge-patch+json")
              .status == 200);
    auto strategic =
        t.request("PATCH", base + "/web",
                  R"({"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.28"}]}}}})",
                  "application/strategic-merge-patch+json");
    REQUIRE(strategic.status == 200);
    CHECK(body_of(strategic)["spec"]["template"]["spec"]["containers"].size() == 1);
    CHECK(t.request("PATCH", base + "/web", R"([{"op":"replace","path":"/spec/replicas","value":4}])",
                    "application/json-patch+json")
              .status == 200);
    auto applied =
        t.request("PATCH", base + "/web?fieldManager=test",
                  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 5\n",
                  "application/apply-patch+yaml");
    REQUIRE(applied.status == 200);
    auto now = body_of(applied);
    CHECK(now["spec"]["replicas"] == 5);
    CHECK(now["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28");
    CHECK(now["metadata"]["generation"] == 5);
    for (int replicas : {3, 3, 4, 5}) {
      (void)replicas;
      auto line = watch.next_line(5s);
      REQUIRE(line.has_value());
      CHECK(json::parse(*line)["type"] == "MODIFIED");
    }
  }
  SECTION("a delete reaches the watch as DELETED") {
    CHECK(t.request("DELETE", base + "/web").status == 200);
    auto line = watch.next_line(5s);
    REQUIRE(line.has_value());
    CHECK(json::parse(*line)["type"] == "DELETED");
    CHECK(t.request("GET", base + "/web").status == 404);
  }
}

TEST_CASE("jobs, cronjobs, statefulsets, daemonsets, replicasets, ingresses and leases round-trip",
          "[apiserver][kinds][integration]") {
  TestServer t;
  struct Case {
    std::string path, api_version, kind;
  };
  const Case cases[] = {
      {"/apis/batch/v1/namespaces/default/jobs", "batch/v1", "Job"},
      {"/apis/batch/v1/namespaces/default/cronjobs", "batch/v1", "CronJob"},
      {"/apis/apps/v1/namespaces/default/statefulsets", "apps/v1", "StatefulSet"},
      {"/apis/apps/v1/namespaces/default/daemonsets", "apps/v1", "DaemonSet"},
      {"/apis/apps/v1/namespaces/default/replicasets", "apps/v1", "ReplicaSet"},
      {"/apis/networking.k8s.io/v1/namespaces/default/ingresses", "networking.k8s.io/v1", "Ingress"},
      {"/apis/coordination.k8s.io/v1/namespaces/default/leases", "coordination.k8s.io/v1", "Lease"},
      {"/api/v1/namespaces/default/serviceaccounts", "v1", "ServiceAccount"},
      {"/api/v1/namespaces/default/persistentvolumeclaims", "v1", "PersistentVolumeClaim"},
      {"/api/v1/namespaces/default/endpoints", "v1", "Endpoints"}};
  for (const auto& c : cases) {
    INFO(c.kind);
    json object = {{"apiVersion", c.api_version},
                   {"kind", c.kind},
                   {"metadata", {{"name", "x"}}},
                   {"spec", {{"k", "v"}}}};
    auto created = t.request("POST", c.path, object.dump());
    REQUIRE(created.status == 201);
    CHECK(body_of(created)["kind"] == c.kind);
    auto got = body_of(t.request("GET", c.path + "/x"));
    CHECK(got["apiVersion"] == c.api_version);
    CHECK(t.request("PATCH", c.path + "/x", R"({"metadata":{"labels":{"a":"b"}}})",
                    "application/merge-patch+json")
              .status == 200);
    CHECK(t.request("DELETE", c.path + "/x").status == 200);
  }
}

TEST_CASE("nodes are cluster-scoped: created without a namespace, not reachable inside one",
          "[apiserver][kinds][integration]") {
  TestServer t;
  auto created =
      t.request("POST", "/api/v1/nodes", R"({"metadata":{"name":"node-1"},"spec":{"unschedulable":true}})");
  REQUIRE(created.status == 201);
  CHECK_FALSE(body_of(created)["metadata"].contains("namespace"));
  CHECK(t.request("GET", "/api/v1/nodes/node-1").status == 200);
  CHECK(t.request("GET", "/api/v1/namespaces/default/nodes/node-1").status == 404);
  auto selected = body_of(t.request("GET", "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue"));
  CHECK(selected["items"].size() == 1);
}

TEST_CASE("a secret with data that is not base64 is 422 naming the key, never echoing the value",
          "[apiserver][kinds][integration]") {
  TestServer t;
  auto reply = t.request("POST", "/api/v1/namespaces/default/secrets",
                         R"({"metadata":{"name":"s"},"data":{"password":"hunter2!"}})");
  REQUIRE(reply.status == 422);
  auto status = body_of(reply);
  CHECK(status["reason"] == "Invalid");
  CHECK(status["details"]["causes"][0]["field"] == "data[password]");
  CHECK(reply.body.find("hunter2") == std::string::npos);

  SECTION("a patch that makes the data invalid is refused the same way") {
    REQUIRE(t.request("POST", "/api/v1/namespaces/default/secrets",
                      R"({"metadata":{"name":"s"},"data":{"password":"aHVudGVyMg=="}})")
                .status == 201);
    auto patched = t.request("PATCH", "/api/v1/namespaces/default/secrets/s",
                             R"({"data":{"password":"not base64"}})", "application/merge-patch+json");
    CHECK(patched.status == 422);
    CHECK(patched.body.find("not base64") == std::string::npos);
  }
  SECTION("stringData is stored as base64 data and the type defaults to Opaque") {
    auto created = t.request("POST", "/api/v1/namespaces/default/secrets",
                             R"({"metadata":{"name":"s"},"stringData":{"user":"admin"}})");
    REQUIRE(created.status == 201);
    auto secret = body_of(created);
    CHECK(secret["data"]["user"] == "YWRtaW4=");
    CHECK_FALSE(secret.contains("stringData"));
    CHECK(secret["type"] == "Opaque");
  }
}

TEST_CASE("the status subresource changes only status and the main resource ignores status",
          "[apiserver][kinds][integration]") {
  TestServer t;
  const std::string base = "/apis/apps/v1/namespaces/default/deployments";
  auto with_status = deployment("web", 1);
  with_status["status"] = {{"replicas", 7}};
  auto created = body_of(t.request("POST", base, with_status.dump()));
  REQUIRE(created["metadata"]["generation"] == 1);

  SECTION("PUT and PATCH on /status change status, not spec, and keep the generation") {
    auto put_body = created;
    put_body["status"] = {{"readyReplicas", 1}};
    put_body["spec"]["replicas"] = 9;
    auto put = t.request("PUT", base + "/web/status", put_body.dump());
    REQUIRE(put.status == 200);
    auto after_put = body_of(put);
    CHECK(after_put["status"]["readyReplicas"] == 1);
    CHECK(after_put["spec"]["replicas"] == 1);
    CHECK(after_put["metadata"]["generation"] == 1);
    auto patch = t.request("PATCH", base + "/web/status",
                           R"({"status":{"availableReplicas":1},"spec":{"replicas":4}})",
                           "application/merge-patch+json");
    REQUIRE(patch.status == 200);
    auto after_patch = body_of(patch);
    CHECK(after_patch["status"]["availableReplicas"] == 1);
    CHECK(after_patch["spec"]["replicas"] == 1);
    CHECK(after_patch["metadata"]["generation"] == 1);
  }
  SECTION("writes to the main resource ignore status and bump the generation on spec changes only") {
    auto label_only = t.request("PATCH", base + "/web",
                                R"({"metadata":{"labels":{"tier":"front"}},"status":{"replicas":3}})",
                                "application/merge-patch+json");
    REQUIRE(label_only.status == 200);
    auto after_labels = body_of(label_only);
    CHECK_FALSE(after_labels.contains("status"));  // status given at create was dropped too
    CHECK(after_labels["metadata"]["generation"] == 1);
    auto spec_change =
        t.request("PATCH", base + "/web", R"({"spec":{"replicas":2}})", "application/merge-patch+json");
    CHECK(body_of(spec_change)["metadata"]["generation"] == 2);
  }
}

TEST_CASE("a CRD applied at run time is discovered and its objects are creatable at once",
          "[apiserver][crd][integration]") {
  TestServer t;
  CHECK(t.request("GET", "/apis/example.com/v1").status == 404);
  auto created =
      t.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd().dump());
  INFO(created.body);
  REQUIRE(created.status == 201);
  auto crd = body_of(created);
  CHECK(crd["status"]["conditions"][1]["type"] == "Established");

  auto legacy = body_of(t.request("GET", "/apis/example.com/v1"));
  REQUIRE(legacy["resources"].is_array());
  CHECK(legacy["resources"][0]["name"] == "widgets");
  CHECK(aggregated_resource(aggregated(t, "/apis"), "example.com", "widgets")["shortNames"] == json{"wd"});

  const std::string base = "/apis/example.com/v1/namespaces/default/widgets";
  auto w = t.request("POST", base, widget("w1", {{"size", 3}, {"color", "red"}}).dump());
  REQUIRE(w.status == 201);
  CHECK(body_of(w)["metadata"]["generation"] == 1);

  SECTION("objects that break the schema are 422 with the field path") {
    auto wrong_type = t.request("POST", base, widget("w2", {{"size", "big"}}).dump());
    REQUIRE(wrong_type.status == 422);
    CHECK(body_of(wrong_type)["details"]["causes"][0]["field"] == "spec.size");
    auto missing = t.request("POST", base, widget("w2", {{"color", "red"}}).dump());
    REQUIRE(missing.status == 422);
    CHECK(body_of(missing)["details"]["causes"][0]["reason"] == "FieldValueRequired");
    CHECK(body_of(missing)["details"]["causes"][0]["field"] == "spec.size");
    auto bad_item = t.request("POST", base, widget("w2", {{"size", 1}, {"parts", {"a", 2}}}).dump());
    REQUIRE(bad_item.status == 422);
    CHECK(body_of(bad_item)["details"]["causes"][0]["field"] == "spec.parts[1]");
    auto bad_enum = t.request("POST", base, widget("w2", {{"size", 1}, {"color", "green"}}).dump());
    CHECK(bad_enum.status == 422);
    auto bad_patch =
        t.request("PATCH", base + "/w1", R"({"spec":{"size":1.5}})", "application/merge-patch+json");
    CHECK(bad_patch.status == 422);
  }
  SECTION("the status subresource the CRD declares works") {
    auto status = t.request("PATCH", base + "/w1/status", R"({"status":{"ready":true},"spec":{"size":100}})",
                            "application/merge-patch+json");
    REQUIRE(status.status == 200);
    CHECK(body_of(status)["status"]["ready"] == true);
    CHECK(body_of(status)["spec"]["size"] == 3);
  }
  SECTION("deleting the CRD deletes its objects and stops serving the kind") {
    WatchStream watch(t.port(), base + "?watch=true&resourceVersion=" +
                                    body_of(w)["metadata"]["resourceVersion"].get<std::string>());
    REQUIRE(t.request("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
                .status == 200);
    auto line = watch.next_line(5s);
    REQUIRE(line.has_value());
    CHECK(json::parse(*line)["type"] == "DELETED");
    CHECK(t.request("GET", base + "/w1").status == 404);
    CHECK(t.request("GET", "/apis/example.com/v1").status == 404);

    SECTION("the same CRD applied again serves the kind again, empty") {
      REQUIRE(
          t.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd().dump())
              .status == 201);
      CHECK(body_of(t.request("GET", base))["items"].empty());
      CHECK(t.request("POST", base, widget("w3", {{"size", 1}}).dump()).status == 201);
    }
  }
}

TEST_CASE("a CRD that cannot be served is 422 with the field path and serves nothing",
          "[apiserver][crd][integration]") {
  TestServer t;
  const std::string crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  SECTION("a name that is not plural.group") {
    auto crd = widget_crd();
    crd["metadata"]["name"] = "gadgets.example.com";
    auto reply = t.request("POST", crds, crd.dump());
    REQUIRE(reply.status == 422);
    CHECK(body_of(reply)["details"]["causes"][0]["field"] == "metadata.name");
  }
  SECTION("a missing scope") {
    auto crd = widget_crd();
    crd["spec"].erase("scope");
    auto reply = t.request("POST", crds, crd.dump());
    REQUIRE(reply.status == 422);
    CHECK(body_of(reply)["details"]["causes"][0]["field"] == "spec.scope");
  }
  SECTION("a kind that would shadow a built-in") {
    auto crd = widget_crd();
    crd["metadata"]["name"] = "deployments.apps";
    crd["spec"]["group"] = "apps";
    crd["spec"]["names"] = {{"plural", "deployments"}, {"kind", "Deployment"}};
    CHECK(t.request("POST", crds, crd.dump()).status == 422);
  }
  CHECK(t.request("GET", "/apis/example.com/v1").status == 404);
}

TEST_CASE("hostile CRDs and custom resources get a client error and the server keeps answering",
          "[apiserver][crd][integration]") {
  TestServer t;
  const std::string crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  SECTION("a schema nested deeper than any object may be is refused") {
    json deep = {{"type", "string"}};
    for (int i = 0; i < 400; ++i) deep = {{"type", "object"}, {"properties", {{"x", deep}}}};
    auto crd = widget_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = deep;
    auto reply = t.request("POST", crds, crd.dump());
    INFO(reply.body.substr(0, 300));
    CHECK(reply.status >= 400);
    CHECK(reply.status < 500);
  }
  SECTION("a schema flag that is not a boolean is refused, so no object can trip over it later") {
    auto crd = widget_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"]["nullable"] =
        "yes";
    auto reply = t.request("POST", crds, crd.dump());
    INFO(reply.body.substr(0, 300));
    CHECK(reply.status == 422);
    CHECK(reply.body.find("nullable must be a boolean") != std::string::npos);
  }
  SECTION("a custom resource with 50,000 violations is one bounded 422") {
    REQUIRE(t.request("POST", crds, widget_crd().dump()).status == 201);
    json parts = json::array();
    for (int i = 0; i < 50000; ++i) parts.push_back(i);  // every item should be a string
    auto reply = t.request("POST", "/apis/example.com/v1/namespaces/default/widgets",
                           widget("many", {{"size", 1}, {"parts", parts}}).dump());
    REQUIRE(reply.status == 422);
    CHECK(body_of(reply)["details"]["causes"][0]["field"] == "spec.parts[0]");
    CHECK(reply.body.size() < 16u * 1024 * 1024);
  }
  CHECK(t.request("GET", "/healthz").status == 200);
}

TEST_CASE("the schema validator reports types, required fields and nested paths", "[apiserver][crd][unit]") {
  using kinformer::apiserver::OpenApiSchema;
  auto schema = OpenApiSchema::parse(json::parse(R"({"type":"object","properties":{"spec":{"type":"object",
      "required":["a"],"properties":{"a":{"type":"integer"},"m":{"type":"object","additionalProperties":{"type":"string"}},
      "n":{"type":"number"},"i":{"x-kubernetes-int-or-string":true}}}}})"));
  REQUIRE(schema);
  auto unbounded = kinformer::apiserver::WorkBudget::unbounded();
  CHECK((*schema)->validate(json::parse(R"({"spec":{"a":1,"n":2,"i":"50%"}})"), unbounded).empty());
  auto causes = (*schema)->validate(json::parse(R"({"spec":{"m":{"k":1},"i":true}})"), unbounded);
  REQUIRE(causes.size() == 3);
  CHECK(causes[0].field == "spec.a");
  CHECK(causes[1].field == "spec.i");
  CHECK(causes[2].field == "spec.m[k]");
  // A whole float is an integer up to 2^53 - 1, as go-openapi decides (fuzz_schema: 6.6e37
  // was cast to long long, undefined behaviour).
  CHECK((*schema)->validate(json::parse(R"({"spec":{"a":3.0}})"), unbounded).empty());
  auto huge = (*schema)->validate(json::parse(R"({"spec":{"a":6.6e37}})"), unbounded);
  REQUIRE(huge.size() == 1);
  CHECK(huge[0].field == "spec.a");
  CHECK(huge[0].message.find("must be of type integer") != std::string::npos);
  CHECK_FALSE(OpenApiSchema::parse(json::parse(R"({"type":"strng"})")));
  CHECK_FALSE(OpenApiSchema::parse(json::parse(R"({"properties":{"a":{"required":"x"}}})")));
  // Flags the walk reads as booleans (fuzz_schema: a string threw out of validate()).
  CHECK_FALSE(OpenApiSchema::parse(json::parse(R"({"properties":{"a":{"nullable":"yes"}}})")));
  CHECK_FALSE(OpenApiSchema::parse(json::parse(R"({"items":{"x-kubernetes-int-or-string":1}})")));
}
