// The /scale subresource (issue 32): an autoscaling/v1 Scale for Deployments,
// ReplicaSets, StatefulSets, ReplicationControllers and CRDs that declare
// subresources.scale, over real loopback HTTP; GET, PUT and every patch type, with
// the object's resourceVersion as the precondition, and discovery listing it.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/apiserver/test_server.hpp"
#include "tests/support/widget_crd.hpp"

using kinformer::testing::TestServer;
using nlohmann::json;

namespace {

const std::string deployments = "/apis/apps/v1/namespaces/default/deployments";
const std::string scale_url = deployments + "/web/scale";

json deployment(int replicas) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", "web"}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", {{"app", "web"}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", "web"}}}}},
              {"spec", {{"containers", {{{"name", "main"}, {"image", "nginx:1.27"}}}}}}}}}}};
}

json stored_deployment(TestServer& t) { return TestServer::json_of(t.request("GET", deployments + "/web")); }

json scale_body(int replicas, const std::string& rv = "") {
  json scale = {{"kind", "Scale"}, {"apiVersion", "autoscaling/v1"}, {"metadata", {{"name", "web"}}},
                {"spec", {{"replicas", replicas}}}};
  if (!rv.empty()) scale["metadata"]["resourceVersion"] = rv;
  return scale;
}

}  // namespace

TEST_CASE("GET /scale of a deployment is its Scale", "[apiserver][scale_subresource][any-storage][integration]") {
  TestServer t;
  auto created = TestServer::json_of(t.request("POST", deployments, deployment(2).dump()));
  auto reply = t.request("GET", scale_url);
  REQUIRE(reply.status == 200);
  auto scale = TestServer::json_of(reply);
  CHECK(scale["kind"] == "Scale");
  CHECK(scale["apiVersion"] == "autoscaling/v1");
  CHECK(scale["metadata"]["name"] == "web");
  CHECK(scale["metadata"]["namespace"] == "default");
  CHECK(scale["metadata"]["uid"] == created["metadata"]["uid"]);
  CHECK(scale["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]);
  CHECK(scale["spec"] == json({{"replicas", 2}}));
  CHECK(scale["status"] == json({{"replicas", 0}, {"selector", "app=web"}}));
  CHECK(t.request("GET", deployments + "/nope/scale").status == 404);
  CHECK(t.request("GET", "/apis/apps/v1/namespaces/default/daemonsets/web/scale").status == 404);
  CHECK(t.request("DELETE", scale_url).status == 405);
}

TEST_CASE("PUT /scale sets spec.replicas and a stale resourceVersion is 409", "[apiserver][scale_subresource][any-storage][integration]") {
  TestServer t;
  auto created = TestServer::json_of(t.request("POST", deployments, deployment(1).dump()));
  auto rv = created["metadata"]["resourceVersion"].get<std::string>();
  auto reply = t.request("PUT", scale_url, scale_body(5, rv).dump());
  REQUIRE(reply.status == 200);
  auto scale = TestServer::json_of(reply);
  CHECK(scale["spec"]["replicas"] == 5);
  CHECK(scale["metadata"]["resourceVersion"] != rv);
  auto stored = stored_deployment(t);
  CHECK(stored["spec"]["replicas"] == 5);
  CHECK(stored["metadata"]["generation"] == 2);  // a spec change
  CHECK(stored["metadata"]["resourceVersion"] == scale["metadata"]["resourceVersion"]);

  auto stale = t.request("PUT", scale_url, scale_body(7, rv).dump());
  CHECK(stale.status == 409);
  CHECK(TestServer::json_of(stale)["reason"] == "Conflict");
  CHECK(stored_deployment(t)["spec"]["replicas"] == 5);

  SECTION("without a resourceVersion the update is unconditional; scaling to 0 omits spec.replicas") {
    auto zero = TestServer::json_of(t.request("PUT", scale_url, scale_body(0).dump()));
    CHECK(zero["spec"] == json::object());
    CHECK(stored_deployment(t)["spec"]["replicas"] == 0);
  }
  SECTION("bad Scales are refused and change nothing") {
    auto negative = t.request("PUT", scale_url, scale_body(-1).dump());
    CHECK(negative.status == 422);
    CHECK(TestServer::json_of(negative)["details"]["causes"][0]["field"] == "spec.replicas");
    CHECK(t.request("PUT", scale_url, R"({"spec":{"replicas":"3"}})").status == 400);
    CHECK(t.request("PUT", scale_url, R"({"spec":{"replicas":2.5}})").status == 400);
    CHECK(t.request("PUT", scale_url, R"({"spec":{"replicas":4294967296}})").status == 400);
    CHECK(t.request("PUT", scale_url, R"({"kind":"Deployment","spec":{"replicas":3}})").status == 400);
    CHECK(t.request("PUT", scale_url, R"({"metadata":{"name":"other"},"spec":{"replicas":3}})").status == 400);
    CHECK(t.request("PUT", scale_url, "[1]").status == 400);
    CHECK(t.request("PUT", scale_url, "{").status == 400);
    CHECK(stored_deployment(t)["spec"]["replicas"] == 5);
  }
  SECTION("dryRun=All answers the new Scale and writes nothing") {
    auto dry = TestServer::json_of(t.request("PUT", scale_url + "?dryRun=All", scale_body(9).dump()));
    CHECK(dry["spec"]["replicas"] == 9);
    CHECK(stored_deployment(t)["spec"]["replicas"] == 5);
  }
}

TEST_CASE("PATCH /scale with merge, strategic and JSON patches", "[apiserver][scale_subresource][any-storage][integration]") {
  TestServer t;
  REQUIRE(t.request("POST", deployments, deployment(1).dump()).status == 201);
  auto merge = t.request("PATCH", scale_url, R"({"spec":{"replicas":3}})", "application/merge-patch+json");
  REQUIRE(merge.status == 200);
  CHECK(TestServer::json_of(merge)["spec"]["replicas"] == 3);
  CHECK(stored_deployment(t)["spec"]["replicas"] == 3);
  auto strategic = t.request("PATCH", scale_url, R"({"spec":{"replicas":4}})", "application/strategic-merge-patch+json");
  CHECK(TestServer::json_of(strategic)["spec"]["replicas"] == 4);
  auto json_patch =
      t.request("PATCH", scale_url, R"([{"op":"test","path":"/spec/replicas","value":4},{"op":"replace","path":"/spec/replicas","value":6}])",
                "application/json-patch+json");
  CHECK(TestServer::json_of(json_patch)["spec"]["replicas"] == 6);
  CHECK(stored_deployment(t)["spec"]["replicas"] == 6);
  SECTION("a failed test op, a stale resourceVersion, an apply patch and a negative count change nothing") {
    CHECK(t.request("PATCH", scale_url, R"([{"op":"test","path":"/spec/replicas","value":1}])", "application/json-patch+json")
              .status != 200);
    CHECK(t.request("PATCH", scale_url, R"({"metadata":{"resourceVersion":"1"},"spec":{"replicas":2}})",
                    "application/merge-patch+json")
              .status == 409);
    CHECK(t.request("PATCH", scale_url + "?fieldManager=x", R"({"spec":{"replicas":2}})", "application/apply-patch+yaml").status ==
          415);
    CHECK(t.request("PATCH", scale_url, R"({"spec":{"replicas":-3}})", "application/merge-patch+json").status == 422);
    CHECK(stored_deployment(t)["spec"]["replicas"] == 6);
  }
}

TEST_CASE("ReplicaSets, StatefulSets and ReplicationControllers serve /scale too", "[apiserver][scale_subresource][integration]") {
  TestServer t;
  json rs = deployment(1);
  rs["kind"] = "ReplicaSet";
  REQUIRE(t.request("POST", "/apis/apps/v1/namespaces/default/replicasets", rs.dump()).status == 201);
  auto scaled = t.request("PATCH", "/apis/apps/v1/namespaces/default/replicasets/web/scale", R"({"spec":{"replicas":2}})",
                          "application/merge-patch+json");
  CHECK(TestServer::json_of(scaled)["status"]["selector"] == "app=web");
  json sts = deployment(1);
  sts["kind"] = "StatefulSet";
  REQUIRE(t.request("POST", "/apis/apps/v1/namespaces/default/statefulsets", sts.dump()).status == 201);
  CHECK(TestServer::json_of(t.request("GET", "/apis/apps/v1/namespaces/default/statefulsets/web/scale"))["spec"]["replicas"] == 1);
  json rc = {{"apiVersion", "v1"}, {"kind", "ReplicationController"}, {"metadata", {{"name", "old"}}},
             {"spec", {{"replicas", 2}, {"template", deployment(1)["spec"]["template"]}}}};
  REQUIRE(t.request("POST", "/api/v1/namespaces/default/replicationcontrollers", rc.dump()).status == 201);
  auto rc_scale = TestServer::json_of(t.request("GET", "/api/v1/namespaces/default/replicationcontrollers/old/scale"));
  CHECK(rc_scale["spec"]["replicas"] == 2);
  CHECK(rc_scale["status"]["selector"] == "app=web");  // defaulted from the template's labels
}

TEST_CASE("discovery lists the scale subresources as autoscaling/v1 Scale", "[apiserver][scale_subresource][integration]") {
  TestServer t;
  auto legacy = TestServer::json_of(t.request("GET", "/apis/apps/v1"));
  bool listed = false;
  for (const auto& r : legacy["resources"])
    if (r["name"] == "deployments/scale") {
      listed = true;
      CHECK(r["group"] == "autoscaling");
      CHECK(r["version"] == "v1");
      CHECK(r["kind"] == "Scale");
      CHECK(r["verbs"] == json({"get", "patch", "update"}));
    }
  CHECK(listed);
  auto aggregated = TestServer::json_of(t.request(
      "GET", "/apis", "", "application/json", {{"Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}}));
  json deployment_entry;
  for (const auto& g : aggregated["items"])
    for (const auto& v : g["versions"])
      for (const auto& r : v["resources"])
        if (g["metadata"]["name"] == "apps" && r["resource"] == "deployments") deployment_entry = r;
  REQUIRE(deployment_entry.is_object());
  bool has_scale = false;
  for (const auto& s : deployment_entry["subresources"])
    if (s["subresource"] == "scale") {
      has_scale = true;
      CHECK(s["responseKind"] == json({{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}}));
    }
  CHECK(has_scale);
}

TEST_CASE("a custom resource whose CRD declares subresources.scale scales through its paths",
          "[apiserver][scale_subresource][any-storage][integration]") {
  TestServer t;
  auto crd = kinformer::testing::widget_crd();
  crd["spec"]["versions"][0]["subresources"]["scale"] = {
      {"specReplicasPath", ".spec.size"}, {"statusReplicasPath", ".status.count"}, {"labelSelectorPath", ".status.selector"}};
  auto& props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
  props["status"]["properties"]["count"] = {{"type", "integer"}};
  props["status"]["properties"]["selector"] = {{"type", "string"}};
  REQUIRE(t.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd.dump()).status == 201);
  const std::string widgets = "/apis/example.com/v1/namespaces/default/widgets";
  REQUIRE(t.request("POST", widgets, kinformer::testing::widget("w1", {{"size", 2}}).dump()).status == 201);
  json status = {{"status", {{"count", 1}, {"selector", "app=w1"}}}};
  REQUIRE(t.request("PATCH", widgets + "/w1/status", status.dump(), "application/merge-patch+json").status == 200);

  auto scale = TestServer::json_of(t.request("GET", widgets + "/w1/scale"));
  CHECK(scale["spec"]["replicas"] == 2);
  CHECK(scale["status"] == json({{"replicas", 1}, {"selector", "app=w1"}}));
  auto patched = t.request("PATCH", widgets + "/w1/scale", R"({"spec":{"replicas":4}})", "application/merge-patch+json");
  REQUIRE(patched.status == 200);
  CHECK(TestServer::json_of(t.request("GET", widgets + "/w1"))["spec"]["size"] == 4);
  SECTION("the CRD's schema still applies to what /scale writes") {
    // spec.color is an enum of strings: a CRD pointing its replicas there cannot be scaled
    auto odd = crd;
    odd["spec"]["versions"][0]["subresources"]["scale"]["specReplicasPath"] = ".spec.color";
    REQUIRE(t.request("PUT", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
                      [&] {
                        auto current = TestServer::json_of(
                            t.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"));
                        current["spec"] = odd["spec"];
                        return current.dump();
                      }())
                .status == 200);
    CHECK(t.request("PUT", widgets + "/w1/scale", R"({"spec":{"replicas":3}})").status == 422);
    CHECK(TestServer::json_of(t.request("GET", widgets + "/w1"))["spec"]["size"] == 4);
  }
  SECTION("a CRD without subresources.scale serves no /scale") {
    auto plain = kinformer::testing::widget_crd();
    plain["metadata"]["name"] = "gadgets.example.com";
    plain["spec"]["names"] = {{"plural", "gadgets"}, {"singular", "gadget"}, {"kind", "Gadget"}};
    REQUIRE(t.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", plain.dump()).status == 201);
    json gadget = kinformer::testing::widget("g1", {{"size", 1}});
    gadget["kind"] = "Gadget";
    REQUIRE(t.request("POST", "/apis/example.com/v1/namespaces/default/gadgets", gadget.dump()).status == 201);
    CHECK(t.request("GET", "/apis/example.com/v1/namespaces/default/gadgets/g1/scale").status == 404);
  }
}
