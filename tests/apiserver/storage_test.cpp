// Tests of the durable store (apiserver/storage/): checksums, log framing, snapshot
// validation and recovery from the files a crash leaves behind (issue 10).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "apiserver/storage/crc32c.hpp"
#include "apiserver/storage/files.hpp"
#include "apiserver/storage/log_format.hpp"
#include "apiserver/storage/persistence.hpp"
#include "apiserver/storage/snapshot.hpp"
#include "tests/support/objects.hpp"

using kinformer::apiserver::EventPtr;
using kinformer::apiserver::ResourceRegistry;
using kinformer::apiserver::Store;
using kinformer::apiserver::storage::Persistence;
using kinformer::apiserver::storage::ScanResult;
using nlohmann::json;
namespace storage = kinformer::apiserver::storage;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/kinformer-storage-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

using kinformer::testing::bare_configmap;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// The data files exactly as a crash would leave them: copied while the server runs.
void copy_files(const std::string& from, const std::string& to) {
  REQUIRE(std::system(("cp -p '" + from + "'/state.json* '" + to + "'/ && rm -f '" + to + "'/state.json.lock")
                          .c_str()) == 0);
}

// The last write may have started one more compaction: returns once none has run for 300 ms.
void settle_compactions(const Persistence& p) {
  for (auto seen = p.compactions();; seen = p.compactions()) {
    ::usleep(300000);
    if (p.compactions() == seen) return;
  }
}

std::string only_segment(const std::string& dir) {
  std::string found;
  for (const auto& name : {"0000000001", "0000000002", "0000000003"})
    if (::access((dir + "/state.json.wal-" + name).c_str(), F_OK) == 0)
      found = dir + "/state.json.wal-" + name;
  return found;
}

}  // namespace

TEST_CASE("crc32c matches the standard check value and extends", "[apiserver][storage][item-10][unit]") {
  CHECK(storage::crc32c("123456789") == 0xE3069283u);
  CHECK(storage::crc32c("") == 0u);
  std::string long_text(1000, 'q');
  CHECK(storage::crc32c_extend(storage::crc32c(long_text.substr(0, 333)), long_text.substr(333)) ==
        storage::crc32c(long_text));
}

TEST_CASE("the log scan tells a torn tail from a corrupt record before the tail",
          "[apiserver][storage][item-10][unit]") {
  std::string log;
  storage::append_record(log, "{\"first\":1}");
  auto second_at = log.size();
  storage::append_record(log, "{\"second\":2}");
  auto third_at = log.size();
  storage::append_record(log, "{\"third\":3}");
  const std::string zeros(4096, '\0');

  auto clean = storage::scan_records(log);
  CHECK(clean.tail == ScanResult::Tail::clean);
  REQUIRE(clean.records.size() == 3);
  CHECK(clean.records[1].offset == second_at);
  CHECK(clean.records[2].payload == "{\"third\":3}");

  auto cut = storage::scan_records(std::string_view(log).substr(0, log.size() - 3));
  CHECK(cut.tail == ScanResult::Tail::torn);
  CHECK(cut.records.size() == 2);
  CHECK(cut.bad_offset == third_at);

  auto flipped_last = log;
  flipped_last[flipped_last.size() - 2] ^= 0x20;
  CHECK(storage::scan_records(flipped_last).tail == ScanResult::Tail::torn);

  // A preallocated segment: the zeros after the records are their end.
  auto preallocated = storage::scan_records(log + zeros);
  CHECK(preallocated.tail == ScanResult::Tail::clean);
  CHECK(preallocated.records.size() == 3);
  CHECK(preallocated.bad_offset == log.size());
  CHECK(storage::scan_records(zeros).tail == ScanResult::Tail::clean);

  // A write cut short in a preallocated segment: the start of its record, then zeros.
  auto cut_before_zeros = log;
  std::fill(cut_before_zeros.end() - 4, cut_before_zeros.end(), '\0');
  auto torn = storage::scan_records(cut_before_zeros + zeros);
  CHECK(torn.tail == ScanResult::Tail::torn);
  CHECK(torn.bad_offset == third_at);
  CHECK(torn.records.size() == 2);
  auto header_only = log.substr(0, third_at + 6) + std::string(log.size() - third_at - 6, '\0') + zeros;
  CHECK(storage::scan_records(header_only).tail == ScanResult::Tail::torn);

  for (const auto& tail : {std::string(), zeros}) {
    auto flipped_middle = log + tail;
    flipped_middle[second_at + storage::record_header_bytes + 2] ^= 0x01;
    auto corrupt = storage::scan_records(flipped_middle);
    CHECK(corrupt.tail == ScanResult::Tail::corrupt);
    CHECK(corrupt.bad_offset == second_at);
    CHECK(corrupt.records.size() == 1);
  }

  // A zeroed stretch with records after it is a hole in the log, not its end.
  auto hole = log + zeros;
  std::fill(hole.begin() + static_cast<std::ptrdiff_t>(second_at),
            hole.begin() + static_cast<std::ptrdiff_t>(third_at), '\0');
  auto holed = storage::scan_records(hole);
  CHECK(holed.tail == ScanResult::Tail::corrupt);
  CHECK(holed.bad_offset == second_at);
}

TEST_CASE("a snapshot round-trips and every kind of damage is a clear error naming the object",
          "[apiserver][storage][item-10][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& cms = *registry.find("", "v1", "configmaps");
  Store store(registry);
  REQUIRE(store.create(cms, "default", bare_configmap("web", "blue"), false));
  auto text = storage::render_snapshot(store.contents());
  auto good = storage::parse_snapshot(text, "state.json", registry);
  REQUIRE(good);
  CHECK(good->revision == store.revision());
  CHECK(good->objects.size() == 4);

  auto error_of = [&](const std::string& damaged) {
    auto parsed = storage::parse_snapshot(damaged, "state.json", registry);
    REQUIRE_FALSE(parsed);
    return parsed.error().message;
  };
  // A changed value that leaves valid JSON: the checksum catches it.
  auto changed = text;
  changed.replace(changed.find("blue"), 4, "gray");
  CHECK_THAT(error_of(changed), Catch::Contains("checksum does not match"));

  // Without the checksum (as version 1 files were written), every field is checked.
  auto as_v1 = [&](json snapshot) {
    snapshot["version"] = 1;
    snapshot.erase("checksum");
    return snapshot.dump();
  };
  auto base = json::parse(text);
  auto& objects = base["objects"];
  std::size_t web = 0;
  for (std::size_t i = 0; i < objects.size(); ++i)
    if (objects[i]["object"]["metadata"]["name"] == "web") web = i;
  REQUIRE(storage::parse_snapshot(as_v1(base), "state.json", registry));

  auto bad_rv = base;
  bad_rv["objects"][web]["object"]["metadata"]["resourceVersion"] = "abc";
  auto message = error_of(as_v1(bad_rv));
  CHECK_THAT(message, Catch::Contains("configmaps./v1 default/web") && Catch::Contains("\"abc\""));

  auto wrapping = base;
  wrapping["revision"] = 18446744073709551615ULL;
  CHECK_THAT(error_of(as_v1(wrapping)), Catch::Contains("\"revision\" must be an integer"));

  auto too_new = base;
  too_new["objects"][web]["object"]["metadata"]["resourceVersion"] = std::to_string(store.revision() + 1);
  CHECK_THAT(error_of(as_v1(too_new)), Catch::Contains("newer than the revision"));

  auto no_default = base;
  for (std::size_t i = 0; i < no_default["objects"].size(); ++i)
    if (no_default["objects"][i]["object"]["metadata"]["name"] == "default") no_default["objects"].erase(i--);
  CHECK_THAT(error_of(as_v1(no_default)), Catch::Contains("\"default\""));

  auto replaced = base;
  replaced["objects"][web] = 1;
  CHECK_THAT(error_of(as_v1(replaced)),
             Catch::Contains("objects[" + std::to_string(web) + "] must be an object"));

  auto numeric_resource = base;
  numeric_resource["objects"][web]["resource"] = 5;
  CHECK_THAT(error_of(as_v1(numeric_resource)), Catch::Contains("\"resource\" must be a string"));

  auto bad_labels = base;
  bad_labels["objects"][web]["object"]["metadata"]["labels"] = {{"app", 7}};
  CHECK_THAT(error_of(as_v1(bad_labels)), Catch::Contains("metadata.labels.app"));

  auto twice = base;
  twice["objects"].push_back(twice["objects"][web]);
  CHECK_THAT(error_of(as_v1(twice)), Catch::Contains("appears twice"));

  auto objects_not_array = base;
  objects_not_array["objects"] = "none";
  CHECK_THAT(error_of(as_v1(objects_not_array)), Catch::Contains("\"objects\" must be an array"));

  CHECK_THAT(error_of("{not json"), Catch::Contains("not a JSON object"));
  CHECK_THAT(error_of("[1,2]"), Catch::Contains("not a JSON object"));
  CHECK_THAT(error_of(R"({"kind":"KinformerApiserverSnapshot","version":2,"revision":3,"objects":[]})"),
             Catch::Contains("checksum at the end of the file is missing"));
}

TEST_CASE("recovery replays the log a crash left, rebuilds the watch history and continues the revisions",
          "[apiserver][storage][item-10][integration]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& cms = *registry.find("", "v1", "configmaps");
  TempDir live, crashed;
  std::uint64_t snapshot_revision = 0, last = 0;
  {
    Store store(registry);
    auto p = Persistence::open(store, registry, {live.path + "/state.json"});
    REQUIRE(p);
    snapshot_revision = store.revision();
    for (int i = 0; i < 20; ++i)
      REQUIRE(store.create(cms, "default", bare_configmap("cm-" + std::to_string(i)), false));
    REQUIRE(store.remove(cms, "default", "cm-3", {}, false));
    REQUIRE((*p)->wait_durable((*p)->sync_point()));
    last = store.revision();
    copy_files(live.path, crashed.path);
  }
  Store recovered(registry);
  auto p = Persistence::open(recovered, registry, {crashed.path + "/state.json"});
  REQUIRE(p);
  CHECK(recovered.revision() == last);
  CHECK(recovered.get(cms, "default", "cm-19"));
  CHECK_FALSE(recovered.get(cms, "default", "cm-3"));
  std::vector<EventPtr> history;
  REQUIRE(
      recovered.events_after(cms, snapshot_revision, 100, history));  // a watcher from before the crash resumes
  CHECK(history.size() == 21);
  CHECK_FALSE(recovered.events_after(cms, snapshot_revision - 1, 100, history));  // older: 410
  auto next = recovered.create(cms, "default", bare_configmap("after"), false);
  REQUIRE(next);
  CHECK(next->object->resource_version == last + 1);
  REQUIRE((*p)->wait_durable((*p)->sync_point()));
  CHECK(only_segment(crashed.path) != "");  // the old segments were compacted into the snapshot
  CHECK(only_segment(crashed.path).find("wal-0000000002") != std::string::npos);
}

TEST_CASE("a new log segment is zeros written ahead of the records and recovery stops at them",
          "[apiserver][storage][item-10][integration]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& cms = *registry.find("", "v1", "configmaps");
  TempDir live, crashed;
  {
    Store store(registry);
    auto p = Persistence::open(store, registry, {live.path + "/state.json"});
    REQUIRE(p);
    REQUIRE(store.create(cms, "default", bare_configmap("one"), false));
    REQUIRE((*p)->wait_durable((*p)->sync_point()));
    auto bytes = slurp(only_segment(live.path));
    // Written zeros, not a hole: the record's fdatasync then changes no size and no extent.
    CHECK(bytes.size() >= (1u << 20));
    auto scan = storage::scan_segment(bytes);
    CHECK(scan.tail == ScanResult::Tail::clean);
    CHECK(scan.records.size() == 1);
    CHECK(std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(scan.bad_offset), bytes.end(),
                      [](char c) { return c == '\0'; }));
    copy_files(live.path, crashed.path);
  }
  Store recovered(registry);
  REQUIRE(Persistence::open(recovered, registry, {crashed.path + "/state.json"}));
  CHECK(recovered.get(cms, "default", "one"));
}

TEST_CASE("writes from many threads are durable in revision order with several syncs in flight",
          "[apiserver][storage][item-10][integration]") {
  std::uint64_t last = 0;
  std::atomic<int> lost{0};
  auto registry = ResourceRegistry::with_builtins();
  const auto& cms = *registry.find("", "v1", "configmaps");
  TempDir live, crashed;
  {
    Store store(registry);
    auto p = Persistence::open(store, registry, {live.path + "/state.json", 64 << 10});  // compacts often
    REQUIRE(p);
    std::vector<std::thread> writers;
    for (int t = 0; t < 8; ++t)
      writers.emplace_back([&, t] {
        for (int i = 0; i < 60; ++i) {
          auto name = "cm-" + std::to_string(t) + "-" + std::to_string(i);
          if (!store.create(cms, "default", bare_configmap(name, std::string(300, 'x')), false) ||
              !(*p)->wait_durable((*p)->sync_point()))
            ++lost;
        }
      });
    for (auto& w : writers) w.join();
    CHECK(lost == 0);
    auto stats = (*p)->log_stats();
    INFO("records " << stats.records << " syncs " << stats.syncs);
    CHECK(stats.records == 480);
    CHECK((*p)->compactions() >= 1);  // rotations ran between concurrent syncs
    settle_compactions(**p);
    last = store.revision();
    copy_files(live.path, crashed.path);
  }
  Store recovered(registry);
  auto opened = Persistence::open(recovered, registry, {crashed.path + "/state.json"});
  INFO((opened ? std::string() : opened.error().message));
  REQUIRE(opened);
  CHECK(recovered.revision() == last);
  CHECK(recovered.list(cms, {})->items.size() == 480);
}

TEST_CASE("cluster-scoped objects with dotted names, such as nodes and CRDs, survive a restart",
          "[apiserver][storage][item-17][integration]") {
  // The data file's loader once applied the label rule to every cluster-scoped kind, so a
  // server holding node "node-1.example.com" refused to start again.
  auto registry = ResourceRegistry::with_builtins();
  const auto& nodes = *registry.find("", "v1", "nodes");
  TempDir dir;
  {
    Store store(registry);
    auto p = Persistence::open(store, registry, {dir.path + "/state.json"});
    REQUIRE(p);
    REQUIRE(store.create(nodes, "", json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-1.example.com"}})"), false));
    REQUIRE((*p)->wait_durable((*p)->sync_point()));
  }
  Store recovered(registry);
  auto p = Persistence::open(recovered, registry, {dir.path + "/state.json"});
  INFO((p ? std::string() : p.error().message));
  REQUIRE(p);
  CHECK(recovered.get(nodes, "", "node-1.example.com"));
}

TEST_CASE(
    "a torn last record is dropped, a corrupt earlier one refuses to start until --repair truncates there",
    "[apiserver][storage][item-10][integration]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& cms = *registry.find("", "v1", "configmaps");
  TempDir live;
  std::uint64_t last = 0;
  {
    Store store(registry);
    auto p = Persistence::open(store, registry, {live.path + "/state.json"});
    REQUIRE(p);
    for (int i = 0; i < 5; ++i) {
      REQUIRE(store.create(cms, "default", bare_configmap("cm-" + std::to_string(i)), false));
      REQUIRE((*p)->wait_durable((*p)->sync_point()));  // one record per write
    }
    last = store.revision();
    TempDir corrupt;
    copy_files(live.path, corrupt.path);
    auto segment = only_segment(corrupt.path);
    REQUIRE(segment != "");
    auto bytes = slurp(segment);
    auto records = storage::scan_segment(bytes).records;
    REQUIRE(records.size() == 5);

    // The segment is preallocated: a write cut short leaves zeros where its end would be.
    CHECK(bytes.size() > records[4].offset + storage::record_header_bytes + records[4].payload.size());
    auto records_end = records[4].offset + storage::record_header_bytes + records[4].payload.size();
    auto cut_before_zeros = bytes;
    std::fill(cut_before_zeros.begin() + static_cast<std::ptrdiff_t>(records_end - 10), cut_before_zeros.end(),
              '\0');
    {
      TempDir torn;
      copy_files(live.path, torn.path);
      spit(only_segment(torn.path), cut_before_zeros);
      Store recovered(registry);
      auto opened = Persistence::open(recovered, registry, {torn.path + "/state.json"});
      INFO((opened ? std::string() : opened.error().message));
      REQUIRE(opened);
      CHECK(recovered.revision() == last - 1);  // the torn, never acknowledged write is gone
      CHECK_FALSE(recovered.get(cms, "default", "cm-4"));
    }
    // A file ending inside a record is shorter than the segment was created: it was cut
    // (issue 33), not torn by a crash, and refused like a corrupt record.
    {
      TempDir cut;
      copy_files(live.path, cut.path);
      spit(only_segment(cut.path), bytes.substr(0, records_end - 10));
      Store refused(registry);
      auto opened = Persistence::open(refused, registry, {cut.path + "/state.json"});
      REQUIRE_FALSE(opened);
      CHECK_THAT(opened.error().message, Catch::Contains("byte offset " + std::to_string(records[4].offset)) &&
                                             Catch::Contains("it was cut") && Catch::Contains("--repair"));
    }

    auto corrupt_segment = only_segment(corrupt.path);
    auto damaged = bytes;
    damaged[records[2].offset + storage::record_header_bytes + 5] ^= 0x04;
    spit(corrupt_segment, damaged);
    {
      Store refused(registry);
      auto opened = Persistence::open(refused, registry, {corrupt.path + "/state.json"});
      REQUIRE_FALSE(opened);
      CHECK_THAT(
          opened.error().message,
          Catch::Contains("byte offset " + std::to_string(records[2].offset)) && Catch::Contains("--repair"));
      CHECK(slurp(corrupt_segment) == damaged);  // refusing changes nothing
    }
    Store repaired(registry);
    auto opened = Persistence::open(repaired, registry, {corrupt.path + "/state.json", 64ull << 20, true});
    REQUIRE(opened);
    CHECK(repaired.revision() == last - 3);
    CHECK(repaired.get(cms, "default", "cm-1"));
    CHECK_FALSE(repaired.get(cms, "default", "cm-2"));
  }
}

TEST_CASE("a missing directory, a second server on the same file and a damaged snapshot fail at start",
          "[apiserver][storage][item-10][integration]") {
  auto registry = ResourceRegistry::with_builtins();
  TempDir dir;
  Store store(registry);
  auto missing = Persistence::open(store, registry, {dir.path + "/nope/state.json"});
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message, Catch::Contains(dir.path + "/nope"));

  auto first = Persistence::open(store, registry, {dir.path + "/state.json"});
  REQUIRE(first);
  Store other(registry);
  auto second = Persistence::open(other, registry, {dir.path + "/state.json"});
  REQUIRE_FALSE(second);
  CHECK_THAT(second.error().message, Catch::Contains("another process"));
  REQUIRE((*first)->close());

  spit(dir.path + "/state.json",
       "{\"kind\":\"KinformerApiserverSnapshot\",\"version\":1,\"revision\":3,\"objects\":[1]}");
  Store damaged(registry);
  auto opened = Persistence::open(damaged, registry, {dir.path + "/state.json"});
  REQUIRE_FALSE(opened);
  CHECK_THAT(opened.error().message, Catch::Contains("objects[0] must be an object"));
}

TEST_CASE("a log that passes its size limit is compacted into the snapshot while writes go on",
          "[apiserver][storage][item-10][integration]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& cms = *registry.find("", "v1", "configmaps");
  TempDir live, crashed;
  std::uint64_t last = 0;
  {
    Store store(registry);
    auto p = Persistence::open(store, registry, {live.path + "/state.json", 8192});
    REQUIRE(p);
    for (int i = 0; i < 300; ++i) {
      REQUIRE(
          store.create(cms, "default", bare_configmap("cm-" + std::to_string(i), std::string(100, 'x')), false));
      if (i % 10 == 0) REQUIRE((*p)->wait_durable((*p)->sync_point()));
    }
    REQUIRE((*p)->wait_durable((*p)->sync_point()));
    for (int waited = 0; (*p)->compactions() == 0 && waited < 500; ++waited) ::usleep(10000);
    INFO("waited 5 s for a compaction of a log 4 times over its limit");
    REQUIRE((*p)->compactions() >= 1);
    settle_compactions(**p);
    last = store.revision();
    copy_files(live.path, crashed.path);
  }
  Store recovered(registry);
  REQUIRE(Persistence::open(recovered, registry, {crashed.path + "/state.json"}));
  CHECK(recovered.revision() == last);
  CHECK(recovered.list(cms, {})->items.size() == 300);
}

TEST_CASE("a log that cannot write fails for good and tells no waiter its write is durable",
          "[apiserver][storage][item-10][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& cms = *registry.find("", "v1", "configmaps");
  TempDir dir;
  Store store(registry);
  auto p = Persistence::open(store, registry, {dir.path + "/state.json"});
  REQUIRE(p);
  REQUIRE(store.create(cms, "default", bare_configmap("before"), false));
  REQUIRE((*p)->wait_durable((*p)->sync_point()));
  // A file size limit makes the next append fail with EFBIG (SIGXFSZ ignored meanwhile).
  rlimit saved{};
  ::getrlimit(RLIMIT_FSIZE, &saved);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit tiny = saved;
  tiny.rlim_cur = 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &tiny) == 0);
  REQUIRE(store.create(cms, "default", bare_configmap("lost", std::string(4000, 'x')), false));
  bool durable = (*p)->wait_durable((*p)->sync_point());
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  CHECK_FALSE(durable);
  std::vector<EventPtr> seen;
  REQUIRE(store.events_after(cms, store.revision() - 2, 10, seen));
  CHECK(seen.size() == 1);  // watchers never see the write that is not durable
  REQUIRE(store.create(cms, "default", bare_configmap("after"), false));
  CHECK_FALSE((*p)->wait_durable((*p)->sync_point()));  // failed for good
  CHECK_FALSE((*p)->close());
}

// ---- damaged logs (issue 33) ----

namespace {

// A data directory whose one segment holds `count` acknowledged configmaps, as a
// SIGKILL would leave it.
void crashed_with_configmaps(const std::string& dir, int count) {
  auto registry = ResourceRegistry::with_builtins();
  const auto& cms = *registry.find("", "v1", "configmaps");
  TempDir live;
  Store store(registry);
  auto p = Persistence::open(store, registry, {live.path + "/state.json"});
  REQUIRE(p);
  for (int i = 0; i < count; ++i) REQUIRE(store.create(cms, "default", bare_configmap("cm-" + std::to_string(i)), false));
  REQUIRE((*p)->wait_durable((*p)->sync_point()));
  copy_files(live.path, dir);
}

}  // namespace

TEST_CASE("a log segment cut short is refused at start naming the file and offset, and --repair starts",
          "[apiserver][storage][issue-33][integration]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& cms = *registry.find("", "v1", "configmaps");
  TempDir dir;
  crashed_with_configmaps(dir.path, 100);
  auto segment = only_segment(dir.path);
  REQUIRE(segment != "");
  auto bytes = slurp(segment);
  auto records = storage::scan_segment(bytes).records;
  REQUIRE(records.size() == 100);
  std::string expected_error;
  std::size_t kept = 0;
  SECTION("to 3 bytes, shorter than its header") {
    spit(segment, bytes.substr(0, 3));
    expected_error = "shorter than its 16-byte header";
  }
  SECTION("inside a record in the middle of the segment") {
    spit(segment, bytes.substr(0, records[40].offset + 5));
    expected_error = "byte offset " + std::to_string(records[40].offset);
    kept = 40;
  }
  SECTION("at a record boundary") {
    spit(segment, bytes.substr(0, records[60].offset));
    expected_error = "byte offset " + std::to_string(records[60].offset);
    kept = 60;
  }
  {
    Store refused(registry);
    auto opened = Persistence::open(refused, registry, {dir.path + "/state.json"});
    REQUIRE_FALSE(opened);  // before: it started with the cut taken for a torn tail
    CHECK_THAT(opened.error().message,
               Catch::Contains(segment) && Catch::Contains(expected_error) && Catch::Contains("--repair"));
  }
  for (int start = 0; start < 2; ++start) {  // repaired, then started once more as it is
    Store repaired(registry);
    auto opened = Persistence::open(repaired, registry, {dir.path + "/state.json", 64ull << 20, start == 0});
    INFO((opened ? std::string() : opened.error().message));
    REQUIRE(opened);
    CHECK(repaired.list(cms, {})->items.size() == kept);
  }
}

TEST_CASE("a log record or a snapshot nesting 200000 levels with a valid checksum is refused, not a crash",
          "[apiserver][storage][issue-33][integration]") {
  auto registry = ResourceRegistry::with_builtins();
  // Deep inside an object's data: the recursive walks after parsing overflowed the stack.
  std::string deep_data;
  for (int i = 0; i < 200000; ++i) deep_data += "{\"a\":";
  deep_data += "1" + std::string(200000, '}');
  const std::string deep_object =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","namespace":"default","uid":"u",)"
      R"("resourceVersion":"999"},"data":)" + deep_data + "}";
  TempDir dir;
  SECTION("a log record") {
    crashed_with_configmaps(dir.path, 3);
    auto segment = only_segment(dir.path);
    auto bytes = slurp(segment);
    auto end = storage::scan_segment(bytes).bad_offset;
    std::string record;
    storage::append_record(record, R"({"events":[{"type":"ADDED","resource":"configmaps./v1","object":)" +
                                       deep_object + "}]}");
    spit(segment, bytes.replace(end, record.size(), record));  // into the preallocated zeros
    Store store(registry);
    auto opened = Persistence::open(store, registry, {dir.path + "/state.json"});
    REQUIRE_FALSE(opened);  // before: SIGSEGV in the recursive parser
    CHECK_THAT(opened.error().message, Catch::Contains("byte offset " + std::to_string(end)) &&
                                           Catch::Contains("nests deeper than 1100 levels"));
  }
  SECTION("a snapshot") {
    std::string text = R"({"kind":"KinformerApiserverSnapshot","version":2,"revision":1000,"objects":[)"
                       R"({"resource":"configmaps./v1","object":)" + deep_object + "}]";
    char crc[9];
    std::snprintf(crc, sizeof crc, "%08x", storage::crc32c(text));
    spit(dir.path + "/state.json", text + ",\"checksum\":\"crc32c:" + crc + "\"}\n");
    Store store(registry);
    auto opened = Persistence::open(store, registry, {dir.path + "/state.json"});
    REQUIRE_FALSE(opened);
    CHECK_THAT(opened.error().message, Catch::Contains("nests deeper than 1100 levels"));
  }
}
