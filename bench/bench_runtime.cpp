// bench/bench_runtime.cpp
//
// Figures for the runtime core, one JSON object per line on stdout (style.md §5),
// progress on stderr:
//   (a) object_ingest: Object::parse events/s and MB/s, next to a bare simdjson
//       On-Demand walk extracting the same metadata from the same bytes;
//   (b) fifo_*: DeltaFIFO add + pop ops/s;
//   (c) indexer_concurrent: update and by_index ops/s with 2 reader threads, for
//       each concurrency scheme measured (the Indexer's writer-preferring rwlock;
//       std::shared_mutex, sharding and copy-on-write snapshots built here over the
//       same detail::StoreCore);
//   (d) memory: bytes per cached Pod (100k distinct copies of the template) in the
//       Indexer and in the FIFO's known view, from mallinfo2 deltas.
// Usage: `bench_runtime --help`. Takes well under a minute on 2 cores.
#include <malloc.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <simdjson.h>

#include "runtime/delta_fifo.hpp"
#include "runtime/indexer.hpp"
#include "runtime/object.hpp"
#include "runtime/store_core.hpp"
#include "runtime/help_option.hpp"

namespace {

using kinformer::DeltaFIFO;
using kinformer::DeltaFIFOOptions;
using kinformer::Indexer;
using kinformer::Object;
using kinformer::ObjectPtr;
using kinformer::detail::StoreCore;
using Clock = std::chrono::steady_clock;

constexpr int runs = 5;
std::atomic<std::size_t> g_sink{0};  // keeps measured reads from being optimised away

void progress(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::fputs("bench_runtime: ", stderr);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Spread {
  double median, min, max;
};

Spread spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

std::size_t allocated_bytes() {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

std::string load_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// Copy `i` of the template: name, uid and resourceVersion vary with equal lengths,
// so every copy has the template's size; `ns` >= 0 also varies the namespace.
std::string make_pod(const std::string& tmpl, int i, int ns = -1) {
  std::string p = tmpl;
  char b[32];
  std::snprintf(b, sizeof b, "%05d", i % 100000);
  p.replace(p.find("x2k4p"), 5, b);
  std::snprintf(b, sizeof b, "%012d", i);
  p.replace(p.find("c3d4e5f60718"), 12, b);
  std::snprintf(b, sizeof b, "%09d", 184000000 + i);
  p.replace(p.find("184467321"), 9, b);
  if (ns >= 0) {
    std::snprintf(b, sizeof b, "produc%04d", ns);  // as long as "production"
    p.replace(p.find("production"), 10, b);
  }
  return p;
}

ObjectPtr parse_or_die(const std::string& json) {
  auto parsed = Object::parse(json);
  if (!parsed) {
    progress("template copy does not parse: %s", parsed.error().to_string().c_str());
    std::exit(1);
  }
  return std::move(parsed).value();
}

// -- (a) ingest --

namespace od = simdjson::ondemand;

// The baseline: what Object::parse must at least do. Walks every top-level member
// (skipping non-metadata ones, as Object::parse does) and reads the same metadata
// strings as views, building nothing.
std::size_t bare_meta_walk(od::parser& parser, const std::string& padded) {
  std::size_t sink = 0;
  od::document doc = parser.iterate(padded.data(), padded.size(), padded.capacity());
  for (auto field : doc.get_object()) {
    std::string_view key = field.unescaped_key();
    if (key != "metadata") continue;
    for (auto m : field.value().get_object()) {
      std::string_view mk = m.unescaped_key();
      if (mk == "labels" || mk == "annotations") {
        for (auto label : m.value().get_object())
          sink += label.unescaped_key().value().size() + std::string_view(label.value().get_string()).size();
      } else if (mk == "name" || mk == "namespace" || mk == "uid" || mk == "resourceVersion" ||
                 mk == "generateName" || mk == "creationTimestamp") {
        sink += std::string_view(m.value().get_string()).size();
      }
    }
  }
  return sink;
}

void bench_ingest(const std::string& tmpl) {
  constexpr int events = 20000;
  progress("(a) object ingest: %d events", events);
  std::vector<std::string> lines;
  lines.reserve(events);
  std::size_t bytes = 0;
  for (int i = 0; i < events; ++i) {
    std::string line = make_pod(tmpl, i);
    line.reserve(line.size() + simdjson::SIMDJSON_PADDING);  // On-Demand reads past the end
    bytes += line.size();
    lines.push_back(std::move(line));
  }
  od::parser parser;
  std::vector<double> object_s, bare_s;
  std::size_t sink = 0;
  for (int r = 0; r < runs; ++r) {  // rounds interleaved: both see the same machine load
    auto start = Clock::now();
    for (const std::string& line : lines) sink += bare_meta_walk(parser, line);
    bare_s.push_back(seconds_since(start));
    start = Clock::now();
    for (const std::string& line : lines) sink += parse_or_die(line)->name().size();
    object_s.push_back(seconds_since(start));
  }
  const Spread o = spread(object_s), b = spread(bare_s);
  std::printf(
      "{\"bench\":\"object_ingest\",\"events\":%d,\"bytes_per_event\":%zu,\"runs\":%d,\"median_ms\":%.1f,"
      "\"min_ms\":%.1f,\"max_ms\":%.1f,\"events_per_s\":%.0f,\"mb_per_s\":%.0f,\"baseline\":\"simdjson_ondemand_meta_walk\","
      "\"baseline_median_ms\":%.1f,\"baseline_events_per_s\":%.0f,\"baseline_mb_per_s\":%.0f,\"ratio\":%.2f}\n",
      events, bytes / events, runs, o.median * 1e3, o.min * 1e3, o.max * 1e3, events / o.median,
      bytes / o.median / 1e6, b.median * 1e3, events / b.median, bytes / b.median / 1e6, b.median / o.median);
  g_sink += sink;
  std::fflush(stdout);
}

// -- (b) DeltaFIFO --

void bench_fifo(const std::vector<ObjectPtr>& objects) {
  progress("(b) DeltaFIFO add + pop: %zu objects", objects.size());
  std::vector<double> drain_s, steady_s;
  constexpr std::size_t batch = 64;
  for (int r = 0; r < runs; ++r) {
    {
      DeltaFIFO fifo;
      auto start = Clock::now();
      for (const ObjectPtr& o : objects) (void)fifo.add(o);
      while (!fifo.empty()) (void)fifo.pop();
      drain_s.push_back(seconds_since(start));
    }
    {
      // Steady state: every key already known, deltas arrive in watch-sized
      // batches and the Controller pulls batches of the same size.
      DeltaFIFOOptions options;
      options.known_objects = objects;
      DeltaFIFO fifo(std::move(options));
      auto start = Clock::now();
      for (std::size_t i = 0; i < objects.size(); i += batch) {
        const std::size_t end = std::min(objects.size(), i + batch);
        for (std::size_t j = i; j < end; ++j) (void)fifo.update(objects[j]);
        (void)fifo.pop_batch(batch);
      }
      steady_s.push_back(seconds_since(start));
    }
  }
  const double ops = 2.0 * static_cast<double>(objects.size());
  const Spread d = spread(drain_s), s = spread(steady_s);
  std::printf(
      "{\"bench\":\"fifo_add_then_pop\",\"objects\":%zu,\"runs\":%d,\"median_ms\":%.2f,\"min_ms\":%.2f,"
      "\"max_ms\":%.2f,\"ops_per_s\":%.0f}\n",
      objects.size(), runs, d.median * 1e3, d.min * 1e3, d.max * 1e3, ops / d.median);
  std::printf(
      "{\"bench\":\"fifo_update_pop_batch\",\"objects\":%zu,\"batch\":%zu,\"runs\":%d,\"median_ms\":%.2f,"
      "\"min_ms\":%.2f,\"max_ms\":%.2f,\"ops_per_s\":%.0f}\n",
      objects.size(), batch, runs, s.median * 1e3, s.min * 1e3, s.max * 1e3, ops / s.median);
  std::fflush(stdout);
}

// -- (c) Indexer concurrency schemes --

// The Indexer as shipped: one writer-preferring pthread rwlock around the StoreCore.
struct IndexerScheme {
  static constexpr const char* name = "rwlock_writer_preferring";
  Indexer indexer;
  void update(const ObjectPtr& o) { indexer.update(o); }
  std::size_t by_index(const std::string& ns) const { return indexer.by_index("namespace", ns)->size(); }
};

// The same with std::shared_mutex, which glibc makes reader-preferring: readers
// back to back can hold the writer off.
struct SharedMutexScheme {
  static constexpr const char* name = "std_shared_mutex";
  mutable std::shared_mutex mu;
  StoreCore core;
  void update(const ObjectPtr& o) {
    std::unique_lock lock(mu);
    core.upsert(o);
  }
  std::size_t by_index(const std::string& ns) const {
    std::shared_lock lock(mu);
    return core.by_index("namespace", ns)->size();
  }
};

// Sharding by key hash, a shared_mutex per shard: writes contend with 1/16 of the
// readers, but every index query visits all shards, and a query spanning shards
// may see a state that never existed (a write to shard 2 but not an earlier one
// to shard 1), which breaks the Indexer's contract.
struct ShardedScheme {
  static constexpr const char* name = "sharded_16";
  struct alignas(64) Shard {
    mutable std::shared_mutex mu;
    StoreCore core;
  };
  std::array<Shard, 16> shards;
  void update(const ObjectPtr& o) {
    Shard& s = shards[std::hash<std::string_view>{}(o->key()) % shards.size()];
    std::unique_lock lock(s.mu);
    s.core.upsert(o);
  }
  std::size_t by_index(const std::string& ns) const {
    std::vector<ObjectPtr> out;
    for (const Shard& s : shards) {
      std::shared_lock lock(s.mu);
      auto part = s.core.by_index("namespace", ns);
      out.insert(out.end(), part->begin(), part->end());
    }
    return out.size();
  }
};

// Copy-on-write snapshots: readers never wait (an atomic shared_ptr load), the
// writer applies to its own copy and publishes a full copy every `publish_every`
// updates (as a Controller would per applied batch). Publishing per update would
// copy the whole store on every write.
struct CowScheme {
  static constexpr const char* name = "cow_snapshot_per_64";
  static constexpr int publish_every = 64;
  StoreCore working;
  std::shared_ptr<const StoreCore> current = std::make_shared<const StoreCore>();
  int pending = 0;
  void update(const ObjectPtr& o) {
    working.upsert(o);
    if (++pending == publish_every) {
      std::atomic_store(&current, std::shared_ptr<const StoreCore>(std::make_shared<const StoreCore>(working)));
      pending = 0;
    }
  }
  std::size_t by_index(const std::string& ns) const {
    std::shared_ptr<const StoreCore> snapshot = std::atomic_load(&current);
    return snapshot->by_index("namespace", ns)->size();
  }
};

constexpr auto window = std::chrono::milliseconds(300);

struct Rates {
  std::vector<double> updates, reads;  // per second, one entry per round
};

// One round: a fresh store filled with `v1`, then `window` of updates alternating
// between the two versions of each object while 2 readers query by_index.
template <class Scheme>
void scheme_round(const std::vector<ObjectPtr>& v1, const std::vector<ObjectPtr>& v2,
                  const std::vector<std::string>& namespaces, Rates& rates) {
  auto scheme = std::make_unique<Scheme>();
  for (const ObjectPtr& o : v1) scheme->update(o);
  for (std::size_t i = 0; i < 64; ++i) scheme->update(v1[i]);  // the cow scheme publishes
  std::atomic<bool> stop{false};
  std::atomic<long> reads{0};
  std::atomic<int> ready{0};
  auto reader = [&](std::size_t n) {
    long local = 0;
    std::size_t sink = 0;
    ++ready;
    while (!stop.load(std::memory_order_relaxed)) {
      sink += scheme->by_index(namespaces[n++ % namespaces.size()]);
      ++local;
    }
    reads += local;
    g_sink += sink;
  };
  std::thread r1(reader, 1), r2(reader, 37);
  while (ready.load() < 2) std::this_thread::yield();
  long updates = 0;
  const auto start = Clock::now();
  while (Clock::now() - start < window) {
    for (int k = 0; k < 256; ++k, ++updates) {
      const std::size_t i = static_cast<std::size_t>(updates) % v1.size();
      scheme->update((updates / static_cast<long>(v1.size())) % 2 ? v1[i] : v2[i]);
    }
  }
  const double elapsed = seconds_since(start);
  stop = true;
  r1.join();
  r2.join();
  rates.updates.push_back(static_cast<double>(updates) / elapsed);
  rates.reads.push_back(static_cast<double>(reads.load()) / elapsed);
}

void print_scheme(const char* name, std::size_t objects, std::size_t namespaces, const Rates& rates) {
  const Spread u = spread(rates.updates), q = spread(rates.reads);
  std::printf(
      "{\"bench\":\"indexer_concurrent\",\"scheme\":\"%s\",\"objects\":%zu,\"namespaces\":%zu,\"reader_threads\":2,"
      "\"runs\":%d,\"window_ms\":%d,\"updates_per_s\":%.0f,\"updates_per_s_min\":%.0f,\"updates_per_s_max\":%.0f,"
      "\"by_index_per_s\":%.0f,\"by_index_per_s_min\":%.0f,\"by_index_per_s_max\":%.0f}\n",
      name, objects, namespaces, runs, static_cast<int>(window.count()), u.median, u.min, u.max, q.median, q.min,
      q.max);
  std::fflush(stdout);
}

void bench_indexer_schemes(const std::string& tmpl) {
  constexpr int objects = 10000, namespace_count = 100;
  std::vector<ObjectPtr> v1, v2;
  std::vector<std::string> namespaces;
  for (int n = 0; n < namespace_count; ++n) {
    char b[24];  // room for any int: -O1 builds cannot prove n < 100
    std::snprintf(b, sizeof b, "produc%04d", n);
    namespaces.emplace_back(b);
  }
  for (int i = 0; i < objects; ++i) {
    v1.push_back(parse_or_die(make_pod(tmpl, i, i % namespace_count)));
    // i + 500000: the same name (5 digits of i) and namespace, a new uid and version
    v2.push_back(parse_or_die(make_pod(tmpl, i + 500000, i % namespace_count)));
  }
  Rates indexer, shared_mutex, sharded, cow;
  for (int r = 0; r < runs; ++r) {  // rounds interleaved across schemes: same load for each
    progress("(c) indexer schemes, round %d of %d: %d objects, 1 writer + 2 readers each", r + 1, runs, objects);
    scheme_round<IndexerScheme>(v1, v2, namespaces, indexer);
    scheme_round<SharedMutexScheme>(v1, v2, namespaces, shared_mutex);
    scheme_round<ShardedScheme>(v1, v2, namespaces, sharded);
    scheme_round<CowScheme>(v1, v2, namespaces, cow);
  }
  print_scheme(IndexerScheme::name, v1.size(), namespaces.size(), indexer);
  print_scheme(SharedMutexScheme::name, v1.size(), namespaces.size(), shared_mutex);
  print_scheme(ShardedScheme::name, v1.size(), namespaces.size(), sharded);
  print_scheme(CowScheme::name, v1.size(), namespaces.size(), cow);
}

// -- (d) memory --

void print_memory(const char* what, int objects, double json_bytes, double bytes) {
  std::printf(
      "{\"bench\":\"memory\",\"what\":\"%s\",\"objects\":%d,\"json_bytes_per_object\":%.0f,"
      "\"bytes_per_object\":%.0f,\"ratio_to_json\":%.3f,\"target_ratio\":1.3}\n",
      what, objects, json_bytes, bytes, bytes / json_bytes);
  std::fflush(stdout);
}

void bench_memory(const std::string& tmpl) {
  constexpr int objects = 100000;
  progress("(d) memory: %d distinct Pods", objects);
  (void)parse_or_die(make_pod(tmpl, 0));  // thread-local parser buffers, outside the measurement
  const std::size_t json_size = make_pod(tmpl, 0).size();

  const std::size_t base = allocated_bytes();
  std::vector<ObjectPtr> parsed;
  parsed.reserve(objects);
  const std::size_t vector_bytes = allocated_bytes() - base;
  for (int i = 0; i < objects; ++i) parsed.push_back(parse_or_die(make_pod(tmpl, i)));
  print_memory("objects_alone", objects, static_cast<double>(json_size),
               static_cast<double>(allocated_bytes() - base - vector_bytes) / objects);

  auto indexer = std::make_unique<Indexer>();
  for (ObjectPtr& o : parsed) indexer->add(std::move(o));
  parsed = {};
  const std::size_t with_indexer = allocated_bytes();
  print_memory("indexer_objects_store_namespace_index", objects, static_cast<double>(json_size),
               static_cast<double>(with_indexer - base) / objects);

  // The FIFO's known view over the same (shared) objects: only its table counts.
  DeltaFIFOOptions options;
  options.known_objects = indexer->list();
  const std::size_t before_fifo = allocated_bytes() - options.known_objects.capacity() * sizeof(ObjectPtr);
  auto fifo = std::make_unique<DeltaFIFO>(std::move(options));
  const std::size_t with_fifo = allocated_bytes();
  std::printf("{\"bench\":\"memory\",\"what\":\"fifo_known_view\",\"objects\":%d,\"bytes_per_key\":%.1f}\n", objects,
              static_cast<double>(with_fifo - before_fifo) / objects);

  // A labels index on top: 5 labels per Pod, values shared by every copy, so this
  // is the per-object cost of 5 more set entries.
  const std::size_t before_labels = allocated_bytes();
  if (!indexer->add_indexers({{"labels", kinformer::labels_index_func}})) std::exit(1);
  const std::size_t with_labels = allocated_bytes();
  std::printf("{\"bench\":\"memory\",\"what\":\"labels_index\",\"objects\":%d,\"bytes_per_object\":%.1f}\n",
              objects, static_cast<double>(with_labels - before_labels) / objects);
  fifo.reset();
  indexer.reset();
  std::fflush(stdout);
}

}  // namespace

constexpr const char* usage =
    "usage: bench_runtime [pod.json]   (default ../shared/examples/deps/pod.json from the repo root)\n";

int main(int argc, char** argv) {
  if (kinformer::cli::answered_help(argc, argv, usage)) return 0;
  std::string path = argc > 1 ? argv[1] : "../shared/examples/deps/pod.json";
  std::string tmpl = load_file(path);
  if (tmpl.empty() && argc <= 1) {
    path = std::string(KINFORMER_SOURCE_DIR) + "/../shared/examples/deps/pod.json";
    tmpl = load_file(path);
  }
  if (tmpl.empty() || tmpl.find("x2k4p") == std::string::npos || tmpl.find("production") == std::string::npos) {
    progress("cannot read a Pod template like shared/examples/deps/pod.json at %s", path.c_str());
    return 1;
  }
  progress("template %s (%zu bytes)", path.c_str(), tmpl.size());
  std::printf("{\"bench\":\"setup\",\"build\":\"%s\",\"hardware_threads\":%u,\"template_bytes\":%zu}\n",
              KINFORMER_BUILD_TYPE, std::thread::hardware_concurrency(), tmpl.size());
  std::fflush(stdout);

  bench_memory(tmpl);  // first: a fresh heap makes the deltas cleanest
  bench_ingest(tmpl);
  {
    std::vector<ObjectPtr> objects;
    for (int i = 0; i < 20000; ++i) objects.push_back(parse_or_die(make_pod(tmpl, i)));
    bench_fifo(objects);
  }
  bench_indexer_schemes(tmpl);
  progress("done");
  return 0;
}
