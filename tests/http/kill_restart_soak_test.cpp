// The kill/restart soak (issue 19, item 3): the real `kinformer apiserver` with a
// write-ahead log (--data-file) under churn from `kinformer loadgen`, SIGKILLed and
// restarted on the same port round after round, while an informer over HTTP with 4
// handlers follows it. At the end the cache equals the server's list, every handler has
// seen the final state of every key, nothing crashed, and the informer's RSS stayed flat.
//
// KINFORMER_SOAK_ROUNDS sets the number of kill/restart rounds (default 5, what CI runs);
// the closing note of issue 19 gives a 50-round run. Each round prints one line on stderr
// (round, RSS, server revision); the summary is a Catch2 WARN.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/apiserver/kinformer_process.hpp"
#include "runtime/sanitizers.hpp"
#include "tests/http/http_fixture.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/heap_in_use.hpp"
#include "tests/support/objects.hpp"

using kinformer::testing::cache_state;
using kinformer::testing::ChildProcess;
using kinformer::testing::eventually;
using kinformer::testing::HttpFixture;
using kinformer::testing::KinformerProcess;
using kinformer::testing::make_client;
using kinformer::testing::Seen;
using kinformer::testing::server_state;
using namespace std::chrono_literals;

namespace {

using kinformer::testing::configmaps_path;

int rounds_from_environment() {
  const char* text = std::getenv("KINFORMER_SOAK_ROUNDS");
  const int rounds = text ? std::atoi(text) : 5;
  return rounds > 0 ? rounds : 5;
}

// Resident set of this process (the informer's), in KiB, from /proc/self/status.
long rss_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

// Least-squares slope of ys over their indices.
double slope(const std::vector<double>& ys) {
  const double n = static_cast<double>(ys.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < ys.size(); ++i) {
    const double x = static_cast<double>(i);
    sx += x;
    sy += ys[i];
    sxx += x * x;
    sxy += x * ys[i];
  }
  const double d = n * sxx - sx * sx;
  return d == 0 ? 0 : (n * sxy - sx * sy) / d;
}

// The API server with its data file, on `port` (0: any). A restart right after a SIGKILL can
// race the kernel's release of the port, so a start that prints no banner is retried.
std::unique_ptr<KinformerProcess> start_server(const std::string& data_file, std::uint16_t& port) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto server = std::make_unique<KinformerProcess>(std::vector<std::string>{
        "apiserver", "--port", std::to_string(port), "--data-file", data_file, "--wal-max-bytes", "262144"});
    const auto banner = server->first_line(30s);
    const auto bound = kinformer::testing::port_of(banner);
    if (bound != 0 && (port == 0 || bound == port)) {
      port = bound;
      return server;
    }
    const int code = server->wait_exit(10s);
    INFO("start " << attempt << " exited " << code << "; stderr: " << server->stderr_text());
    REQUIRE(code != -1);                // it did not hang
    REQUIRE((code == 1 || code == 2));  // a clean refusal (port still taken), never a crash
    std::this_thread::sleep_for(200ms);
  }
  FAIL("the API server did not start on port " << port << " in 20 attempts");
  return nullptr;
}

}  // namespace

TEST_CASE("an informer over HTTP with 4 handlers follows an API server SIGKILLed and restarted under churn",
          "[http][soak][item-19][integration][release-bounds]") {
  REQUIRE(kinformer::testing::kinformer_binary_built());
  char pattern[] = "/tmp/kinformer-soak-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  const std::string data_file = dir + "/state.json";
  const int rounds = rounds_from_environment();
  std::uint16_t port = 0;
  auto server = start_server(data_file, port);
  const std::string url = "http://127.0.0.1:" + std::to_string(port);

  HttpFixture f;
  std::vector<std::unique_ptr<Seen>> handlers;
  for (int i = 0; i < 4; ++i) handlers.push_back(std::make_unique<Seen>(false));  // bounded records
  std::atomic<int> connection_failures{0};
  kinformer::SharedInformerOptions options;
  options.source = std::make_shared<kinformer::http::HttpListWatch>(make_client(url), configmaps_path);
  options.reflector.backoff.initial = 100ms;
  options.reflector.backoff.cap = 1000ms;
  kinformer::SharedInformer informer(f.sys, options);
  REQUIRE(informer.set_watch_error_handler([&](const kinformer::Error& e) {
    connection_failures += e.code == kinformer::Errc::connection_failed;
  }));
  for (auto& h : handlers) REQUIRE(informer.add_handler(h->funcs()));
  informer.run();
  REQUIRE(informer.wait_for_sync(30s));

  // Churn for longer than the rounds can take; stopped (SIGTERM) after the last one. The
  // rounds start once the working set is nearly full, so that the cache no longer grows
  // and RSS can be compared from round to round.
  constexpr int working_set = 60;
  const std::string out = dir + "/loadgen.out", err = dir + "/loadgen.err";
  ChildProcess loadgen(kinformer::testing::kinformer_binary(),
                       {"loadgen", "--server", url, "--objects", std::to_string(working_set), "--rate", "200",
                        "--duration", std::to_string(rounds * 30 + 120), "--update-ratio", "0.5",
                        "--delete-ratio", "0.1", "--object-size", "512"},
                       out, err);
  REQUIRE(loadgen.started());
  eventually([&] { return informer.indexer().size() >= working_set * 3 / 4; },
             "the churn to fill most of the working set (is loadgen running? " + loadgen.err() + ")", 120s);

  std::mt19937 rng(20261201);
  std::vector<double> rss, heap;  // KiB, sampled just before each kill
  int crashes = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int round = 0; round < rounds; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(800 + rng() % 1000));
    rss.push_back(static_cast<double>(rss_kib()));
    INFO("round " << round << "; loadgen stderr: " << loadgen.err());
    REQUIRE(loadgen.running());
    REQUIRE(::kill(server->pid(), SIGKILL) == 0);
    const int code = server->wait_exit(10s);
    INFO("server stderr: " << server->stderr_text());
    CHECK(code == 128 + SIGKILL);  // it was alive until our SIGKILL: it had not crashed
    crashes += code != 128 + SIGKILL;
    server = start_server(data_file, port);
    // The heap in use beside RSS tells a leak (both grow) from the allocator keeping pages.
    heap.push_back(static_cast<double>(kinformer::testing::heap_in_use()) / 1024);
    std::fprintf(stderr, "soak: round %d rss_kib %.0f heap_in_use_kib %.0f cache_objects %zu\n", round,
                 rss.back(), heap.back(), informer.indexer().size());
  }
  std::this_thread::sleep_for(1s);  // the last server sees churn too
  REQUIRE(loadgen.running());
  loadgen.stop();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  const auto expected = server_state(port, configmaps_path);
  INFO("loadgen stderr (tail): " << loadgen.err().substr(
           loadgen.err().size() > 2000 ? loadgen.err().size() - 2000 : 0));
  CHECK(expected.size() > working_set / 2);  // the churn reached the server
  eventually([&] { return cache_state(informer) == expected; }, "the cache to equal the server's final list",
             60s);
  for (std::size_t i = 0; i < handlers.size(); ++i)
    eventually([&] { return handlers[i]->last() == expected; },
               "handler " + std::to_string(i) + " to have seen the final state of every key", 60s);
  CHECK(connection_failures > 0);  // the kills reached the informer

  // RSS: the least-squares slope over all rounds, and over the later half, where the
  // allocator's pools have grown to their working size: a leak keeps a constant slope there.
  const double kib_per_round = slope(rss);
  const std::vector<double> later(rss.begin() + static_cast<long>(rss.size() / 2), rss.end());
  const double later_kib_per_round = slope(later);
  const double heap_kib_per_round =
      slope(std::vector<double>(heap.begin() + static_cast<long>(heap.size() / 2), heap.end()));
  WARN(rounds << " SIGKILL rounds in " << seconds << " s; " << expected.size() << " objects at the end; "
              << crashes << " crashes; informer RSS first " << rss.front() << " KiB, last " << rss.back()
              << " KiB, max " << *std::max_element(rss.begin(), rss.end()) << " KiB; slope " << kib_per_round
              << " KiB/round over all rounds, " << later_kib_per_round
              << " KiB/round over the later half; heap in use " << heap.front() << " -> " << heap.back()
              << " KiB, " << heap_kib_per_round << " KiB/round over the later half");
  CHECK(crashes == 0);
  // Flat. RSS moves in steps of up to ~300 KiB as the allocator maps pages, so 5 rounds can
  // only bound a leak at about a quarter MiB a round. From 20 rounds on (the closing note
  // runs 50) the later half's RSS slope must stay under half a cache copy a round (60
  // objects of ~1 KiB), and the heap in use, which has no page steps, under 8 KiB a round.
#if KINFORMER_UNDER_ASAN
  // ASan's quarantine keeps up to 256 MiB of freed blocks mapped, so RSS grows by design
  // there; the heap in use, which leaves the quarantine out, bounds a leak instead (and
  // LeakSanitizer checks at exit).
  CHECK(slope(heap) < 256);
#else
  CHECK(kib_per_round < 256);
#endif
  if (rounds >= 20) {
    CHECK(later_kib_per_round < 32);
    CHECK(heap_kib_per_round < 8);
  }

  ::kill(server->pid(), SIGTERM);  // the last server still stops cleanly
  CHECK(server->wait_exit(20s) == 0);
  informer.stop();
  std::system(("rm -rf '" + dir + "'").c_str());
}
