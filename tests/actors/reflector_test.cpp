// Tests for actors/reflector.hpp against the fake source (tests/support) and a fake FIFO, on
// CAF's test_coordinator with virtual time (informer-semantics.md §5, items 30–45).
// Random numbers are fixed at 0 unless a test says otherwise, so a back-off wait
// is exactly 800 ms, 1.6 s, 3.2 s, ...
#include "actors/reflector.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "tests/actors/live_fixture.hpp"
#include "tests/support/fake_fifo.hpp"
#include "tests/support/fake_source.hpp"
#include "tests/support/objects.hpp"
#include "tests/support/virtual_time.hpp"

namespace kinformer::actors {
namespace {

using namespace std::chrono_literals;
using testing::pod;

// SharedInformerOptions embeds ReflectorOptions whole: it must stay a plain value.
static_assert(std::is_copy_constructible_v<ReflectorOptions> &&
              std::is_default_constructible_v<ReflectorOptions>);

class ReflectorFixture : public testing::VirtualTimeFixture {
 public:
  ReflectorFixture() : fifo(track(sys.spawn(testing::fake_fifo, log))) {}

  ReflectorOptions options() {
    ReflectorOptions o;
    o.random = [this] { return random_value; };
    o.watch_error_handler = [this](const Error& e) { errors.push_back(e); };
    return o;
  }

  ReflectorActor start(ReflectorOptions o) {
    auto r = track(spawn_reflector(sys, source, fifo, std::move(o)));
    run();
    return r;
  }
  ReflectorActor start() { return start(options()); }

  std::string last_rv(const ReflectorActor& r) {
    std::string out = "<no answer>";
    auto rh = self->request(r, caf::infinite, last_rv_atom::value);
    run();
    rh.receive([&](std::string& rv) { out = std::move(rv); },
               [&](caf::error& e) { FAIL("last_rv failed: " << sys.render(e)); });
    return out;
  }

  std::size_t lists() const { return source->list_requests().size(); }
  std::size_t watches() const { return source->watch_requests().size(); }
  ListOptions list_request(std::size_t i) const { return source->list_requests().at(i); }
  WatchOptions watch_request(std::size_t i) const { return source->watch_requests().at(i); }

  /// Ends the watch with 410 and lets the back-off `wait` pass, so that the next cycle lists.
  void relist_after_410(std::chrono::milliseconds wait) {
    source->close_watches(Error{Errc::gone, "too old resource version"});
    run();
    advance(wait);
  }

  /// Adds `n` pods named p0, p1, ...
  void add_pods(int n) {
    for (int i = 0; i < n; ++i) source->add(pod("p" + std::to_string(i), ""));
  }

  std::shared_ptr<testing::FakeSource> source = std::make_shared<testing::FakeSource>();
  std::shared_ptr<testing::FifoLog> log = std::make_shared<testing::FifoLog>();
  DeltaFIFOActor fifo;
  std::vector<Error> errors;  // written by the reflector, which runs on this thread
  double random_value = 0.0;
};

// -- item 30 ----------------------------------------------------------------

// upstream: TestWatchTimeout, TestReflectorResyncWithResourceVersion,
// TestReflectorPaginatingNonConsistentReadsIfWatchCacheDisabled
TEST_CASE_METHOD(ReflectorFixture, "a fresh reflector lists at RV 0 with limit 500, then watches from the list's RV",
                 "[reflector][item-30][actor]") {
  source->add(pod("a", ""));
  source->add(pod("b", ""));
  random_value = GENERATE(0.0, 0.5, 0.9999);
  start();
  REQUIRE(lists() == 1);
  CHECK(list_request(0).resource_version == "0");
  CHECK(list_request(0).limit == 500);
  CHECK(log->last_replace() == "a b @ 2");
  REQUIRE(watches() == 1);
  const auto w = watch_request(0);
  CHECK(w.resource_version == "2");
  CHECK(w.allow_watch_bookmarks);
  CHECK(w.timeout_seconds >= 300);
  CHECK(w.timeout_seconds < 600);
  CHECK(w.timeout_seconds == 300 + static_cast<std::int64_t>(300 * std::min(random_value, 0.999)));
}

// -- item 31 ----------------------------------------------------------------

// upstream: TestReflectorListAndWatch
TEST_CASE_METHOD(ReflectorFixture,
                 "a watch that ends cleanly is followed by a watch from the last event's RV, no relist",
                 "[reflector][item-31][actor]") {
  auto r = start();
  source->add(pod("a", ""));  // 1
  source->modify(pod("a", "", {{"v", "2"}}));  // 2
  run();
  CHECK(log->deltas() == std::vector<std::string>{"added a", "updated a"});
  source->close_watches();
  run();
  CHECK(lists() == 1);
  REQUIRE(watches() == 2);
  CHECK(watch_request(0).resource_version == "0");
  CHECK(watch_request(1).resource_version == "2");
  CHECK(last_rv(r) == "2");
  CHECK(errors.empty());
}

// -- items 32 to 36: lists ---------------------------------------------------

// upstream: TestReflectorResyncWithResourceVersion, TestReflectorNotPaginatingNotConsistentReads
TEST_CASE_METHOD(ReflectorFixture, "a relist after a successful sync asks for the last synced RV without a limit",
                 "[reflector][item-32][actor]") {
  add_pods(3);
  start();
  source->add(pod("x", ""));  // 4
  run();
  source->close_watches(Error{Errc::gone, "too old resource version"});
  run();
  CHECK(lists() == 1);  // not before the back-off
  advance(800ms);
  REQUIRE(lists() == 2);
  CHECK(list_request(1).resource_version == "4");
  CHECK(list_request(1).limit == 0);
  CHECK(log->count("replace") == 2);
  CHECK(watch_request(watches() - 1).resource_version == "4");
}

// upstream: TestReflectorExpiredExactResourceVersion
TEST_CASE_METHOD(ReflectorFixture, "a relist answered with 410 is retried at once with RV \"\"",
                 "[reflector][item-33][actor]") {
  add_pods(2);
  start();
  source->fail_next_list(Error{Errc::gone, "too old resource version: 2 (3)"});
  relist_after_410(800ms);
  REQUIRE(lists() == 3);
  CHECK(list_request(1).resource_version == "2");
  CHECK(list_request(2).resource_version == "");
  CHECK(list_request(2).limit == 0);
  CHECK(log->count("replace") == 2);

  SECTION("and the list after that uses the last synced RV again") {
    relist_after_410(1600ms);
    REQUIRE(lists() == 4);
    CHECK(list_request(3).resource_version == "2");
  }
}

// upstream: TestReflectorFullListIfTooLarge
TEST_CASE_METHOD(ReflectorFixture, "a relist answered with too large resource version is retried at once with RV \"\"",
                 "[reflector][item-34][actor]") {
  add_pods(2);
  start();
  source->fail_next_list(Error{Errc::too_large_rv, "Too large resource version: 2, current: 1"});
  relist_after_410(800ms);
  REQUIRE(lists() == 3);
  CHECK(list_request(1).resource_version == "2");
  CHECK(list_request(2).resource_version == "");
  CHECK(log->last_replace() == "p0 p1 @ 2");

  SECTION("a second failure in the same list ends the cycle and is reported") {
    source->fail_next_list(Error{Errc::too_large_rv, "again"});
    source->fail_next_list(Error{Errc::too_large_rv, "and again"});
    source->close_watches(Error{Errc::gone, "too old resource version"});
    run();
    const auto before = errors.size();
    advance(1600ms);
    REQUIRE(lists() == 5);
    CHECK(list_request(4).resource_version == "");
    REQUIRE(errors.size() == before + 1);
    CHECK(errors.back().message == "and again");
    advance(3200ms);
    REQUIRE(lists() == 6);
    CHECK(list_request(5).resource_version == "");  // still unavailable until a list succeeds
  }
}

// upstream: TestReflectorFullListIfExpired; pager_test.go TestListPager_List
TEST_CASE_METHOD(ReflectorFixture,
                 "a paginated relist whose second page is 410 becomes one full list at the original RV",
                 "[reflector][item-35][actor]") {
  add_pods(5);
  auto o = options();
  o.page_size = 2;
  start(o);
  REQUIRE(lists() == 3);  // 2 + 2 + 1
  source->fail_next_continue(Error{Errc::gone, "The provided continue parameter is too old"});
  relist_after_410(800ms);
  REQUIRE(lists() == 6);
  CHECK(list_request(3).resource_version == "5");
  CHECK(list_request(3).limit == 2);
  CHECK_FALSE(list_request(4).continue_token.empty());
  CHECK(list_request(5).resource_version == "5");
  CHECK(list_request(5).limit == 0);
  CHECK(list_request(5).continue_token.empty());
  CHECK(log->last_replace() == "p0 p1 p2 p3 p4 @ 5");
  CHECK(errors.size() == 1);  // only the watch's 410: the fallback is the pager's own business
}

// upstream: TestReflectorPaginatingNonConsistentReadsIfWatchCacheDisabled, TestReflectorWatchListPageSize
TEST_CASE_METHOD(ReflectorFixture,
                 "paginated lists: sticky limit 500 after a paginated RV 0 list, an explicit page size everywhere",
                 "[reflector][item-36][actor]") {
  SECTION("an RV 0 list that came back in pages keeps limit 500 on later relists") {
    add_pods(501);
    start();
    REQUIRE(lists() == 2);
    CHECK(list_request(1).limit == 500);
    CHECK(list_request(1).resource_version.empty());
    relist_after_410(800ms);
    REQUIRE(lists() == 4);
    CHECK(list_request(2).resource_version == "501");
    CHECK(list_request(2).limit == 500);
  }
  SECTION("a page size of 4 is sent on every page and the pages are stitched together") {
    add_pods(10);
    auto o = options();
    o.page_size = 4;
    start(o);
    REQUIRE(lists() == 3);
    for (std::size_t i = 0; i < 3; ++i) CHECK(list_request(i).limit == 4);
    CHECK(list_request(0).resource_version == "0");
    CHECK(list_request(1).resource_version.empty());
    CHECK(log->last_replace() == "p0 p1 p2 p3 p4 p5 p6 p7 p8 p9 @ 10");
    CHECK(log->count("replace") == 1);
  }
}

// -- items 37 and 38: watch failures -------------------------------------------

// upstream: TestNoRelistOnTooManyRequests, TestBackoffOnTooManyRequests,
// TestReflectorListAndWatchInitConnBackoff
TEST_CASE_METHOD(ReflectorFixture,
                 "a watch refused with 429 or a failed connection is retried after back-off, without a relist",
                 "[reflector][item-37][actor]") {
  SECTION("connection refused: 800 ms, then 1.6 s") {
    source->fail_next_watch(Error{Errc::connection_failed, "connection refused"});
    source->fail_next_watch(Error{Errc::connection_failed, "connection refused"});
    start();
    CHECK(watches() == 1);
    advance(700ms);
    CHECK(watches() == 1);
    advance(100ms);
    CHECK(watches() == 2);
    advance(1500ms);
    CHECK(watches() == 2);
    advance(100ms);
    CHECK(watches() == 3);
    CHECK(source->open_watch_count() == 1);
  }
  SECTION("429: at least the retry-after the server asked for") {
    source->fail_next_watch(too_many_requests(3s));
    start();
    advance(2900ms);
    CHECK(watches() == 1);
    advance(100ms);
    CHECK(watches() == 2);
    CHECK(watch_request(1).resource_version == watch_request(0).resource_version);
  }
  CHECK(lists() == 1);
  CHECK(log->count("replace") == 1);
  CHECK(errors.size() >= 1);
}

// upstream: TestRetryInternalError
TEST_CASE_METHOD(ReflectorFixture, "500 errors re-watch at once within the internal-error window, then relist",
                 "[reflector][item-38][actor]") {
  SECTION("with a 30 s window") {
    auto o = options();
    o.max_internal_error_retry = 30s;
    start(o);
    source->close_watches(Error{Errc::server_error, "internal error"});
    run();
    CHECK(watches() == 2);
    advance(20s, 1s);
    source->close_watches(Error{Errc::server_error, "internal error"});
    run();
    CHECK(watches() == 3);
    advance(11s, 1s);
    source->close_watches(Error{Errc::server_error, "internal error"});
    run();
    CHECK(watches() == 3);
    advance(800ms);
    CHECK(lists() == 2);
    CHECK(watches() == 4);
  }
  SECTION("without a window (the default) the first 500 relists after back-off") {
    start();
    source->close_watches(Error{Errc::server_error, "internal error"});
    run();
    CHECK(watches() == 1);
    advance(800ms);
    CHECK(lists() == 2);
  }
  CHECK(errors.size() >= 1);
}

// -- items 39 and 40: events ----------------------------------------------------

// upstream: TestReflectorResourceVersionUpdate
TEST_CASE_METHOD(ReflectorFixture, "every watch event, bookmarks included, advances the last synced RV",
                 "[reflector][item-39][actor]") {
  auto r = start();
  CHECK(last_rv(r) == "0");
  auto event = [](WatchEventType type, const std::string& rv) {
    return WatchEvent{type, type == WatchEventType::bookmark ? nullptr : pod("a", rv), rv, std::nullopt};
  };
  std::vector<std::string> seen;
  for (const auto& [type, rv] : std::vector<std::pair<WatchEventType, std::string>>{
           {WatchEventType::added, "10"},
           {WatchEventType::modified, "20"},
           {WatchEventType::bookmark, "30"},
           {WatchEventType::deleted, "40"}}) {
    source->emit({event(type, rv)});
    run();
    seen.push_back(last_rv(r));
  }
  CHECK(seen == std::vector<std::string>{"10", "20", "30", "40"});
  CHECK(log->deltas() == std::vector<std::string>{"added a", "updated a", "deleted a"});
  source->close_watches();
  run();
  CHECK(watch_request(1).resource_version == "40");
}

// upstream: TestReflectorWatchHandler
TEST_CASE_METHOD(ReflectorFixture, "an event of the wrong kind is skipped while the others are applied and tracked",
                 "[reflector][item-40][actor]") {
  auto o = options();
  o.expected_kind = "Pod";
  auto r = start(o);
  auto config_map = Object::parse(
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default","resourceVersion":"11"}})");
  REQUIRE(config_map);
  source->emit({
      WatchEvent{WatchEventType::deleted, pod("foo", "10"), "10", std::nullopt},
      WatchEvent{WatchEventType::added, config_map.value(), "11", std::nullopt},
      WatchEvent{WatchEventType::modified, pod("bar", "12"), "12", std::nullopt},
      WatchEvent{WatchEventType::added, pod("baz", "13"), "13", std::nullopt},
  });
  run();
  CHECK(log->deltas() == std::vector<std::string>{"deleted foo", "updated bar", "added baz"});
  CHECK(last_rv(r) == "13");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == Errc::decode_failed);
  CHECK(lists() == 1);
}

// -- item 41: resync --------------------------------------------------------------

// upstream: TestReflectorResync, TestReflectorResyncChan
TEST_CASE_METHOD(ReflectorFixture,
                 "the FIFO is resynced every period while watching, and a resync error ends the cycle",
                 "[reflector][item-41][actor]") {
  auto o = options();
  o.resync_period = 1s;
  bool should = true;
  o.should_resync = [&] { return should; };
  start(o);
  advance(999ms, 333ms);
  CHECK(log->count("resync") == 0);
  advance(1ms, 1ms);
  CHECK(log->count("resync") == 1);
  advance(2s);
  CHECK(log->count("resync") == 3);

  SECTION("should_resync false skips the tick but keeps the timer") {
    should = false;
    advance(2s);
    CHECK(log->count("resync") == 3);
    should = true;
    advance(1s);
    CHECK(log->count("resync") == 4);
  }
  SECTION("re-watches keep the timer running") {
    source->add(pod("a", ""));
    run();
    source->close_watches();
    run();
    advance(1s);
    CHECK(log->count("resync") == 4);
    CHECK(lists() == 1);
  }
  SECTION("a resync error is reported, the cycle ends, and the relist starts a fresh period") {
    log->fail_next_resync(Error{Errc::transform_failed, "resync failed"});
    advance(1s);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].code == Errc::transform_failed);
    CHECK(errors[0].message == "resync failed");
    CHECK(source->open_watch_count() == 0);
    advance(800ms);  // the back-off; no resync tick of the old cycle meanwhile
    CHECK(lists() == 2);
    CHECK(log->count("resync") == 3);
    advance(900ms);
    CHECK(log->count("resync") == 3);
    advance(100ms);
    CHECK(log->count("resync") == 4);
  }
}

// -- item 42: list errors ---------------------------------------------------------

// upstream: TestReflectorListAndWatchWithErrors, TestSharedInformerErrorHandling
TEST_CASE_METHOD(ReflectorFixture,
                 "a list error reaches the watch error handler and the list is retried with growing back-off",
                 "[reflector][item-42][item-37][actor]") {
  for (int i = 0; i < 3; ++i) source->fail_next_list(Error{Errc::server_error, "list failed " + std::to_string(i)});
  source->add(pod("a", ""));
  start();
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "list failed 0");
  CHECK(next_timeout() == 800ms);
  advance(800ms);
  CHECK(lists() == 2);
  CHECK(next_timeout() == 1600ms);
  advance(1600ms);
  CHECK(lists() == 3);
  CHECK(next_timeout() == 3200ms);
  advance(3200ms);
  CHECK(lists() == 4);
  CHECK(errors.size() == 3);
  CHECK(log->last_replace() == "a @ 1");
  CHECK(watches() == 1);

  SECTION("jitter stretches the waits by up to 100 %") {
    random_value = 0.5;
    source->fail_next_list(Error{Errc::server_error, "again"});
    source->close_watches(Error{Errc::gone, "too old resource version"});
    run();
    CHECK(next_timeout() == 9600ms);  // 6.4 s × 1.5
  }
}

// -- item 43: relist after a watch error ---------------------------------------------

// upstream: TestReflectorReplacesStoreOnUnsafeDelete
TEST_CASE_METHOD(ReflectorFixture,
                 "a watch ERROR event leads to a relist whose replace drops the objects gone meanwhile",
                 "[reflector][item-43][actor]") {
  source->add(pod("a", ""));
  source->add(pod("b", ""));
  source->add(pod("c", ""));
  start();
  CHECK(log->last_replace() == "a b c @ 3");
  source->remove_drop_watch("default/b");  // the deletion the watch never told
  const auto error = GENERATE(Error{Errc::gone, "too old resource version: 3 (4)"},
                              Error{Errc::server_error, "corrupt object has been deleted"});
  source->emit({WatchEvent{WatchEventType::error, nullptr, "", error}});
  run();
  CHECK(source->open_watch_count() == 0);
  advance(800ms);
  REQUIRE(lists() == 2);
  CHECK(log->last_replace() == "a c @ 4");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == error.code);
}

// -- item 44: stop ------------------------------------------------------------------

// upstream: TestReflectorWatchStoppedBefore/After, TestReflectorStopWatch
TEST_CASE_METHOD(ReflectorFixture, "a stopped reflector returns promptly and stops its watch",
                 "[reflector][item-44][actor]") {
  SECTION("stopped while the list is in flight: no watch is ever started") {
    std::vector<std::function<void()>> deferred;
    source = std::make_shared<testing::FakeSource>(testing::FakeSourceOptions{
        1000, [&](std::function<void()> task) { deferred.push_back(std::move(task)); }});
    auto r = start();
    REQUIRE(lists() == 1);
    caf::anon_send_exit(r, caf::exit_reason::user_shutdown);
    run();
    for (auto& task : deferred) task();  // the list answers after the stop
    run();
    CHECK(watches() == 0);
    CHECK(log->count("replace") == 0);
  }
  SECTION("stopped while watching: the watch is stopped and nothing more reaches the FIFO") {
    auto r = start();
    CHECK(source->open_watch_count() == 1);
    caf::anon_send_exit(r, caf::exit_reason::user_shutdown);
    run();
    CHECK(source->open_watch_count() == 0);
    source->add(pod("late", ""));
    run();
    CHECK(log->deltas().empty());
  }
  SECTION("stopped during a back-off wait: the pending timer does nothing") {
    source->fail_next_list(Error{Errc::server_error, "list failed"});
    auto r = start();
    caf::anon_send_exit(r, caf::exit_reason::user_shutdown);
    run();
    advance(1s);
    CHECK(lists() == 1);
  }
}

// -- item 45: very short watches -------------------------------------------------------

// upstream: TestReflectorHandleWatchResultChanClosedBefore/After
TEST_CASE_METHOD(ReflectorFixture, "a watch that closes within 1 s without events is an error and leads to a relist",
                 "[reflector][item-45][actor]") {
  start();
  advance(900ms);
  source->close_watches();
  run();
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message.find("very short watch") != std::string::npos);
  CHECK(watches() == 1);
  advance(800ms);
  CHECK(lists() == 2);
  CHECK(watches() == 2);

  SECTION("after 1 s, or with an event, a clean close just re-watches") {
    advance(1s);
    source->close_watches();
    run();
    CHECK(watches() == 3);
    source->bookmark();
    run();
    source->close_watches();
    run();
    CHECK(watches() == 4);
    CHECK(lists() == 2);
    CHECK(errors.size() == 1);
  }
}

// -- item 46: watch-list ---------------------------------------------------------------------

// upstream: reflector_watchlist_test.go TestWatchList
TEST_CASE_METHOD(ReflectorFixture,
                 "in watch-list mode the state is replaced at the initial-events-end bookmark and the same watch goes on",
                 "[reflector][item-46][actor]") {
  auto o = options();
  o.use_watch_list = true;
  SECTION("the replace waits for the bookmark; later events are deltas on the same watch") {
    std::vector<std::function<void()>> deferred;
    source = std::make_shared<testing::FakeSource>(testing::FakeSourceOptions{
        1000, [&](std::function<void()> task) { deferred.push_back(std::move(task)); }});
    source->add(pod("a", ""));
    source->add(pod("b", ""));
    start(o);
    REQUIRE(watches() == 1);
    CHECK(lists() == 0);
    const auto w = watch_request(0);
    CHECK(w.send_initial_events);
    CHECK(w.resource_version_match == "NotOlderThan");
    CHECK(w.resource_version.empty());
    CHECK(w.allow_watch_bookmarks);
    REQUIRE(deferred.size() == 2);  // the initial ADDED events, then the bookmark
    deferred[0]();
    run();
    CHECK(log->count("replace") == 0);
    deferred[1]();
    run();
    CHECK(log->last_replace() == "a b @ 2");
    source->add(pod("c", ""));
    for (std::size_t i = 2; i < deferred.size(); ++i) deferred[i]();
    run();
    CHECK(log->deltas() == std::vector<std::string>{"added c"});
    CHECK(watches() == 1);
    CHECK(lists() == 0);
  }
  SECTION("a server without watch-list support gets the classic LIST") {
    source =
        std::make_shared<testing::FakeSource>(testing::FakeSourceOptions{1000, {}, /*watch_list=*/false});
    source->add(pod("a", ""));
    start(o);
    REQUIRE(lists() == 1);
    CHECK(list_request(0).resource_version == "0");
    CHECK(log->last_replace() == "a @ 1");
    REQUIRE(watches() == 2);
    CHECK_FALSE(watch_request(1).send_initial_events);
    CHECK(watch_request(1).resource_version == "1");
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].code == Errc::server_error);
  }
  SECTION("410 streams again at once from RV \"\"; the relist after a watch error streams from the last RV") {
    source->add(pod("a", ""));
    start(o);
    source->add(pod("b", ""));
    run();
    source->fail_next_watch(Error{Errc::gone, "too old resource version"});
    relist_after_410(800ms);
    REQUIRE(watches() == 3);
    CHECK(watch_request(1).resource_version == "2");
    CHECK(watch_request(2).resource_version.empty());
    CHECK(watch_request(2).send_initial_events);
    CHECK(log->last_replace() == "a b @ 2");
    CHECK(lists() == 0);
  }
}

// -- beyond the checklist -----------------------------------------------------------------

// issue 8, relist_memory: a relist must not hold a second copy of an unchanged cache.
TEST_CASE_METHOD(ReflectorFixture,
                 "listed objects whose key and resourceVersion are known are replaced by the known pointers",
                 "[reflector][item-8][actor]") {
  // The cache's own copies: equal content, distinct pointers from what the source lists.
  std::map<std::string, ObjectPtr, std::less<>> cache;
  auto cache_copy = [&](const std::string& name) {
    const std::string key = "default/" + name;
    auto listed = source->get(key);
    REQUIRE(listed);
    auto copy = Object::parse(listed->json());
    REQUIRE(copy);
    cache[key] = *copy;
  };
  auto o = options();
  o.known_object = [&cache](std::string_view key) -> ObjectPtr {
    auto it = cache.find(key);
    return it == cache.end() ? nullptr : it->second;
  };
  auto cached = [&](const std::string& name) { return cache.at("default/" + name); };
  auto listed = [&](const std::string& name) { return source->get("default/" + name); };
  auto snapshot_item = [&](const std::string& name) -> ObjectPtr {
    const auto calls = log->calls();
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
      if (!it->snapshot) continue;
      for (const auto& object : it->snapshot->items)
        if (object->name() == name) return object;
    }
    return nullptr;
  };
  SECTION("in the pages of a relist") {
    add_pods(3);  // p0..p2 at RVs 1..3
    start(o);
    for (const char* key : {"p0", "p1", "p2"}) cache_copy(key);
    source->modify(pod("p2", "", {{"v", "2"}}));  // 4: the cache's p2 is now older than the server's
    source->add(pod("p3", ""));                   // 5: unknown to the cache
    run();
    relist_after_410(800ms);
    REQUIRE(log->count("replace") == 2);
    CHECK(log->last_replace() == "p0 p1 p2 p3 @ 5");
    CHECK(snapshot_item("p0") == cached("p0"));
    CHECK(snapshot_item("p1") == cached("p1"));
    CHECK(snapshot_item("p2") == listed("p2"));  // another resourceVersion: kept as listed
    CHECK(snapshot_item("p2") != cached("p2"));
    CHECK(snapshot_item("p3") == listed("p3"));
  }
  SECTION("in the initial events of a watch-list") {
    o.use_watch_list = true;
    source->add(pod("a", ""));
    source->add(pod("b", ""));
    cache_copy("a");
    start(o);
    REQUIRE(log->count("replace") == 1);
    CHECK(log->last_replace() == "a b @ 2");
    CHECK(snapshot_item("a") == cached("a"));
    CHECK(snapshot_item("b") == listed("b"));
  }
}


TEST_CASE_METHOD(ReflectorFixture,
                 "a malformed event is skipped and reported, the watch goes on and nothing is relisted",
                 "[reflector][actor]") {
  auto r = start();
  source->add(pod("a", ""));
  source->emit_malformed();
  source->add(pod("b", ""));
  run();
  CHECK(log->deltas() == std::vector<std::string>{"added a", "added b"});
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == Errc::decode_failed);
  CHECK(lists() == 1);
  CHECK(source->open_watch_count() == 1);
  CHECK(last_rv(r) == "2");
}

TEST_CASE_METHOD(ReflectorFixture,
                 "the watch pauses while the FIFO is above the high-water mark and resumes as soon as it is at half",
                 "[reflector][actor]") {
  auto o = options();
  o.high_water_mark = 10;
  start(o);
  log->set_depth(11);
  source->add(pod("a", ""));
  run();
  CHECK(log->deltas().size() == 1);
  CHECK(log->polls() == 1);  // one depth request, answered at the low-water mark
  source->add(pod("b", ""));  // kept by the paused watch
  run();
  CHECK(log->deltas().size() == 1);
  log->set_depth(6);
  run();
  CHECK(log->deltas().size() == 1);  // 6 > 10 / 2: still paused
  log->set_depth(5);
  run();
  CHECK(log->deltas() == std::vector<std::string>{"added a", "added b"});  // no timer waited for
  advance(1s);
  CHECK(log->polls() == 1);
  CHECK(lists() == 1);
}

// issue 8, watch_throughput: a request per arrival left thousands unanswered, and CAF 0.17
// pays for each answer in proportion to the requests still pending.
TEST_CASE_METHOD(ReflectorFixture,
                 "events arriving while a deltas batch is unanswered go to the FIFO as one batch in order",
                 "[reflector][actor]") {
  start();
  log->hold_deltas();
  source->add(pod("a", ""));
  run();
  source->add(pod("b", ""));
  source->add(pod("c", ""));
  source->remove("default/a");
  run();
  CHECK(log->count("deltas") == 1);  // b, c and the delete wait for the answer to a
  CHECK(log->unanswered() == 1);
  log->release();
  run();
  REQUIRE(log->count("deltas") == 2);
  CHECK(log->calls().back().deltas->size() == 3);
  CHECK(log->deltas() == std::vector<std::string>{"added a", "added b", "added c", "deleted a"});
  source->add(pod("d", ""));
  run();
  CHECK(log->count("deltas") == 3);  // nothing in flight: sent at once
}

TEST_CASE_METHOD(ReflectorFixture,
                 "events kept while a batch is unanswered count towards the high-water mark",
                 "[reflector][actor]") {
  auto o = options();
  o.high_water_mark = 2;
  start(o);
  log->set_depth(2);
  log->hold_deltas();
  add_pods(4);  // p0 goes out, p1..p3 are kept: 3 > 2 pauses the watch
  run();
  source->add(pod("q", ""));  // held by the paused watch
  run();
  CHECK(log->deltas() == std::vector<std::string>{"added p0"});
  CHECK(log->polls() == 1);  // asked for depth <= 1; the fake FIFO holds 2
  log->release();              // p0 taken: p1..p3 go out as one batch, still paused
  run();
  CHECK(log->deltas() == std::vector<std::string>{"added p0", "added p1", "added p2", "added p3"});
  log->set_depth(1);  // the low-water mark: the parked request is answered, the watch resumes
  run();
  CHECK(log->deltas() == std::vector<std::string>{"added p0", "added p1", "added p2", "added p3", "added q"});
}

TEST_CASE_METHOD(ReflectorFixture,
                 "a watch error while a batch is unanswered is reported and the kept events reach the FIFO before "
                 "the relist",
                 "[reflector][actor]") {
  start();
  log->hold_deltas();
  source->add(pod("a", ""));
  source->add(pod("b", ""));
  run();
  source->close_watches(Error{Errc::gone, "too old resource version"});
  run();
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == Errc::gone);
  advance(800ms);  // the back-off, then the relist
  REQUIRE(lists() == 2);
  const auto calls = log->calls();
  REQUIRE(calls.size() == 4);
  CHECK(calls[0].what == "replace");
  CHECK(calls[1].what == "deltas");
  CHECK(calls[2].what == "deltas");  // b, kept until the replace sent it first
  CHECK(calls[3].what == "replace");
  CHECK(log->deltas() == std::vector<std::string>{"added a", "added b"});
  CHECK(log->last_replace() == "a b @ 2");
}

TEST_CASE_METHOD(ReflectorFixture, "callbacks of a watch that was replaced are ignored", "[reflector][actor]") {
  auto r = start();
  source->add(pod("a", ""));
  run();
  source->close_watches(Error{Errc::gone, "too old resource version"});
  run();
  // a stale event for the old watch generation cannot reach the FIFO: the old watch is closed,
  // and the relist brings the state instead
  advance(800ms);
  CHECK(log->last_replace() == "a @ 1");
  CHECK(log->deltas() == std::vector<std::string>{"added a"});
  CHECK(last_rv(r) == "1");
}

// -- on the real scheduler ----------------------------------------------------------------

TEST_CASE("on worker threads the reflector follows changes made from another thread, and stops its watch on exit",
          "[reflector][actor][threads]") {
  caf::actor_system_config cfg;
  caf::actor_system sys{testing::LiveFixture::prepare(cfg)};  // the TSAN-visible scheduler under TSAN
  auto source = std::make_shared<testing::FakeSource>();
  auto log = std::make_shared<testing::FifoLog>();
  auto fifo = sys.spawn(testing::fake_fifo, log);
  source->add(pod("first", ""));
  auto reflector = spawn_reflector(sys, source, fifo);
  constexpr int n = 1000;
  std::thread writer([&] {
    for (int i = 0; i < n; ++i) source->add(pod("p" + std::to_string(i), ""));
  });
  writer.join();
  CHECK(testing::eventually([&] { return log->count("replace") == 1; }, "the reflector's list never reached the FIFO",
                            10s));
  // the list may have caught some adds; list + watch together must bring all of them
  INFO("deltas received: " << log->deltas().size() << " of up to " << n);
  CHECK(testing::eventually(
      [&] {
        std::size_t listed = 0;
        for (const auto& c : log->calls())
          if (c.snapshot) listed = c.snapshot->items.size();
        return listed + log->deltas().size() == n + 1;
      },
      "the list and the watch never brought every add", 10s));
  caf::anon_send_exit(reflector, caf::exit_reason::user_shutdown);
  CHECK(testing::eventually([&] { return source->open_watch_count() == 0; }, "the exit did not stop the watch", 10s));
  caf::anon_send_exit(fifo, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace kinformer::actors
