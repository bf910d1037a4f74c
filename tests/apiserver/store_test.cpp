// Unit tests of the MVCC store (apiserver/storage/store.hpp).
#include "apiserver/storage/store.hpp"
#include "tests/support/objects.hpp"

#include <cstdio>
#include <fstream>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using kinformer::apiserver::EventPtr;
using kinformer::apiserver::ResourceRegistry;
using kinformer::apiserver::Store;
using nlohmann::json;

namespace {

using kinformer::testing::bare_configmap;

}  // namespace

TEST_CASE("every write takes the next global revision and makes exactly one event", "[apiserver][store][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  Store store(registry);
  const auto& cms = *registry.find("", "v1", "configmaps");
  auto base = store.revision();
  auto a = store.create(cms, "default", bare_configmap("a"), false);
  REQUIRE(a);
  CHECK(a->object->resource_version == base + 1);
  auto same = store.write(cms, "default", "a", [](const json* current) -> kinformer::apiserver::ApiResult<json> { return *current; },
                          false, false);
  REQUIRE(same);
  CHECK(store.revision() == base + 1);  // no change, no revision
  auto changed = store.write(cms, "default", "a", [](const json* current) -> kinformer::apiserver::ApiResult<json> {
    json next = *current;
    next["data"]["k"] = "w";
    return next;
  }, false, false);
  REQUIRE(changed);
  REQUIRE(store.remove(cms, "default", "a", {}, false));
  std::vector<EventPtr> events;
  REQUIRE(store.events_after(cms, base, 100, events));
  REQUIRE(events.size() == 3);
  CHECK(events[0]->type == kinformer::apiserver::EventType::added);
  CHECK(events[1]->type == kinformer::apiserver::EventType::modified);
  CHECK(events[2]->type == kinformer::apiserver::EventType::deleted);
  CHECK(events[2]->resource_version == base + 3);
  CHECK(json::parse(events[2]->object->json)["metadata"]["resourceVersion"] == std::to_string(base + 3));
  CHECK(events[2]->line.back() == '\n');
}

TEST_CASE("the history is bounded and older starts are reported as compacted", "[apiserver][store][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  Store store(registry, {3});
  const auto& cms = *registry.find("", "v1", "configmaps");
  auto base = store.revision();
  for (int i = 0; i < 5; ++i) REQUIRE(store.create(cms, "default", bare_configmap("c" + std::to_string(i)), false));
  CHECK(store.compacted_through(cms) == base + 2);
  std::vector<EventPtr> events;
  CHECK_FALSE(store.events_after(cms, base + 1, 10, events));
  REQUIRE(store.events_after(cms, base + 2, 10, events));
  CHECK(events.size() == 3);
}

TEST_CASE("list reads an older snapshot by undoing the history", "[apiserver][store][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  Store store(registry);
  const auto& cms = *registry.find("", "v1", "configmaps");
  REQUIRE(store.create(cms, "default", bare_configmap("a", "1"), false));
  auto at = store.revision();
  REQUIRE(store.create(cms, "default", bare_configmap("b"), false));
  REQUIRE(store.write(cms, "default", "a", [](const json* c) -> kinformer::apiserver::ApiResult<json> {
    json n = *c;
    n["data"]["k"] = "2";
    return n;
  }, false, false));
  Store::ListQuery q;
  q.at_revision = at;
  auto past = store.list(cms, q);
  REQUIRE(past);
  REQUIRE(past->items.size() == 1);
  CHECK(json::parse(past->items[0]->json)["data"]["k"] == "1");
  CHECK(past->revision == at);
  CHECK(store.list(cms, {})->items.size() == 2);
}

TEST_CASE("the contents restore into another store with their objects and revision",
          "[apiserver][store][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& cms = *registry.find("", "v1", "configmaps");
  Store store(registry);
  REQUIRE(store.create(cms, "default", bare_configmap("kept"), false));
  auto contents = store.contents();
  CHECK(contents.revision == store.revision());
  Store restored(registry);
  restored.restore(contents.revision, contents.objects);
  CHECK(restored.revision() == contents.revision);
  CHECK(restored.compacted_through(cms) == contents.revision);  // the history restarts empty
  auto kept = restored.get(cms, "default", "kept");
  REQUIRE(kept);
  CHECK((*kept)->resource_version == contents.revision);
}

TEST_CASE("replayed events rebuild the objects and the watch history and must follow the revision",
          "[apiserver][store][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& cms = *registry.find("", "v1", "configmaps");
  Store source(registry);
  auto start = source.revision();
  REQUIRE(source.create(cms, "default", bare_configmap("a"), false));
  REQUIRE(source.remove(cms, "default", "a", {}, false));
  std::vector<EventPtr> events;
  REQUIRE(source.events_after(cms, start, 10, events));
  REQUIRE(events.size() == 2);

  Store target(registry);
  CHECK_FALSE(target.replay(events[1]->type, events[1]->object));  // revision start+2 does not follow start
  REQUIRE(target.replay(events[0]->type, events[0]->object));
  CHECK_FALSE(target.replay(events[0]->type, events[0]->object));  // the same ADDED twice
  REQUIRE(target.replay(events[1]->type, events[1]->object));
  CHECK(target.revision() == start + 2);
  std::vector<EventPtr> replayed;
  REQUIRE(target.events_after(cms, start, 10, replayed));
  CHECK(replayed.size() == 2);
  CHECK_FALSE(target.get(cms, "default", "a"));
}

namespace {

struct RecordingLog : kinformer::apiserver::StoreLog {
  std::vector<std::vector<EventPtr>> records;
  void append(std::vector<EventPtr> events) override { records.push_back(std::move(events)); }
};

}  // namespace

TEST_CASE("with a log attached every write is one record and watchers see only what was marked durable",
          "[apiserver][store][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& cms = *registry.find("", "v1", "configmaps");
  const auto& namespaces = *registry.namespaces();
  Store store(registry);
  RecordingLog log;
  store.attach_log(&log);
  auto start = store.revision();
  REQUIRE(store.create(namespaces, "", {{"metadata", {{"name", "team"}}}}, false));
  REQUIRE(store.create(cms, "team", bare_configmap("a"), false));
  REQUIRE(store.create(cms, "team", bare_configmap("b"), false));
  REQUIRE(store.remove(namespaces, "", "team", {}, false));
  REQUIRE(log.records.size() == 4);
  CHECK(log.records[3].size() == 3);  // the cascade and the namespace: one atomic record

  std::vector<EventPtr> seen;
  REQUIRE(store.events_after(cms, start, 100, seen));
  CHECK(seen.empty());
  bool woken = false;
  auto ticket = store.notify_after(cms, start, [&] { woken = true; });
  CHECK(ticket != 0);
  store.mark_durable(start + 2);
  CHECK(woken);
  REQUIRE(store.events_after(cms, start, 100, seen));
  CHECK(seen.size() == 2);
  store.mark_durable(store.revision());
  seen.clear();
  REQUIRE(store.events_after(cms, start, 100, seen));
  CHECK(seen.size() == 6);
  store.attach_log(nullptr);
}

TEST_CASE("the bootstrap namespaces cannot be deleted", "[apiserver][store][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  Store store(registry);
  for (const char* name : {"default", "kube-system", "kube-public"}) {
    auto removed = store.remove(*registry.namespaces(), "", name, {}, false);
    REQUIRE_FALSE(removed);
    CHECK(removed.error().code == 403);
    CHECK(removed.error().reason == "Forbidden");
  }
  CHECK(store.get(*registry.namespaces(), "", "default"));
}
