#include "bench/vs_client_go/counting_informer.hpp"

#include <malloc.h>
#include <pthread.h>
#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actors/errors.hpp"
#include "actors/scheduler.hpp"
#include "actors/shared_informer.hpp"
#include "bench/vs_client_go/process_stats.hpp"
#include "runtime/http/http_list_watch.hpp"
#include "tests/support/fault_injecting_list_watch.hpp"
#include "tests/support/network_fault.hpp"

namespace kinformer::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t realtime_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void say(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

// The nearest-rank percentile (the ceil(p/100 * n)-th smallest), as the peer computes it.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

// What the handler counts; the handler actor is its only writer until `done`.
class Counter {
 public:
  Counter(std::uint64_t expect, std::string stamp_key) : expect_(expect), stamp_key_(std::move(stamp_key)) {}

  void count(const ObjectPtr* stamped) {
    const std::int64_t now = realtime_ns();  // on entry, as the peer takes it
    std::lock_guard<std::mutex> lock(mu_);
    if (events_ >= expect_) return;
    if (stamped) record_locked(**stamped, now);
    if (++events_ == expect_) {
      end_ = Clock::now();
      done_.notify_all();
    }
  }

  /// Blocks until the expect-th notification (true) or abandon() (false).
  bool wait_done() {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return events_ >= expect_ || abandoned_; });
    return events_ >= expect_;
  }

  void abandon() {
    std::lock_guard<std::mutex> lock(mu_);
    abandoned_ = true;
    done_.notify_all();
  }

  std::string report(Clock::time_point start) {
    std::lock_guard<std::mutex> lock(mu_);
    std::sort(samples_us_.begin(), samples_us_.end());
    char line[512];
    std::snprintf(line, sizeof line,
                  "{\"events\":%llu,\"seconds\":%.6f,\"latency_samples\":%zu,\"latency_unstamped\":%llu,"
                  "\"latency_p50_us\":%.1f,\"latency_p99_us\":%.1f}",
                  static_cast<unsigned long long>(events_), std::chrono::duration<double>(end_ - start).count(),
                  samples_us_.size(), static_cast<unsigned long long>(unstamped_), percentile(samples_us_, 50),
                  percentile(samples_us_, 99));
    return line;
  }

 private:
  void record_locked(const Object& object, std::int64_t now) {
    const auto stamp = object.annotation(stamp_key_);
    const long long sent = stamp ? std::strtoll(std::string(*stamp).c_str(), nullptr, 10) : 0;
    if (sent <= 0) {
      ++unstamped_;
      return;
    }
    // Reserved at the first stamp, not up front: a list's objects carry none, and
    // 8 B per expected event would be 1.2 MB of a 150k-pod list's peak RSS.
    if (samples_us_.capacity() == 0)
      samples_us_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(expect_, 10'000'000)));
    samples_us_.push_back(static_cast<double>(now - sent) / 1e3);
  }

  const std::uint64_t expect_;
  const std::string stamp_key_;
  std::mutex mu_;
  std::condition_variable done_;
  std::uint64_t events_ = 0;      // guarded by mu_
  bool abandoned_ = false;        // guarded by mu_
  std::uint64_t unstamped_ = 0;   // guarded by mu_
  std::vector<double> samples_us_;  // guarded by mu_
  Clock::time_point end_{};       // guarded by mu_
};

std::size_t own_rss_bytes() { return read_process_stats(::getpid()).rss_bytes; }

// The forced relist: see the header. Returns the JSON line.
std::string relist(testing::FaultInjectingListWatch& source) {
  ::malloc_trim(0);
  const std::size_t steady = own_rss_bytes();
  std::ofstream("/proc/self/clear_refs") << "5";
  const std::size_t lists_before = source.list_requests().size();
  const std::size_t watches_before = source.watch_requests().size();
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  source.close_watches(testing::fault::expired());
  // As the peer's relist_seconds: from the relist's first list request (after the
  // Reflector's back-off) until its last page is in, i.e. the Reflector opens its next watch.
  while (source.list_requests().size() <= lists_before && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto start = Clock::now();
  while (source.watch_requests().size() <= watches_before && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the Controller applies the replace
  const std::size_t peak = read_process_stats(::getpid()).peak_rss_bytes;
  char line[256];
  std::snprintf(line, sizeof line, "{\"steady_rss_bytes\":%zu,\"relist_peak_bytes\":%zu,\"relist_seconds\":%.3f}",
                steady, peak, seconds);
  return line;
}

}  // namespace

int counting_informer_main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr,
                 "usage: %s --counting-informer URL RESOURCE NAMESPACE EXPECT STAMP_KEY [--caf.OPTION=V ...]\n",
                 argv[0]);
    return 2;
  }
  const std::string url = argv[2], resource = argv[3], namespace_ = argv[4];
  const std::uint64_t expect = std::strtoull(argv[5], nullptr, 10);
  Counter counter(expect, argv[6]);

  ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // a bench that dies leaves no informer behind
  // Blocked before any thread starts, so only sigwait() below sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  caf::actor_system_config cfg;
  actors::configure_scheduler(cfg);
  actors::register_errors(cfg);
  std::vector<std::string> caf_options(argv + 7, argv + argc);
  if (auto err = cfg.parse(caf_options)) {
    std::fprintf(stderr, "counting informer: bad CAF option: %s\n", caf::to_string(err).c_str());
    return 2;
  }
  caf::actor_system system{cfg};

  http::ClientConfig config;
  config.server = url;
  auto client = http::Client::create(config);
  if (!client) {
    std::fprintf(stderr, "counting informer: %s\n", client.error().message.c_str());
    return 1;
  }
  auto source = std::make_shared<testing::FaultInjectingListWatch>(std::make_shared<http::HttpListWatch>(
      client.value(), http::collection_path("", "v1", resource, namespace_)));
  SharedInformerOptions options;
  options.source = source;
  options.metrics = nullptr;  // a registry of its own, as the peer has none
  SharedInformer informer(system, options);
  HandlerFuncs funcs;
  funcs.on_add = [&counter](const ObjectPtr& object, bool) { counter.count(&object); };
  funcs.on_update = [&counter](const ObjectPtr& old_object, const ObjectPtr& object) {
    counter.count(old_object->resource_version() != object->resource_version() ? &object : nullptr);
  };
  funcs.on_delete = [&counter](const DeletedObject&) { counter.count(nullptr); };
  if (!informer.add_handler(funcs)) return 1;

  const auto start = Clock::now();
  informer.run();
  if (!informer.wait_for_sync(std::chrono::minutes(10))) {
    std::fprintf(stderr, "counting informer: not synced after 10 minutes\n");
    return 1;
  }
  say("synced");
  std::thread reporter([&] {
    if (counter.wait_done()) say(counter.report(start));
  });
  for (int signal_number = 0; sigwait(&signals, &signal_number) == 0 && signal_number == SIGUSR1;) {
    if (reporter.joinable()) reporter.join();  // a relist only after the count is in
    say(relist(*source));
  }
  counter.abandon();
  if (reporter.joinable()) reporter.join();
  informer.stop();
  return 0;
}

}  // namespace kinformer::bench
