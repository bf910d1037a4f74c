// Tests for runtime/memory_source.hpp: the in-memory ListWatch (client-go's fake
// controller source) that the Reflector tests run against.
#include "runtime/memory_source.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/objects.hpp"

namespace kinformer {
namespace {

using testing::pod;

/// What one watch received, synchronously.
struct Recorder {
  std::vector<WatchEvent> events;
  std::vector<Result<void>> closes;

  ListWatch::EventsCallback on_events() {
    return [this](std::vector<WatchEvent> batch) {
      for (auto& e : batch) events.push_back(std::move(e));
    };
  }
  ListWatch::ClosedCallback on_closed() {
    return [this](Result<void> r) { closes.push_back(std::move(r)); };
  }
  std::vector<std::string> rvs() const {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e.resource_version);
    return out;
  }
};

Result<ObjectList> list_now(MemorySource& source, ListOptions options) {
  std::optional<Result<ObjectList>> answer;
  source.list(options, [&](Result<ObjectList> r) { answer.emplace(std::move(r)); });
  REQUIRE(answer.has_value());  // synchronous by default
  return std::move(*answer);
}

std::vector<std::string> names(const ObjectList& list) {
  std::vector<std::string> out;
  for (const auto& o : list.items) out.emplace_back(o->name());
  return out;
}

ListOptions at(std::string rv, std::int64_t limit = 0) {
  ListOptions o;
  o.resource_version = std::move(rv);
  o.limit = limit;
  return o;
}

WatchOptions watch_at(std::string rv) {
  WatchOptions o;
  o.resource_version = std::move(rv);
  return o;
}

TEST_CASE("every change takes the next resource version and stores the object with it",
          "[memory_source][unit]") {
  MemorySource source;
  CHECK(source.resource_version() == "0");
  auto foo = source.add(pod("foo", "77"));
  CHECK(foo->resource_version() == "1");
  CHECK(source.add(pod("bar", ""))->resource_version() == "2");
  CHECK(source.modify(pod("foo", "3"))->resource_version() == "3");
  auto gone = source.remove("default/foo");
  REQUIRE(gone);
  CHECK(gone->resource_version() == "4");
  CHECK(gone->name() == "foo");
  CHECK(source.remove("default/nope") == nullptr);
  CHECK(source.resource_version() == "4");
  CHECK(source.get("default/bar")->resource_version() == "2");
  CHECK(source.objects().size() == 1);
}

TEST_CASE("list answers the current state or the state at an exact resource version",
          "[memory_source][unit]") {
  MemorySource source;
  source.add(pod("a", ""));             // 1
  source.add(pod("b", ""));             // 2
  source.remove("default/a");           // 3
  source.add(pod("c", ""));             // 4

  SECTION("RV 0 and RV \"\" give the current state at the newest RV") {
    for (const char* rv : {"0", ""}) {
      auto list = list_now(source, at(rv));
      REQUIRE(list);
      CHECK(names(*list) == std::vector<std::string>{"b", "c"});
      CHECK(list->resource_version == "4");
    }
  }
  SECTION("an RV without a limit means not older than: the current state") {
    auto list = list_now(source, at("2"));
    REQUIRE(list);
    CHECK(list->resource_version == "4");
  }
  SECTION("an RV with a limit on the first page is exact") {
    auto list = list_now(source, at("2", 10));
    REQUIRE(list);
    CHECK(names(*list) == std::vector<std::string>{"a", "b"});
    CHECK(list->resource_version == "2");
  }
  SECTION("an RV ahead of the counter is too large") {
    auto list = list_now(source, at("9"));
    REQUIRE_FALSE(list);
    CHECK(list.error().code == Errc::too_large_rv);
  }
  SECTION("an exact RV older than the history is gone") {
    source.reset_watch();
    auto list = list_now(source, at("2", 10));
    REQUIRE_FALSE(list);
    CHECK(list.error().code == Errc::gone);
  }
}

TEST_CASE("pages come from the first page's snapshot until its history is forgotten",
          "[memory_source][item-35][item-36][unit]") {
  MemorySource source;
  for (const char* n : {"a", "b", "c", "d", "e"}) source.add(pod(n, ""));
  auto first = list_now(source, at("0", 2));
  REQUIRE(first);
  CHECK(names(*first) == std::vector<std::string>{"a", "b"});
  REQUIRE_FALSE(first->continue_token.empty());
  source.remove("default/c");
  source.add(pod("bb", ""));

  ListOptions next;
  next.limit = 2;
  next.continue_token = first->continue_token;
  auto second = list_now(source, next);
  REQUIRE(second);
  CHECK(names(*second) == std::vector<std::string>{"c", "d"});  // the old snapshot
  CHECK(second->resource_version == first->resource_version);

  SECTION("the last page has no continue token") {
    next.continue_token = second->continue_token;
    auto third = list_now(source, next);
    REQUIRE(third);
    CHECK(names(*third) == std::vector<std::string>{"e"});
    CHECK(third->continue_token.empty());
  }
  SECTION("a continue token whose snapshot left the history is 410 Expired") {
    source.reset_watch();
    next.continue_token = second->continue_token;
    auto third = list_now(source, next);
    REQUIRE_FALSE(third);
    CHECK(third.error().code == Errc::gone);
  }
  SECTION("a resource version together with continue is rejected") {
    next.resource_version = "5";
    auto bad = list_now(source, next);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == Errc::server_error);
  }
}

TEST_CASE("a watch replays the changes after its resource version, then follows live ones",
          "[memory_source][unit]") {
  MemorySource source;
  source.add(pod("a", ""));  // 1
  source.add(pod("b", ""));  // 2
  source.modify(pod("a", ""));  // 3
  Recorder rec;
  auto w = source.watch(watch_at("1"), rec.on_events(), rec.on_closed());
  CHECK(rec.rvs() == std::vector<std::string>{"2", "3"});
  source.remove("default/b");  // 4
  REQUIRE(rec.events.size() == 3);
  CHECK(rec.events[2].type == WatchEventType::deleted);
  CHECK(rec.events[2].object->name() == "b");
  CHECK(rec.events[2].resource_version == "4");
  CHECK(source.open_watch_count() == 1);

  SECTION("after stop nothing more arrives") {
    w->stop();
    source.add(pod("c", ""));
    CHECK(rec.events.size() == 3);
    CHECK(rec.closes.empty());
    CHECK(source.open_watch_count() == 0);
  }
  SECTION("RV 0 starts with ADDED for every object") {
    Recorder fresh;
    auto w0 = source.watch(watch_at("0"), fresh.on_events(), fresh.on_closed());
    REQUIRE(fresh.events.size() == 1);
    CHECK(fresh.events[0].type == WatchEventType::added);
    CHECK(fresh.events[0].object->name() == "a");
  }
}

TEST_CASE("a watch from before the history, or after a reset, closes with 410", "[memory_source][unit]") {
  MemorySource source({/*history_limit=*/2, {}});
  for (const char* n : {"a", "b", "c"}) source.add(pod(n, ""));  // RVs 1..3, history keeps 2..3
  Recorder old;
  auto w = source.watch(watch_at("0"), old.on_events(), old.on_closed());  // fine: full state
  Recorder too_old;
  auto w1 = source.watch(watch_at("0"), too_old.on_events(), too_old.on_closed());
  Recorder edge;
  auto w2 = source.watch(watch_at("1"), edge.on_events(), edge.on_closed());
  CHECK(edge.closes.empty());
  CHECK(edge.rvs() == std::vector<std::string>{"2", "3"});

  source.reset_watch();
  REQUIRE(edge.closes.size() == 1);
  CHECK(edge.closes[0].has_value());  // closed cleanly
  Recorder after;
  auto w3 = source.watch(watch_at("2"), after.on_events(), after.on_closed());
  REQUIRE(after.closes.size() == 1);
  REQUIRE_FALSE(after.closes[0]);
  CHECK(after.closes[0].error().code == Errc::gone);
  Recorder current;
  auto w4 = source.watch(watch_at("3"), current.on_events(), current.on_closed());
  CHECK(current.closes.empty());
}

TEST_CASE("a watch-list sends the current state, then the initial-events-end bookmark, then changes",
          "[memory_source][item-46][unit]") {
  MemorySource source;
  source.add(pod("a", ""));
  source.add(pod("b", ""));
  auto opts = watch_at("");
  opts.send_initial_events = true;
  opts.resource_version_match = "NotOlderThan";
  Recorder rec;
  auto w = source.watch(opts, rec.on_events(), rec.on_closed());
  source.add(pod("c", ""));
  REQUIRE(rec.events.size() == 4);
  CHECK(rec.events[0].type == WatchEventType::added);
  CHECK(rec.events[1].type == WatchEventType::added);
  CHECK(rec.events[2].type == WatchEventType::bookmark);
  CHECK(rec.events[2].initial_events_end);
  CHECK(rec.events[2].resource_version == "2");
  CHECK(rec.events[3].resource_version == "3");

  SECTION("without the match, or on a server without the feature, it is rejected") {
    Recorder bad;
    opts.resource_version_match.clear();
    auto w2 = source.watch(opts, bad.on_events(), bad.on_closed());
    REQUIRE(bad.closes.size() == 1);
    CHECK_FALSE(bad.closes[0]);
    MemorySource old({1000, {}, false});
    Recorder refused;
    opts.resource_version_match = "NotOlderThan";
    auto w3 = old.watch(opts, refused.on_events(), refused.on_closed());
    REQUIRE(refused.closes.size() == 1);
    CHECK(refused.closes[0].error().code == Errc::server_error);
  }
}

TEST_CASE("drop-watch changes reach lists but no watch", "[memory_source][unit]") {
  MemorySource source;
  Recorder rec;
  auto w = source.watch(watch_at("0"), rec.on_events(), rec.on_closed());
  source.add_drop_watch(pod("a", ""));
  source.modify_drop_watch(pod("a", ""));
  source.add(pod("b", ""));
  source.remove_drop_watch("default/b");
  CHECK(rec.rvs() == std::vector<std::string>{"3"});
  auto list = list_now(source, at(""));
  REQUIRE(list);
  CHECK(names(*list) == std::vector<std::string>{"a"});
  CHECK(list->resource_version == "4");
  Recorder late;
  auto w2 = source.watch(watch_at("1"), late.on_events(), late.on_closed());
  CHECK(late.rvs() == std::vector<std::string>{"3"});
}

TEST_CASE("bookmarks go only to watches that allow them", "[memory_source][unit]") {
  MemorySource source;
  source.add(pod("a", ""));
  Recorder with, without;
  auto w1 = source.watch(watch_at("1"), with.on_events(), with.on_closed());
  auto opts = watch_at("1");
  opts.allow_watch_bookmarks = false;
  auto w2 = source.watch(opts, without.on_events(), without.on_closed());
  source.bookmark();
  REQUIRE(with.events.size() == 1);
  CHECK(with.events[0].type == WatchEventType::bookmark);
  CHECK(with.events[0].resource_version == "1");
  CHECK(without.events.empty());
}

TEST_CASE("scripted faults hit the next matching request, in order", "[memory_source][unit]") {
  MemorySource source;
  for (const char* n : {"a", "b", "c"}) source.add(pod(n, ""));

  SECTION("list failures, and 410 on a continuation page") {
    source.fail_next_continue(Error{Errc::gone, "continue expired"});
    auto first = list_now(source, at("0", 2));  // a first page: the continue fault waits
    REQUIRE(first);
    source.fail_next_list(Error{Errc::server_error, "boom"});
    auto failed = list_now(source, at("0", 2));
    REQUIRE_FALSE(failed);
    CHECK(failed.error().code == Errc::server_error);
    ListOptions next;
    next.limit = 2;
    next.continue_token = first->continue_token;
    auto second = list_now(source, next);
    REQUIRE_FALSE(second);
    CHECK(second.error().code == Errc::gone);
    CHECK(list_now(source, next));  // used up
    CHECK(source.list_requests().size() == 4);
    CHECK(source.list_requests()[3].continue_token == first->continue_token);
  }
  SECTION("a watch that cannot be established closes at once without events") {
    source.fail_next_watch(too_many_requests(std::chrono::seconds(3)));
    Recorder rec;
    auto w = source.watch(watch_at("3"), rec.on_events(), rec.on_closed());
    REQUIRE(rec.closes.size() == 1);
    REQUIRE_FALSE(rec.closes[0]);
    CHECK(retry_after(rec.closes[0].error()) == std::chrono::seconds(3));
    CHECK(rec.events.empty());
    CHECK(source.open_watch_count() == 0);
    CHECK(source.watch_requests().size() == 1);
  }
  SECTION("open watches end early, with or without an error, and malformed events go through") {
    Recorder rec;
    auto w = source.watch(watch_at("2"), rec.on_events(), rec.on_closed());
    source.emit_malformed();
    REQUIRE(rec.events.size() == 2);
    CHECK(rec.events[1].type == WatchEventType::error);
    CHECK(rec.events[1].error->code == Errc::decode_failed);
    source.close_watches(Error{Errc::server_error, "internal error"});
    REQUIRE(rec.closes.size() == 1);
    CHECK_FALSE(rec.closes[0]);
    source.add(pod("d", ""));
    CHECK(rec.events.size() == 2);
  }
}

TEST_CASE("a paused watch keeps what arrives and delivers it in order on resume", "[memory_source][unit]") {
  MemorySource source;
  Recorder rec;
  auto w = source.watch(watch_at("0"), rec.on_events(), rec.on_closed());
  w->pause();
  source.add(pod("a", ""));
  source.add(pod("b", ""));
  source.close_watches();
  CHECK(rec.events.empty());
  CHECK(rec.closes.empty());
  w->resume();
  CHECK(rec.rvs() == std::vector<std::string>{"1", "2"});
  CHECK(rec.closes.size() == 1);
}

TEST_CASE("an executor decides when callbacks run", "[memory_source][unit]") {
  std::vector<std::function<void()>> tasks;
  MemorySource source({1000, [&](std::function<void()> t) { tasks.push_back(std::move(t)); }});
  Recorder rec;
  auto w = source.watch(watch_at("0"), rec.on_events(), rec.on_closed());
  source.add(pod("a", ""));
  bool listed = false;
  source.list(at("0"), [&](Result<ObjectList> r) { listed = r.has_value(); });
  CHECK(rec.events.empty());
  CHECK_FALSE(listed);
  for (auto& t : tasks) t();
  CHECK(rec.events.size() == 1);
  CHECK(listed);
}

TEST_CASE("changes from several threads reach a watch in resource version order",
          "[memory_source][unit][threads]") {
  MemorySource source;
  std::vector<std::string> seen;  // only the delivering thread writes, under the source's dispatch lock
  auto w = source.watch(
      watch_at("0"), [&](std::vector<WatchEvent> batch) {
        for (auto& e : batch) seen.push_back(e.resource_version);
      },
      [](Result<void>) {});
  auto writer = [&](const std::string& prefix) {
    for (int i = 0; i < 200; ++i) source.add(pod(prefix + std::to_string(i), ""));
  };
  std::thread t1(writer, "x");
  std::thread t2(writer, "y");
  t1.join();
  t2.join();
  w->stop();
  REQUIRE(seen.size() == 400);
  for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == std::to_string(i + 1));
}

}  // namespace
}  // namespace kinformer
