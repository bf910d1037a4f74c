// The facade's leader-election switch (actors/leader_gated_handler.hpp): a handler
// that runs only while this replica leads, over the fake source on the real
// scheduler (issue 17, item 4).
#include "actors/leader_gated_handler.hpp"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "actors/shared_informer.hpp"
#include "tests/actors/live_fixture.hpp"
#include "tests/support/objects.hpp"

using kinformer::HandlerFuncs;
using kinformer::LeaderElectionConfig;
using kinformer::LeaderGatedHandler;
using kinformer::ObjectPtr;
using kinformer::SharedInformer;
using kinformer::SharedInformerOptions;
using kinformer::testing::EventLog;
using kinformer::testing::eventually;
using kinformer::testing::LiveFixture;
using kinformer::testing::pod;
using namespace std::chrono_literals;

namespace {

HandlerFuncs logging_adds_and_updates(std::shared_ptr<EventLog> log) {
  HandlerFuncs f;
  f.on_add = [log](const ObjectPtr& o, bool initial) {
    log->add("add " + std::string(o->name()) + (initial ? " initial" : ""));
  };
  f.on_update = [log](const ObjectPtr&, const ObjectPtr& o) { log->add("update " + std::string(o->name())); };
  return f;
}

struct GateFixture : LiveFixture {
  std::unique_ptr<SharedInformer> informer;
  std::shared_ptr<EventLog> log = std::make_shared<EventLog>();
  GateFixture() {
    SharedInformerOptions options;
    options.source = source;
    informer = std::make_unique<SharedInformer>(sys, options);
    source->add(pod("a", "0"));
    informer->run();
    REQUIRE(informer->wait_for_sync(10s));
  }
  ~GateFixture() { informer->stop(); }
};

}  // namespace

TEST_CASE("a gated handler sees nothing until it leads, then the cache replayed and every change",
          "[leader_election][facade][actor]") {
  GateFixture f;
  LeaderGatedHandler gate(*f.informer, logging_adds_and_updates(f.log));
  f.source->add(pod("b", "0"));
  REQUIRE(eventually([&] { return f.informer->indexer().list().size() == 2; }, "b never reached the cache"));
  CHECK(f.log->size() == 0);
  REQUIRE(gate.open());
  CHECK(gate.is_open());
  REQUIRE(eventually([&] { return f.log->size() == 2; }, "the cache was not replayed on open"));
  CHECK(f.log->lines()[0].find("initial") != std::string::npos);
  f.source->modify(pod("a", "0", {{"x", "y"}}));
  REQUIRE(eventually([&] { return f.log->size() == 3; }, "the update after open never arrived"));
  CHECK(f.log->lines()[2] == "update a");
}

TEST_CASE("a gated handler stops getting changes when leadership is lost",
          "[leader_election][facade][actor]") {
  GateFixture f;
  LeaderGatedHandler gate(*f.informer, logging_adds_and_updates(f.log));
  LeaderElectionConfig config;
  int started = 0, stopped = 0;
  config.on_started_leading = [&] { ++started; };
  config.on_stopped_leading = [&] { ++stopped; };
  gate.attach(config);
  config.on_started_leading();
  CHECK(gate.is_open());
  CHECK(started == 1);
  REQUIRE(eventually([&] { return f.log->size() == 1; }, "the replay of a never arrived"));
  auto witness = std::make_shared<EventLog>();  // registered all along: shows what the Processor sent
  REQUIRE(f.informer->add_handler(logging_adds_and_updates(witness)));
  config.on_stopped_leading();
  CHECK_FALSE(gate.is_open());
  CHECK(stopped == 1);
  f.source->add(pod("c", "0"));
  REQUIRE(eventually([&] { return witness->size() == 2; }, "c never reached the handler still registered"));
  CHECK(witness->lines() == std::vector<std::string>{"add a initial", "add c"});
  CHECK(f.log->size() == 1);
}
