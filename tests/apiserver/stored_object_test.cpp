// StoredObject (apiserver/stored_object.hpp): its Object, parsed once and shared.
#include "apiserver/stored_object.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

namespace kinformer::apiserver {
namespace {

TEST_CASE("racing first readers of a stored object all get the one Object, which outlives it",
          "[apiserver][stored_object][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& configmaps = *registry.find("", "v1", "configmaps");
  for (int round = 0; round < 50; ++round) {
    StoredPtr stored = make_stored(configmaps, {{"metadata", {{"name", "a"}, {"namespace", "default"}}}}, 9);
    std::vector<ObjectPtr> seen(4);
    std::vector<std::thread> readers;
    for (auto& slot : seen) readers.emplace_back([&stored, &slot] { slot = stored->object(); });
    for (auto& r : readers) r.join();
    INFO("round " << round);
    for (const ObjectPtr& object : seen) CHECK(object == seen[0]);
    CHECK(stored->object() == seen[0]);
    CHECK(seen[0].use_count() == 5);  // the 4 readers' and the StoredObject's
    stored.reset();
    CHECK(seen[0].use_count() == 4);
    CHECK(seen[0]->key() == "default/a");
    CHECK(seen[0]->resource_version() == "9");
  }
}

}  // namespace
}  // namespace kinformer::apiserver
