// kubectl's everyday output against the embedded server (issue 32): the columns
// `get` and `get -o wide` print for each kind, `get -w`, `describe deployment`
// (defaults), `scale` (the /scale subresource) and `rollout history`. Each step is
// asserted on what kubectl prints and on the stored object. Skipped, with a
// message, only where kubectl is not installed.
#include <regex>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/apiserver/kubectl_runner.hpp"
#include "tests/apiserver/test_server.hpp"
#include "tests/support/widget_crd.hpp"

using kinformer::testing::app_manifest;
using kinformer::testing::Kubectl;
using kinformer::testing::pod_manifest;
using kinformer::testing::stored;
using kinformer::testing::TestServer;
using kinformer::testing::wait_for_text;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// The shared app (deployment, service, configmap, secret, labelled app=demo) and a pod "web".
void apply_app(const Kubectl& k) {
  k.run_ok("apply -f " + k.file("app.yaml", std::string(app_manifest) + "---\n" + pod_manifest("runner")));
}

// kubectl's table output as cells: one vector per line, columns split where two or
// more spaces separate them (kubectl pads with at least three).
std::vector<std::vector<std::string>> table(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  std::string line;
  static const std::regex gap(" {2,}");
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    for (std::sregex_token_iterator it(line.begin(), line.end(), gap, -1), end; it != end; ++it)
      if (!it->str().empty()) cells.push_back(*it);
    rows.push_back(cells);
  }
  return rows;
}

using Cells = std::vector<std::string>;

bool is_age(const std::string& cell) { return std::regex_match(cell, std::regex("[0-9]+s|[0-9]+m[0-9]*s?")); }

// The rows of `kubectl get <what>` (header first), asserting it succeeded.
std::vector<Cells> get(const Kubectl& k, const std::string& what) {
  auto rows = table(k.run_ok("get " + what).out);
  INFO("kubectl get " << what);
  REQUIRE(rows.size() >= 2);
  return rows;
}

}  // namespace

TEST_CASE("kubectl get prints each kind's columns and get -o wide the wide ones", "[apiserver][kubectl][table][integration]") {
  REQUIRE_KUBECTL(kubectl);
  TestServer t;
  Kubectl k(kubectl, t.server().url());
  apply_app(k);

  auto deploy = get(k, "deployments");
  CHECK(deploy[0] == Cells{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"});
  REQUIRE(deploy[1].size() == 5);
  CHECK(Cells(deploy[1].begin(), deploy[1].begin() + 4) == Cells{"web", "0/2", "0", "0"});  // no controller fills status
  CHECK(is_age(deploy[1][4]));
  auto wide = get(k, "deployments -o wide");
  CHECK(wide[0] == Cells{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"});
  REQUIRE(wide[1].size() == 8);
  CHECK(Cells(wide[1].begin() + 5, wide[1].end()) == Cells{"main", "nginx:1.27", "app=demo"});

  auto pods = get(k, "pods");
  CHECK(pods[0] == Cells{"NAME", "READY", "STATUS", "RESTARTS", "AGE"});
  REQUIRE(pods[1].size() == 5);
  CHECK(Cells(pods[1].begin(), pods[1].begin() + 4) == Cells{"web", "0/1", "Pending", "0"});
  auto pods_wide = get(k, "pods -o wide");
  CHECK(pods_wide[0] == Cells{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"});
  REQUIRE(pods_wide[1].size() == 9);
  CHECK(Cells(pods_wide[1].begin() + 5, pods_wide[1].end()) == Cells{"<none>", "<none>", "<none>", "<none>"});

  auto services = get(k, "services -o wide");
  CHECK(services[0] == Cells{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"});
  REQUIRE(services[1].size() == 7);
  CHECK(Cells(services[1].begin(), services[1].begin() + 5) == Cells{"web", "ClusterIP", "<none>", "<none>", "80/TCP"});
  CHECK(services[1][6] == "app=demo");

  auto configmaps = get(k, "configmaps");
  CHECK(configmaps[0] == Cells{"NAME", "DATA", "AGE"});
  CHECK(Cells(configmaps[1].begin(), configmaps[1].begin() + 2) == Cells{"web-config", "1"});
  auto secrets = get(k, "secrets");
  CHECK(secrets[0] == Cells{"NAME", "TYPE", "DATA", "AGE"});
  CHECK(Cells(secrets[1].begin(), secrets[1].begin() + 3) == Cells{"web-secret", "Opaque", "1"});
  auto namespaces = get(k, "namespaces");
  CHECK(namespaces[0] == Cells{"NAME", "STATUS", "AGE"});
  CHECK(Cells(namespaces[1].begin(), namespaces[1].begin() + 2) == Cells{"default", "Active"});

  SECTION("-A adds the namespace from each row's metadata; get all prints each kind's own table") {
    auto all_namespaces = get(k, "deployments -A");
    CHECK(all_namespaces[0] == Cells{"NAMESPACE", "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"});
    CHECK(Cells(all_namespaces[1].begin(), all_namespaces[1].begin() + 3) == Cells{"default", "web", "0/2"});
    auto all = k.run_ok("get all").out;
    INFO(all);
    CHECK(std::regex_search(all, std::regex("NAME +READY +UP-TO-DATE +AVAILABLE +AGE\n")));
    CHECK(std::regex_search(all, std::regex("\ndeployment.apps/web +0/2 +0 +0 +[0-9]+s\n")));
    CHECK(std::regex_search(all, std::regex("\npod/web +0/1 +Pending +0 +[0-9]+s\n")));
    CHECK(std::regex_search(all, std::regex("\nservice/web +ClusterIP +<none> +<none> +80/TCP +[0-9]+s\n")));
  }
  // What the tables show is what is stored, defaults included.
  auto web = stored(t, "deployments", "web", "apps");
  CHECK(web["spec"]["replicas"] == 2);
  CHECK_FALSE(web.contains("status"));
  CHECK(stored(t, "services", "web")["spec"]["ports"][0] == json({{"port", 80}, {"protocol", "TCP"}, {"targetPort", 80}}));
}

TEST_CASE("kubectl get prints a custom resource's additionalPrinterColumns, and kubectl scale scales it",
          "[apiserver][kubectl][table][crd][scale_subresource][integration]") {
  REQUIRE_KUBECTL(kubectl);
  TestServer t;
  Kubectl k(kubectl, t.server().url());
  auto crd = kinformer::testing::widget_crd();
  auto& version = crd["spec"]["versions"][0];
  version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"]["default"] = 1;
  version["subresources"]["scale"] = {{"specReplicasPath", ".spec.size"}, {"statusReplicasPath", ".status.count"}};
  version["additionalPrinterColumns"] = json::parse(R"([
    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
    {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}])");
  k.run_ok("apply -f " + k.file("crd.json", crd.dump()));
  k.run_ok("apply -f " + k.file("w.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  color: red\n"));
  auto widgets = get(k, "widgets");
  CHECK(widgets[0] == Cells{"NAME", "SIZE", "AGE"});
  CHECK(Cells(widgets[1].begin(), widgets[1].begin() + 2) == Cells{"w1", "1"});  // the schema's default
  auto wide = get(k, "widgets -o wide");
  CHECK(wide[0] == Cells{"NAME", "SIZE", "COLOR", "AGE"});  // -o wide keeps the CRD's order
  REQUIRE(wide[1].size() == 4);
  CHECK(wide[1][2] == "red");
  auto crds = get(k, "crds");
  CHECK(crds[0] == Cells{"NAME", "CREATED AT"});
  CHECK(crds[1][0] == "widgets.example.com");
  CHECK(stored(t, "widgets", "w1", "example.com")["spec"]["size"] == 1);

  // subresources.scale: kubectl finds widgets/scale in discovery and scales through it
  CHECK(k.run_ok("scale widget w1 --replicas=5").out == "widget.example.com/w1 scaled\n");
  CHECK(stored(t, "widgets", "w1", "example.com")["spec"]["size"] == 5);
  CHECK(get(k, "widgets")[1][1] == "5");
}

TEST_CASE("kubectl get -w prints the header once and a row per change", "[apiserver][kubectl][table][integration]") {
  REQUIRE_KUBECTL(kubectl);
  TestServer t;
  Kubectl k(kubectl, t.server().url());
  t.create_configmap("alpha");
  auto watch_out = k.watch_in_background(t, "get configmaps -w");
  k.run_ok("create configmap beta --from-literal=a=1 --from-literal=b=2");
  auto seen = wait_for_text(watch_out, "beta");
  INFO("kubectl get -w printed: " << seen);
  auto rows = table(seen);
  REQUIRE(rows.size() == 3);  // no row for beta: the watch's Table event did not reach kubectl
  CHECK(rows[0] == Cells{"NAME", "DATA", "AGE"});
  CHECK(Cells(rows[1].begin(), rows[1].begin() + 2) == Cells{"alpha", "1"});
  CHECK(Cells(rows[2].begin(), rows[2].begin() + 2) == Cells{"beta", "2"});
  CHECK(stored(t, "configmaps", "beta")["data"] == json({{"a", "1"}, {"b", "2"}}));
  (void)t.server().stop();  // ends the background kubectl's watch
}

TEST_CASE("kubectl describe deployment shows the defaulted strategy", "[apiserver][kubectl][defaults][integration]") {
  REQUIRE_KUBECTL(kubectl);
  TestServer t;
  Kubectl k(kubectl, t.server().url());
  apply_app(k);
  auto described = k.run_ok("describe deployment web").out;
  INFO(described);
  CHECK(std::regex_search(described, std::regex("\nStrategyType: +RollingUpdate\n")));
  CHECK(std::regex_search(described, std::regex("\nRollingUpdateStrategy: +25% max unavailable, 25% max surge\n")));
  CHECK(std::regex_search(described, std::regex("\nReplicas: +2 desired \\| 0 updated \\| 0 total \\| 0 available \\| 0 unavailable\n")));
  CHECK(std::regex_search(described, std::regex("\n +Image: +nginx:1.27\n")));
  auto web = stored(t, "deployments", "web", "apps");
  CHECK(web["spec"]["strategy"] ==
        json({{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxUnavailable", "25%"}, {"maxSurge", "25%"}}}}));
  CHECK(web["spec"]["revisionHistoryLimit"] == 10);
  CHECK(web["spec"]["progressDeadlineSeconds"] == 600);
  const json& pod_spec = web["spec"]["template"]["spec"];
  CHECK(pod_spec["restartPolicy"] == "Always");
  CHECK(pod_spec["dnsPolicy"] == "ClusterFirst");
  CHECK(pod_spec["schedulerName"] == "default-scheduler");
  CHECK(pod_spec["terminationGracePeriodSeconds"] == 30);
  CHECK(pod_spec["containers"][0]["imagePullPolicy"] == "IfNotPresent");
  CHECK(pod_spec["containers"][0]["terminationMessagePath"] == "/dev/termination-log");
  auto pod = k.run_ok("get pod web -o jsonpath={.spec.containers[0].imagePullPolicy}").out;
  CHECK(pod == "Always");  // busybox has no tag
}

TEST_CASE("kubectl scale changes spec.replicas through /scale", "[apiserver][kubectl][scale_subresource][integration]") {
  REQUIRE_KUBECTL(kubectl);
  TestServer t;
  Kubectl k(kubectl, t.server().url());
  apply_app(k);
  CHECK(k.run_ok("scale deployment web --replicas=3").out == "deployment.apps/web scaled\n");
  auto web = stored(t, "deployments", "web", "apps");
  CHECK(web["spec"]["replicas"] == 3);
  CHECK(web["metadata"]["generation"] == 2);
  CHECK(get(k, "deployment web")[1][1] == "0/3");

  auto wrong = k.run("scale deployment web --current-replicas=2 --replicas=4");
  CHECK(wrong.exit_code != 0);
  CHECK(wrong.err.find("Expected replicas to be 2, was 3") != std::string::npos);
  CHECK(stored(t, "deployments", "web", "apps")["spec"]["replicas"] == 3);
  CHECK(k.run_ok("scale deployment web --current-replicas=3 --replicas=1").out == "deployment.apps/web scaled\n");
  CHECK(stored(t, "deployments", "web", "apps")["spec"]["replicas"] == 1);
}

TEST_CASE("kubectl rollout history lists the revisions of the deployment's replica sets",
          "[apiserver][kubectl][integration]") {
  REQUIRE_KUBECTL(kubectl);
  TestServer t;
  Kubectl k(kubectl, t.server().url());
  apply_app(k);
  // The server runs no deployment controller: until something writes replica sets there is no history.
  CHECK(k.run_ok("rollout history deployment/web").out.find("No rollout history found.") != std::string::npos);

  auto web = stored(t, "deployments", "web", "apps");
  for (int revision : {1, 2}) {
    json rs = {{"apiVersion", "apps/v1"},
               {"kind", "ReplicaSet"},
               {"metadata",
                {{"name", "web-" + std::to_string(revision)},
                 {"labels", {{"app", "demo"}}},
                 {"annotations",
                  {{"deployment.kubernetes.io/revision", std::to_string(revision)},
                   {"kubernetes.io/change-cause", "rollout " + std::to_string(revision)}}},
                 {"ownerReferences",
                  {{{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}, {"uid", web["metadata"]["uid"]},
                    {"controller", true}}}}}},
               {"spec", {{"replicas", 0}, {"selector", web["spec"]["selector"]}, {"template", web["spec"]["template"]}}}};
    REQUIRE(t.request("POST", "/apis/apps/v1/namespaces/default/replicasets", rs.dump()).status == 201);
  }
  auto history = k.run_ok("rollout history deployment/web").out;
  INFO(history);
  CHECK(std::regex_search(history, std::regex("REVISION +CHANGE-CAUSE\n1 +rollout 1\n2 +rollout 2\n")));
  auto one = k.run_ok("rollout history deployment/web --revision=1").out;
  CHECK(one.find("nginx:1.27") != std::string::npos);
  CHECK(stored(t, "replicasets", "web-2", "apps")["metadata"]["ownerReferences"][0]["uid"] == web["metadata"]["uid"]);
}
