// WatchWindow (apiserver/watch_window.hpp): one type's window of recent events.
#include "apiserver/watch_window.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/resources.hpp"

namespace kinformer::apiserver {
namespace {

using nlohmann::json;

struct WatchWindowFixture {
  ResourceRegistry registry = ResourceRegistry::with_builtins();
  const ResourceType& configmaps = *registry.find("", "v1", "configmaps");

  EventPtr added(const std::string& name, std::uint64_t rv) const {
    json object = {{"metadata", {{"name", name}, {"namespace", "default"}}}};
    return make_event(EventType::added, make_stored(configmaps, object, rv), nullptr);
  }
};

std::vector<std::uint64_t> rvs_after(const WatchWindow& window, std::uint64_t after) {
  std::vector<EventPtr> events;
  if (!window.events_after(after, 100, events)) return {0};  // 0: answered 410
  std::vector<std::uint64_t> out;
  for (const auto& e : events) out.push_back(e->resource_version);
  return out;
}

void run(const WatchWindow::Wakes& wakes) {
  for (const auto& w : wakes) w();
}

TEST_CASE("A watch window answers the events after a position and 410 before its start",
          "[apiserver][watch_window][unit]") {
  WatchWindowFixture f;
  WatchWindow window(10, 100);
  run(window.append({f.added("a", 12), f.added("b", 15)}, 0));
  run(window.append({f.added("a", 12), f.added("c", 17)}, 0));  // a reconnect replays 12
  CHECK(rvs_after(window, 10) == std::vector<std::uint64_t>{12, 15, 17});
  CHECK(rvs_after(window, 13) == std::vector<std::uint64_t>{15, 17});
  CHECK(rvs_after(window, 17).empty());
  CHECK(rvs_after(window, 9) == std::vector<std::uint64_t>{0});
  CHECK(window.start() == 10);
  CHECK(window.progress() == 17);
}

TEST_CASE("A watch window keeps its newest events and starts at the last one it evicted",
          "[apiserver][watch_window][unit]") {
  WatchWindowFixture f;
  WatchWindow window(0, 2);
  run(window.append({f.added("a", 3), f.added("b", 5), f.added("c", 8)}, 0));
  CHECK(window.start() == 3);
  CHECK(rvs_after(window, 2) == std::vector<std::uint64_t>{0});
  CHECK(rvs_after(window, 3) == std::vector<std::uint64_t>{5, 8});
}

TEST_CASE("A watch window's progress follows progress notifications without waking its waiters",
          "[apiserver][watch_window][unit]") {
  WatchWindowFixture f;
  WatchWindow window(10, 100);
  int woken = 0;
  auto ticket = window.notify_after(10, [&] { ++woken; });
  CHECK(ticket != 0);
  run(window.append({}, 40));  // other types moved etcd to 40
  CHECK(window.progress() == 40);
  CHECK(woken == 0);
  run(window.append({f.added("a", 41)}, 0));
  CHECK(woken == 1);
  CHECK(window.notify_after(10, [&] { ++woken; }) == 0);  // something to read already: at once
  CHECK(woken == 2);
  auto later = window.notify_after(41, [&] { ++woken; });
  window.cancel_wait(later);
  run(window.append({f.added("b", 45)}, 0));
  CHECK(woken == 2);
}

TEST_CASE("A watch window that loses its events wakes every waiter into a 410",
          "[apiserver][watch_window][unit]") {
  WatchWindowFixture f;
  WatchWindow window(10, 100);
  run(window.append({f.added("a", 12)}, 0));
  int woken = 0;
  CHECK(window.notify_after(12, [&] { ++woken; }) != 0);

  SECTION("etcd compacted: restart at its revision, complete through it") {
    run(window.restart_at(30));
    CHECK(woken == 1);
    CHECK(rvs_after(window, 12) == std::vector<std::uint64_t>{0});
    CHECK(rvs_after(window, 30).empty());
    CHECK(window.progress() == 30);
  }
  SECTION("etcd away too long: a later start, progress unchanged so the watch resumes after it") {
    run(window.expire_through(20));
    CHECK(woken == 1);
    CHECK(window.start() == 20);
    CHECK(window.progress() == 12);
    run(window.append({f.added("b", 18), f.added("c", 21)}, 0));  // the resumed watch's replay
    CHECK(rvs_after(window, 20) == std::vector<std::uint64_t>{21});
  }
  SECTION("the kind retired: closed until reopened at a new start") {
    run(window.close());
    CHECK(woken == 1);
    CHECK(rvs_after(window, 12) == std::vector<std::uint64_t>{0});
    CHECK(window.notify_after(12, [&] { ++woken; }) == 0);
    CHECK(woken == 2);
    window.reopen(50);
    CHECK(rvs_after(window, 50).empty());
    CHECK(rvs_after(window, 49) == std::vector<std::uint64_t>{0});
  }
}

}  // namespace
}  // namespace kinformer::apiserver
