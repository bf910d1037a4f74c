// Tests of the SharedInformer facade (actors/shared_informer.hpp) over the
// fake source (tests/support), on the real scheduler (two threads).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "actors/shared_informer.hpp"
#include "tests/actors/live_fixture.hpp"
#include "tests/support/handler_drained.hpp"
#include "tests/support/objects.hpp"

using kinformer::Errc;
using kinformer::HandlerFuncs;
using kinformer::HandlerRegistration;
using kinformer::ObjectPtr;
using kinformer::SharedInformer;
using kinformer::SharedInformerOptions;
using kinformer::testing::eventually;
using kinformer::testing::handler_drained;
using kinformer::testing::EventLog;
using kinformer::testing::LiveFixture;
using kinformer::testing::pod;
using Strings = std::vector<std::string>;
using namespace std::chrono_literals;

namespace {

/// Logs "add NAME[ initial]", "update NAME OLDRV->NEWRV", "delete NAME[ tombstone]".
HandlerFuncs logging(std::shared_ptr<EventLog> log) {
  HandlerFuncs f;
  f.on_add = [log](const ObjectPtr& o, bool initial) {
    log->add("add " + std::string(o->name()) + (initial ? " initial" : ""));
  };
  f.on_update = [log](const ObjectPtr& old_object, const ObjectPtr& object) {
    log->add("update " + std::string(object->name()) + " " + std::string(old_object->resource_version()) + "->" +
             std::string(object->resource_version()));
  };
  f.on_delete = [log](const kinformer::DeletedObject& d) {
    log->add("delete " + std::string(d.key().substr(d.key().find('/') + 1)) + (d.is_tombstone() ? " tombstone" : ""));
  };
  return f;
}

struct InformerFixture : LiveFixture {
  std::unique_ptr<SharedInformer> informer;

  explicit InformerFixture(SharedInformerOptions options = {}) {
    options.source = source;
    informer = std::make_unique<SharedInformer>(sys, options);
  }
  ~InformerFixture() { informer->stop(); }

  HandlerRegistration add(std::shared_ptr<EventLog> log, kinformer::HandlerOptions options = {}) {
    auto handle = informer->add_handler(logging(std::move(log)), options);
    REQUIRE(handle);
    return handle.value();
  }

  std::vector<std::string> cached_names() const {
    std::vector<std::string> names;
    for (const auto& o : informer->indexer().list()) names.emplace_back(o->name());
    std::sort(names.begin(), names.end());
    return names;
  }
};

}  // namespace

// upstream: TestStateSharedInformer, TestAddWhileActive
TEST_CASE_METHOD(InformerFixture, "a handler registered before run gets the initial list and then syncs",
                 "[shared_informer][item-47][actor]") {
  for (int i = 0; i < 20; ++i) source->add(pod("p" + std::to_string(i), "0"));
  auto log = std::make_shared<EventLog>();
  auto handle = add(log);
  CHECK_FALSE(informer->has_synced());
  informer->run();
  REQUIRE(informer->wait_for_sync(20s));
  REQUIRE(eventually([&] { return handle.has_synced(); }, "the handle never synced"));
  auto lines = log->lines();  // the handle synced: every initial add was handled
  REQUIRE(lines.size() >= 20);
  for (std::size_t i = 0; i < 20; ++i) CHECK(lines[i].find(" initial") != std::string::npos);
  CHECK(informer->indexer().size() == 20);
}

// upstream: TestAddWhileActive
TEST_CASE_METHOD(InformerFixture, "a handler added while running sees the cache first, then later changes",
                 "[shared_informer][item-48][actor]") {
  for (int i = 0; i < 10; ++i) source->add(pod("p" + std::to_string(i), "0"));
  informer->run();
  REQUIRE(informer->wait_for_sync(20s));
  auto log = std::make_shared<EventLog>();
  auto handle = add(log);
  source->add(pod("late", "0"));
  REQUIRE(eventually([&] { return log->size() == 11; }, "the late handler never got the cache and the later add"));
  auto lines = log->lines();
  for (std::size_t i = 0; i < 10; ++i) CHECK(lines[i].find(" initial") != std::string::npos);
  CHECK(lines[10] == "add late");
  CHECK(eventually([&] { return handle.has_synced(); }, "the late handle never synced"));
}

// upstream: TestSharedInformerTransformer, TestSharedInformerStartRace
TEST_CASE_METHOD(InformerFixture, "a transform's output is what the cache and the handlers see, and it cannot be set after run",
                 "[shared_informer][item-53][actor]") {
  REQUIRE(informer->set_transform([](ObjectPtr o) -> kinformer::Result<ObjectPtr> {
    auto json = nlohmann::json::parse(o->json());
    auto name = json["metadata"]["name"].get<std::string>();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
    json["metadata"]["name"] = name;
    return ObjectPtr(kinformer::Object::parse(json.dump()).value());
  }));
  source->add(pod("web", "0"));
  auto log = std::make_shared<EventLog>();
  add(log);
  informer->run();
  REQUIRE(informer->wait_for_sync(20s));
  source->add(pod("db", "0"));
  REQUIRE(eventually([&] { return log->size() == 2; }, "the handler never got the transformed initial list and add"));
  CHECK(log->lines() == Strings{"add WEB initial", "add DB"});
  CHECK(cached_names() == Strings{"DB", "WEB"});
  auto late = informer->set_transform([](ObjectPtr o) -> kinformer::Result<ObjectPtr> { return o; });
  REQUIRE_FALSE(late);
  CHECK(late.error().code == Errc::already_started);
  CHECK_FALSE(informer->set_watch_error_handler([](const kinformer::Error&) {}));
}

// upstream: TestSharedInformerRemoveHandler, TestSharedInformerRemoveForeignHandler,
// TestSharedInformerMultipleRegistration, TestRemovingRemovedSharedInformer
TEST_CASE_METHOD(InformerFixture,
                 "removal stops events, is idempotent, ignores foreign handles, and is per registration",
                 "[shared_informer][item-54][actor]") {
  auto kept = std::make_shared<EventLog>();
  auto removed = std::make_shared<EventLog>();
  auto kept_handle = add(kept);
  // Our own actor, so that the test can tell when it handled everything sent to it.
  auto removed_actor = kinformer::actors::spawn_handler(sys, kinformer::actors::dispatch_to(logging(removed)));
  auto removed_registration = informer->add_handler(removed_actor);
  REQUIRE(removed_registration);
  auto removed_handle = removed_registration.value();
  // The same handler actor registered twice: each registration on its own.
  auto twice = std::make_shared<EventLog>();
  auto shared_actor = kinformer::actors::spawn_handler(sys, kinformer::actors::dispatch_to(logging(twice)));
  auto first = informer->add_handler(shared_actor);
  auto second = informer->add_handler(shared_actor);
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->id() != second->id());
  source->add(pod("a", "0"));  // in the initial list, whatever the scheduling
  informer->run();
  REQUIRE(eventually([&] { return kept->size() == 1 && removed->size() == 1 && twice->size() == 2; },
                     "the initial list never reached every registration"));

  informer->remove_handler(removed_handle);
  informer->remove_handler(removed_handle);  // again: no-op
  SharedInformerOptions other_options;
  other_options.source = source;
  SharedInformer other(sys, other_options);
  auto foreign = other.add_handler(logging(std::make_shared<EventLog>()));
  REQUIRE(foreign);
  informer->remove_handler(foreign.value());  // another informer's handle: no-op
  informer->remove_handler(HandlerRegistration{});
  informer->remove_handler(first.value());
  source->add(pod("b", "0"));
  source->add(pod("c", "0"));
  // c reached a handler: the Processor is done sending b everywhere; then both
  // handler actors handled whatever reached them before.
  REQUIRE(eventually([&] { return kept->size() == 3 && twice->size() == 4; },
                     "b and c never reached the registrations still there"));
  REQUIRE(handler_drained(sys, removed_actor));
  REQUIRE(handler_drained(sys, shared_actor));
  CHECK(removed->lines() == Strings{"add a initial"});
  CHECK(twice->lines() == Strings{"add a initial", "add a initial", "add b", "add c"});
  caf::anon_send_exit(shared_actor, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(removed_actor, caf::exit_reason::user_shutdown);
}

// upstream: TestAddOnStoppedSharedInformer, TestStateSharedInformer
TEST_CASE_METHOD(InformerFixture, "a stopped informer refuses handlers and does not run again",
                 "[shared_informer][item-55][actor]") {
  auto log = std::make_shared<EventLog>();
  auto handle = add(log);
  informer->run();
  REQUIRE(informer->wait_for_sync(20s));
  informer->stop();
  CHECK(informer->is_stopped());
  auto refused = informer->add_handler(logging(log));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::stopped);
  CHECK(refused.error().message.find("because it has stopped already") != std::string::npos);
  informer->run();  // no-op
  informer->remove_handler(handle);  // safe after stop
  // A running informer on the same source sees the add: it went out to the watches.
  SharedInformerOptions witness_options;
  witness_options.source = source;
  SharedInformer witness(sys, witness_options);
  auto witnessed = std::make_shared<EventLog>();
  REQUIRE(witness.add_handler(logging(witnessed)));
  witness.run();
  REQUIRE(witness.wait_for_sync(20s));
  source->add(pod("after", "0"));
  REQUIRE(eventually([&] { return witnessed->size() == 1; },
                     "a running informer on the same source never saw the add"));
  CHECK(log->size() == 0);
  CHECK(informer->indexer().size() == 0);
  witness.stop();
}

TEST_CASE_METHOD(LiveFixture, "stop drains and ends every actor the informer spawned", "[shared_informer][actor]") {
  auto baseline = sys.registry().running();
  {
    SharedInformerOptions options;
    options.source = source;
    SharedInformer informer(sys, options);
    std::atomic<int> seen{0};
    HandlerFuncs f;
    f.on_add = [&](const ObjectPtr&, bool) { ++seen; };
    REQUIRE(informer.add_handler(f));
    REQUIRE(informer.add_handler(f));
    for (int i = 0; i < 100; ++i) source->add(pod("p" + std::to_string(i), "0"));
    informer.run();
    REQUIRE(informer.wait_for_sync(20s));
    CHECK(sys.registry().running() > baseline);
    informer.stop();
    CHECK(informer.indexer().size() == 100);
  }
  CHECK(eventually([&] { return sys.registry().running() == baseline; },
                   "the informer's actors never ended after stop", 5s));
}

TEST_CASE_METHOD(LiveFixture, "stop kills a handler that never finishes after the stop timeout",
                 "[shared_informer][actor]") {
  SharedInformerOptions options;
  options.source = source;
  options.stop_timeout = 200ms;
  SharedInformer informer(sys, options);
  auto release = std::make_shared<std::atomic<bool>>(false);
  HandlerFuncs f;
  f.on_add = [release](const ObjectPtr&, bool) {
    while (!*release) std::this_thread::sleep_for(1ms);  // stuck until the test lets go
  };
  REQUIRE(informer.add_handler(f));
  source->add(pod("a", "0"));
  informer.run();
  REQUIRE(informer.wait_for_sync(20s));
  std::thread unstick([release] {
    std::this_thread::sleep_for(1s);
    *release = true;  // a killed actor still finishes its running handler call
  });
  auto start = std::chrono::steady_clock::now();
  informer.stop();
  CHECK(std::chrono::steady_clock::now() - start < 15s);
  unstick.join();
}

TEST_CASE_METHOD(InformerFixture, "a handler that blocks holds back its sibling's notification for under 250 ms",
                 "[shared_informer][actor][scheduler]") {
  // The informer's actors are brief for the scheduler (actors/job_queue.hpp): the batches the
  // Processor sends to the two handlers stay queued on its worker with no alarm, and that
  // worker takes the blocking handler's first. Its user code runs in a MayBlock scope,
  // which arms the alarm for the sibling's batch: the sleeping worker takes it after 1 ms.
  // Without that scope the sibling waited the blocking handler's 2 s.
  auto release = std::make_shared<std::atomic<bool>>(false);
  HandlerFuncs blocking;
  blocking.on_add = [release](const ObjectPtr&, bool) {
    const auto until = std::chrono::steady_clock::now() + 2s;
    while (!*release && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
  };
  auto sibling_got = std::make_shared<std::promise<void>>();  // shared: the handler may outlive a failed check
  auto sibling_future = sibling_got->get_future();
  HandlerFuncs sibling;
  sibling.on_add = [sibling_got](const ObjectPtr&, bool) { sibling_got->set_value(); };  // one add: set once
  REQUIRE(informer->add_handler(blocking));  // registered first: its batch is sent first
  REQUIRE(informer->add_handler(sibling));
  informer->run();
  REQUIRE(informer->wait_for_sync(20s));
  // Both workers go idle first; had one stayed awake, the check below could only pass.
  std::this_thread::sleep_for(100ms);
  source->add(pod("a", "1"));
  const bool in_time = sibling_future.wait_for(250ms) == std::future_status::ready;
  *release = true;
  CHECK(in_time);
}

// upstream: TestSharedInformerErrorHandling (item 42, as the informer surfaces it)
TEST_CASE_METHOD(InformerFixture, "the watch error handler sees a failed list",
                 "[shared_informer][item-42][actor]") {
  auto errors = std::make_shared<EventLog>();
  REQUIRE(informer->set_watch_error_handler([errors](const kinformer::Error& e) { errors->add(e.to_string()); }));
  source->fail_next_list(kinformer::Error{Errc::server_error, "boom"});
  informer->run();
  REQUIRE(eventually([&] { return errors->size() >= 1; }, "the watch error handler never saw the failed list"));
  CHECK(errors->lines().front().find("boom") != std::string::npos);
  CHECK(informer->wait_for_sync(20s));  // and it recovered
}

TEST_CASE_METHOD(InformerFixture, "a chain with priorities and predicates runs through the facade",
                 "[shared_informer][processor][chain][actor]") {
  auto log = std::make_shared<EventLog>();
  kinformer::ChainFuncs gate;
  gate.on_add = [log](const ObjectPtr& o, bool) {
    log->add("gate " + std::string(o->name()));
    return o->label("blocked") ? kinformer::Verdict::stop : kinformer::Verdict::next;
  };
  kinformer::HandlerOptions first;
  first.group = "chain";
  first.priority = 1;
  kinformer::HandlerOptions second = first;
  second.priority = 2;
  second.predicate = kinformer::actors::in_namespace("default");
  HandlerFuncs after;
  after.on_add = [log](const ObjectPtr& o, bool) { log->add("after " + std::string(o->name())); };
  REQUIRE(informer->add_handler(after, second));  // registered first, runs second
  REQUIRE(informer->add_handler(gate, first));
  source->add(pod("a", "0"));
  source->add(pod("b", "0", {{"blocked", "yes"}}));
  source->add(pod("c", "0", {}, "other"));
  informer->run();
  REQUIRE(eventually([&] { return log->size() == 4; }, "the chain did not deliver the initial list"));
  auto lines = log->lines();
  CHECK(std::count(lines.begin(), lines.end(), "after a") == 1);
  CHECK(std::count(lines.begin(), lines.end(), "after b") == 0);  // stopped by the gate
  CHECK(std::count(lines.begin(), lines.end(), "after c") == 0);  // another namespace
  CHECK(std::find(lines.begin(), lines.end(), "gate a") < std::find(lines.begin(), lines.end(), "after a"));
}

TEST_CASE_METHOD(InformerFixture, "handlers are added replaced and removed from another thread while running",
                 "[shared_informer][processor][replace][item-48][item-54][actor]") {
  for (int i = 0; i < 5; ++i) source->add(pod("p" + std::to_string(i), "0"));
  informer->run();
  REQUIRE(informer->wait_for_sync(20s));
  auto witness = std::make_shared<EventLog>();  // stays registered: shows what the Processor sent
  add(witness);
  auto old_log = std::make_shared<EventLog>();
  auto new_log = std::make_shared<EventLog>();
  auto new_actor = kinformer::actors::spawn_handler(sys, kinformer::actors::dispatch_to(logging(new_log)));
  std::optional<kinformer::Result<HandlerRegistration>> added;  // Catch2 asserts on this thread only
  std::thread other([&] { added = informer->add_handler(logging(old_log)); });
  other.join();
  REQUIRE(*added);
  auto handle = added->value();
  REQUIRE(eventually([&] { return handle.has_synced(); }, "the late handler's replay was never handled"));
  CHECK(old_log->size() == 5);
  std::optional<kinformer::Result<void>> swapped;
  std::thread swapper([&] { swapped = informer->replace_handler(handle, new_actor, {}); });
  swapper.join();
  REQUIRE(*swapped);
  source->add(pod("after-swap", "0"));
  REQUIRE(eventually([&] { return new_log->size() == 1; }, "the replacement never got the next change"));
  CHECK(new_log->lines() == Strings{"add after-swap"});
  CHECK(old_log->size() == 5);  // nothing delivered to both
  informer->remove_handler(handle);
  source->add(pod("after-remove", "0"));
  source->add(pod("marker", "0"));
  // The marker reached the witness: the Processor is done sending after-remove anywhere.
  REQUIRE(eventually(
      [&] {
        auto lines = witness->lines();
        return !lines.empty() && lines.back() == "add marker";
      },
      "the marker never reached the witness"));
  REQUIRE(handler_drained(sys, new_actor));
  CHECK(new_log->size() == 1);
  caf::anon_send_exit(new_actor, caf::exit_reason::user_shutdown);
  SharedInformerOptions other_options;
  other_options.source = source;
  SharedInformer foreign(sys, other_options);
  auto refused = foreign.replace_handler(handle, logging(new_log), {});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::invalid_key);
}

TEST_CASE_METHOD(InformerFixture, "a handler that keeps failing is removed with a clear status on its handle",
                 "[shared_informer][processor][supervision][actor]") {
  kinformer::HandlerOptions options;
  options.supervision.max_restarts = 1;
  options.supervision.backoff_initial = 10ms;
  HandlerFuncs f;
  f.on_add = [](const ObjectPtr&, bool) { throw std::runtime_error("always"); };
  auto handle = informer->add_handler(f, options);
  REQUIRE(handle);
  auto log = std::make_shared<EventLog>();
  add(log);
  for (int i = 0; i < 3; ++i) source->add(pod("p" + std::to_string(i), "0"));
  informer->run();
  REQUIRE(eventually([&] { return handle->failed(); }, "supervision never gave up on the failing handler"));
  CHECK(handle->failure().find("restarts") != std::string::npos);
  CHECK(handle->restarts() == 1);
  CHECK(handle->dead_letters() >= 2);
  source->add(pod("later", "0"));
  CHECK(eventually([&] { return log->size() == 4; }, "the healthy handler stopped receiving"));
}
