// Scale: 1000 concurrent loopback watchers, and a stuck watcher that must not hold
// the others back (issue 4, item 6).
#include <atomic>
#include <memory>
#include <thread>

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/apiserver/test_server.hpp"
#include "tests/support/eventually.hpp"

using kinformer::testing::eventually;
using kinformer::testing::TestServer;
using kinformer::testing::WatchStream;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Each watcher costs two descriptors in this process (client and server side).
// Returns how many watchers the descriptor limit allows, up to `wanted`.
int watchers_allowed(int wanted) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  auto needed = static_cast<rlim_t>(2 * wanted + 256);
  if (limit.rlim_cur < needed) {
    limit.rlim_cur = std::min(needed, limit.rlim_max);
    setrlimit(RLIMIT_NOFILE, &limit);
    getrlimit(RLIMIT_NOFILE, &limit);
  }
  return static_cast<int>(std::min<rlim_t>(static_cast<rlim_t>(wanted), (limit.rlim_cur - 256) / 2));
}

std::uint64_t rv_in(const std::string& line) {
  auto event = json::parse(line);
  return std::stoull(event["object"]["metadata"]["resourceVersion"].get<std::string>());
}

}  // namespace

TEST_CASE("1000 concurrent watchers each receive every event in order", "[apiserver][integration][scale]") {
  constexpr int events = 100;
  const int watchers = watchers_allowed(1000);
  if (watchers < 1000) WARN("RLIMIT_NOFILE allows only " << watchers << " watchers here, not 1000");
  REQUIRE(watchers >= 100);
  TestServer t;
  auto start_rv = t.server().store().revision();
  std::vector<std::unique_ptr<WatchStream>> streams;
  for (int i = 0; i < watchers; ++i) {
    streams.push_back(std::make_unique<WatchStream>(
        t.port(), "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" + std::to_string(start_rv)));
    REQUIRE(streams.back()->status() == 200);
  }
  CHECK(t.server().stats().watches_active == static_cast<std::uint64_t>(watchers));
  for (int i = 0; i < events; ++i) {
    if (i % 2 == 0)
      t.create_configmap("cm-" + std::to_string(i));
    else
      REQUIRE(t.request("PATCH", "/api/v1/namespaces/default/configmaps/cm-" + std::to_string(i - 1),
                        R"({"data":{"k":"v2"}})", "application/merge-patch+json").status == 200);
  }
  int complete = 0;
  for (auto& stream : streams) {
    std::uint64_t expected = start_rv + 1;
    for (int i = 0; i < events; ++i) {
      auto line = stream->next_line(20s);
      if (!line) break;
      if (rv_in(*line) != expected) break;
      ++expected;
    }
    if (expected == start_rv + 1 + events) ++complete;
  }
  CHECK(complete == watchers);
  streams.clear();
  // The server notices closed watchers without any event to write.
  eventually([&] { return t.server().stats().watches_active == 0; }, "the server to notice the closed watchers", 10s);
}

TEST_CASE("a watcher that stops reading is disconnected and does not hold back the others",
          "[apiserver][integration][scale]") {
  kinformer::apiserver::ServerOptions options;
  options.watch_history = 400;
  options.watch_write_timeout = 1s;
  TestServer t(options);
  auto start_rv = t.server().store().revision();
  const std::string target = "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" + std::to_string(start_rv);

  // The stuck watcher: asks for the stream and never reads a byte.
  int stuck = kinformer::testing::connect_loopback(t.port());
  REQUIRE(stuck >= 0);
  int small = 4096;
  ::setsockopt(stuck, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  REQUIRE(::send(stuck, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()));

  constexpr int fast_watchers = 3;
  constexpr int events = 300;
  std::atomic<int> seen[fast_watchers] = {};
  std::atomic<bool> in_order[fast_watchers] = {true, true, true};
  std::vector<std::thread> readers;
  for (int w = 0; w < fast_watchers; ++w)
    readers.emplace_back([&, w] {
      WatchStream stream(t.port(), target);
      std::uint64_t expected = start_rv + 1;
      while (seen[w] < events) {
        auto line = stream.next_line(20s);
        if (!line) return;
        if (rv_in(*line) != expected++) in_order[w] = false;
        seen[w]++;
      }
    });
  REQUIRE(eventually([&] { return t.server().stats().watches_active == std::uint64_t{fast_watchers} + 1; },
                     "the stuck and the fast watchers to be connected"));
  const std::string big(32 * 1024, 'x');  // 300 x 32 KiB overflows any socket buffer of the stuck watcher
  for (int i = 0; i < events; ++i) {
    json cm = {{"metadata", {{"name", "cm-" + std::to_string(i)}}}, {"data", {{"blob", big}}}};
    REQUIRE(t.request("POST", "/api/v1/namespaces/default/configmaps", cm.dump()).status == 201);
    if (i % 50 == 49) {  // keep the fast ones inside the history window on a busy machine
      auto caught_up = [&] {
        for (auto& s : seen) if (s < i - 100) return false;
        return true;
      };
      eventually(caught_up, "the fast watchers to read within 100 events of the writes", 20s);
    }
  }
  for (auto& r : readers) r.join();
  for (int w = 0; w < fast_watchers; ++w) {
    CHECK(seen[w] == events);
    CHECK(in_order[w]);
  }
  eventually([&] { return t.server().stats().slow_watchers_closed >= 1; }, "the stuck watcher to be closed",
             10s);
  CHECK(t.server().stats().slow_watchers_closed == 1);
  // Memory stays bounded: the store keeps only the configured history.
  const auto& configmaps = *t.server().registry().find("", "v1", "configmaps");
  CHECK(t.server().store().revision() - t.server().store().compacted_through(configmaps) <=
        options.watch_history);
  ::close(stuck);
}

TEST_CASE("a watcher that falls behind the watch history gets ERROR 410 and the end of its stream",
          "[apiserver][integration][scale]") {
  kinformer::apiserver::ServerOptions options;
  options.watch_history = 20;
  TestServer t(options);
  auto start_rv = t.server().store().revision();
  WatchStream lagging(t.port(), "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" + std::to_string(start_rv));
  REQUIRE(lagging.status() == 200);
  // The watcher reads nothing while 200 x 64 KiB events pass: far more than the socket
  // buffers hold, so the server's write to it stalls while the history moves on.
  const std::string big(64 * 1024, 'y');
  for (int i = 0; i < 200; ++i) {
    json cm = {{"metadata", {{"name", "cm-" + std::to_string(i)}}}, {"data", {{"blob", big}}}};
    REQUIRE(t.request("POST", "/api/v1/namespaces/default/configmaps", cm.dump()).status == 201);
  }
  std::optional<std::string> last;
  int lines = 0;
  while (auto line = lagging.next_line(20s)) {
    last = line;
    ++lines;
  }
  CHECK(lagging.ended());
  REQUIRE(last);
  auto error = json::parse(*last);
  CHECK(error["type"] == "ERROR");
  CHECK(error["object"]["code"] == 410);
  CHECK(error["object"]["message"].get<std::string>().find("fell behind") != std::string::npos);
  CHECK(lines < 200);
  CHECK(t.server().stats().slow_watchers_closed == 1);
}
