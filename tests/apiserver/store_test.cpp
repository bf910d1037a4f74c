// Unit tests of the MVCC store (apiserver/store.hpp).
#include "apiserver/store.hpp"

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

json configmap(const std::string& name, const std::string& value = "v") {
  return {{"metadata", {{"name", name}}}, {"data", {{"k", value}}}};
}

}  // namespace

TEST_CASE("every write takes the next global revision and makes exactly one event", "[apiserver][store][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  Store store(registry);
  const auto& cms = *registry.find("", "v1", "configmaps");
  auto base = store.revision();
  auto a = store.create(cms, "default", configmap("a"), false);
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
  REQUIRE(store.events_after(base, 100, events));
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
  for (int i = 0; i < 5; ++i) REQUIRE(store.create(cms, "default", configmap("c" + std::to_string(i)), false));
  CHECK(store.compacted_through() == base + 2);
  std::vector<EventPtr> events;
  CHECK_FALSE(store.events_after(base + 1, 10, events));
  REQUIRE(store.events_after(base + 2, 10, events));
  CHECK(events.size() == 3);
}

TEST_CASE("list reads an older snapshot by undoing the history", "[apiserver][store][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  Store store(registry);
  const auto& cms = *registry.find("", "v1", "configmaps");
  REQUIRE(store.create(cms, "default", configmap("a", "1"), false));
  auto at = store.revision();
  REQUIRE(store.create(cms, "default", configmap("b"), false));
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

TEST_CASE("a snapshot saved to a file loads back with its objects and revision", "[apiserver][store][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  auto path = "/tmp/kinformer-store-test-" + std::to_string(::getpid()) + ".json";
  const auto& cms = *registry.find("", "v1", "configmaps");
  std::uint64_t saved_revision = 0;
  {
    Store store(registry);
    REQUIRE(store.create(cms, "default", configmap("kept"), false));
    saved_revision = store.revision();
    REQUIRE(store.save(path));
  }
  Store loaded(registry);
  REQUIRE(loaded.load(path));
  CHECK(loaded.revision() == saved_revision);
  CHECK(loaded.compacted_through() == saved_revision);
  auto kept = loaded.get(cms, "default", "kept");
  REQUIRE(kept);
  CHECK((*kept)->resource_version == saved_revision);
  std::ofstream(path) << "{not json";
  auto bad = loaded.load(path);
  CHECK_FALSE(bad);
  CHECK(loaded.get(cms, "default", "kept"));  // a failed load changes nothing
  std::remove(path.c_str());
}
