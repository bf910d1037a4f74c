// bench/bench_watch.cpp
//
// The informer over HTTP end to end (issue 8, item 8): the embedded API server →
// HTTP watch (runtime/http) → Reflector → DeltaFIFO → Controller → Indexer →
// Processor → a no-op handler, with ~3.4 KB Pods. The server runs in a forked
// child process (so its memory and threads are not the informer's), on loopback.
//
//   watch_throughput  N events replayed from the server's watch history as fast as
//                     it streams them, against the floor: a bare Beast client reading
//                     the same stream and extracting metadata with simdjson On-Demand,
//                     in the same run (median of `runs`, interleaved); cpu_us_per_event and
//                     baseline_cpu_us_per_event: this process's CPU time per event in each
//                     (all threads; the server is the child's).
//   watch_latency     the server child writes pods at `rate`/s straight into its
//                     store (no HTTP client per write, which capped the rate near
//                     2.3k/s); each write's mutation runs under the store's lock and
//                     stamps a label with the steady-clock time of that commit, and
//                     the handler takes the difference (CLOCK_MONOTONIC is shared by
//                     the processes). Writes that fall behind the schedule are not
//                     skipped; the child reports the write rate it achieved. The floor
//                     (baseline_*) reads the same writes beside the pipeline: the part of
//                     the latency that is the server's, the kernel's and a bare client's;
//                     ratio is p50_us / baseline_p50_us.
//   cache_memory      RSS growth of this process while an informer syncs `objects` Pods.
//   relist_memory     peak RSS during a forced relist (the watch is ended with 410
//                     Expired) relative to the steady RSS before it.
//
// Output: one JSON object per line on stdout; progress on stderr.
// Usage: `bench_watch --help` (BENCH_HIGH_WATER_MARK: see Pipeline).
#include <simdjson.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "actors/errors.hpp"
#include "actors/scheduler.hpp"
#include "actors/shared_informer.hpp"
#include "apiserver/server.hpp"
#include "runtime/http/http_list_watch.hpp"
#include "runtime/help_option.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// CPU seconds this process has used, all threads (user + system).
double cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

std::size_t rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  if (f) {
    if (std::fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

// A Pod of about 3.4 KB, shaped like ../shared/examples/deps/pod.json (labels,
// annotations, owner reference, two containers, volumes, conditions).
std::string pod_body(const std::string& name) {
  std::string containers;
  for (int c = 0; c < 2; ++c) {
    std::string n = std::to_string(c);
    containers +=
        std::string(c ? "," : "") + R"({"name":"app-)" + n +
        R"(","image":"registry.example.com/team/app:1.2.)" + n + R"(","ports":[{"containerPort":808)" + n +
        R"(,"protocol":"TCP"}],"env":[{"name":"MODE","value":"production"},{"name":"LOG_LEVEL","value":"info"},)"
        R"({"name":"CACHE_SIZE","value":"512"}],"resources":{"requests":{"cpu":"250m","memory":"256Mi"},)"
        R"("limits":{"cpu":"1","memory":"512Mi"}},"volumeMounts":[{"name":"config","mountPath":"/etc/app"},)"
        R"({"name":"data","mountPath":"/var/lib/app"}],"imagePullPolicy":"IfNotPresent"})";
  }
  std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
      R"(","namespace":"default","labels":{"app":"web","tier":"frontend","release":"stable","team":"payments",)"
      R"("pod-template-hash":"7d9f8c6b5d"},"annotations":{"kubernetes.io/psp":"restricted",)"
      R"("prometheus.io/scrape":"true"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet",)"
      R"("name":"web-7d9f8c6b5d","uid":"3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f","controller":true,)"
      R"("blockOwnerDeletion":true}]},"spec":{"containers":[)" +
      containers +
      R"(],"volumes":[{"name":"config","configMap":{"name":"web-config"}},{"name":"data","emptyDir":{}}],)"
      R"("nodeName":"node-17","serviceAccountName":"web","restartPolicy":"Always","schedulerName":"default-scheduler"},)"
      R"("status":{"phase":"Running","podIP":"10.244.3.17","hostIP":"10.0.0.17","conditions":[)"
      R"({"type":"Initialized","status":"True","lastTransitionTime":"2026-11-01T10:00:00Z"},)"
      R"({"type":"Ready","status":"True","lastTransitionTime":"2026-11-01T10:00:05Z"},)"
      R"({"type":"PodScheduled","status":"True","lastTransitionTime":"2026-11-01T10:00:00Z"}]}})";
  // pad to ~3.3 KB before the server adds uid, creationTimestamp and resourceVersion
  const std::size_t target = 3300;
  if (pod.size() < target) {
    const std::string pad = R"(,"bench.kinformer.io/pad":")" + std::string(target - pod.size(), 'p') + "\"";
    pod.insert(pod.find(R"(},"ownerReferences")"), pad);
  }
  return pod;
}

const std::string pods_path = "/api/v1/namespaces/default/pods";

// -- the server child: started by fork() before this process has threads --
struct ServerChild {
  pid_t pid = -1;
  int to_child = -1;
  int from_child = -1;
  std::uint16_t port = 0;
  std::uint64_t start_rv = 0;  // the revision before the objects were created
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  void go() const {
    char c = 'g';
    (void)!::write(to_child, &c, 1);
  }
  /// The child's next line (its write report); "" if it ended first.
  std::string read_line() const {
    std::string line;
    char c = 0;
    while (::read(from_child, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }
  ~ServerChild() {
    if (from_child >= 0) ::close(from_child);
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

// Writes pod (i % objects) `rate` times a second for `seconds`, each stamped at its
// commit; returns the writes per second achieved.
double write_stamped(kinformer::apiserver::Server& server, std::size_t objects, double rate, double seconds) {
  const auto* pods = server.registry().find("", "v1", "pods");
  const auto total = static_cast<std::size_t>(rate * seconds);
  const auto stamp = [](const nlohmann::json* current) -> kinformer::apiserver::ApiResult<nlohmann::json> {
    nlohmann::json next = *current;
    next["metadata"]["labels"]["sent"] = std::to_string(now_ns());  // under the store's lock: the commit
    return next;
  };
  const auto start = Clock::now();
  for (std::size_t i = 0; i < total; ++i) {
    std::this_thread::sleep_until(start + std::chrono::nanoseconds(static_cast<std::int64_t>(i * 1e9 / rate)));
    if (!server.store().write(*pods, "default", "pod-" + std::to_string(i % objects), stamp, false, false))
      ::_exit(3);
  }
  return static_cast<double>(total) / std::chrono::duration<double>(Clock::now() - start).count();
}

// objects: pods created before the port is reported; write_rate > 0: after "go",
// write_stamped() for `write_seconds`, then report the rate achieved.
std::unique_ptr<ServerChild> fork_server(std::size_t objects, std::size_t history, double write_rate = 0,
                                         double write_seconds = 0) {
  int up[2], down[2];
  if (::pipe(up) != 0 || ::pipe(down) != 0) std::abort();
  auto child = std::make_unique<ServerChild>();
  child->pid = ::fork();
  if (child->pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // a bench that exits early (std::exit) leaves no server behind
    kinformer::apiserver::ServerOptions options;
    options.watch_history = history;
    // The event count bounds the history: the default 256 MiB held only about 39k of
    // these events (line + object, about 6.9 KB), and a replay of 50k met 410 Expired.
    options.watch_history_bytes = std::numeric_limits<std::size_t>::max();
    kinformer::apiserver::Server server(options);
    auto port = server.start();
    if (!port) ::_exit(1);
    const std::uint64_t start_rv = server.store().revision();
    for (std::size_t i = 0; i < objects; ++i)
      if (server.call("POST", pods_path, pod_body("pod-" + std::to_string(i))).status != 201) ::_exit(2);
    const std::string hello = std::to_string(port.value()) + " " + std::to_string(start_rv) + "\n";
    (void)!::write(up[1], hello.data(), hello.size());
    char c = 0;
    if (::read(down[0], &c, 1) == 1 && write_rate > 0) {
      const std::string report = std::to_string(write_stamped(server, objects, write_rate, write_seconds)) + "\n";
      (void)!::write(up[1], report.data(), report.size());
    }
    pause();
    ::_exit(0);
  }
  ::close(up[1]);
  ::close(down[0]);
  child->to_child = down[1];
  child->from_child = up[0];
  const std::string hello = child->read_line();
  if (std::sscanf(hello.c_str(), "%hu %lu", &child->port, &child->start_rv) != 2) {
    std::fprintf(stderr, "bench_watch: the server child did not start\n");
    std::exit(1);
  }
  return child;
}

// The floor: a bare synchronous Beast client on the server's watch from `rv`, handing
// each event line to on_event(simdjson On-Demand document result) until it returns false. Returns ""
// when on_event ended it, else what ended the stream.
template <class OnEvent>
std::string read_watch(const ServerChild& server, std::uint64_t rv, OnEvent on_event) {
  net::io_context io;
  net::ip::tcp::socket socket(io);
  socket.connect({net::ip::make_address("127.0.0.1"), server.port});
  bhttp::request<bhttp::empty_body> request{bhttp::verb::get,
                                            pods_path + "?watch=true&resourceVersion=" + std::to_string(rv), 11};
  request.set(bhttp::field::host, "127.0.0.1");
  bhttp::write(socket, request);
  beast::flat_buffer buffer;
  buffer.reserve(64 * 1024);
  bhttp::response_parser<bhttp::empty_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  bhttp::read_header(socket, buffer, parser);
  std::string pending;
  simdjson::ondemand::parser json;
  bool more = true;
  auto on_chunk = [&](std::uint64_t, beast::string_view body, beast::error_code&) -> std::size_t {
    pending.reserve(pending.size() + body.size() + simdjson::SIMDJSON_PADDING);
    pending.append(body.data(), body.size());
    std::size_t start_at = 0;
    for (std::size_t nl; more && (nl = pending.find('\n', start_at)) != std::string::npos; start_at = nl + 1) {
      auto doc = json.iterate(pending.data() + start_at, nl - start_at, pending.capacity() - start_at);
      more = on_event(doc);
    }
    pending.erase(0, start_at);
    return body.size();
  };
  parser.on_chunk_body(on_chunk);
  beast::error_code ec;
  // A finished parser reads nothing more and reports no error: without the is_done()
  // check, a watch the server ended (an ERROR 410 line, then the last chunk) spun here.
  while (more && !ec && !parser.is_done()) bhttp::read_some(socket, buffer, parser, ec);
  return more ? (ec ? ec.message() : "the server ended the stream") : "";
}

double floor_events_per_s(const ServerChild& server, std::size_t events) {
  std::size_t seen = 0, names = 0;
  const auto start = Clock::now();
  const std::string ended = read_watch(server, server.start_rv, [&](auto& doc) {
    auto metadata = doc["object"]["metadata"];
    std::string_view name, rv;
    if (!metadata["name"].get(name)) names += name.size();
    if (!metadata["resourceVersion"].get(rv)) ++seen;
    return seen < events;
  });
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (seen < events || names == 0) {
    std::fprintf(stderr, "bench_watch: the floor client saw %zu of %zu events: %s\n", seen, events, ended.c_str());
    std::exit(1);
  }
  return static_cast<double>(events) / seconds;
}

// A source whose first list is empty at a given revision, so the watch replays
// the server's history from there; and whose current watch can be ended with 410.
class BenchSource final : public kinformer::ListWatch {
 public:
  BenchSource(std::shared_ptr<kinformer::http::HttpListWatch> inner, std::string replay_from)
      : inner_(std::move(inner)), replay_from_(std::move(replay_from)) {}

  void list(const kinformer::ListOptions& options, ListCallback done) override {
    if (!replay_from_.empty()) {
      kinformer::ObjectList empty;
      empty.resource_version = replay_from_;
      replay_from_.clear();
      return done(std::move(empty));
    }
    inner_->list(options, [this, done = std::move(done)](kinformer::Result<kinformer::ObjectList> page) {
      if (page) listed_ += page->items.size();
      done(std::move(page));
    });
  }
  /// Items received by lists so far.
  std::uint64_t listed() const { return listed_; }
  std::unique_ptr<kinformer::Watch> watch(const kinformer::WatchOptions& options, EventsCallback on_events,
                                          ClosedCallback on_closed) override {
    std::lock_guard<std::mutex> lock(mu_);
    on_closed_ = on_closed;
    auto watch = inner_->watch(options, std::move(on_events), std::move(on_closed));
    current_ = watch.get();
    return watch;
  }
  /// Ends the current watch as a 410 would: the Reflector relists.
  void expire() {
    std::lock_guard<std::mutex> lock(mu_);
    if (current_) current_->stop();
    if (on_closed_) on_closed_(kinformer::Error{kinformer::Errc::gone, "bench: forced relist"});
  }

 private:
  std::shared_ptr<kinformer::http::HttpListWatch> inner_;
  std::string replay_from_;
  std::atomic<std::uint64_t> listed_{0};
  std::mutex mu_;
  kinformer::Watch* current_ = nullptr;  // guarded by mu_; owned by the Reflector
  ClosedCallback on_closed_;             // guarded by mu_
};

struct Pipeline {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  std::shared_ptr<BenchSource> source;
  std::unique_ptr<kinformer::SharedInformer> informer;
  std::atomic<std::uint64_t> adds{0}, updates{0};
  std::mutex latency_mu;
  std::vector<std::int64_t> latencies_ns;  // guarded by latency_mu

  Pipeline(const ServerChild& server, std::string replay_from, std::int64_t page_size = 0) {
    kinformer::actors::configure_scheduler(cfg);
    kinformer::actors::register_errors(cfg);
    system = std::make_unique<caf::actor_system>(cfg);
    kinformer::http::ClientConfig config;
    config.server = server.url();
    auto client = kinformer::http::Client::create(config).value();
    source = std::make_shared<BenchSource>(
        std::make_shared<kinformer::http::HttpListWatch>(
            client, kinformer::http::collection_path("", "v1", "pods", "default")),
        std::move(replay_from));
    kinformer::SharedInformerOptions options;
    options.source = source;
    options.reflector.page_size = page_size;
    options.reflector.backoff.initial = std::chrono::milliseconds(1);
    // BENCH_HIGH_WATER_MARK overrides the FIFO depth that pauses the watch (default 10000),
    // to show how much of the time the pipeline spends paused.
    if (const char* mark = std::getenv("BENCH_HIGH_WATER_MARK"))
      options.reflector.high_water_mark = std::strtoul(mark, nullptr, 10);
    informer = std::make_unique<kinformer::SharedInformer>(*system, options);
    kinformer::HandlerFuncs funcs;
    funcs.on_add = [this](const kinformer::ObjectPtr&, bool) { ++adds; };
    funcs.on_update = [this](const kinformer::ObjectPtr&, const kinformer::ObjectPtr& o) {
      ++updates;
      if (auto sent = o->label("sent")) {
        const std::int64_t latency = now_ns() - std::stoll(std::string(*sent));
        std::lock_guard<std::mutex> lock(latency_mu);
        latencies_ns.push_back(latency);
      }
    };
    (void)informer->add_handler(funcs);
  }
  ~Pipeline() {
    informer->stop();
    informer.reset();
  }
  template <class Pred>
  bool wait(Pred done, std::chrono::seconds limit) {
    const auto end = Clock::now() + limit;
    while (!done()) {
      if (Clock::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

constexpr const char* usage =
    "usage: bench_watch [events=20000] [objects=100000] [runs=3] [rate=10000]\n"
    "       (BENCH_ONLY=<name> runs one line)\n";

int main(int argc, char** argv) {
  if (kinformer::cli::answered_help(argc, argv, usage)) return 0;
  const std::size_t events = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 20000;
  const std::size_t objects = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 100000;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 3;
  const double rate = argc > 4 ? std::atof(argv[4]) : 10000;
  std::signal(SIGPIPE, SIG_IGN);
  // BENCH_ONLY=<bench name, e.g. watch_latency> runs that line alone (cache_memory
  // and relist_memory share one run).
  const std::string only = std::getenv("BENCH_ONLY") ? std::getenv("BENCH_ONLY") : "";
  const auto wanted = [&](const char* a, const char* b = "") { return only.empty() || only == a || only == b; };

  if (wanted("cache_memory", "relist_memory")) {
    auto server = fork_server(objects, 1000);
    const std::size_t before = rss_bytes();
    Pipeline p(*server, "", 500);
    p.informer->run();
    if (!p.informer->wait_for_sync(std::chrono::seconds(600)) ||
        !p.wait([&] { return p.adds >= objects; }, std::chrono::seconds(600)))
      return 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const std::size_t steady = rss_bytes();
    std::size_t json_bytes = 0;
    for (const auto& o : p.informer->indexer().list()) json_bytes += o->json().size();
    const double per_object = static_cast<double>(steady - before) / static_cast<double>(objects);
    const double json_per_object = static_cast<double>(json_bytes) / static_cast<double>(objects);
    std::printf(
        "{\"bench\":\"cache_memory\",\"objects\":%zu,\"json_bytes_per_object\":%.0f,\"bytes_per_object\":%."
        "0f,"
        "\"ratio_to_json\":%.2f}\n",
        objects, json_per_object, per_object, per_object / json_per_object);
    std::fflush(stdout);

    std::atomic<bool> sampling{true};
    std::atomic<std::size_t> peak{steady};
    std::thread sampler([&] {
      while (sampling) {
        const std::size_t now = rss_bytes();
        if (now > peak) peak = now;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
    // The relist is over when its pages are in and the pipeline had a moment to apply them.
    const std::uint64_t listed_before = p.source->listed();
    p.source->expire();
    const bool relisted =
        p.wait([&] { return p.source->listed() >= listed_before + objects; }, std::chrono::seconds(600));
    std::this_thread::sleep_for(std::chrono::seconds(1));
    sampling = false;
    sampler.join();
    if (!relisted) {
      std::fprintf(stderr, "bench_watch: the forced relist did not finish\n");
      return 1;
    }
    std::printf(
        "{\"bench\":\"relist_memory\",\"objects\":%zu,\"steady_rss\":%zu,\"peak_rss\":%zu,\"ratio\":%.2f}\n",
        objects, steady, peak.load(), static_cast<double>(peak.load()) / static_cast<double>(steady));
  }
  if (wanted("watch_throughput")) {
    auto server = fork_server(events, events + 100);
    const std::size_t object_bytes =
        pod_body("pod-0").size() + 120;  // + uid, creationTimestamp, resourceVersion
    // Besides the rates, the CPU time this process spent per event (all its threads;
    // the server is another process): steadier than the rates on a shared machine.
    std::vector<double> floor, pipeline, floor_cpu, pipeline_cpu;
    for (int run = 0; run < runs; ++run) {
      double cpu = cpu_seconds();
      floor.push_back(floor_events_per_s(*server, events));
      floor_cpu.push_back((cpu_seconds() - cpu) / static_cast<double>(events) * 1e6);
      cpu = cpu_seconds();
      {
        Pipeline p(*server, std::to_string(server->start_rv));
        const auto start = Clock::now();
        p.informer->run();
        if (!p.wait([&] { return p.adds >= events; }, std::chrono::seconds(300))) {
          std::fprintf(stderr, "bench_watch: the pipeline saw %llu of %zu events\n",
                       static_cast<unsigned long long>(p.adds.load()), events);
          return 1;
        }
        pipeline.push_back(static_cast<double>(events) /
                           std::chrono::duration<double>(Clock::now() - start).count());
        pipeline_cpu.push_back((cpu_seconds() - cpu) / static_cast<double>(events) * 1e6);
      }
      std::fprintf(stderr, "watch_throughput run %d: floor %.0f ev/s (%.2f us CPU/event), pipeline %.0f ev/s (%.2f us)\n",
                   run, floor.back(), floor_cpu.back(), pipeline.back(), pipeline_cpu.back());
    }
    std::printf(
        "{\"bench\":\"watch_throughput\",\"events\":%zu,\"object_bytes\":%zu,\"events_per_s\":%.0f,"
        "\"baseline\":\"beast_simdjson_floor\",\"baseline_events_per_s\":%.0f,\"ratio\":%.2f,"
        "\"cpu_us_per_event\":%.2f,\"baseline_cpu_us_per_event\":%.2f}\n",
        events, object_bytes, median(pipeline), median(floor), median(pipeline) / median(floor),
        median(pipeline_cpu), median(floor_cpu));
    std::fflush(stdout);
  }

  if (wanted("watch_latency")) {
    const double seconds = 2;
    auto server = fork_server(1000, 100000, rate, seconds);
    const auto expected = static_cast<std::size_t>(rate * seconds);
    Pipeline p(*server, "");
    p.informer->run();
    if (!p.informer->wait_for_sync(std::chrono::seconds(60))) return 1;
    // The floor reads the same writes beside the pipeline, from the revision after the
    // creates, with the same commit stamps.
    std::vector<std::int64_t> floor_lat;
    std::thread floor_reader([&] {
      const std::string ended =
          read_watch(*server, server->start_rv + 1000, [&](auto& doc) {
            std::string_view sent;
            if (!doc["object"]["metadata"]["labels"]["sent"].get(sent))
              floor_lat.push_back(now_ns() - std::stoll(std::string(sent)));
            return floor_lat.size() < expected;
          });
      if (!ended.empty()) std::fprintf(stderr, "bench_watch: the floor's watch ended: %s\n", ended.c_str());
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // both watches open before the writes
    const auto start = Clock::now();
    server->go();
    if (!p.wait([&] { return p.updates >= expected; }, std::chrono::seconds(60))) {
      // std::exit: the floor's reader may still be blocked on its socket; the child dies with us
      std::fprintf(stderr, "bench_watch: the pipeline saw %llu of %zu updates in 60 s\n",
                   static_cast<unsigned long long>(p.updates.load()), expected);
      std::exit(1);
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const double written_per_s = std::atof(server->read_line().c_str());
    floor_reader.join();
    std::vector<std::int64_t> lat;
    {
      std::lock_guard<std::mutex> lock(p.latency_mu);
      lat = p.latencies_ns;
    }
    const auto pct = [](std::vector<std::int64_t>& v, double q) {
      std::sort(v.begin(), v.end());
      return v.empty() ? 0.0 : v[std::min(v.size() - 1, std::size_t(q * v.size()))] / 1e3;
    };
    std::printf(
        "{\"bench\":\"watch_latency\",\"rate\":%.0f,\"p50_us\":%.0f,\"p99_us\":%.0f,\"samples\":%zu,"
        "\"server_writes_per_s\":%.0f,\"achieved_events_per_s\":%.0f,\"baseline\":\"beast_simdjson_floor\","
        "\"baseline_p50_us\":%.0f,\"baseline_p99_us\":%.0f,\"baseline_samples\":%zu,\"ratio\":%.2f}\n",
        rate, pct(lat, 0.5), pct(lat, 0.99), lat.size(), written_per_s,
        static_cast<double>(p.updates.load()) / elapsed, pct(floor_lat, 0.5), pct(floor_lat, 0.99),
        floor_lat.size(), pct(floor_lat, 0.5) > 0 ? pct(lat, 0.5) / pct(floor_lat, 0.5) : 0.0);
    std::fflush(stdout);
  }

  return 0;
}
