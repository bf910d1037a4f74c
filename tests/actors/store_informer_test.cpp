// An informer embedded beside the API server's store (apiserver/store_list_watch.hpp):
// no HTTP, and the cache holds the store's own objects.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "actors/shared_informer.hpp"
#include "apiserver/storage/store.hpp"
#include "apiserver/store_list_watch.hpp"
#include "tests/actors/live_fixture.hpp"
#include "tests/support/objects.hpp"

namespace kinformer::actors {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

TEST_CASE_METHOD(
    testing::LiveFixture,
    "an informer over the store in-process caches the store's own objects and follows its writes",
    "[store_informer][actor][integration]") {
  auto registry = apiserver::ResourceRegistry::with_builtins();
  auto store =
      std::make_shared<apiserver::Store>(registry);  // with its default namespaces, as the server has
  const auto& pods = *registry.find("", "v1", "pods");
  auto create = [&](const std::string& name) {
    REQUIRE(store->create(pods, "default", nlohmann::json::parse(testing::pod_json(name, "")), false));
  };
  create("a");
  SharedInformerOptions options;
  options.source = std::make_shared<apiserver::StoreListWatch>(store, pods);
  SharedInformer informer(sys, options);
  informer.run();
  REQUIRE(informer.wait_for_sync(20s));
  const auto stored_a = store->get(pods, "default", "a").value()->object();
  CHECK(informer.indexer().get_by_key("default/a") == stored_a);  // one object, not a copy

  create("b");
  auto relabel = [](const nlohmann::json* current) -> apiserver::ApiResult<nlohmann::json> {
    auto next = *current;
    next["metadata"]["labels"]["tier"] = "web";
    return next;
  };
  REQUIRE(store->write(pods, "default", "a", relabel, false, false));
  REQUIRE(store->remove(pods, "default", "b", {}, false));
  auto relabeled = [&] {
    auto cached = informer.indexer().get_by_key("default/a");
    return cached && cached->label("tier") == std::optional<std::string_view>("web") &&
           !informer.indexer().get_by_key("default/b");
  };
  REQUIRE(eventually(relabeled, "the informer did not follow the store's writes: no watch events from the store?"));
  CHECK(informer.indexer().get_by_key("default/a") == store->get(pods, "default", "a").value()->object());
  informer.stop();
}

}  // namespace
}  // namespace kinformer::actors
