// Tests for tests/support/fake_source.hpp and fault_injecting_list_watch.hpp: the
// source the actor tests run against (client-go's fake controller source), and the
// fault decorator that works around any ListWatch.
#include "tests/support/fake_source.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/objects.hpp"
#include "tests/support/watch_recorder.hpp"

namespace kinformer::testing {
namespace {

TEST_CASE("every change takes the next resource version and the store owns the metadata",
          "[fake_source][unit]") {
  FakeSource source;
  CHECK(source.resource_version() == "0");
  auto foo = source.add(pod("foo", "77"));
  REQUIRE(foo);
  CHECK(foo->resource_version() == "1");
  CHECK_FALSE(foo->uid().empty());
  CHECK(source.add(pod("bar", ""))->resource_version() == "2");
  CHECK(source.modify(pod("foo", "3", {{"v", "2"}}))->resource_version() == "3");
  auto gone = source.remove("default/foo");
  REQUIRE(gone);
  CHECK(gone->resource_version() == "4");
  CHECK(gone->name() == "foo");
  CHECK(source.resource_version() == "4");
  CHECK(source.get("default/bar")->resource_version() == "2");
  CHECK(source.objects().size() == 1);

  SECTION("writes the store refuses give null and change nothing") {
    CHECK(source.remove("default/nope") == nullptr);
    CHECK(source.add(pod("bar", "")) == nullptr);      // AlreadyExists
    CHECK(source.modify(pod("nope", "")) == nullptr);  // NotFound
    CHECK(source.resource_version() == "4");
  }
  SECTION("objects of any namespace are taken") {
    CHECK(source.add(pod("cart", "", {}, "shop"))->resource_version() == "5");
    CHECK(source.get("shop/cart"));
  }
  SECTION("a modify that changes nothing makes no event and keeps the RV") {
    CHECK(source.modify(pod("bar", ""))->resource_version() == "2");
    CHECK(source.resource_version() == "4");
  }
}

TEST_CASE("drop-watch changes reach lists but no open watch", "[fake_source][item-43][unit]") {
  FakeSource source;
  WatchRecorder rec;
  auto w = source.watch(watch_at("0"), rec.on_events(), rec.on_closed());
  source.add_drop_watch(pod("a", ""));                   // 1
  source.modify_drop_watch(pod("a", "", {{"v", "2"}}));  // 2
  source.add(pod("b", ""));                              // 3
  source.remove_drop_watch("default/b");                 // 4
  source.add(pod("c", ""));                              // 5
  CHECK(rec.rvs() == std::vector<std::string>{"3", "5"});
  auto list = list_now(source, list_at(""));
  REQUIRE(list);
  CHECK(names(*list) == std::vector<std::string>{"a", "c"});
  CHECK(list->resource_version == "5");
}

TEST_CASE("reset_watch closes every watch cleanly and a re-watch from behind gets 410",
          "[fake_source][unit]") {
  FakeSource source;
  for (const char* n : {"a", "b", "c"}) source.add(pod(n, ""));
  WatchRecorder rec;
  auto w = source.watch(watch_at("1"), rec.on_events(), rec.on_closed());
  source.reset_watch();
  REQUIRE(rec.closes.size() == 1);
  CHECK(rec.closes[0].has_value());
  CHECK(source.open_watch_count() == 0);
  WatchRecorder behind;
  auto w2 = source.watch(watch_at("2"), behind.on_events(), behind.on_closed());
  REQUIRE(behind.closes.size() == 1);
  CHECK(behind.closes[0].error().code == Errc::gone);
  WatchRecorder current;
  auto w3 = source.watch(watch_at("3"), current.on_events(), current.on_closed());
  CHECK(current.closes.empty());
  CHECK(source.open_watch_count() == 1);
}

TEST_CASE("scripted faults hit the next matching request, in order",
          "[fake_source][item-35][item-37][unit]") {
  FakeSource source;
  for (const char* n : {"a", "b", "c"}) source.add(pod(n, ""));

  SECTION("list failures, and 410 on a continuation page") {
    source.fail_next_continue(fault::expired());
    auto first = list_now(source, list_at("0", 2));  // a first page: the continue fault waits
    REQUIRE(first);
    source.fail_next_list(fault::internal());
    auto failed = list_now(source, list_at("0", 2));
    REQUIRE_FALSE(failed);
    CHECK(failed.error().code == Errc::server_error);
    ListOptions next;
    next.limit = 2;
    next.continue_token = first->continue_token;
    auto second = list_now(source, next);
    REQUIRE_FALSE(second);
    CHECK(second.error().code == Errc::gone);
    CHECK(list_now(source, next));  // used up
    REQUIRE(source.list_requests().size() == 4);
    CHECK(source.list_requests()[3].continue_token == first->continue_token);
  }
  SECTION("too large RV and refused connections fail lists with their codes") {
    source.fail_next_list(fault::too_large_rv());
    source.fail_next_list(fault::refused());
    CHECK(list_now(source, list_at("3")).error().code == Errc::too_large_rv);
    CHECK(list_now(source, list_at("3")).error().code == Errc::connection_failed);
    CHECK(list_now(source, list_at("3")));
  }
  SECTION("a watch that cannot be established closes at once without events") {
    source.fail_next_watch(too_many_requests(std::chrono::seconds(3)));
    source.fail_next_watch(fault::expired());
    WatchRecorder rec;
    auto w = source.watch(watch_at("3"), rec.on_events(), rec.on_closed());
    REQUIRE(rec.closes.size() == 1);
    REQUIRE_FALSE(rec.closes[0]);
    CHECK(retry_after(rec.closes[0].error()) == std::chrono::seconds(3));
    CHECK(rec.events.empty());
    WatchRecorder second;
    auto w2 = source.watch(watch_at("3"), second.on_events(), second.on_closed());
    REQUIRE(second.closes.size() == 1);
    CHECK(second.closes[0].error().code == Errc::gone);
    CHECK(source.open_watch_count() == 0);
    CHECK(source.watch_requests().size() == 2);
  }
  SECTION("open watches end early, with or without an error, and malformed events go through") {
    WatchRecorder rec;
    auto w = source.watch(watch_at("2"), rec.on_events(), rec.on_closed());
    source.emit_malformed();
    REQUIRE(rec.events.size() == 2);
    CHECK(rec.events[1].type == WatchEventType::error);
    CHECK(rec.events[1].error->code == Errc::decode_failed);
    source.close_watches(fault::reset());
    REQUIRE(rec.closes.size() == 1);
    CHECK(rec.closes[0].error().code == Errc::connection_failed);
    source.add(pod("d", ""));
    CHECK(rec.events.size() == 2);
    CHECK(source.open_watch_count() == 0);
  }
  SECTION("a server without watch-list refuses send_initial_events with 422") {
    FakeSource old({1000, {}, /*watch_list=*/false});
    WatchRecorder refused;
    auto options = watch_at("");
    options.send_initial_events = true;
    options.resource_version_match = "NotOlderThan";
    auto w = old.watch(options, refused.on_events(), refused.on_closed());
    REQUIRE(refused.closes.size() == 1);
    CHECK(refused.closes[0].error().code == Errc::server_error);
  }
}

TEST_CASE("a paused watch keeps events and closes that reach it and delivers them in order on resume",
          "[fake_source][unit]") {
  FakeSource source;
  WatchRecorder rec;
  auto w = source.watch(watch_at("0"), rec.on_events(), rec.on_closed());
  w->pause();
  source.add(pod("a", ""));
  source.emit_malformed();
  source.add(pod("b", ""));
  source.close_watches();
  CHECK(rec.events.empty());
  CHECK(rec.closes.empty());
  w->resume();
  // the injected event went ahead of the store's, which stayed in the store until resume
  CHECK(rec.summary() == std::vector<std::string>{"ERROR"});
  CHECK(rec.closes.size() == 1);
}

TEST_CASE("an executor decides when callbacks run", "[fake_source][unit]") {
  std::vector<std::function<void()>> tasks;
  FakeSource source({1000, [&](std::function<void()> t) { tasks.push_back(std::move(t)); }});
  WatchRecorder rec;
  auto w = source.watch(watch_at("0"), rec.on_events(), rec.on_closed());
  source.add(pod("a", ""));
  bool listed = false;
  source.list(list_at("0"), [&](Result<ObjectList> r) { listed = r.has_value(); });
  CHECK(rec.events.empty());
  CHECK_FALSE(listed);
  for (auto& t : tasks) t();
  CHECK(rec.events.size() == 1);
  CHECK(listed);

  SECTION("after stop a queued delivery does nothing") {
    tasks.clear();
    source.add(pod("b", ""));
    w->stop();
    for (auto& t : tasks) t();
    CHECK(rec.events.size() == 1);
  }
}

TEST_CASE("the fault decorator works around any ListWatch and is transparent without faults",
          "[fake_source][unit]") {
  auto inner = std::make_shared<FakeSource>();  // any ListWatch: here another decorated source
  inner->add(pod("a", ""));
  FaultInjectingListWatch outer(inner);
  auto listed = list_now(outer, list_at(""));
  REQUIRE(listed);
  CHECK(names(*listed) == std::vector<std::string>{"a"});
  WatchRecorder rec;
  auto w = outer.watch(watch_at("1"), rec.on_events(), rec.on_closed());
  inner->add(pod("b", ""));
  CHECK(rec.summary() == std::vector<std::string>{"ADDED b"});
  outer.fail_next_list(fault::refused());
  CHECK(list_now(outer, list_at("")).error().code == Errc::connection_failed);
  CHECK(inner->list_requests().size() == 1);  // the failed request never reached the inner source
  inner->close_watches(fault::reset());       // the inner source's own close comes through
  REQUIRE(rec.closes.size() == 1);
  CHECK(rec.closes[0].error().code == Errc::connection_failed);
  CHECK(outer.open_watch_count() == 0);
  CHECK(outer.watch_requests().size() == 1);
}

}  // namespace
}  // namespace kinformer::testing
