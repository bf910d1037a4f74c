// Tests for apiserver/store_list_watch.hpp: the in-process ListWatch over the API
// server's Store, with the resourceVersion rules of apiserver/read_rules.hpp
// (kube-api-protocol.md §A4-§A5; informer-semantics.md §5).
#include "apiserver/store_list_watch.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/objects.hpp"
#include "tests/support/watch_recorder.hpp"

namespace kinformer::apiserver {
namespace {

using testing::list_at;
using testing::list_now;
using testing::names;
using testing::watch_at;
using testing::WatchRecorder;
using Labels = testing::Labels;

/// A store without bootstrap namespaces (the n-th write is RV n) and its pods as a ListWatch.
struct StoreFixture {
  explicit StoreFixture(std::size_t history = 1000)
      : store(std::make_shared<Store>(registry, StoreOptions{history, /*bootstrap_namespaces=*/false})),
        pods(*registry.find("", "v1", "pods")),
        source(store, pods) {}

  ObjectPtr add(const std::string& name, Labels labels = {}) {
    auto created =
        store->create(pods, "default", nlohmann::json::parse(testing::pod_json(name, "", labels)), false);
    REQUIRE(created);
    return created->object->object();
  }
  ObjectPtr modify(const std::string& name, Labels labels) {
    auto body = nlohmann::json::parse(testing::pod_json(name, "", labels));
    auto written = store->write(
        pods, "default", name, [&](const nlohmann::json*) -> ApiResult<nlohmann::json> { return body; },
        false, false);
    REQUIRE(written);
    return written->object->object();
  }
  ObjectPtr remove(const std::string& name) {
    auto removed = store->remove(pods, "default", name, {}, false);
    REQUIRE(removed);
    return removed.value()->object();
  }
  std::string revision() const { return std::to_string(store->revision()); }

  ResourceRegistry registry = ResourceRegistry::with_builtins();
  std::shared_ptr<Store> store;
  const ResourceType& pods;
  StoreListWatch source;
};

TEST_CASE("lists and watches hand out the store's own objects, not copies", "[store_list_watch][unit]") {
  StoreFixture f;
  auto a = f.add("a");
  CHECK(a->resource_version() == "1");
  auto listed = list_now(f.source, list_at(""));
  REQUIRE(listed);
  REQUIRE(listed->items.size() == 1);
  CHECK(listed->items[0] == a);
  CHECK(listed->items[0] == f.store->get(f.pods, "default", "a").value()->object());
  WatchRecorder rec;
  auto w = f.source.watch(watch_at("0"), rec.on_events(), rec.on_closed());
  auto b = f.add("b");
  REQUIRE(rec.events.size() == 2);
  CHECK(rec.events[0].object == a);
  CHECK(rec.events[1].object == b);
}

TEST_CASE("list answers the latest state or the state at an exact resource version",
          "[store_list_watch][item-32][item-33][item-34][unit]") {
  StoreFixture f;
  f.add("a");     // 1
  f.add("b");     // 2
  f.remove("a");  // 3
  f.add("c");     // 4

  SECTION("RV 0 and RV \"\" give the latest state at the newest RV") {
    for (const char* rv : {"0", ""}) {
      auto list = list_now(f.source, list_at(rv));
      REQUIRE(list);
      CHECK(names(*list) == std::vector<std::string>{"b", "c"});
      CHECK(list->resource_version == "4");
    }
  }
  SECTION("an RV without a limit means not older than: the latest state") {
    auto list = list_now(f.source, list_at("2"));
    REQUIRE(list);
    CHECK(list->resource_version == "4");
  }
  SECTION("an RV with a limit on the first page is exact, unless the match says NotOlderThan") {
    auto list = list_now(f.source, list_at("2", 10));
    REQUIRE(list);
    CHECK(names(*list) == std::vector<std::string>{"a", "b"});
    CHECK(list->resource_version == "2");
    auto options = list_at("2", 10);
    options.resource_version_match = "NotOlderThan";
    auto latest = list_now(f.source, options);
    REQUIRE(latest);
    CHECK(latest->resource_version == "4");
  }
  SECTION("match Exact reads the state at that RV without a limit too") {
    auto options = list_at("1");
    options.resource_version_match = "Exact";
    auto list = list_now(f.source, options);
    REQUIRE(list);
    CHECK(names(*list) == std::vector<std::string>{"a"});
  }
  SECTION("an RV ahead of the store is too large") {
    auto list = list_now(f.source, list_at("9"));
    REQUIRE_FALSE(list);
    CHECK(list.error().code == Errc::too_large_rv);
  }
  SECTION("an exact RV older than the history is gone") {
    f.store->compact();
    auto list = list_now(f.source, list_at("2", 10));
    REQUIRE_FALSE(list);
    CHECK(list.error().code == Errc::gone);
  }
  SECTION("options a server refuses are a server error with its message") {
    auto options = list_at("0");
    options.resource_version_match = "Exact";
    auto list = list_now(f.source, options);
    REQUIRE_FALSE(list);
    CHECK(list.error().code == Errc::server_error);
    CHECK(list.error().message.find("forbidden for resourceVersion \"0\"") != std::string::npos);
  }
}

TEST_CASE("pages come from the first page's snapshot until the store compacts it",
          "[store_list_watch][item-35][item-36][unit]") {
  StoreFixture f;
  for (const char* n : {"a", "b", "c", "d", "e"}) f.add(n);
  auto first = list_now(f.source, list_at("0", 2));
  REQUIRE(first);
  CHECK(names(*first) == std::vector<std::string>{"a", "b"});
  REQUIRE_FALSE(first->continue_token.empty());
  f.remove("c");
  f.add("bb");

  ListOptions next;
  next.limit = 2;
  next.continue_token = first->continue_token;
  auto second = list_now(f.source, next);
  REQUIRE(second);
  CHECK(names(*second) == std::vector<std::string>{"c", "d"});  // the old snapshot
  CHECK(second->resource_version == first->resource_version);

  SECTION("the last page has no continue token") {
    next.continue_token = second->continue_token;
    auto third = list_now(f.source, next);
    REQUIRE(third);
    CHECK(names(*third) == std::vector<std::string>{"e"});
    CHECK(third->continue_token.empty());
  }
  SECTION("a continue token whose snapshot was compacted is 410 Expired") {
    f.store->compact();
    next.continue_token = second->continue_token;
    auto third = list_now(f.source, next);
    REQUIRE_FALSE(third);
    CHECK(third.error().code == Errc::gone);
  }
  SECTION("a resource version together with continue is rejected") {
    next.resource_version = "5";
    auto bad = list_now(f.source, next);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == Errc::server_error);
  }
}

TEST_CASE("a watch replays the changes after its resource version, then follows live ones",
          "[store_list_watch][item-31][unit]") {
  StoreFixture f;
  f.add("a");                   // 1
  f.add("b");                   // 2
  f.modify("a", {{"v", "2"}});  // 3
  WatchRecorder rec;
  auto w = f.source.watch(watch_at("1"), rec.on_events(), rec.on_closed());
  CHECK(rec.rvs() == std::vector<std::string>{"2", "3"});
  f.remove("b");  // 4
  REQUIRE(rec.events.size() == 3);
  CHECK(rec.events[2].type == WatchEventType::deleted);
  CHECK(rec.events[2].object->name() == "b");
  CHECK(rec.events[2].resource_version == "4");

  SECTION("after stop nothing more arrives, and no close") {
    w->stop();
    f.add("c");
    CHECK(rec.events.size() == 3);
    CHECK(rec.closes.empty());
  }
  SECTION("RV 0 starts with ADDED for every object in one batch") {
    f.add("c");
    WatchRecorder fresh;
    auto w0 = f.source.watch(watch_at("0"), fresh.on_events(), fresh.on_closed());
    CHECK(fresh.summary() == std::vector<std::string>{"ADDED a", "ADDED c"});
    CHECK(fresh.batches == 1);
  }
  SECTION("a watch ahead of the store waits for that revision, as the server does") {
    WatchRecorder ahead;
    auto w5 = f.source.watch(watch_at("5"), ahead.on_events(), ahead.on_closed());
    f.add("c");  // 5
    CHECK(ahead.events.empty());
    f.add("d");  // 6
    CHECK(ahead.rvs() == std::vector<std::string>{"6"});
    CHECK(ahead.closes.empty());
  }
}

TEST_CASE("a watch ahead of the store closes with too large resource version after 3 s unless it comes",
          "[store_list_watch][item-8][unit]") {
  StoreFixture f;
  f.add("a");  // 1
  std::mutex mu;
  std::condition_variable changed;
  std::vector<Result<void>> closes;  // guarded by mu
  std::vector<std::string> seen;     // guarded by mu
  auto record = [&](std::vector<WatchEvent> batch) {
    std::lock_guard lock(mu);
    for (const auto& e : batch) seen.push_back(e.resource_version);
  };
  auto closed = [&](Result<void> r) {
    std::lock_guard lock(mu);
    closes.push_back(std::move(r));
    changed.notify_all();
  };
  const auto start = std::chrono::steady_clock::now();
  auto never = f.source.watch(watch_at("5"), record, closed);
  auto reached = f.source.watch(watch_at("2"), record, closed);
  f.add("b");  // 2: the second watch's revision exists now
  f.add("c");  // 3
  std::unique_lock lock(mu);
  INFO("no close 10 s after the watch at a future RV began: the wait did not end?");
  REQUIRE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return !closes.empty(); }));
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(2900));
  REQUIRE(closes.size() == 1);
  REQUIRE_FALSE(closes[0].has_value());
  CHECK(closes[0].error().code == Errc::too_large_rv);
  CHECK(seen == std::vector<std::string>{"3"});  // only the watch at 2 saw anything
  // the watch whose revision came stays open past its 3 s check
  changed.wait_for(lock, std::chrono::milliseconds(300));
  CHECK(closes.size() == 1);
}

TEST_CASE("a watch from before the history, or one that falls behind it, closes with 410",
          "[store_list_watch][item-33][unit]") {
  StoreFixture f(/*history=*/2);
  for (const char* n : {"a", "b", "c"}) f.add(n);  // RVs 1..3, the history keeps 2..3
  WatchRecorder edge;
  auto w1 = f.source.watch(watch_at("1"), edge.on_events(), edge.on_closed());
  CHECK(edge.closes.empty());
  CHECK(edge.rvs() == std::vector<std::string>{"2", "3"});
  WatchRecorder too_old;
  auto w0 = f.source.watch(watch_at("0"), too_old.on_events(), too_old.on_closed());  // "0": the full state
  CHECK(too_old.closes.empty());

  f.store->compact();
  WatchRecorder after;
  auto w2 = f.source.watch(watch_at("2"), after.on_events(), after.on_closed());
  REQUIRE(after.closes.size() == 1);
  REQUIRE_FALSE(after.closes[0]);
  CHECK(after.closes[0].error().code == Errc::gone);
  WatchRecorder current;
  auto w3 = f.source.watch(watch_at("3"), current.on_events(), current.on_closed());
  CHECK(current.closes.empty());

  SECTION("a paused watch that the history passes by gets 410 on resume") {
    current.events.clear();
    w3->pause();
    for (const char* n : {"d", "e", "f"}) f.add(n);  // the history keeps only 5..6 now
    CHECK(current.events.empty());
    w3->resume();
    CHECK(current.events.empty());
    REQUIRE(current.closes.size() == 1);
    REQUIRE_FALSE(current.closes[0]);
    CHECK(current.closes[0].error().code == Errc::gone);
  }
}

TEST_CASE("a paused watch keeps its place and delivers what came meanwhile, in order, on resume",
          "[store_list_watch][unit]") {
  StoreFixture f;
  WatchRecorder rec;
  auto w = f.source.watch(watch_at("0"), rec.on_events(), rec.on_closed());
  w->pause();
  f.add("a");
  f.add("b");
  CHECK(rec.events.empty());
  w->resume();
  CHECK(rec.rvs() == std::vector<std::string>{"1", "2"});
  f.add("c");
  CHECK(rec.rvs() == std::vector<std::string>{"1", "2", "3"});
}

TEST_CASE("a watch-list sends the latest state, then the initial-events-end bookmark, then changes",
          "[store_list_watch][item-46][unit]") {
  StoreFixture f;
  f.add("a");
  f.add("b");
  auto options = watch_at("");
  options.send_initial_events = true;
  options.resource_version_match = "NotOlderThan";
  WatchRecorder rec;
  auto w = f.source.watch(options, rec.on_events(), rec.on_closed());
  CHECK(rec.batches == 2);  // the state, then the bookmark on its own
  f.add("c");
  REQUIRE(rec.events.size() == 4);
  CHECK(rec.summary() == std::vector<std::string>{"ADDED a", "ADDED b", "BOOKMARK", "ADDED c"});
  CHECK(rec.events[2].initial_events_end);
  CHECK(rec.events[2].resource_version == "2");
  CHECK(rec.events[3].resource_version == "3");

  SECTION("without the match it is refused as the server refuses it") {
    WatchRecorder bad;
    options.resource_version_match.clear();
    auto w2 = f.source.watch(options, bad.on_events(), bad.on_closed());
    REQUIRE(bad.closes.size() == 1);
    REQUIRE_FALSE(bad.closes[0]);
    CHECK(bad.closes[0].error().code == Errc::server_error);
    CHECK(bad.events.empty());
  }
}

TEST_CASE("bookmarks go only to watches that allow them, at what each has delivered",
          "[store_list_watch][item-39][unit]") {
  StoreFixture f;
  f.add("a");
  WatchRecorder with, without;
  auto w1 = f.source.watch(watch_at("1"), with.on_events(), with.on_closed());
  auto options = watch_at("1");
  options.allow_watch_bookmarks = false;
  auto w2 = f.source.watch(options, without.on_events(), without.on_closed());
  f.source.bookmark();
  REQUIRE(with.events.size() == 1);
  CHECK(with.events[0].type == WatchEventType::bookmark);
  CHECK(with.events[0].resource_version == "1");
  CHECK(without.events.empty());
}

TEST_CASE("a watch with a timeout ends cleanly after it, with a bookmark first", "[store_list_watch][unit]") {
  StoreFixture f;
  f.add("a");
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::string> seen;  // guarded by mu
  bool closed_cleanly = false;    // guarded by mu
  auto options = watch_at("1");
  options.timeout_seconds = 1;
  auto w = f.source.watch(
      options,
      [&](std::vector<WatchEvent> batch) {
        std::lock_guard lock(mu);
        for (const auto& e : batch)
          seen.push_back(e.type == WatchEventType::bookmark ? "bookmark " + e.resource_version
                                                            : e.resource_version);
      },
      [&](Result<void> r) {
        std::lock_guard lock(mu);
        closed_cleanly = r.has_value();
        changed.notify_all();
      });
  f.add("b");  // 2
  std::unique_lock lock(mu);
  INFO("no close 10 s after a 1 s timeout: the timeout thread did not run?");
  REQUIRE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return closed_cleanly; }));
  CHECK(seen == std::vector<std::string>{"2", "bookmark 2"});
}

TEST_CASE("changes from several threads reach a watch in resource version order",
          "[store_list_watch][unit][threads]") {
  StoreFixture f;
  std::vector<std::string> seen;  // written only by deliveries, which never overlap
  auto w = f.source.watch(
      watch_at("0"),
      [&](std::vector<WatchEvent> batch) {
        for (auto& e : batch) seen.push_back(e.resource_version);
      },
      [](Result<void>) {});
  auto writer = [&](const std::string& prefix) {
    for (int i = 0; i < 200; ++i)
      (void)f.store->create(f.pods, "default",
                            nlohmann::json::parse(testing::pod_json(prefix + std::to_string(i), "")), false);
  };
  std::thread t1(writer, "x");
  std::thread t2(writer, "y");
  t1.join();
  t2.join();
  w->stop();
  REQUIRE(seen.size() == 400);
  for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == std::to_string(i + 1));
}

TEST_CASE("a callback may write to the store: the write is delivered after the callback returns",
          "[store_list_watch][unit]") {
  StoreFixture f;
  std::vector<std::string> seen;
  auto w = f.source.watch(
      watch_at("0"),
      [&](std::vector<WatchEvent> batch) {
        for (auto& e : batch) {
          seen.emplace_back(e.object->name());
          if (e.object->name() == "a") f.add("echo");
        }
      },
      [](Result<void>) {});
  f.add("a");
  CHECK(seen == std::vector<std::string>{"a", "echo"});
}

TEST_CASE("lists and watches apply label and field selectors as the server does",
          "[store_list_watch][unit]") {
  StoreFixture f;
  f.add("web-1", {{"app", "web"}});
  f.add("db-1", {{"app", "db"}});

  ListOptions web;
  web.label_selector = "app=web";
  auto listed = list_now(f.source, web);
  REQUIRE(listed);
  CHECK(names(*listed) == std::vector<std::string>{"web-1"});

  ListOptions by_name;
  by_name.field_selector = "metadata.name=db-1";
  CHECK(names(*list_now(f.source, by_name)) == std::vector<std::string>{"db-1"});

  SECTION("a watch sees objects enter and leave its selection as ADDED and DELETED") {
    WatchRecorder seen;
    WatchOptions options = watch_at(f.revision());
    options.label_selector = "app=web";
    auto watch = f.source.watch(options, seen.on_events(), seen.on_closed());
    f.modify("db-1", {{"app", "web"}});  // starts matching
    f.modify("web-1", {{"app", "web"}, {"v", "2"}});
    auto left = f.modify("web-1", {{"app", "old"}});  // stops matching
    f.add("cache-1", {{"app", "cache"}});             // never matches
    f.remove("db-1");
    CHECK(seen.summary() ==
          std::vector<std::string>{"ADDED db-1", "MODIFIED web-1", "DELETED web-1", "DELETED db-1"});
    const auto& leaving = seen.events[2];
    CHECK(leaving.object->label("v") == std::optional<std::string_view>("2"));  // the last matching content
    CHECK(leaving.resource_version == left->resource_version());                // at the change's RV
    CHECK(leaving.object->resource_version() == left->resource_version());
  }
  SECTION("a watch replaying history filters it the same way") {
    const std::string start = f.revision();
    f.modify("db-1", {{"app", "web"}});
    f.add("cache-1", {{"app", "cache"}});
    WatchRecorder seen;
    WatchOptions options = watch_at(start);
    options.label_selector = "app=web";
    auto watch = f.source.watch(options, seen.on_events(), seen.on_closed());
    CHECK(seen.summary() == std::vector<std::string>{"ADDED db-1"});
  }
  SECTION("a selector that does not parse fails the request") {
    ListOptions bad;
    bad.label_selector = "app in web";
    auto r = list_now(f.source, bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::invalid_selector);
    WatchRecorder seen;
    WatchOptions options = watch_at("");
    options.field_selector = "metadata.name";
    auto watch = f.source.watch(options, seen.on_events(), seen.on_closed());
    REQUIRE(seen.closes.size() == 1);
    CHECK(seen.closes[0].error().code == Errc::invalid_selector);
    CHECK(seen.events.empty());
  }
}

TEST_CASE("a source scoped to a namespace serves only that namespace", "[store_list_watch][unit]") {
  StoreFixture f;
  StoreListWatch shop(f.store, f.pods, "shop");
  (void)f.store->create(f.pods, "shop", nlohmann::json::parse(testing::pod_json("cart", "", {}, "shop")),
                        false);
  f.add("a");
  auto listed = list_now(shop, list_at(""));
  REQUIRE(listed);
  CHECK(names(*listed) == std::vector<std::string>{"cart"});
  WatchRecorder seen;
  auto w = shop.watch(watch_at(f.revision()), seen.on_events(), seen.on_closed());
  f.add("b");
  (void)f.store->create(f.pods, "shop", nlohmann::json::parse(testing::pod_json("till", "", {}, "shop")),
                        false);
  CHECK(seen.summary() == std::vector<std::string>{"ADDED till"});
}

}  // namespace
}  // namespace kinformer::apiserver
