#include "runtime/indexer.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/sanitizers.hpp"
#include "tests/support/objects.hpp"

using kinformer::Errc;
using kinformer::Indexer;
using kinformer::Indexers;
using kinformer::Object;
using kinformer::ObjectPtr;
using kinformer::testing::pod;

namespace {

// The value of label `name`, as a one-value index function (client-go's testStoreIndexFunc).
kinformer::IndexFunc label_value(std::string name) {
  return [name](const Object& o) {
    auto v = o.label(name);
    return v ? std::vector<std::string>{std::string(*v)} : std::vector<std::string>{};
  };
}

// Every label value: a multi-valued index (client-go's "foo,bar" style functions).
std::vector<std::string> all_label_values(const Object& o) {
  std::vector<std::string> out;
  for (const Object::Entry& e : o.labels()) out.emplace_back(e.value);
  return out;
}

std::set<std::string> names(const std::vector<ObjectPtr>& objects) {
  std::set<std::string> out;
  for (const ObjectPtr& o : objects) out.emplace(o->name());
  return out;
}

std::vector<std::string> keys(const Indexer& indexer, std::string_view index, std::string_view value) {
  auto r = indexer.index_keys(index, value);
  REQUIRE(r);
  return *r;
}

std::set<std::string> by_index_names(const Indexer& indexer, std::string_view index, std::string_view value) {
  auto r = indexer.by_index(index, value);
  REQUIRE(r);
  return names(*r);
}

using Keys = std::vector<std::string>;
using Names = std::set<std::string>;

}  // namespace

// upstream: store_test.go TestIndex; namespace part derived from MetaNamespaceIndexFunc
TEST_CASE("index returns the objects sharing the probe value, and the namespace index is built in",
          "[indexer][item-22][unit]") {
  SECTION("a custom by_val index") {
    Indexer indexer({{"by_val", label_value("val")}});
    indexer.add(pod("a", "1", {{"val", "b"}}));
    indexer.add(pod("c", "1", {{"val", "b"}}));
    indexer.add(pod("e", "1", {{"val", "f"}}));
    indexer.add(pod("g", "1", {{"val", "h"}}));
    auto found = indexer.index("by_val", *pod("probe", "1", {{"val", "b"}}));
    REQUIRE(found);
    CHECK(names(*found) == Names{"a", "c"});
  }
  SECTION("the built-in namespace index") {
    Indexer indexer;
    indexer.add(pod("p1", "1", {}, "a"));
    indexer.add(pod("p2", "1", {}, "a"));
    indexer.add(pod("p3", "1", {}, "b"));
    indexer.add(pod("node", "1", {}, ""));  // cluster-scoped: value ""
    CHECK(by_index_names(indexer, "namespace", "a") == Names{"p1", "p2"});
    CHECK(by_index_names(indexer, "namespace", "b") == Names{"p3"});
    CHECK(keys(indexer, "namespace", "") == Keys{"node"});
  }
}

// upstream: thread_safe_store_test.go TestThreadSafeStoreIndexingFunctionsWithMultipleValues
TEST_CASE("a multi-valued index moves keys between value sets on every update and delete",
          "[indexer][item-23][unit]") {
  Indexer indexer({{"vals", all_label_values}});
  indexer.add(pod("one", "1", {{"x", "foo"}}));
  indexer.add(pod("two", "1", {{"x", "bar"}}));
  CHECK(keys(indexer, "vals", "foo") == Keys{"default/one"});
  CHECK(keys(indexer, "vals", "bar") == Keys{"default/two"});

  indexer.update(pod("one", "2", {{"x", "foo"}, {"y", "bar"}}));
  CHECK(keys(indexer, "vals", "foo") == Keys{"default/one"});
  CHECK(keys(indexer, "vals", "bar") == Keys{"default/one", "default/two"});

  indexer.update(pod("one", "3", {{"x", "bar"}, {"y", "baz"}}));
  CHECK(keys(indexer, "vals", "foo").empty());
  CHECK(keys(indexer, "vals", "bar") == Keys{"default/one", "default/two"});
  CHECK(keys(indexer, "vals", "baz") == Keys{"default/one"});

  // Unchanged values: the set keeps the key and now serves the newer object.
  indexer.update(pod("one", "4", {{"x", "bar"}, {"y", "baz"}}));
  auto bar = indexer.by_index("vals", "bar");
  REQUIRE(bar);
  for (const ObjectPtr& o : *bar)
    if (o->name() == "one") CHECK(o->resource_version() == "4");

  indexer.delete_object(*pod("one", "5"));
  CHECK(keys(indexer, "vals", "bar") == Keys{"default/two"});
  CHECK(keys(indexer, "vals", "baz").empty());
  CHECK(indexer.list_index_func_values("vals") == Keys{"bar"});
}

// upstream: TestThreadSafeStoreDeleteRemovesEmptySetsFromIndex,
// TestThreadSafeStoreAddKeepsNonEmptySetPostDeleteFromIndex
TEST_CASE("an index value disappears with its last key and stays while keys remain",
          "[indexer][item-24][unit]") {
  Indexer indexer({{"mode", label_value("mode")}});
  indexer.add(pod("a", "1", {{"mode", "x"}}));
  indexer.add(pod("b", "1", {{"mode", "x"}}));
  indexer.delete_key("default/a");
  CHECK(indexer.list_index_func_values("mode") == Keys{"x"});
  CHECK(keys(indexer, "mode", "x") == Keys{"default/b"});
  indexer.delete_key("default/b");
  CHECK(indexer.list_index_func_values("mode").empty());
  CHECK(keys(indexer, "mode", "x").empty());
  // moving away by update empties the value too
  indexer.add(pod("c", "1", {{"mode", "y"}}));
  indexer.update(pod("c", "2", {{"mode", "z"}}));
  CHECK(indexer.list_index_func_values("mode") == Keys{"z"});
}

// upstream: index_test.go TestGetIndexFuncValues
TEST_CASE("list_index_func_values returns each present value once", "[indexer][item-25][unit]") {
  Indexer indexer({{"testmodes", label_value("testmodes")}});
  indexer.add(pod("one", "1", {{"testmodes", "bar"}}));
  indexer.add(pod("two", "1", {{"testmodes", "bar"}}));
  indexer.add(pod("tre", "1", {{"testmodes", "biz"}}));
  CHECK(indexer.list_index_func_values("testmodes") == Keys{"bar", "biz"});
}

// upstream: index_test.go TestMultiIndexKeys
TEST_CASE("index_keys and by_index answer per value of a multi-valued index, and deletes remove keys",
          "[indexer][item-26][unit]") {
  Indexer indexer({{"by_user", all_label_values}});
  indexer.add(pod("one", "1", {{"u1", "ernie"}, {"u2", "bert"}}));
  indexer.add(pod("two", "1", {{"u1", "bert"}, {"u2", "oscar"}}));
  indexer.add(pod("tre", "1", {{"u1", "ernie"}, {"u2", "elmo"}}));

  CHECK(keys(indexer, "by_user", "ernie") == Keys{"default/one", "default/tre"});
  CHECK(keys(indexer, "by_user", "bert") == Keys{"default/one", "default/two"});
  CHECK(keys(indexer, "by_user", "elmo") == Keys{"default/tre"});
  CHECK(by_index_names(indexer, "by_user", "oscar") == Names{"two"});
  CHECK(keys(indexer, "by_user", "nobody").empty());

  auto probe = indexer.index("by_user", *pod("probe", "1", {{"a", "ernie"}, {"b", "bert"}}));
  REQUIRE(probe);
  CHECK(probe->size() == 3);  // one is under both values: reported once
  CHECK(names(*probe) == Names{"one", "two", "tre"});

  indexer.delete_key("default/two");
  CHECK(keys(indexer, "by_user", "bert") == Keys{"default/one"});
  CHECK(keys(indexer, "by_user", "oscar").empty());
  indexer.update(pod("tre", "2", {{"u2", "elmo"}}));
  CHECK(keys(indexer, "by_user", "ernie") == Keys{"default/one"});
  CHECK(keys(indexer, "by_user", "elmo") == Keys{"default/tre"});
}

// upstream: shared_informer_test.go TestIndexer; derived: storeIndex.addIndexers
TEST_CASE("add_indexers indexes existing objects at once and refuses a name clash",
          "[indexer][item-27][unit]") {
  Indexer indexer;
  indexer.add(pod("a", "1", {{"app", "web"}}));
  indexer.add(pod("b", "1", {{"app", "db"}}));
  REQUIRE(indexer.add_indexers({{"app", label_value("app")}}));
  CHECK(keys(indexer, "app", "web") == Keys{"default/a"});
  indexer.add(pod("c", "1", {{"app", "web"}}));
  CHECK(keys(indexer, "app", "web") == Keys{"default/a", "default/c"});

  auto clash = indexer.add_indexers({{"labels", kinformer::labels_index_func}, {"app", label_value("x")}});
  REQUIRE_FALSE(clash);
  CHECK(clash.error().code == Errc::index_exists);
  CHECK_FALSE(indexer.index_keys("labels", "app=web"));  // nothing of the failed call was added
  auto builtin = indexer.add_indexers({{"namespace", label_value("x")}});
  REQUIRE_FALSE(builtin);
  CHECK(builtin.error().code == Errc::index_exists);

  REQUIRE(indexer.add_indexers({{"labels", kinformer::labels_index_func}}));
  CHECK(keys(indexer, "labels", "app=web") == Keys{"default/a", "default/c"});
}

// derived: storeIndex.getKeysByIndex, getIndexValues
TEST_CASE("an unknown index name is an error for queries and an empty list of values",
          "[indexer][item-28][unit]") {
  Indexer indexer;
  indexer.add(pod("a", "1"));
  auto index = indexer.index("nope", *pod("a", "1"));
  REQUIRE_FALSE(index);
  CHECK(index.error().code == Errc::unknown_index);
  CHECK(index.error().message.find("nope") != std::string::npos);
  auto index_keys = indexer.index_keys("nope", "x");
  REQUIRE_FALSE(index_keys);
  CHECK(index_keys.error().code == Errc::unknown_index);
  auto by_index = indexer.by_index("nope", "x");
  REQUIRE_FALSE(by_index);
  CHECK(by_index.error().code == Errc::unknown_index);
  CHECK(indexer.list_index_func_values("nope").empty());
}

// upstream: store_test.go TestCache (replace part); derived: threadSafeMap.Replace
TEST_CASE("replace leaves exactly the list and rebuilds every index from it", "[indexer][item-29][unit]") {
  Indexer indexer({{"app", label_value("app")}});
  indexer.add(pod("old", "1", {{"app", "web"}}, "ns1"));
  indexer.add(pod("kept", "1", {{"app", "web"}}, "ns1"));
  indexer.replace({pod("kept", "2", {{"app", "db"}}, "ns1"), pod("new", "1", {{"app", "db"}}, "ns2"),
                   pod("new", "3", {{"app", "db"}}, "ns2")});
  CHECK(indexer.size() == 2);
  std::vector<std::string> listed = indexer.list_keys();
  std::sort(listed.begin(), listed.end());
  CHECK(listed == Keys{"ns1/kept", "ns2/new"});
  CHECK(indexer.get_by_key("ns1/old") == nullptr);
  CHECK(indexer.get_by_key("ns1/kept")->resource_version() == "2");
  CHECK(indexer.get_by_key("ns2/new")->resource_version() == "3");  // a later duplicate wins
  CHECK(indexer.list_index_func_values("app") == Keys{"db"});
  CHECK(keys(indexer, "app", "db") == Keys{"ns1/kept", "ns2/new"});
  CHECK(indexer.list_index_func_values("namespace") == Keys{"ns1", "ns2"});
  indexer.replace({});
  CHECK(indexer.size() == 0);
  CHECK(indexer.list_index_func_values("app").empty());
  CHECK(indexer.list_index_func_values("namespace").empty());
}

TEST_CASE("the store upserts, and deleting a missing key is a no-op", "[indexer][unit]") {
  Indexer indexer;
  indexer.add(pod("a", "1"));
  indexer.add(pod("a", "2"));  // add of a present key updates it
  CHECK(indexer.size() == 1);
  CHECK(indexer.get_by_key("default/a")->resource_version() == "2");
  indexer.delete_key("default/missing");
  indexer.delete_object(*pod("missing", "1"));
  CHECK(indexer.size() == 1);
  CHECK(indexer.list().size() == 1);
}

// Readers on other threads while one writer flips every object between two index
// values and periodically replaces the whole store. One index() call with a probe
// under both values covers every object: a query seeing half an update would count
// an object twice (old and new versions) or not at all.
TEST_CASE("concurrent readers always see one consistent state while one writer updates",
          "[indexer][concurrency][unit]") {
  constexpr int objects = 200;
  constexpr int min_writes = 100000;
  constexpr long min_queries = 2000;
  auto color = [](const Object& o) -> std::vector<std::string> {
    if (o.label("probe")) return {"red", "blue"};
    auto c = o.label("color");
    return c ? std::vector<std::string>{std::string(*c)} : std::vector<std::string>{};
  };
  Indexer indexer({{"color", color}});
  std::vector<ObjectPtr> red, blue;
  for (int i = 0; i < objects; ++i) {
    const std::string name = "p" + std::to_string(i);
    red.push_back(pod(name, "1", {{"color", "red"}}, "ns" + std::to_string(i % 7)));
    blue.push_back(pod(name, "2", {{"color", "blue"}}, "ns" + std::to_string(i % 7)));
  }
  indexer.replace(red);
  const ObjectPtr probe = pod("probe", "1", {{"probe", "yes"}});

  std::atomic<bool> done{false};
  std::atomic<long> queries{0};
  std::atomic<long> bad{0};
  auto reader = [&] {
    while (!done.load(std::memory_order_relaxed)) {
      auto all = indexer.index("color", *probe);
      if (!all || all->size() != objects) ++bad;
      auto reds = indexer.by_index("color", "red");
      if (!reds) ++bad;
      else
        for (const ObjectPtr& o : *reds)
          if (!o || o->label("color") != std::string_view("red")) ++bad;
      auto listed = indexer.list();
      if (listed.size() != objects) ++bad;
      auto ns = indexer.index_keys("namespace", "ns3");
      if (!ns || !std::is_sorted(ns->begin(), ns->end())) ++bad;
      ++queries;
    }
  };
  std::thread r1(reader), r2(reader);
  std::mt19937 rng(7);
  // Enough overlap to catch a missing lock nearly every run, bounded in time. ASan makes
  // every access several times slower: the readers get longer to reach min_queries there.
#if KINFORMER_UNDER_ASAN
  const auto budget = std::chrono::seconds(60);
#else
  const auto budget = std::chrono::seconds(5);
#endif
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (int w = 0; w < min_writes || queries.load() < min_queries; ++w) {
    const int i = static_cast<int>(rng() % objects);
    indexer.update(w % 2 ? red[i] : blue[i]);
    if (w % 2000 == 1999) indexer.replace(w % 4000 == 3999 ? red : blue);
    if (std::chrono::steady_clock::now() > deadline) break;
  }
  done = true;
  r1.join();
  r2.join();
  CHECK(bad.load() == 0);
  INFO("reader queries: " << queries.load() << " (too few: readers starved or the machine is overloaded)");
  CHECK(queries.load() >= min_queries);
}

// Readers that overlap keep a reader-preferring lock (glibc's std::shared_mutex)
// held all the time, and the Controller's writes stall for seconds (bench_runtime
// measured ~150 updates/s). A waiting writer must get in.
TEST_CASE("a writer is not starved by readers that keep the store busy", "[indexer][concurrency][unit]") {
  constexpr int objects = 2000;
  constexpr int updates = 300;
  Indexer indexer;
  std::vector<ObjectPtr> v1, v2;
  for (int i = 0; i < objects; ++i) {
    v1.push_back(pod("p" + std::to_string(i), "1"));
    v2.push_back(pod("p" + std::to_string(i), "2"));
  }
  indexer.replace(v1);
  std::atomic<bool> done{false};
  std::atomic<int> started{0};
  auto reader = [&] {
    ++started;
    // index_keys sorts under the lock: most of each reader's time is spent holding it
    while (!done.load(std::memory_order_relaxed)) (void)indexer.index_keys("namespace", "default");
  };
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) readers.emplace_back(reader);
  while (started.load() < 4) std::this_thread::yield();
  // The writer runs on its own thread: a starved update() never returns, so the
  // deadline is kept here, and stopping the readers is what releases the writer.
  std::mutex m;
  std::condition_variable cv;
  int written = 0;
  std::thread writer([&] {
    for (int i = 0; i < updates; ++i) {
      indexer.update(i % 2 ? v1[i] : v2[i]);
      std::lock_guard lock(m);
      ++written;
    }
    cv.notify_all();
  });
  const auto start = std::chrono::steady_clock::now();
  bool in_time = false;
  {
    std::unique_lock lock(m);
    in_time = cv.wait_for(lock, std::chrono::seconds(5), [&] { return written == updates; });
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  done = true;
  for (std::thread& t : readers) t.join();
  writer.join();
  INFO("the writer was still waiting after " << seconds << " s: is the lock reader-preferring?");
  CHECK(in_time);
}
