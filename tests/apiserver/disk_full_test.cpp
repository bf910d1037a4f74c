// Issue 33, finding 9: a full disk under --data-file. Writes are refused with 507 while
// reads, /healthz and watches go on; writes come back by themselves once there is room;
// a restart on the full disk needs no more space than the log it replays. Run on a real
// 8 MiB tmpfs (needs root to mount; elsewhere the test says so and does nothing).
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/apiserver/test_server.hpp"

using kinformer::testing::TestServer;
using kinformer::testing::WatchStream;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

const std::string configmaps = "/api/v1/namespaces/default/configmaps";

// An 8 MiB tmpfs on a fresh directory, unmounted and removed at the end.
struct SmallDisk {
  std::string path;
  bool mounted = false;
  SmallDisk() {
    char pattern[] = "/tmp/kinformer-full-XXXXXX";
    path = ::mkdtemp(pattern);
    mounted = ::mount("tmpfs", path.c_str(), "tmpfs", 0, "size=8m") == 0;
  }
  ~SmallDisk() {
    if (mounted) ::umount2(path.c_str(), MNT_DETACH);
    ::rmdir(path.c_str());
  }
};

std::string big_configmap(int i) {
  return json{{"metadata", {{"name", "big-" + std::to_string(i)}}}, {"data", {{"k", std::string(200 * 1024, 'x')}}}}
      .dump();
}

// POSTs 200 KB objects until one is refused; returns how many were created and the
// refusal's status (0 when 200 POSTs all succeeded).
int fill(TestServer& t, int& created, int first = 0) {
  for (int i = first; i < first + 200; ++i) {
    auto reply = t.request("POST", configmaps, big_configmap(i));
    if (reply.status != 201) return reply.status;
    ++created;
  }
  return 0;
}

}  // namespace

TEST_CASE("a full disk refuses writes with 507 while reads, healthz and watches go on, and writes come back",
          "[apiserver][storage][issue-33][integration]") {
  SmallDisk disk;
  if (!disk.mounted) {
    WARN("cannot mount a tmpfs here (needs root): the full-disk test did not run");
    return;
  }
  const std::string ballast = disk.path + "/ballast";
  std::ofstream(ballast, std::ios::binary) << std::string(2 << 20, 'b');
  kinformer::apiserver::ServerOptions options;
  options.data_file = disk.path + "/state.json";
  int created = 0;
  {
    TestServer t(options);
    auto start_rv = t.server().store().revision();
    WatchStream watch(t.port(), configmaps + "?watch=1&resourceVersion=" + std::to_string(start_rv));
    REQUIRE(watch.status() == 200);
    auto refused = fill(t, created);
    INFO(created << " objects created before the disk filled up");
    REQUIRE(refused == 507);  // before: 500, and from then on every request 500
    CHECK(created > 0);
    auto health = t.request("GET", "/healthz");
    CHECK(health.status == 200);
    CHECK_THAT(health.body, Catch::Contains("disk") && Catch::Contains("full"));
    CHECK(t.request("GET", "/readyz").status == 500);
    CHECK(t.request("GET", "/version").status == 200);
    auto list = t.request("GET", configmaps);
    REQUIRE(list.status == 200);
    CHECK(TestServer::json_of(list)["items"].size() == static_cast<std::size_t>(created));
    for (int i = 0; i < created; ++i) {  // the watch saw every acknowledged write
      auto line = watch.next_line(5s);
      REQUIRE(line);
      CHECK(json::parse(*line)["object"]["metadata"]["name"] == "big-" + std::to_string(i));
    }

    ::unlink(ballast.c_str());
    int status = 0;
    for (auto deadline = std::chrono::steady_clock::now() + 10s;
         status != 201 && std::chrono::steady_clock::now() < deadline;) {
      status = t.request("POST", configmaps, big_configmap(created)).status;
      if (status != 201) std::this_thread::sleep_for(100ms);
    }
    REQUIRE(status == 201);  // room again: writes came back without a restart
    ++created;
    auto line = watch.next_line(5s);
    REQUIRE(line);
    CHECK(json::parse(*line)["object"]["metadata"]["name"] == "big-" + std::to_string(created - 1));
    CHECK(fill(t, created, created) == 507);  // full again, for the restart below
    // stop() cannot write its final snapshot: the log keeps every acknowledged write.
  }
  {
    TestServer t(options);  // before: start-up failed, it needed room for a snapshot
    auto list = t.request("GET", configmaps);
    REQUIRE(list.status == 200);
    CHECK(TestServer::json_of(list)["items"].size() == static_cast<std::size_t>(created));
    CHECK(t.request("POST", configmaps, big_configmap(1000)).status == 507);
  }
}
