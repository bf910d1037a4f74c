// Server-side printing (issue 32): the Table kube-apiserver answers for
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` — Accept negotiation, each
// built-in kind's columns and cells, a CRD's additionalPrinterColumns, and the same
// over real loopback HTTP for list, get and watch.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apiserver/builtin_printers.hpp"
#include "apiserver/printer_cells.hpp"
#include "apiserver/stored_object.hpp"
#include "apiserver/table_printer.hpp"
#include "tests/apiserver/test_server.hpp"
#include "tests/support/widget_crd.hpp"

using kinformer::apiserver::age_of;
using kinformer::apiserver::human_duration;
using kinformer::apiserver::ResourceRegistry;
using kinformer::apiserver::TableClock;
using kinformer::apiserver::TablePrinter;
using kinformer::apiserver::TableRequest;
using kinformer::apiserver::table_request;
using kinformer::testing::TestServer;
using kinformer::testing::WatchStream;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

const char* const kubectl_accept =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

// Every test row is read at 12:00:00 on a fixed day, objects were created at 11:55:00.
const TableClock::time_point noon = TableClock::from_time_t(1796126400);  // 2026-12-01T12:00:00Z
const char* const five_minutes_before = "2026-12-01T11:55:00Z";

const ResourceRegistry& registry() {
  static const ResourceRegistry r = ResourceRegistry::with_builtins();
  return r;
}

// The column names, upper-cased as kubectl prints them, the wide ones marked "+".
std::vector<std::string> headers(const TablePrinter& p) {
  std::vector<std::string> out;
  for (const auto& c : p.columns()) {
    std::string name = c.name;
    for (auto& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    out.push_back(c.priority ? "+" + name : name);
  }
  return out;
}

json table_of(const std::string& group, const std::string& plural, const json& object,
              TableRequest request = {}, const json* crd_version = nullptr) {
  const auto* type = registry().find(group, group.empty() ? "v1" : "v1", plural);
  REQUIRE(type);
  TablePrinter printer(*type, crd_version, request);
  auto stored = kinformer::apiserver::make_stored(*type, object, 1);
  return json::parse(printer.one(*stored, noon));
}

json cells_of(const std::string& group, const std::string& plural, json object) {
  object["metadata"]["creationTimestamp"] = five_minutes_before;
  return table_of(group, plural, object)["rows"][0]["cells"];
}

json deployment() {
  return json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},
    "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"},
                                     "matchExpressions":[{"key":"tier","operator":"In","values":["b","a"]}]},
            "template":{"spec":{"containers":[{"name":"main","image":"nginx:1.27"},{"name":"log","image":"busybox"}]}}},
    "status":{"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}})");
}

}  // namespace

TEST_CASE("table_request picks the first Accept alternative this server can answer", "[apiserver][table][unit]") {
  auto pick = [](const std::string& accept, const std::string& include = "") {
    auto wanted = table_request(accept, include);
    REQUIRE(wanted);
    return wanted.value();
  };
  SECTION("kubectl's header asks for meta.k8s.io/v1 with metadata rows") {
    auto wanted = pick(kubectl_accept);
    REQUIRE(wanted);
    CHECK(wanted->version == "v1");
    CHECK(wanted->include == TableRequest::Include::metadata);
  }
  SECTION("v1beta1 alone, with spaces and other parameter order") {
    auto wanted = pick(" application/json ; g=meta.k8s.io ; as=Table ; v=v1beta1");
    REQUIRE(wanted);
    CHECK(wanted->version == "v1beta1");
  }
  SECTION("an unservable media type first is skipped") {
    auto wanted = pick("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io");
    CHECK(wanted.has_value());
  }
  SECTION("plain JSON first, no Accept, or an unknown Table version means no Table") {
    CHECK_FALSE(pick("application/json," + std::string(kubectl_accept)));
    CHECK_FALSE(pick(""));
    CHECK_FALSE(pick("application/json;as=Table;v=v2;g=meta.k8s.io"));
    CHECK_FALSE(pick("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"));
  }
  SECTION("includeObject chooses what each row carries; anything else is 400") {
    CHECK(pick(kubectl_accept, "None")->include == TableRequest::Include::none);
    CHECK(pick(kubectl_accept, "Object")->include == TableRequest::Include::object);
    auto bad = table_request(kubectl_accept, "Everything");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == 400);
  }
}

TEST_CASE("human_duration rounds ages as kubectl shows them", "[apiserver][table][unit]") {
  const std::pair<long, const char*> cases[] = {
      {-2, "<invalid>"}, {-1, "0s"},          {0, "0s"},       {59, "59s"},       {119, "119s"},
      {120, "2m"},       {599, "9m59s"},      {600, "10m"},    {10799, "179m"},   {10800, "3h"},
      {28740, "7h59m"},  {28800, "8h"},       {172799, "47h"}, {172800, "2d"},    {691200 - 3600, "7d23h"},
      {691200, "8d"},    {63071999, "729d"},  {63072000, "2y"}, {63072000 + 5 * 86400, "2y5d"}, {315360000, "10y"}};
  for (auto [seconds, text] : cases) {
    INFO(seconds << " s");
    CHECK(human_duration(std::chrono::seconds(seconds)) == text);
  }
  CHECK(age_of("2026-12-01T11:59:30.123456Z", noon) == "29s");  // MicroTime
  CHECK(age_of("2026-12-01T13:58:00+02:00", noon) == "2m");
  CHECK(age_of("yesterday", noon) == "<unknown>");
  CHECK(age_of("9999-12-31T23:59:59Z", noon) == "<unknown>");  // beyond what the clock's arithmetic holds
  CHECK(age_of(nullptr, noon) == "<unknown>");
}

TEST_CASE("built-in kinds print kube-apiserver's columns", "[apiserver][table][unit]") {
  auto columns = [](const std::string& group, const std::string& plural) {
    const auto* type = registry().find(group, "v1", plural);
    REQUIRE(type);
    return headers(TablePrinter(*type, nullptr, {}));
  };
  using V = std::vector<std::string>;
  CHECK(columns("", "pods") == V{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "+IP", "+NODE", "+NOMINATED NODE", "+READINESS GATES"});
  CHECK(columns("apps", "deployments") == V{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "+CONTAINERS", "+IMAGES", "+SELECTOR"});
  CHECK(columns("apps", "replicasets") == V{"NAME", "DESIRED", "CURRENT", "READY", "AGE", "+CONTAINERS", "+IMAGES", "+SELECTOR"});
  CHECK(columns("apps", "statefulsets") == V{"NAME", "READY", "AGE", "+CONTAINERS", "+IMAGES"});
  CHECK(columns("apps", "daemonsets") == V{"NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR",
                                           "AGE", "+CONTAINERS", "+IMAGES", "+SELECTOR"});
  CHECK(columns("", "services") == V{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "+SELECTOR"});
  CHECK(columns("", "configmaps") == V{"NAME", "DATA", "AGE"});
  CHECK(columns("", "secrets") == V{"NAME", "TYPE", "DATA", "AGE"});
  CHECK(columns("", "namespaces") == V{"NAME", "STATUS", "AGE"});
  CHECK(columns("", "nodes") == V{"NAME", "STATUS", "ROLES", "AGE", "VERSION", "+INTERNAL-IP", "+EXTERNAL-IP", "+OS-IMAGE",
                                  "+KERNEL-VERSION", "+CONTAINER-RUNTIME"});
  CHECK(columns("batch", "jobs") == V{"NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE", "+CONTAINERS", "+IMAGES", "+SELECTOR"});
  CHECK(columns("batch", "cronjobs") == V{"NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE",
                                          "+CONTAINERS", "+IMAGES", "+SELECTOR"});
  CHECK(columns("", "serviceaccounts") == V{"NAME", "SECRETS", "AGE"});
  CHECK(columns("", "events") == V{"LAST SEEN", "TYPE", "REASON", "OBJECT", "+SUBOBJECT", "+SOURCE", "MESSAGE", "+FIRST SEEN",
                                   "+COUNT", "+NAME"});
  CHECK(columns("", "endpoints") == V{"NAME", "ENDPOINTS", "AGE"});
  CHECK(columns("networking.k8s.io", "ingresses") == V{"NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"});
  CHECK(columns("coordination.k8s.io", "leases") == V{"NAME", "HOLDER", "AGE"});
  CHECK(columns("", "replicationcontrollers") == V{"NAME", "DESIRED", "CURRENT", "READY", "AGE", "+CONTAINERS", "+IMAGES", "+SELECTOR"});
  CHECK(columns("apiextensions.k8s.io", "customresourcedefinitions") == V{"NAME", "CREATED AT"});
}

TEST_CASE("a deployment's row: ready of desired, updated, available, age, containers, images, selector",
          "[apiserver][table][unit]") {
  CHECK(cells_of("apps", "deployments", deployment()) ==
        json::array({"web", "2/3", 3, 2, "5m", "main,log", "nginx:1.27,busybox", "app=web,tier in (a,b)"}));
  json bare = deployment();
  bare.erase("status");
  bare["spec"].erase("selector");
  CHECK(cells_of("apps", "deployments", bare) == json::array({"web", "0/3", 0, 0, "5m", "main,log", "nginx:1.27,busybox", ""}));
}

TEST_CASE("a pod's row follows kube-apiserver's status rules", "[apiserver][table][unit]") {
  json pod = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"default"},
    "spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]},"status":{"phase":"Pending"}})");
  SECTION("pending, nothing ready, wide cells <none>") {
    CHECK(cells_of("", "pods", pod) == json::array({"web", "0/2", "Pending", "0", "5m", "<none>", "<none>", "<none>", "<none>"}));
  }
  SECTION("running with one ready container; restarts say when the last one was") {
    pod["spec"]["nodeName"] = "node-1";
    pod["status"] = json::parse(R"({"phase":"Running","podIPs":[{"ip":"10.0.0.7"}],"containerStatuses":[
      {"name":"a","ready":true,"restartCount":2,"state":{"running":{}},
       "lastState":{"terminated":{"exitCode":1,"finishedAt":"2026-12-01T11:58:00Z"}}},
      {"name":"b","ready":false,"restartCount":0,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]})");
    CHECK(cells_of("", "pods", pod) ==
          json::array({"web", "1/2", "CrashLoopBackOff", "2 (2m ago)", "5m", "10.0.0.7", "node-1", "<none>", "<none>"}));
  }
  SECTION("an init container still waiting shows Init:i/n") {
    pod["spec"]["initContainers"] = json::array({{{"name", "setup"}, {"image", "z"}}});
    pod["status"]["initContainerStatuses"] = json::array({{{"name", "setup"}, {"state", {{"waiting", json::object()}}}}});
    CHECK(cells_of("", "pods", pod)[2] == "Init:0/1");
  }
  SECTION("a pod being deleted is Terminating; a finished one carries the Completed condition") {
    pod["metadata"]["deletionTimestamp"] = "2026-12-01T11:59:00Z";
    CHECK(cells_of("", "pods", pod)[2] == "Terminating");
    pod["metadata"].erase("deletionTimestamp");
    pod["status"]["phase"] = "Succeeded";
    pod["metadata"]["creationTimestamp"] = five_minutes_before;
    auto row = table_of("", "pods", pod)["rows"][0];
    CHECK(row["cells"][2] == "Succeeded");
    CHECK(row["conditions"][0]["type"] == "Completed");
    CHECK(row["conditions"][0]["reason"] == "Succeeded");
  }
  SECTION("readiness gates count the conditions that are True") {
    pod["spec"]["readinessGates"] = json::array({{{"conditionType", "example.com/lb"}}, {{"conditionType", "example.com/dns"}}});
    pod["status"]["conditions"] = json::array({{{"type", "example.com/lb"}, {"status", "True"}}});
    CHECK(cells_of("", "pods", pod)[8] == "1/2");
  }
}

TEST_CASE("the other built-in kinds' rows", "[apiserver][table][unit]") {
  SECTION("service: type, cluster IP, external IP by type, ports with node ports, selector") {
    json svc = json::parse(R"({"metadata":{"name":"web"},"spec":{"type":"NodePort","clusterIPs":["10.96.0.10"],
      "ports":[{"port":80,"protocol":"TCP"},{"port":443,"nodePort":30443,"protocol":"TCP"}],"selector":{"app":"web"}}})");
    CHECK(cells_of("", "services", svc) ==
          json::array({"web", "NodePort", "10.96.0.10", "<none>", "80/TCP,443:30443/TCP", "5m", "app=web"}));
    svc["spec"]["type"] = "LoadBalancer";
    CHECK(cells_of("", "services", svc)[3] == "<pending>");
    svc["status"]["loadBalancer"]["ingress"] = json::array({{{"ip", "203.0.113.9"}}});
    CHECK(cells_of("", "services", svc)[3] == "203.0.113.9");
    svc = json::parse(R"({"metadata":{"name":"db"},"spec":{"type":"ClusterIP"}})");
    CHECK(cells_of("", "services", svc) == json::array({"db", "ClusterIP", "<none>", "<none>", "<none>", "5m", "<none>"}));
  }
  SECTION("configmap and secret count their entries") {
    CHECK(cells_of("", "configmaps", {{"metadata", {{"name", "c"}}}, {"data", {{"a", "1"}, {"b", "2"}}}, {"binaryData", {{"c", "AA=="}}}}) ==
          json::array({"c", 3, "5m"}));
    CHECK(cells_of("", "secrets", {{"metadata", {{"name", "s"}}}, {"type", "Opaque"}, {"data", {{"k", "dg=="}}}}) ==
          json::array({"s", "Opaque", 1, "5m"}));
  }
  SECTION("namespace, node, statefulset, replicaset, job, cronjob, event, endpoints, ingress, lease") {
    CHECK(cells_of("", "namespaces", {{"metadata", {{"name", "dev"}}}, {"status", {{"phase", "Active"}}}}) ==
          json::array({"dev", "Active", "5m"}));
    CHECK(cells_of("", "nodes", json::parse(R"({"metadata":{"name":"n1","labels":{"node-role.kubernetes.io/control-plane":""}},
        "spec":{"unschedulable":true},"status":{"conditions":[{"type":"Ready","status":"True"}],
        "addresses":[{"type":"InternalIP","address":"192.168.1.5"}],"nodeInfo":{"kubeletVersion":"v1.32.0"}}})")) ==
          json::array({"n1", "Ready,SchedulingDisabled", "control-plane", "5m", "v1.32.0", "192.168.1.5", "<none>", "<unknown>",
                       "<unknown>", "<unknown>"}));
    CHECK(cells_of("apps", "statefulsets", json::parse(R"({"metadata":{"name":"db"},"spec":{"replicas":3,
        "template":{"spec":{"containers":[{"name":"pg","image":"postgres:16"}]}}},"status":{"readyReplicas":1}})")) ==
          json::array({"db", "1/3", "5m", "pg", "postgres:16"}));
    CHECK(cells_of("apps", "replicasets", json::parse(R"({"metadata":{"name":"rs"},"spec":{"replicas":2,
        "selector":{"matchLabels":{"app":"web"}}},"status":{"replicas":2,"readyReplicas":1}})")) ==
          json::array({"rs", 2, 2, 1, "5m", "", "", "app=web"}));
    CHECK(cells_of("batch", "jobs", json::parse(R"({"metadata":{"name":"j"},"spec":{"completions":3},
        "status":{"succeeded":1,"startTime":"2026-12-01T11:56:00Z"}})")) ==
          json::array({"j", "Running", "1/3", "4m", "5m", "", "", "<none>"}));
    CHECK(cells_of("batch", "jobs", json::parse(R"({"metadata":{"name":"j"},"spec":{},"status":{"succeeded":1,
        "startTime":"2026-12-01T11:56:00Z","completionTime":"2026-12-01T11:56:30Z",
        "conditions":[{"type":"Complete","status":"True"}]}})"))[1] == "Complete");
    CHECK(cells_of("batch", "cronjobs", json::parse(R"({"metadata":{"name":"cj"},"spec":{"schedule":"*/5 * * * *",
        "suspend":false}})")) == json::array({"cj", "*/5 * * * *", "<none>", "False", 0, "<none>", "5m", "", "", "<none>"}));
    CHECK(cells_of("", "events", json::parse(R"({"metadata":{"name":"web.1"},"type":"Normal","reason":"Scheduled",
        "message":" assigned \n","involvedObject":{"kind":"Pod","name":"web"},"source":{"component":"scheduler"},
        "firstTimestamp":"2026-12-01T11:50:00Z","lastTimestamp":"2026-12-01T11:59:00Z","count":3})")) ==
          json::array({"60s", "Normal", "Scheduled", "pod/web", "", "scheduler", "assigned", "10m", 3, "web.1"}));
    CHECK(cells_of("", "endpoints", json::parse(R"({"metadata":{"name":"web"},"subsets":[{"addresses":[{"ip":"10.0.0.1"},
        {"ip":"10.0.0.2"}],"ports":[{"port":80},{"port":443}]}]})")) ==
          json::array({"web", "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...", "5m"}));
    CHECK(cells_of("networking.k8s.io", "ingresses", json::parse(R"({"metadata":{"name":"i"},"spec":{"rules":[{"host":"a.example"}],
        "tls":[{"hosts":["a.example"]}]}})")) == json::array({"i", "<none>", "a.example", "", "80, 443", "5m"}));
    CHECK(cells_of("coordination.k8s.io", "leases", {{"metadata", {{"name", "l"}}}, {"spec", {{"holderIdentity", "me"}}}}) ==
          json::array({"l", "me", "5m"}));
  }
  SECTION("a kind without a printer prints Name and Created At") {
    CHECK(cells_of("apiextensions.k8s.io", "customresourcedefinitions", {{"metadata", {{"name", "widgets.example.com"}}}}) ==
          json::array({"widgets.example.com", five_minutes_before}));
  }
  SECTION("an object that is not what the kind expects still prints, with empty cells") {
    CHECK(cells_of("apps", "deployments", {{"metadata", {{"name", "odd"}}}, {"spec", "not an object"}, {"status", 7}}) ==
          json::array({"odd", "0/0", 0, 0, "5m", "", "", ""}));
  }
}

TEST_CASE("rows carry the object as includeObject asks", "[apiserver][table][unit]") {
  json d = deployment();
  d["metadata"]["resourceVersion"] = "1";  // as table_of() stores it
  auto object_of = [&](TableRequest::Include include) {
    return table_of("apps", "deployments", d, {"v1", include})["rows"][0];
  };
  auto metadata_row = object_of(TableRequest::Include::metadata);
  CHECK(metadata_row["object"] == json({{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"},
                                        {"metadata", d["metadata"]}}));
  CHECK(object_of(TableRequest::Include::object)["object"] == d);
  CHECK_FALSE(object_of(TableRequest::Include::none).contains("object"));
  auto table = table_of("apps", "deployments", d, {"v1beta1", TableRequest::Include::metadata});
  CHECK(table["apiVersion"] == "meta.k8s.io/v1beta1");
  CHECK(table["kind"] == "Table");
}

TEST_CASE("a custom resource prints its CRD's additionalPrinterColumns", "[apiserver][table][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  kinformer::apiserver::ResourceType widget_type;
  widget_type.group = "example.com";
  widget_type.version = "v1";
  widget_type.kind = "Widget";
  widget_type.plural = "widgets";
  REQUIRE(registry.add(widget_type));
  const auto* type = registry.find("example.com", "v1", "widgets");
  json version = json::parse(R"({"name":"v1","served":true,"additionalPrinterColumns":[
    {"name":"Size","type":"integer","jsonPath":".spec.size"},
    {"name":"Color","type":"string","jsonPath":".spec.color","priority":1},
    {"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"},
    {"name":"Parts","type":"string","jsonPath":".spec.parts"},
    {"name":"Broken","type":"string","jsonPath":"spec..size"},
    {"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}]})");
  json w = json::parse(R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"default",
    "creationTimestamp":"2026-12-01T11:55:00Z"},"spec":{"size":3,"parts":["a","b"]},
    "status":{"conditions":[{"type":"Ready","status":"True"}]}})");
  TablePrinter printer(*type, &version, {});
  CHECK(headers(printer) == std::vector<std::string>{"NAME", "SIZE", "+COLOR", "READY", "PARTS", "BROKEN", "AGE"});
  auto row = json::parse(printer.one(*kinformer::apiserver::make_stored(*type, w, 1), noon))["rows"][0];
  CHECK(row["cells"] == json::array({"w1", 3, nullptr, "True", R"(["a","b"])", nullptr, "5m"}));
  SECTION("a CRD without columns, or none at all, prints Name and Age") {
    json plain = {{"name", "v1"}, {"served", true}};
    CHECK(headers(TablePrinter(*type, &plain, {})) == std::vector<std::string>{"NAME", "AGE"});
    TablePrinter without_crd(*type, nullptr, {});
    CHECK(json::parse(without_crd.one(*kinformer::apiserver::make_stored(*type, w, 1), noon))["rows"][0]["cells"] ==
          json::array({"w1", "5m"}));
  }
}

TEST_CASE("watch lines become Tables: columns on the first event only, errors unchanged", "[apiserver][table][unit]") {
  const auto* type = registry().find("", "v1", "configmaps");
  TablePrinter printer(*type, nullptr, {});
  bool sent = false;
  auto event = [](const char* type_name, const char* rv) {
    return std::string(R"({"type":")") + type_name +
           R"(","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","resourceVersion":")" + rv +
           R"(","creationTimestamp":"2026-12-01T11:55:00Z"},"data":{"a":"1"}}})" + "\n";
  };
  auto bookmark = json::parse(printer.watch_line(
      R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"9"}}})", sent, noon));
  CHECK(bookmark["object"]["rows"].empty());
  CHECK(bookmark["object"]["metadata"]["resourceVersion"] == "9");
  CHECK_FALSE(sent);
  auto first = printer.watch_line(event("ADDED", "10"), sent, noon);
  CHECK(first.back() == '\n');
  auto added = json::parse(first);
  CHECK(added["type"] == "ADDED");
  CHECK(added["object"]["kind"] == "Table");
  CHECK(added["object"]["columnDefinitions"].size() == 3);
  CHECK(added["object"]["rows"][0]["cells"] == json::array({"c", 1, "5m"}));
  CHECK(added["object"]["metadata"]["resourceVersion"] == "10");
  auto modified = json::parse(printer.watch_line(event("MODIFIED", "11"), sent, noon));
  CHECK(modified["object"]["columnDefinitions"].empty());
  CHECK(modified["object"]["rows"].size() == 1);
  std::string error = R"({"type":"ERROR","object":{"kind":"Status","code":410}})" "\n";
  CHECK(printer.watch_line(error, sent, noon) == error);
  CHECK(printer.watch_line("not json\n", sent, noon) == "not json\n");
}

// ---- over loopback HTTP ----

namespace {

kinformer::testing::Headers table_accept() { return {{"Accept", kubectl_accept}}; }

}  // namespace

TEST_CASE("a list with kubectl's Accept header is a Table with the list's metadata", "[apiserver][table][any-storage][integration]") {
  TestServer t;
  t.create_configmap("alpha");
  t.create_configmap("beta");
  t.create_configmap("gamma");
  auto reply = t.request("GET", "/api/v1/namespaces/default/configmaps?limit=2", "", "application/json", table_accept());
  REQUIRE(reply.status == 200);
  CHECK(reply.headers["content-type"] == "application/json;as=Table;v=v1;g=meta.k8s.io");
  auto table = TestServer::json_of(reply);
  CHECK(table["kind"] == "Table");
  REQUIRE(table["rows"].size() == 2);
  CHECK(table["rows"][0]["cells"][0] == "alpha");
  CHECK(table["rows"][0]["cells"][1] == 1);
  CHECK(table["rows"][0]["object"]["kind"] == "PartialObjectMetadata");
  CHECK(table["rows"][0]["object"]["metadata"]["namespace"] == "default");
  CHECK(table["metadata"]["remainingItemCount"] == 1);
  REQUIRE(table["metadata"]["continue"].is_string());
  auto rest = TestServer::json_of(t.request(
      "GET", "/api/v1/namespaces/default/configmaps?limit=2&continue=" + table["metadata"]["continue"].get<std::string>(),
      "", "application/json", table_accept()));
  REQUIRE(rest["rows"].size() == 1);
  CHECK(rest["rows"][0]["cells"][0] == "gamma");

  SECTION("one object is a one-row Table; plain JSON is still the object") {
    auto one = TestServer::json_of(t.request("GET", "/api/v1/namespaces/default/configmaps/beta", "", "application/json", table_accept()));
    CHECK(one["kind"] == "Table");
    CHECK(one["rows"].size() == 1);
    auto plain = TestServer::json_of(t.request("GET", "/api/v1/namespaces/default/configmaps/beta"));
    CHECK(plain["kind"] == "ConfigMap");
  }
  SECTION("a bad includeObject is 400, a missing object 404") {
    CHECK(t.request("GET", "/api/v1/namespaces/default/configmaps?includeObject=All", "", "application/json", table_accept()).status == 400);
    CHECK(t.request("GET", "/api/v1/namespaces/default/configmaps/nope", "", "application/json", table_accept()).status == 404);
  }
}

TEST_CASE("a Table watch sends the initial state and changes as rows, columns once", "[apiserver][table][any-storage][integration]") {
  TestServer t;
  t.create_configmap("alpha");
  WatchStream watch(t.port(), "/api/v1/namespaces/default/configmaps?watch=true", table_accept());
  REQUIRE(watch.status() == 200);
  auto first = watch.next_line();
  REQUIRE(first);
  auto added = json::parse(*first);
  CHECK(added["type"] == "ADDED");
  CHECK(added["object"]["kind"] == "Table");
  CHECK(added["object"]["columnDefinitions"].size() == 3);
  CHECK(added["object"]["rows"][0]["cells"][0] == "alpha");
  t.create_configmap("beta");
  auto second = watch.next_line();
  REQUIRE(second);  // the ADDED of beta: no line means the live event was not sent as a Table
  auto next = json::parse(*second);
  CHECK(next["type"] == "ADDED");
  CHECK(next["object"]["columnDefinitions"].empty());
  CHECK(next["object"]["rows"][0]["cells"][0] == "beta");
}

TEST_CASE("a custom resource's Table uses the stored CRD's additionalPrinterColumns", "[apiserver][table][any-storage][integration]") {
  TestServer t;
  auto crd = kinformer::testing::widget_crd();
  crd["spec"]["versions"][0]["additionalPrinterColumns"] =
      json::array({{{"name", "Size"}, {"type", "integer"}, {"jsonPath", ".spec.size"}},
                   {{"name", "Color"}, {"type", "string"}, {"jsonPath", ".spec.color"}}});
  REQUIRE(t.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd.dump()).status == 201);
  REQUIRE(t.request("POST", "/apis/example.com/v1/namespaces/default/widgets",
                    kinformer::testing::widget("w1", {{"size", 4}, {"color", "red"}}).dump())
              .status == 201);
  auto table = TestServer::json_of(t.request("GET", "/apis/example.com/v1/namespaces/default/widgets", "", "application/json", table_accept()));
  REQUIRE(table["columnDefinitions"].size() == 3);
  CHECK(table["columnDefinitions"][1]["name"] == "Size");
  CHECK(table["rows"][0]["cells"] == json::array({"w1", 4, "red"}));
}
