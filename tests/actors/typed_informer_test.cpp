// Tests of the typed layer (actors/typed_informer.hpp, actors/kinds.hpp) and the
// InformerFactory (actors/informer_factory.hpp), over the fake source (tests/support).
#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "actors/informer_factory.hpp"
#include "actors/kinds.hpp"
#include "actors/typed_informer.hpp"
#include "tests/actors/live_fixture.hpp"
#include "tests/support/objects.hpp"

using kinformer::ConfigMap;
using kinformer::Errc;
using kinformer::Informer;
using kinformer::InformerFactory;
using kinformer::InformerScope;
using kinformer::Object;
using kinformer::Pod;
using kinformer::SharedInformerOptions;
using kinformer::TypedHandlerFuncs;
using kinformer::testing::eventually;
using kinformer::testing::EventLog;
using kinformer::testing::LiveFixture;
using kinformer::testing::pod;
using namespace std::chrono_literals;

namespace {

/// A kind that counts its decodes.
struct Counted {
  static constexpr std::string_view resource = "v1/pods";
  static std::atomic<int> decodes;
  std::string name;
  static kinformer::Result<Counted> decode(const Object& object) {
    ++decodes;
    return Counted{std::string(object.name())};
  }
};
std::atomic<int> Counted::decodes{0};

struct NotAKind {
  int resource = 0;
};

kinformer::ObjectPtr parse(const std::string& json) { return Object::parse(json).value(); }

}  // namespace

static_assert(kinformer::is_kind<Pod>::value);
static_assert(kinformer::is_kind<ConfigMap>::value);
static_assert(kinformer::is_kind<Counted>::value);
static_assert(!kinformer::is_kind<NotAKind>::value);
static_assert(!kinformer::is_kind<Object>::value);

TEST_CASE("a Pod decodes its metadata, node, phase and containers", "[typed][unit]") {
  auto object = parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"shop",
    "uid":"u1","resourceVersion":"7","labels":{"app":"web"}},
    "spec":{"nodeName":"node-3","containers":[{"name":"app"},{"name":"sidecar"}]},"status":{"phase":"Running"}})");
  auto decoded = Pod::decode(*object);
  REQUIRE(decoded);
  CHECK(decoded->namespace_ == "shop");
  CHECK(decoded->name == "web-0");
  CHECK(decoded->resource_version == "7");
  CHECK(decoded->labels.at("app") == "web");
  CHECK(decoded->node_name == "node-3");
  CHECK(decoded->phase == "Running");
  CHECK(decoded->containers == std::vector<std::string>{"app", "sidecar"});
}

TEST_CASE("a Pod without spec or status decodes with empty fields", "[typed][unit]") {
  auto decoded = Pod::decode(*parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"bare"}})"));
  REQUIRE(decoded);
  CHECK(decoded->node_name.empty());
  CHECK(decoded->containers.empty());
}

TEST_CASE("a ConfigMap decodes its string data", "[typed][unit]") {
  auto decoded = ConfigMap::decode(*parse(
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"a"},"data":{"k":"v","n":"2"}})"));
  REQUIRE(decoded);
  CHECK(decoded->data.size() == 2);
  CHECK(decoded->data.at("k") == "v");
}

TEST_CASE_METHOD(LiveFixture, "typed handlers receive the decoded object for adds, updates and deletes",
                 "[typed][actor]") {
  SharedInformerOptions options;
  options.source = source;
  Informer<Pod> pods(sys, options);
  auto log = std::make_shared<EventLog>();
  TypedHandlerFuncs<Pod> funcs;
  funcs.on_add = [log](const Pod& p, bool initial) {
    log->add("add " + p.name + " " + p.node_name + (initial ? " initial" : ""));
  };
  funcs.on_update = [log](const Pod& old_pod, const Pod& new_pod) {
    log->add("update " + new_pod.name + " " + old_pod.resource_version + "->" + new_pod.resource_version);
  };
  funcs.on_delete = [log](const Pod& p, bool unknown) { log->add("delete " + p.name + (unknown ? " tombstone" : "")); };
  REQUIRE(pods.add_handler(funcs));
  source->add(pod("a", "0"));
  pods.run();
  REQUIRE(pods.wait_for_sync(20s));
  source->modify(pod("a", "0", {{"v", "2"}}));
  source->remove("default/a");
  REQUIRE(eventually([&] { return log->size() == 3; }, "the typed handler never saw add, update and delete"));
  CHECK(log->lines() == std::vector<std::string>{"add a node-1 initial", "update a 1->2", "delete a"});
  CHECK(pods.undecodable() == 0);
  pods.stop();
}

TEST_CASE_METHOD(LiveFixture, "each object is decoded once at ingest, whatever the number of typed handlers",
                 "[typed][actor]") {
  SharedInformerOptions options;
  options.source = source;
  Informer<Counted> counted(sys, options);
  std::atomic<int> seen{0};
  TypedHandlerFuncs<Counted> funcs;
  funcs.on_add = [&seen](const Counted&, bool) { ++seen; };
  for (int i = 0; i < 3; ++i) REQUIRE(counted.add_handler(funcs));
  for (int i = 0; i < 10; ++i) source->add(pod("p" + std::to_string(i), "0"));
  Counted::decodes = 0;
  counted.run();
  REQUIRE(eventually([&] { return seen == 30; }, "the three handlers never saw the 10 adds each"));
  CHECK(Counted::decodes == 10);
  auto got = counted.get("default/p3");
  REQUIRE(got);
  CHECK(got->name == "p3");
  counted.stop();
}

TEST_CASE_METHOD(LiveFixture, "the factory shares one informer per resource and scope", "[factory][actor]") {
  auto pods_source = source;
  auto other_source = std::make_shared<kinformer::testing::FakeSource>();
  int made = 0;
  InformerFactory factory(sys, [&](std::string_view resource, const InformerScope& scope) {
    ++made;
    return resource == "v1/pods" && scope.namespace_.empty() ? std::shared_ptr<kinformer::ListWatch>(pods_source)
                                                             : std::shared_ptr<kinformer::ListWatch>(other_source);
  });
  auto untyped = factory.informer("v1/pods");
  CHECK(factory.informer("v1/pods") == untyped);
  InformerScope shop;
  shop.namespace_ = "shop";
  CHECK(factory.informer("v1/pods", shop) != untyped);
  auto typed = factory.typed<Pod>();
  REQUIRE(typed);
  CHECK(&typed->shared() == untyped.get());
  CHECK(made == 2);
  CHECK(factory.size() == 2);

  auto names = std::make_shared<EventLog>();
  TypedHandlerFuncs<Pod> funcs;
  funcs.on_add = [names](const Pod& p, bool) { names->add(p.name); };
  REQUIRE(typed->add_handler(funcs));
  source->add(pod("a", "0"));
  factory.start();
  REQUIRE(factory.wait_for_cache_sync(20s));
  CHECK(eventually([&] { return names->size() == 1; }, "the factory's typed handler never saw the add"));

  // A kind with another decoder cannot type an informer that already runs.
  auto late = Informer<Counted>::over(untyped);
  REQUIRE_FALSE(late);
  CHECK(late.error().code == Errc::already_started);
  factory.shutdown();
  CHECK(untyped->is_stopped());
}
