// `kinformer apiserver --data-file` under crashes (issue 10): the real binary is
// SIGKILLed at random moments while clients write, restarted, and every acknowledged
// write must be there with its resourceVersion. Also the start-up checks a careless
// operator meets: a missing directory, damaged data files, --repair.
//
// KINFORMER_SIGKILL_ROUNDS sets the number of kill/restart rounds (default 50).
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "apiserver/storage/log_format.hpp"
#include "tests/apiserver/kinformer_process.hpp"
#include "tests/support/loopback_http.hpp"
#include "tests/support/widget_crd.hpp"

using namespace std::chrono_literals;
using kinformer::testing::http_request;
using kinformer::testing::HttpConnection;
using kinformer::testing::KinformerProcess;
using kinformer::testing::port_of;
using nlohmann::json;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/kinformer-durable-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

std::uint64_t rv_of(const std::string& body) {
  auto parsed = json::parse(body, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("metadata")) return 0;
  return std::stoull(parsed["metadata"].value("resourceVersion", "0"));
}

// What a client knows about one object: its last acknowledged state, and whether a
// write to it was cut off (then either outcome is allowed, and the next check adopts it).
struct Known {
  bool exists = false;
  std::uint64_t rv = 0;
  bool uncertain = false;
};
using KnownState = std::map<std::string, Known>;  // "namespace/name" of configmaps, "ns:name" of namespaces

struct Server {
  std::unique_ptr<KinformerProcess> process;
  std::uint16_t port = 0;
};

Server start(const std::vector<std::string>& args) {
  Server s;
  s.process = std::make_unique<KinformerProcess>(args);
  s.port = port_of(s.process->first_line(20s));
  INFO("the server did not print its banner within 20 s; stderr: " << s.process->stderr_text());
  REQUIRE(s.port != 0);
  return s;
}

// Every configmap and namespace the server holds, with its resourceVersion; and the list revision.
std::uint64_t observe(std::uint16_t port, std::map<std::string, std::uint64_t>& out) {
  std::uint64_t revision = 0;
  for (const char* path : {"/api/v1/configmaps", "/api/v1/namespaces"}) {
    auto reply = http_request(port, "GET", path, "", "application/json", {}, 30s);
    INFO("GET " << path << ": " << reply.status << " " << reply.error);
    REQUIRE(reply.status == 200);
    auto list = json::parse(reply.body);
    revision = std::max<std::uint64_t>(revision,
                                       std::stoull(list["metadata"]["resourceVersion"].get<std::string>()));
    bool namespaces = std::string(path) == "/api/v1/namespaces";
    for (const auto& item : list["items"]) {
      const auto& meta = item["metadata"];
      auto key = namespaces ? "ns:" + meta["name"].get<std::string>()
                            : meta["namespace"].get<std::string>() + "/" + meta["name"].get<std::string>();
      out[key] = std::stoull(meta["resourceVersion"].get<std::string>());
    }
  }
  return revision;
}

// Checks the server against what clients were told; adopts the outcome of cut-off writes.
void verify(std::uint16_t port, KnownState& known, std::uint64_t newest_acknowledged, int round) {
  std::map<std::string, std::uint64_t> seen;
  auto revision = observe(port, seen);
  INFO("after restart " << round);
  CHECK(revision >= newest_acknowledged);  // revisions never go back
  for (auto& [key, k] : known) {
    auto it = seen.find(key);
    if (k.uncertain) {
      if (it != seen.end()) CHECK(it->second >= k.rv);  // the old or a newer state
      k = Known{it != seen.end(), it != seen.end() ? it->second : 0, false};
      continue;
    }
    INFO(key << " was acknowledged as " << (k.exists ? "present at " + std::to_string(k.rv) : "deleted"));
    if (k.exists) {
      REQUIRE(it != seen.end());
      CHECK(it->second == k.rv);
    } else {
      CHECK(it == seen.end());
    }
  }
  for (const auto& [key, rv] : seen) {
    if (key == "ns:default" || key == "ns:kube-system" || key == "ns:kube-public") continue;
    INFO(key << " exists, but no client ever wrote it");
    CHECK(known.count(key) == 1);
  }
}

// One client: creates, updates and deletes its own configmaps until the server goes away.
void configmap_client(std::uint16_t port, const std::string& prefix, int ops, KnownState& known,
                      std::uint64_t& newest, std::atomic<int>& unexpected) {
  HttpConnection connection(port);
  std::mt19937 rng(std::hash<std::string>{}(prefix));
  std::vector<std::string> mine;
  for (int i = 0; i < ops; ++i) {
    int dice = static_cast<int>(rng() % 10);
    std::string method, target, name, body;
    if (mine.empty() || dice < 6) {
      name = prefix + "-" + std::to_string(i);
      method = "POST";
      target = "/api/v1/namespaces/default/configmaps";
    } else {
      name = mine[rng() % mine.size()];
      method = dice < 9 ? "PUT" : "DELETE";
      target = "/api/v1/namespaces/default/configmaps/" + name;
    }
    if (method != "DELETE")
      body = json{{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", {{"name", name}}},
                  {"data", {{"op", std::to_string(i)}}}}
                 .dump();
    auto& k = known["default/" + name];
    k.uncertain = true;
    auto reply = connection.request(method, target, body);
    if (reply.status == 0) return;  // killed: this write's outcome is unknown
    if (reply.status != 200 && reply.status != 201) {
      unexpected++;
      return;
    }
    k.uncertain = false;
    k.exists = method != "DELETE";
    k.rv = rv_of(reply.body);
    newest = std::max(newest, k.rv);
    if (method == "POST") mine.push_back(name);
    if (method == "DELETE") mine.erase(std::find(mine.begin(), mine.end(), name));
  }
}

// One client: namespaces holding configmaps, each deleted again (a cascade of deletes).
void namespace_client(std::uint16_t port, const std::string& prefix, KnownState& known, std::uint64_t& newest,
                      std::atomic<int>& unexpected) {
  HttpConnection connection(port);
  for (int n = 0; n < 6; ++n) {
    auto ns = prefix + "-" + std::to_string(n);
    std::vector<std::string> keys = {"ns:" + ns};
    for (int c = 0; c < 3; ++c) keys.push_back(ns + "/cm-" + std::to_string(c));
    for (std::size_t step = 0; step <= keys.size(); ++step) {
      bool deleting = step == keys.size();
      HttpConnection* c = &connection;
      kinformer::testing::HttpReply reply;
      if (deleting) {
        for (auto& key : keys) known[key].uncertain = true;
        reply = c->request("DELETE", "/api/v1/namespaces/" + ns);
      } else if (step == 0) {
        known[keys[0]].uncertain = true;
        reply = c->request("POST", "/api/v1/namespaces", json{{"metadata", {{"name", ns}}}}.dump());
      } else {
        known[keys[step]].uncertain = true;
        reply = c->request("POST", "/api/v1/namespaces/" + ns + "/configmaps",
                           json{{"metadata", {{"name", "cm-" + std::to_string(step - 1)}}}}.dump());
      }
      if (reply.status == 0) return;
      if (reply.status != 200 && reply.status != 201) {
        unexpected++;
        return;
      }
      auto rv = rv_of(reply.body);
      newest = std::max(newest, rv);
      if (deleting) {
        for (auto& key : keys) known[key] = Known{false, 0, false};
      } else {
        known[keys[step]] = Known{true, rv, false};
      }
    }
  }
}

int rounds_from_environment() {
  const char* text = std::getenv("KINFORMER_SIGKILL_ROUNDS");
  int rounds = text ? std::atoi(text) : 50;
  return rounds > 0 ? rounds : 50;
}

}  // namespace

TEST_CASE(
    "SIGKILL at random moments while clients write loses no acknowledged write and no revision goes back",
    "[apiserver][durability][item-10][integration]") {
  REQUIRE(kinformer::testing::kinformer_binary_built());
  TempDir dir;
  // A small log limit: compactions run all the time, so kills also land in the middle of them.
  std::vector<std::string> args = {"apiserver",       "--port", "0", "--data-file", dir.path + "/state.json",
                                   "--wal-max-bytes", "8192"};
  const int rounds = rounds_from_environment();
  constexpr int configmap_clients = 4;
  KnownState known;
  std::uint64_t newest = 0;
  std::mt19937 rng(20261201);
  auto started = std::chrono::steady_clock::now();
  for (int round = 0; round < rounds; ++round) {
    auto server = start(args);
    verify(server.port, known, newest, round);
    std::vector<KnownState> parts(configmap_clients + 1);
    std::vector<std::uint64_t> newest_parts(configmap_clients + 1, 0);
    std::atomic<int> unexpected{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < configmap_clients; ++c)
      clients.emplace_back([&, c] {
        configmap_client(server.port, "r" + std::to_string(round) + "c" + std::to_string(c), 60, parts[c],
                         newest_parts[c], unexpected);
      });
    clients.emplace_back([&] {
      namespace_client(server.port, "r" + std::to_string(round) + "ns", parts[configmap_clients],
                       newest_parts[configmap_clients], unexpected);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 120));
    ::kill(server.process->pid(), SIGKILL);
    for (auto& t : clients) t.join();
    CHECK(server.process->wait_exit(10s) == 128 + SIGKILL);
    CHECK(unexpected == 0);
    for (std::size_t c = 0; c < parts.size(); ++c) {
      for (auto& [key, k] : parts[c]) known[key] = k;
      newest = std::max(newest, newest_parts[c]);
    }
  }
  auto last = start(args);
  verify(last.port, known, newest, rounds);
  // Each start opens the next log segment and so does each compaction: a number beyond the
  // count of starts shows the kills also met compactions.
  std::uint64_t segment = 0;
  for (std::uint64_t n = 1; n < 100000 && !segment; ++n) {
    char name[32];
    std::snprintf(name, sizeof name, "/state.json.wal-%010llu", static_cast<unsigned long long>(n));
    if (::access((dir.path + name).c_str(), F_OK) == 0) segment = n;
  }
  CHECK(segment > static_cast<std::uint64_t>(rounds) + 1);
  // New writes continue above every revision a client was ever given.
  auto next = http_request(last.port, "POST", "/api/v1/namespaces/default/configmaps",
                           R"({"metadata":{"name":"after"}})");
  REQUIRE(next.status == 201);
  CHECK(rv_of(next.body) > newest);
  std::size_t acknowledged = 0;
  for (const auto& [key, k] : known) acknowledged += k.exists;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  WARN(rounds << " SIGKILL rounds in " << seconds << " s; " << acknowledged
              << " objects acknowledged and present");
  ::kill(last.process->pid(), SIGTERM);
  CHECK(last.process->wait_exit(20s) == 0);
}

TEST_CASE("a watcher resuming after a SIGKILL from a revision before it gets every later event or 410",
          "[apiserver][durability][item-10][integration]") {
  REQUIRE(kinformer::testing::kinformer_binary_built());
  TempDir dir;
  std::vector<std::string> args = {"apiserver", "--port", "0", "--data-file", dir.path + "/state.json"};
  auto first = start(args);
  std::uint64_t start_revision = 0;
  {
    std::map<std::string, std::uint64_t> ignored;
    start_revision = observe(first.port, ignored);
  }
  std::uint64_t newest = 0;
  HttpConnection connection(first.port);
  for (int i = 0; i < 40; ++i) {
    auto reply = connection.request("POST", "/api/v1/namespaces/default/configmaps",
                                    json{{"metadata", {{"name", "w" + std::to_string(i)}}}}.dump());
    REQUIRE(reply.status == 201);
    newest = rv_of(reply.body);
  }
  ::kill(first.process->pid(), SIGKILL);
  REQUIRE(first.process->wait_exit(10s) == 128 + SIGKILL);

  auto second = start(args);
  // From the revision the first run started at: the log held every event after it.
  kinformer::testing::WatchStream resumed(
      second.port, "/api/v1/configmaps?watch=true&resourceVersion=" + std::to_string(start_revision));
  REQUIRE(resumed.status() == 200);
  std::uint64_t expect = start_revision + 1;
  while (expect <= newest) {
    auto line = resumed.next_line(10s);
    INFO("waited 10 s for the event at revision " << expect);
    REQUIRE(line);
    auto event = json::parse(*line);
    REQUIRE(event["type"] == "ADDED");
    CHECK(std::stoull(event["object"]["metadata"]["resourceVersion"].get<std::string>()) == expect);
    ++expect;
  }
  // From before what the log holds: 410 Expired, never a silent gap.
  kinformer::testing::WatchStream expired(
      second.port, "/api/v1/configmaps?watch=true&resourceVersion=" + std::to_string(start_revision - 1));
  auto line = expired.next_line(10s);
  INFO("waited 10 s for the 410 of a watch from before the log");
  REQUIRE(line);
  auto event = json::parse(*line);
  CHECK(event["type"] == "ERROR");
  CHECK(event["object"]["code"] == 410);
}

TEST_CASE("SIGTERM during a write burst keeps every acknowledged write",
          "[apiserver][durability][item-10][integration]") {
  REQUIRE(kinformer::testing::kinformer_binary_built());
  TempDir dir;
  std::vector<std::string> args = {"apiserver", "--port", "0", "--data-file", dir.path + "/state.json"};
  auto first = start(args);
  std::vector<KnownState> parts(4);
  std::vector<std::uint64_t> newest_parts(4, 0);
  std::atomic<int> unexpected{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c)
    clients.emplace_back([&, c] {
      configmap_client(first.port, "t" + std::to_string(c), 100000, parts[c], newest_parts[c], unexpected);
    });
  std::this_thread::sleep_for(300ms);
  ::kill(first.process->pid(), SIGTERM);
  for (auto& t : clients) t.join();
  CHECK(first.process->wait_exit(20s) == 0);
  KnownState known;
  std::uint64_t newest = 0;
  for (std::size_t c = 0; c < parts.size(); ++c) {
    for (auto& [key, k] : parts[c]) known[key] = k;
    newest = std::max(newest, newest_parts[c]);
  }
  CHECK(newest > 0);
  auto second = start(args);
  verify(second.port, known, newest, 1);
}

TEST_CASE("1000 acknowledged creates survive kill -9", "[apiserver][durability][item-10][integration]") {
  REQUIRE(kinformer::testing::kinformer_binary_built());
  TempDir dir;
  std::vector<std::string> args = {"apiserver", "--port", "0", "--data-file", dir.path + "/state.json"};
  auto first = start(args);
  std::vector<std::thread> clients;
  std::vector<std::map<std::string, std::uint64_t>> created(4);
  for (int c = 0; c < 4; ++c)
    clients.emplace_back([&, c] {
      HttpConnection connection(first.port);
      for (int i = 0; i < 250; ++i) {
        auto name = "k" + std::to_string(c) + "-" + std::to_string(i);
        auto reply = connection.request("POST", "/api/v1/namespaces/default/configmaps",
                                        json{{"metadata", {{"name", name}}}}.dump());
        if (reply.status == 201) created[c]["default/" + name] = rv_of(reply.body);
      }
    });
  for (auto& t : clients) t.join();
  ::kill(first.process->pid(), SIGKILL);
  REQUIRE(first.process->wait_exit(10s) == 128 + SIGKILL);
  auto second = start(args);
  std::map<std::string, std::uint64_t> seen;
  observe(second.port, seen);
  std::size_t present = 0, total = 0;
  for (const auto& part : created)
    for (const auto& [key, rv] : part) {
      ++total;
      auto it = seen.find(key);
      present += it != seen.end() && it->second == rv;
    }
  CHECK(total == 1000);
  CHECK(present == total);
}

TEST_CASE("a data file in a missing directory fails at start with a clear error and a non-zero exit",
          "[apiserver][durability][item-10][integration]") {
  REQUIRE(kinformer::testing::kinformer_binary_built());
  TempDir dir;
  KinformerProcess server({"apiserver", "--port", "0", "--data-file", dir.path + "/missing/state.json"});
  CHECK(server.wait_exit(20s) == 1);
  CHECK_THAT(server.stderr_text(), Catch::Contains(dir.path + "/missing") && Catch::Contains("No such file"));
}

TEST_CASE("damaged data files refuse to start with an error naming the object, never an abort",
          "[apiserver][durability][item-10][integration]") {
  REQUIRE(kinformer::testing::kinformer_binary_built());
  TempDir dir;
  auto data = dir.path + "/state.json";
  std::vector<std::string> args = {"apiserver", "--port", "0", "--data-file", data};
  {
    auto server = start(args);
    auto created = http_request(server.port, "POST", "/api/v1/namespaces/default/configmaps",
                                R"({"metadata":{"name":"web"},"data":{"color":"blue"}})");
    REQUIRE(created.status == 201);
    ::kill(server.process->pid(), SIGTERM);
    REQUIRE(server.process->wait_exit(20s) == 0);
  }
  std::string good;
  {
    std::ifstream in(data);
    std::stringstream s;
    s << in.rdbuf();
    good = s.str();
  }
  auto v1 = json::parse(good);
  v1["version"] = 1;
  v1.erase("checksum");
  std::size_t web = 0;
  for (std::size_t i = 0; i < v1["objects"].size(); ++i)
    if (v1["objects"][i]["object"]["metadata"]["name"] == "web") web = i;

  auto changed = good;
  changed.replace(changed.find("blue"), 4, "gray");
  std::vector<std::pair<std::string, std::string>> cases = {{changed, "checksum does not match"}};
  auto with = [&](auto edit, const std::string& expect) {
    auto copy = v1;
    edit(copy);
    cases.emplace_back(copy.dump(), expect);
  };
  with([&](json& j) { j["objects"][web]["object"]["metadata"]["resourceVersion"] = "abc"; }, "default/web");
  with([&](json& j) { j["revision"] = 18446744073709551615ULL; }, "\"revision\" must be an integer");
  with(
      [&](json& j) {
        auto& objects = j["objects"];
        for (std::size_t i = 0; i < objects.size(); ++i)
          if (objects[i]["object"]["metadata"]["name"] == "default") objects.erase(i--);
      },
      "the namespace \"default\" is missing");
  with([&](json& j) { j["objects"][web] = 1; }, "must be an object, not 1");
  with([&](json& j) { j["objects"][web]["resource"] = 5; }, "\"resource\" must be a string");
  for (const auto& [content, expect] : cases) {
    std::ofstream(data, std::ios::trunc) << content;
    KinformerProcess server(args);
    INFO("expected an error containing: " << expect);
    CHECK(server.wait_exit(20s) == 1);
    CHECK_THAT(server.stderr_text(), Catch::Contains(expect));
  }
}

TEST_CASE("a corrupt log record refuses to start naming its offset and --repair truncates there",
          "[apiserver][durability][item-10][integration]") {
  REQUIRE(kinformer::testing::kinformer_binary_built());
  TempDir dir;
  auto data = dir.path + "/state.json";
  std::vector<std::string> args = {"apiserver", "--port", "0", "--data-file", data};
  {
    auto server = start(args);
    HttpConnection connection(server.port);
    for (int i = 0; i < 3; ++i)
      REQUIRE(connection
                  .request("POST", "/api/v1/namespaces/default/configmaps",
                           json{{"metadata", {{"name", "cm-" + std::to_string(i)}}}}.dump())
                  .status == 201);
    ::kill(server.process->pid(), SIGKILL);
    REQUIRE(server.process->wait_exit(10s) == 128 + SIGKILL);
  }
  auto segment = data + ".wal-0000000001";
  std::string bytes;
  {
    std::ifstream in(segment, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    bytes = s.str();
  }
  auto records = kinformer::apiserver::storage::scan_segment(bytes).records;
  REQUIRE(records.size() == 3);
  auto second_at = records[1].offset;
  bytes[second_at + 20] ^= 0x02;
  std::ofstream(segment, std::ios::binary | std::ios::trunc) << bytes;
  {
    KinformerProcess refused(args);
    CHECK(refused.wait_exit(20s) == 1);
    CHECK_THAT(refused.stderr_text(),
               Catch::Contains("byte offset " + std::to_string(second_at)) && Catch::Contains("--repair"));
  }
  auto repair_args = args;
  repair_args.push_back("--repair");
  auto repaired = start(repair_args);
  for (int waited = 0;
       repaired.process->stderr_text().find("truncating") == std::string::npos && waited < 500; ++waited)
    std::this_thread::sleep_for(10ms);
  INFO("waited 5 s for the --repair line on stderr");
  CHECK_THAT(repaired.process->stderr_text(), Catch::Contains("truncating"));
  CHECK(http_request(repaired.port, "GET", "/api/v1/namespaces/default/configmaps/cm-0").status == 200);
  CHECK(http_request(repaired.port, "GET", "/api/v1/namespaces/default/configmaps/cm-1").status == 404);
  ::kill(repaired.process->pid(), SIGTERM);
  CHECK(repaired.process->wait_exit(20s) == 0);
}

// ---- run-time CRDs across restarts (issue 17) ----

namespace {

const std::string crds_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const std::string widgets_path = "/apis/example.com/v1/namespaces/default/widgets";

// The widget CRD with spec.size of `size_type` ("integer" or "string").
json widget_crd_sized(const std::string& size_type) {
  auto crd = kinformer::testing::widget_crd();
  crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"]["type"] =
      size_type;
  return crd;
}

// The status of a POST; its reply shows with the next failed assertion.
int post(std::uint16_t port, const std::string& path, const json& body) {
  auto reply = http_request(port, "POST", path, body.dump());
  UNSCOPED_INFO("POST " << path << ": " << reply.status << " " << reply.body << reply.error);
  return reply.status;
}

std::vector<std::string> widget_names(std::uint16_t port) {
  auto reply = http_request(port, "GET", widgets_path);
  INFO("GET " << widgets_path << ": " << reply.body);
  REQUIRE(reply.status == 200);
  std::vector<std::string> out;
  const auto list = json::parse(reply.body);
  for (const auto& item : list["items"]) out.push_back(item["metadata"]["name"].get<std::string>());
  return out;
}

std::vector<std::string> data_file_args(const TempDir& dir) {
  return {"apiserver", "--port", "0", "--data-file", dir.path + "/state.json"};
}

}  // namespace

TEST_CASE("a server restarted on its data file serves the kinds of its run-time CRDs and their objects",
          "[apiserver][durability][crd][item-17][integration]") {
  REQUIRE(kinformer::testing::kinformer_binary_built());
  TempDir dir;
  const auto args = data_file_args(dir);
  {
    auto first = start(args);
    REQUIRE(post(first.port, crds_path, kinformer::testing::widget_crd()) == 201);
    REQUIRE(post(first.port, widgets_path, kinformer::testing::widget("w1", {{"size", 3}})) == 201);
    ::kill(first.process->pid(), SIGTERM);  // a clean stop: everything is in the snapshot
    REQUIRE(first.process->wait_exit(20s) == 0);
  }
  auto second = start(args);
  CHECK(widget_names(second.port) == std::vector<std::string>{"w1"});
  auto discovery = http_request(second.port, "GET", "/apis/example.com/v1");
  CHECK(discovery.status == 200);
  CHECK_THAT(discovery.body, Catch::Contains("\"widgets\""));
  // The schema came back too: a wrong type is still refused.
  CHECK(post(second.port, widgets_path, kinformer::testing::widget("bad", {{"size", "big"}})) == 422);
}

TEST_CASE("kill -9 after a CRD is created recovers its kind from the log before objects of it are read",
          "[apiserver][durability][crd][item-17][integration]") {
  REQUIRE(kinformer::testing::kinformer_binary_built());
  TempDir dir;
  const auto args = data_file_args(dir);
  SECTION("killed between the CRD's create and the first custom resource's") {
    auto first = start(args);
    REQUIRE(post(first.port, crds_path, kinformer::testing::widget_crd()) == 201);
    ::kill(first.process->pid(), SIGKILL);
    REQUIRE(first.process->wait_exit(10s) == 128 + SIGKILL);
    auto second = start(args);
    CHECK(post(second.port, widgets_path, kinformer::testing::widget("w1", {{"size", 1}})) == 201);
    CHECK(widget_names(second.port) == std::vector<std::string>{"w1"});
  }
  SECTION("killed after both were created") {
    auto first = start(args);
    REQUIRE(post(first.port, crds_path, kinformer::testing::widget_crd()) == 201);
    REQUIRE(post(first.port, widgets_path, kinformer::testing::widget("w1", {{"size", 1}})) == 201);
    ::kill(first.process->pid(), SIGKILL);
    REQUIRE(first.process->wait_exit(10s) == 128 + SIGKILL);
    auto second = start(args);
    INFO(second.process->stderr_text());
    CHECK(widget_names(second.port) == std::vector<std::string>{"w1"});
  }
}

TEST_CASE("a log that creates deletes and re-creates a CRD with another schema replays in its order",
          "[apiserver][durability][crd][item-17][integration]") {
  REQUIRE(kinformer::testing::kinformer_binary_built());
  TempDir dir;
  const auto args = data_file_args(dir);
  {
    auto first = start(args);
    REQUIRE(post(first.port, crds_path, widget_crd_sized("integer")) == 201);
    REQUIRE(post(first.port, widgets_path, kinformer::testing::widget("old-1", {{"size", 1}})) == 201);
    REQUIRE(post(first.port, widgets_path, kinformer::testing::widget("old-2", {{"size", 2}})) == 201);
    auto deleted = http_request(first.port, "DELETE", crds_path + "/widgets.example.com");
    REQUIRE(deleted.status == 200);
    REQUIRE(post(first.port, crds_path, widget_crd_sized("string")) == 201);
    REQUIRE(post(first.port, widgets_path, kinformer::testing::widget("new-1", {{"size", "large"}})) == 201);
    ::kill(first.process->pid(), SIGKILL);
    REQUIRE(first.process->wait_exit(10s) == 128 + SIGKILL);
  }
  auto second = start(args);
  INFO(second.process->stderr_text());
  CHECK(widget_names(second.port) == std::vector<std::string>{"new-1"});
  // The schema the log ends with: a string size is accepted, an integer one refused.
  CHECK(post(second.port, widgets_path, kinformer::testing::widget("new-2", {{"size", "small"}})) == 201);
  CHECK(post(second.port, widgets_path, kinformer::testing::widget("old-3", {{"size", 3}})) == 422);
}
