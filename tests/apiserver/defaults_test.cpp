// Defaulting (issue 32): the documented defaults of Kubernetes 1.32's built-in kinds
// and a CRD schema's `default:` values, as unit tests of apply_defaults() and over
// loopback HTTP for create, update, merge patch and server-side apply.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apiserver/defaults.hpp"
#include "apiserver/schema.hpp"
#include "apiserver/schema_defaults.hpp"
#include "tests/apiserver/test_server.hpp"
#include "tests/support/widget_crd.hpp"

using kinformer::apiserver::apply_defaults;
using kinformer::apiserver::apply_schema_defaults;
using kinformer::apiserver::default_pull_policy;
using kinformer::apiserver::ResourceRegistry;
using kinformer::testing::TestServer;
using nlohmann::json;

namespace {

const ResourceRegistry& registry() {
  static const ResourceRegistry r = ResourceRegistry::with_builtins();
  return r;
}

json defaulted(const std::string& group, const std::string& plural, json object) {
  const auto* type = registry().find(group, "v1", plural);
  REQUIRE(type);
  apply_defaults(registry(), *type, object);
  return object;
}

// What every pod template and Pod gets, for one container named main of `image`.
json defaulted_pod_spec(const std::string& image) {
  return {{"containers",
           {{{"name", "main"},
             {"image", image},
             {"imagePullPolicy", default_pull_policy(image)},
             {"terminationMessagePath", "/dev/termination-log"},
             {"terminationMessagePolicy", "File"}}}},
          {"dnsPolicy", "ClusterFirst"},
          {"restartPolicy", "Always"},
          {"schedulerName", "default-scheduler"},
          {"securityContext", json::object()},
          {"terminationGracePeriodSeconds", 30}};
}

json pod_template(const std::string& image) {
  return {{"metadata", {{"labels", {{"app", "web"}}}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", image}}}}}}};
}

}  // namespace

TEST_CASE("imagePullPolicy defaults to Always only for :latest or untagged images without a digest",
          "[apiserver][defaults][unit]") {
  CHECK(std::string(default_pull_policy("busybox")) == "Always");
  CHECK(std::string(default_pull_policy("busybox:latest")) == "Always");
  CHECK(std::string(default_pull_policy("registry.local:5000/team/busybox")) == "Always");
  CHECK(std::string(default_pull_policy("nginx:1.27")) == "IfNotPresent");
  CHECK(std::string(default_pull_policy("registry.local:5000/nginx:1.27")) == "IfNotPresent");
  CHECK(std::string(default_pull_policy("busybox@sha256:0123abcd")) == "IfNotPresent");
  CHECK(std::string(default_pull_policy("busybox:latest@sha256:0123abcd")) == "Always");
}

TEST_CASE("a Deployment gets RollingUpdate 25%/25%, 10 revisions, 600 s, 1 replica and pod template defaults",
          "[apiserver][defaults][unit]") {
  json d = {{"metadata", {{"name", "web"}}},
            {"spec", {{"selector", {{"matchLabels", {{"app", "web"}}}}}, {"template", pod_template("nginx:1.27")}}}};
  auto out = defaulted("apps", "deployments", d);
  json expected_spec = {{"replicas", 1},
                        {"selector", {{"matchLabels", {{"app", "web"}}}}},
                        {"strategy", {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxUnavailable", "25%"}, {"maxSurge", "25%"}}}}},
                        {"revisionHistoryLimit", 10},
                        {"progressDeadlineSeconds", 600},
                        {"template", {{"metadata", {{"labels", {{"app", "web"}}}}}, {"spec", defaulted_pod_spec("nginx:1.27")}}}};
  CHECK(out["spec"] == expected_spec);
  SECTION("what is set, zero values included, stays as it was") {
    d["spec"]["replicas"] = 0;
    d["spec"]["strategy"] = {{"type", "Recreate"}};
    d["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "Never";
    d["spec"]["template"]["spec"]["restartPolicy"] = "Always";
    d["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 0;
    auto kept = defaulted("apps", "deployments", d);
    CHECK(kept["spec"]["replicas"] == 0);
    CHECK(kept["spec"]["strategy"] == json({{"type", "Recreate"}}));
    CHECK(kept["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Never");
    CHECK(kept["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 0);
  }
}

TEST_CASE("a Pod gets the template defaults plus enableServiceLinks, requests from limits and probe defaults",
          "[apiserver][defaults][unit]") {
  json pod = json::parse(R"({"metadata":{"name":"web"},"spec":{"hostNetwork":true,
    "containers":[{"name":"main","image":"busybox","ports":[{"containerPort":8080}],
      "resources":{"limits":{"cpu":"1","memory":"64Mi"},"requests":{"cpu":"500m"}},
      "livenessProbe":{"httpGet":{"port":8080}},
      "env":[{"name":"NODE","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}]}],
    "volumes":[{"name":"scratch"},{"name":"cfg","configMap":{"name":"cfg"}}]}})");
  auto out = defaulted("", "pods", pod);
  const json& spec = out["spec"];
  const json& c = spec["containers"][0];
  CHECK(c["imagePullPolicy"] == "Always");
  CHECK(c["terminationMessagePath"] == "/dev/termination-log");
  CHECK(c["terminationMessagePolicy"] == "File");
  CHECK(c["ports"][0] == json({{"containerPort", 8080}, {"protocol", "TCP"}, {"hostPort", 8080}}));
  CHECK(c["resources"]["requests"] == json({{"cpu", "500m"}, {"memory", "64Mi"}}));
  CHECK(c["livenessProbe"] == json::parse(R"({"httpGet":{"port":8080,"path":"/","scheme":"HTTP"},"timeoutSeconds":1,
    "periodSeconds":10,"successThreshold":1,"failureThreshold":3})"));
  CHECK(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] == "v1");
  CHECK(spec["enableServiceLinks"] == true);
  CHECK(spec["volumes"][0] == json({{"name", "scratch"}, {"emptyDir", json::object()}}));
  CHECK(spec["volumes"][1]["configMap"]["defaultMode"] == 420);
  for (const char* key : {"dnsPolicy", "restartPolicy", "schedulerName", "securityContext", "terminationGracePeriodSeconds"})
    CHECK(spec[key] == defaulted_pod_spec("busybox")[key]);
  SECTION("a template does not get the Pod-only defaults") {
    auto d = defaulted("apps", "deployments", {{"spec", {{"template", {{"spec", pod["spec"]}}}}}});
    const json& tmpl = d["spec"]["template"]["spec"];
    CHECK_FALSE(tmpl.contains("enableServiceLinks"));
    CHECK_FALSE(tmpl["containers"][0]["ports"][0].contains("hostPort"));
    CHECK(tmpl["containers"][0]["resources"]["requests"] == json({{"cpu", "500m"}}));
  }
}

TEST_CASE("a Service gets ClusterIP, None affinity, TCP ports with targetPort = port and Cluster traffic policies",
          "[apiserver][defaults][unit]") {
  auto out = defaulted("", "services", json::parse(R"({"spec":{"selector":{"app":"web"},
    "ports":[{"port":80},{"port":443,"targetPort":"https","protocol":"UDP"}]}})"));
  CHECK(out["spec"] == json::parse(R"({"selector":{"app":"web"},"type":"ClusterIP","sessionAffinity":"None",
    "internalTrafficPolicy":"Cluster",
    "ports":[{"port":80,"protocol":"TCP","targetPort":80},{"port":443,"targetPort":"https","protocol":"UDP"}]})"));
  auto lb = defaulted("", "services", json::parse(R"({"spec":{"type":"LoadBalancer","sessionAffinity":"ClientIP"}})"));
  CHECK(lb["spec"]["externalTrafficPolicy"] == "Cluster");
  CHECK(lb["spec"]["allocateLoadBalancerNodePorts"] == true);
  CHECK(lb["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"] == 10800);
  auto external = defaulted("", "services", json::parse(R"({"spec":{"type":"ExternalName","externalName":"db.example"}})"));
  CHECK_FALSE(external["spec"].contains("internalTrafficPolicy"));
}

TEST_CASE("ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, RC, Namespace, PVC and PV get their documented defaults",
          "[apiserver][defaults][unit]") {
  auto spec_of = [](const std::string& group, const std::string& plural, json spec) {
    auto out = defaulted(group, plural, {{"metadata", {{"name", "x"}}}, {"spec", std::move(spec)}});
    out["spec"].erase("template");
    return out["spec"];
  };
  CHECK(spec_of("apps", "replicasets", {{"template", pod_template("x:1")}}) == json({{"replicas", 1}}));
  CHECK(spec_of("apps", "statefulsets", {{"template", pod_template("x:1")},
                                         {"volumeClaimTemplates", {{{"metadata", {{"name", "data"}}}}}}}) ==
        json::parse(R"({"replicas":1,"podManagementPolicy":"OrderedReady",
          "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}},"revisionHistoryLimit":10,
          "persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Retain"},
          "volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"volumeMode":"Filesystem"}}]})"));
  CHECK(spec_of("apps", "daemonsets", {{"template", pod_template("x:1")}}) ==
        json::parse(R"({"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1,"maxSurge":0}},
          "revisionHistoryLimit":10})"));
  CHECK(spec_of("batch", "jobs", {{"template", pod_template("x:1")}}) ==
        json::parse(R"({"completions":1,"parallelism":1,"backoffLimit":6,"completionMode":"NonIndexed","suspend":false,
          "podReplacementPolicy":"TerminatingOrFailed"})"));
  CHECK(spec_of("batch", "jobs", {{"completions", 5}, {"podFailurePolicy", {{"rules", json::array()}}}}) ==
        json::parse(R"({"completions":5,"parallelism":1,"backoffLimit":6,"completionMode":"NonIndexed","suspend":false,
          "podFailurePolicy":{"rules":[]},"podReplacementPolicy":"Failed"})"));
  auto cron = defaulted("batch", "cronjobs", {{"spec", {{"schedule", "* * * * *"},
                                                        {"jobTemplate", {{"spec", {{"template", pod_template("x:1")}}}}}}}});
  CHECK(cron["spec"]["concurrencyPolicy"] == "Allow");
  CHECK(cron["spec"]["suspend"] == false);
  CHECK(cron["spec"]["successfulJobsHistoryLimit"] == 3);
  CHECK(cron["spec"]["failedJobsHistoryLimit"] == 1);
  CHECK(cron["spec"]["jobTemplate"]["spec"]["template"]["spec"] == defaulted_pod_spec("x:1"));
  CHECK_FALSE(cron["spec"]["jobTemplate"]["spec"].contains("backoffLimit"));  // SetDefaults_Job is for Jobs only
  auto rc = defaulted("", "replicationcontrollers", {{"spec", {{"template", pod_template("x:1")}}}});
  CHECK(rc["spec"]["replicas"] == 1);
  CHECK(rc["spec"]["selector"] == json({{"app", "web"}}));
  CHECK(rc["metadata"]["labels"] == json({{"app", "web"}}));
  CHECK(defaulted("", "namespaces", {{"metadata", {{"name", "dev"}}}})["metadata"]["labels"] ==
        json({{"kubernetes.io/metadata.name", "dev"}}));
  CHECK(defaulted("", "persistentvolumeclaims", {{"spec", json::object()}})["spec"]["volumeMode"] == "Filesystem");
  CHECK(defaulted("", "persistentvolumes", {{"spec", json::object()}})["spec"] ==
        json({{"persistentVolumeReclaimPolicy", "Retain"}, {"volumeMode", "Filesystem"}}));
  SECTION("kinds without defaults, and malformed fields, are left alone") {
    json cm = {{"metadata", {{"name", "c"}}}, {"data", {{"a", "1"}}}};
    CHECK(defaulted("", "configmaps", cm) == cm);
    json odd = json::parse(R"({"spec":{"template":{"spec":{"containers":"nope","volumes":[1,2]}},"strategy":5}})");
    auto out = defaulted("apps", "deployments", odd);
    CHECK(out["spec"]["template"]["spec"]["containers"] == "nope");
    CHECK(out["spec"]["strategy"] == 5);
  }
}

TEST_CASE("a CRD schema's defaults fill absent and null fields, nested and in lists", "[apiserver][defaults][unit]") {
  json schema = json::parse(R"({"type":"object","properties":{
    "metadata":{"type":"object","properties":{"name":{"type":"string","default":"never"}}},
    "spec":{"type":"object","default":{},"properties":{
      "size":{"type":"integer","default":1},
      "color":{"type":"string","default":"red"},
      "note":{"type":"string","nullable":true,"default":"n"},
      "limits":{"type":"object","properties":{"cpu":{"type":"string","default":"100m"}}},
      "parts":{"type":"array","items":{"type":"object","properties":{"weight":{"type":"integer","default":5}}}},
      "labels":{"type":"object","additionalProperties":{"type":"object","properties":{"on":{"type":"boolean","default":true}}}}}}}})");
  SECTION("an absent spec gets its default, then its properties' defaults") {
    json object = {{"metadata", {{"name", "w"}}}};
    apply_schema_defaults(schema, object);
    CHECK(object == json::parse(R"({"metadata":{"name":"w"},"spec":{"size":1,"color":"red","note":"n"}})"));
  }
  SECTION("set values stay; null is defaulted unless nullable; nested objects, items and map values are defaulted") {
    json object = json::parse(R"({"spec":{"size":3,"color":null,"note":null,"limits":{},
      "parts":[{},{"weight":2}],"labels":{"a":{},"b":{"on":false}}}})");
    apply_schema_defaults(schema, object);
    CHECK(object["spec"] == json::parse(R"({"size":3,"color":"red","note":null,"limits":{"cpu":"100m"},
      "parts":[{"weight":5},{"weight":2}],"labels":{"a":{"on":true},"b":{"on":false}}})"));
  }
}

TEST_CASE("the server stores defaulted objects on create, update, merge patch and server-side apply",
          "[apiserver][defaults][any-storage][integration]") {
  TestServer t;
  json d = {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", {{"name", "web"}}},
            {"spec", {{"selector", {{"matchLabels", {{"app", "web"}}}}}, {"template", pod_template("nginx:1.27")}}}};
  const std::string url = "/apis/apps/v1/namespaces/default/deployments/web";
  auto created = TestServer::json_of(t.request("POST", "/apis/apps/v1/namespaces/default/deployments", d.dump()));
  CHECK(created["spec"]["strategy"]["type"] == "RollingUpdate");
  CHECK(created["spec"]["replicas"] == 1);
  CHECK(created["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent");
  auto rv = created["metadata"]["resourceVersion"];

  SECTION("an update with the same undefaulted body changes nothing (no new resourceVersion)") {
    auto updated = TestServer::json_of(t.request("PUT", url, d.dump()));
    CHECK(updated["metadata"]["resourceVersion"] == rv);
    CHECK(updated["spec"]["revisionHistoryLimit"] == 10);
  }
  SECTION("a merge patch that removes a defaulted field gets the default back") {
    auto patched = TestServer::json_of(
        t.request("PATCH", url, R"({"spec":{"progressDeadlineSeconds":null}})", "application/merge-patch+json"));
    CHECK(patched["spec"]["progressDeadlineSeconds"] == 600);
  }
  SECTION("server-side apply of a new service stores it defaulted") {
    json svc = {{"apiVersion", "v1"}, {"kind", "Service"}, {"metadata", {{"name", "web"}}},
                {"spec", {{"ports", {{{"port", 80}}}}}}};
    auto reply = t.request("PATCH", "/api/v1/namespaces/default/services/web?fieldManager=test", svc.dump(),
                           "application/apply-patch+yaml");
    REQUIRE(reply.status == 201);
    auto applied = TestServer::json_of(reply);
    CHECK(applied["spec"]["type"] == "ClusterIP");
    CHECK(applied["spec"]["ports"][0] == json({{"port", 80}, {"protocol", "TCP"}, {"targetPort", 80}}));
  }
}

TEST_CASE("a custom resource gets its CRD schema's defaults before validation", "[apiserver][defaults][any-storage][integration]") {
  TestServer t;
  auto crd = kinformer::testing::widget_crd();
  auto& spec_schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
  spec_schema["properties"]["size"]["default"] = 2;  // `size` is required: the default satisfies it
  spec_schema["properties"]["color"]["default"] = "blue";
  REQUIRE(t.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd.dump()).status == 201);
  auto reply = t.request("POST", "/apis/example.com/v1/namespaces/default/widgets",
                         kinformer::testing::widget("w1", json::object()).dump());
  REQUIRE(reply.status == 201);
  CHECK(TestServer::json_of(reply)["spec"] == json({{"size", 2}, {"color", "blue"}}));
}
