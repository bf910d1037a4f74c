// bench_apiserver: the embedded API server's watch fan-out and write throughput over
// loopback HTTP (issue 4, item 8). One JSON object per line on stdout (style.md §5);
// progress on stderr. About a minute on 2 cores.
//
//   watch_fanout: W watchers (1, 100, 1000) follow one collection while N objects are
//     created in-process as fast as the store takes them; events_per_s = N / time until
//     every watcher has every event; deliveries_per_s = W * N / that time.
//   store_create: in-process Store::create calls/s (the fan-out writer's ceiling).
//   create / update: C client threads on kept-alive connections POST new configmaps,
//     then PUT changed ones; requests_per_s over all threads.
//   create_durable: 16 clients POST configmaps to a server with --data-file (every 201
//     waits for its fsynced log record; group commit) and, in the same run, to one
//     without; ratio = durable / in-memory medians. The data file is under $TMPDIR
//     (else /tmp): run it on the disk you care about, not a tmpfs.
//   storage: the same server on each storage ("storage":"memory"|"etcd"; etcd 3.4 started
//     by the bench on loopback with a temp data dir, on the same disk as $TMPDIR): creates/s
//     and updates/s of 16 keep-alive clients, watch fan-out to 100 watchers (in-process
//     creates by 16 threads until every watcher has every event) and the time of one GET of a 10k-object
//     list. The etcd lines carry the memory figure of the same run and the ratio.
//
// `bench_apiserver NAME` runs only the benchmarks whose name contains NAME.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "apiserver/server.hpp"
#include "runtime/help_option.hpp"
#include "tests/support/etcd_process.hpp"
#include "tests/support/loopback_http.hpp"

namespace {

using kinformer::apiserver::Server;
using kinformer::apiserver::ServerOptions;
using kinformer::testing::HttpConnection;
using kinformer::testing::WatchStream;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr int runs = 5;
const std::string payload(512, 'x');  // a ~700-byte configmap, a typical small object

struct Summary {
  double median, min, max;
};

Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One run: returns seconds from the first write until every watcher has all `events` lines,
// created in-process by `writers` threads.
double fanout_run(int watchers, int events, const ServerOptions& base = {}, int writers = 1) {
  ServerOptions options = base;
  options.watch_history = static_cast<std::size_t>(events) + 16;
  options.watch_write_timeout = std::chrono::seconds(60);
  Server server(options);
  auto port = server.start();
  if (!port) {
    std::fprintf(stderr, "bench: %s\n", port.error().message.c_str());
    std::exit(1);
  }
  const auto& cms = *server.registry().find("", "v1", "configmaps");
  auto start_rv = server.store().revision();
  std::vector<std::unique_ptr<WatchStream>> streams;
  int epoll = ::epoll_create1(EPOLL_CLOEXEC);
  for (int i = 0; i < watchers; ++i) {
    streams.push_back(std::make_unique<WatchStream>(
        port.value(), "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" + std::to_string(start_rv)));
    if (streams.back()->status() != 200) {
      std::fprintf(stderr, "bench: watcher %d did not start\n", i);
      std::exit(1);
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<std::uint32_t>(i);
    ::epoll_ctl(epoll, EPOLL_CTL_ADD, streams.back()->fd(), &ev);
  }
  std::vector<long> seen(static_cast<std::size_t>(watchers), 0);
  auto start = Clock::now();
  std::vector<std::thread> writer_threads;
  for (int w = 0; w < writers; ++w)
    writer_threads.emplace_back([&, w] {
      for (int i = w; i < events; i += writers) {
        json cm = {{"metadata", {{"name", "cm-" + std::to_string(i)}}}, {"data", {{"blob", payload}}}};
        (void)server.store().create(cms, "default", std::move(cm), false);
      }
    });
  int complete = 0;
  std::vector<epoll_event> ready(1024);
  auto deadline = Clock::now() + std::chrono::seconds(120);
  while (complete < watchers && Clock::now() < deadline) {
    int n = ::epoll_wait(epoll, ready.data(), static_cast<int>(ready.size()), 1000);
    for (int i = 0; i < n; ++i) {
      auto w = ready[static_cast<std::size_t>(i)].data.u32;
      long got = streams[w]->drain_count();
      if (got <= 0) continue;
      bool was_done = seen[w] >= events;
      seen[w] += got;
      if (!was_done && seen[w] >= events) ++complete;
    }
  }
  double took = seconds_since(start);
  for (auto& t : writer_threads) t.join();
  ::close(epoll);
  if (complete < watchers) {
    std::fprintf(stderr, "bench: only %d of %d watchers got all %d events\n", complete, watchers, events);
    std::exit(1);
  }
  streams.clear();
  (void)server.stop();
  return took;
}

void bench_fanout(int watchers, int events) {
  std::vector<double> rates;
  for (int r = 0; r < runs; ++r) {
    double took = fanout_run(watchers, events);
    rates.push_back(events / took);
    std::fprintf(stderr, "bench: fan-out to %d watchers, run %d: %.0f events/s\n", watchers, r + 1, events / took);
  }
  auto s = summarize(rates);
  std::printf("{\"bench\":\"apiserver_watch_fanout\",\"watchers\":%d,\"events\":%d,\"object_bytes\":%zu,\"runs\":%d,"
              "\"median_events_per_s\":%.0f,\"min_events_per_s\":%.0f,\"max_events_per_s\":%.0f,"
              "\"median_deliveries_per_s\":%.0f}\n",
              watchers, events, payload.size() + 150, runs, s.median, s.min, s.max, s.median * watchers);
  std::fflush(stdout);
}

// The in-process create rate: the ceiling of the fan-out writer above.
void bench_store_create(int objects) {
  std::vector<double> rates;
  for (int r = 0; r < runs; ++r) {
    auto registry = kinformer::apiserver::ResourceRegistry::with_builtins();
    kinformer::apiserver::Store store(registry, {static_cast<std::size_t>(objects)});
    const auto& cms = *registry.find("", "v1", "configmaps");
    auto start = Clock::now();
    for (int i = 0; i < objects; ++i) {
      json cm = {{"metadata", {{"name", "cm-" + std::to_string(i)}}}, {"data", {{"blob", payload}}}};
      (void)store.create(cms, "default", std::move(cm), false);
    }
    rates.push_back(objects / seconds_since(start));
  }
  auto s = summarize(rates);
  std::printf("{\"bench\":\"apiserver_store_create\",\"objects\":%d,\"runs\":%d,\"median_creates_per_s\":%.0f,"
              "\"min_creates_per_s\":%.0f,\"max_creates_per_s\":%.0f}\n",
              objects, runs, s.median, s.min, s.max);
  std::fflush(stdout);
}

// Requests/s of `clients` kept-alive threads that POST (or, update, PUT) `per_client` configmaps each.
double write_rate(std::uint16_t port, int clients, int per_client, bool update) {
  std::atomic<int> failures{0};
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      HttpConnection connection(port);
      for (int i = 0; i < per_client; ++i) {
        auto name = "cm-" + std::to_string(c) + "-" + std::to_string(i);
        json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}},
                   {"data", {{"blob", payload}, {"round", update ? "2" : "1"}}}};
        auto reply = update ? connection.request("PUT", "/api/v1/namespaces/default/configmaps/" + name, cm.dump())
                            : connection.request("POST", "/api/v1/namespaces/default/configmaps", cm.dump());
        if (reply.status != (update ? 200 : 201)) failures++;
      }
    });
  for (auto& t : threads) t.join();
  double took = seconds_since(start);
  if (failures) {
    std::fprintf(stderr, "bench: %d failed requests\n", failures.load());
    std::exit(1);
  }
  return clients * per_client / took;
}

void bench_writes(int clients, int per_client) {
  std::vector<double> create_rates, update_rates;
  for (int r = 0; r < runs; ++r) {
    Server server(ServerOptions{});
    auto port = server.start();
    if (!port) std::exit(1);
    create_rates.push_back(write_rate(port.value(), clients, per_client, false));
    update_rates.push_back(write_rate(port.value(), clients, per_client, true));
    std::fprintf(stderr, "bench: writes run %d: create %.0f/s update %.0f/s\n", r + 1, create_rates.back(),
                 update_rates.back());
    (void)server.stop();
  }
  for (auto [name, rates] : {std::pair{"apiserver_create", create_rates}, std::pair{"apiserver_update", update_rates}}) {
    auto s = summarize(rates);
    std::printf("{\"bench\":\"%s\",\"clients\":%d,\"requests\":%d,\"connection\":\"keep-alive\",\"runs\":%d,"
                "\"median_requests_per_s\":%.0f,\"min_requests_per_s\":%.0f,\"max_requests_per_s\":%.0f}\n",
                name, clients, clients * per_client, runs, s.median, s.min, s.max);
  }
  std::fflush(stdout);
}

// Creates/s of `clients` threads against a fresh server, with a data file when one is given.
double create_rate(int clients, int per_client, const std::string& data_file) {
  ServerOptions options;
  options.data_file = data_file;
  Server server(options);
  auto port = server.start();
  if (!port) {
    std::fprintf(stderr, "bench: %s\n", port.error().message.c_str());
    std::exit(1);
  }
  std::atomic<int> failures{0};
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      HttpConnection connection(port.value());
      for (int i = 0; i < per_client; ++i) {
        json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"},
                   {"metadata", {{"name", "cm-" + std::to_string(c) + "-" + std::to_string(i)}}},
                   {"data", {{"blob", payload}}}};
        auto reply = connection.request("POST", "/api/v1/namespaces/default/configmaps", cm.dump());
        if (reply.status != 201) failures++;
      }
    });
  for (auto& t : threads) t.join();
  double took = seconds_since(start);
  if (failures) {
    std::fprintf(stderr, "bench: %d failed creates\n", failures.load());
    std::exit(1);
  }
  if (auto stats = server.stats(); stats.log_syncs)
    std::fprintf(stderr, "bench: %llu log records in %llu fdatasyncs (%.1f per sync), %.2f ms per sync\n",
                 static_cast<unsigned long long>(stats.log_records),
                 static_cast<unsigned long long>(stats.log_syncs),
                 double(stats.log_records) / double(stats.log_syncs), took * 1000 / double(stats.log_syncs));
  (void)server.stop();
  return clients * per_client / took;
}

void bench_create_durable(int clients, int per_client) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kinformer-bench-XXXXXX";
  if (!::mkdtemp(pattern.data())) {
    std::fprintf(stderr, "bench: cannot create a directory from %s\n", pattern.c_str());
    std::exit(1);
  }
  std::vector<double> durable, memory;
  for (int r = 0; r < runs; ++r) {  // interleaved, so both see the same machine load
    memory.push_back(create_rate(clients, per_client, ""));
    std::system(("rm -f '" + pattern + "'/state.json*").c_str());
    durable.push_back(create_rate(clients, per_client, pattern + "/state.json"));
    std::fprintf(stderr, "bench: create run %d: in-memory %.0f/s, durable %.0f/s\n", r + 1, memory.back(),
                 durable.back());
  }
  std::system(("rm -rf '" + pattern + "'").c_str());
  auto d = summarize(durable).median;
  auto m = summarize(memory).median;
  std::printf("{\"bench\":\"apiserver_create_durable\",\"clients\":%d,\"requests_per_s\":%.0f,"
              "\"in_memory_requests_per_s\":%.0f,\"ratio\":%.2f}\n",
              clients, d, m, d / m);
  std::fflush(stdout);
}

// ---- the storage comparison (issue 16) ----

struct StorageFigures {
  double creates_per_s = 0, updates_per_s = 0, fanout_events_per_s = 0, list_ms = 0;
};

StorageFigures storage_run(const ServerOptions& options, int clients, int per_client, int watchers, int events,
                           int list_objects) {
  StorageFigures out;
  {
    Server server(options);
    auto port = server.start();
    if (!port) {
      std::fprintf(stderr, "bench: %s\n", port.error().message.c_str());
      std::exit(1);
    }
    out.creates_per_s = write_rate(port.value(), clients, per_client, false);
    out.updates_per_s = write_rate(port.value(), clients, per_client, true);
    // the 10k list: in-process creates into a namespace of its own, then one GET over HTTP
    const auto& cms = *server.registry().find("", "v1", "configmaps");
    const auto& namespaces = *server.registry().namespaces();
    (void)server.store().create(namespaces, "", json{{"metadata", {{"name", "big"}}}}, false);
    std::vector<std::thread> fillers;  // 16 writers: etcd commits concurrent writes with one fsync
    for (int t = 0; t < 16; ++t)
      fillers.emplace_back([&, t] {
        for (int i = t; i < list_objects; i += 16) {
          json cm = {{"metadata", {{"name", "cm-" + std::to_string(i)}}}, {"data", {{"blob", payload}}}};
          if (!server.store().create(cms, "big", std::move(cm), false)) std::exit(1);
        }
      });
    for (auto& t : fillers) t.join();
    std::vector<double> list_ms;
    for (int r = 0; r < 3; ++r) {
      auto start = Clock::now();
      auto reply = kinformer::testing::http_request(port.value(), "GET", "/api/v1/namespaces/big/configmaps", "",
                                                    "application/json", {}, std::chrono::seconds(60));
      list_ms.push_back(seconds_since(start) * 1000);
      if (reply.status != 200 || reply.body.size() < static_cast<std::size_t>(list_objects) * payload.size()) {
        std::fprintf(stderr, "bench: the %d-object list failed (%d)\n", list_objects, reply.status);
        std::exit(1);
      }
    }
    out.list_ms = summarize(list_ms).median;
    (void)server.stop();
  }
  // As many writers as clients: one in-process writer would measure etcd's latency, not fan-out.
  out.fanout_events_per_s = events / fanout_run(watchers, events, options, clients);
  return out;
}

void bench_storage(int clients, int per_client, int watchers, int events, int list_objects) {
  kinformer::testing::EtcdProcess etcd;
  if (!etcd.ready()) {
    std::fprintf(stderr, "bench: etcd did not start: %s\n", etcd.log().c_str());
    std::exit(1);
  }
  std::vector<StorageFigures> memory, on_etcd;
  constexpr int storage_runs = 2;
  for (int r = 0; r < storage_runs; ++r) {  // interleaved, so both see the same machine load
    memory.push_back(storage_run(ServerOptions{}, clients, per_client, watchers, events, list_objects));
    ServerOptions options;
    options.etcd.endpoints = {etcd.endpoint()};
    options.etcd.prefix = "/bench-" + std::to_string(r);  // a fresh key space per run
    options.etcd.watch_history = static_cast<std::size_t>(events) + 16;
    on_etcd.push_back(storage_run(options, clients, per_client, watchers, events, list_objects));
    std::fprintf(stderr, "bench: storage run %d: memory %.0f/%.0f/%.0f/%.1f ms, etcd %.0f/%.0f/%.0f/%.1f ms "
                 "(creates/s, updates/s, fan-out events/s, list)\n", r + 1, memory.back().creates_per_s,
                 memory.back().updates_per_s, memory.back().fanout_events_per_s, memory.back().list_ms,
                 on_etcd.back().creates_per_s, on_etcd.back().updates_per_s, on_etcd.back().fanout_events_per_s,
                 on_etcd.back().list_ms);
  }
  auto median = [](const std::vector<StorageFigures>& runs_of, double StorageFigures::*field) {
    std::vector<double> v;
    for (const auto& f : runs_of) v.push_back(f.*field);
    return summarize(v).median;
  };
  struct Line {
    const char* bench;
    const char* unit;
    double StorageFigures::*field;
  };
  for (auto line : {Line{"apiserver_storage_create", "requests_per_s", &StorageFigures::creates_per_s},
                    Line{"apiserver_storage_update", "requests_per_s", &StorageFigures::updates_per_s},
                    Line{"apiserver_storage_watch_fanout", "events_per_s", &StorageFigures::fanout_events_per_s},
                    Line{"apiserver_storage_list", "list_ms", &StorageFigures::list_ms}}) {
    const double m = median(memory, line.field), e = median(on_etcd, line.field);
    std::printf("{\"bench\":\"%s\",\"storage\":\"memory\",\"clients\":%d,\"watchers\":%d,\"objects\":%d,"
                "\"runs\":%d,\"%s\":%.1f}\n",
                line.bench, clients, watchers, list_objects, storage_runs, line.unit, m);
    std::printf("{\"bench\":\"%s\",\"storage\":\"etcd\",\"clients\":%d,\"watchers\":%d,\"objects\":%d,"
                "\"runs\":%d,\"%s\":%.1f,\"memory_%s\":%.1f,\"ratio\":%.3f}\n",
                line.bench, clients, watchers, list_objects, storage_runs, line.unit, e, line.unit, m, e / m);
  }
  std::fflush(stdout);
}

}  // namespace

constexpr const char* usage =
    "usage: bench_apiserver [NAME]   (only the benchmarks whose name contains NAME)\n";

int main(int argc, char** argv) {
  if (kinformer::cli::answered_help(argc, argv, usage)) return 0;
  auto wanted = [&](const char* name) { return argc < 2 || std::strstr(name, argv[1]) != nullptr; };
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, 8192);
  setrlimit(RLIMIT_NOFILE, &limit);
  std::printf("{\"bench\":\"setup\",\"build\":\"Release\",\"hardware_threads\":%u,\"server_io_threads\":%u}\n",
              std::thread::hardware_concurrency(), ServerOptions{}.threads);
  std::fflush(stdout);
  if (wanted("apiserver_store_create")) bench_store_create(50000);
  if (wanted("apiserver_watch_fanout")) {
    bench_fanout(1, 50000);
    bench_fanout(100, 5000);
    bench_fanout(1000, 1000);
  }
  if (wanted("apiserver_create apiserver_update")) bench_writes(2, 2000);
  if (wanted("apiserver_create_durable")) bench_create_durable(16, 300);
  if (wanted("apiserver_storage")) bench_storage(16, 50, 100, 1000, 10000);
  return 0;
}
