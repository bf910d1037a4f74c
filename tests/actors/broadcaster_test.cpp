// Tests of the broadcaster and the handler actors (actors/broadcaster.hpp,
// actors/handler.hpp), through the Controller on the deterministic scheduler.
#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "actors/broadcaster.hpp"
#include "actors/handler.hpp"
#include "tests/actors/pipeline_fixture.hpp"
#include "tests/support/objects.hpp"

using kinformer::DeltaType;
using kinformer::testing::describe;
using kinformer::testing::PipelineFixture;
using kinformer::testing::pod;
using kinformer::testing::Recorder;
using Strings = std::vector<std::string>;
namespace actors = kinformer::actors;

namespace {

/// The registration handle's HasSynced rule (informer-semantics.md §7.6).
bool handle_synced(const PipelineFixture& f, const Recorder& r) {
  const auto& status = *r.registration->status;
  return f.status->distributed_synced && status.attached && status.pending_initial <= 0;
}

}  // namespace

// upstream: TestAddWhileActive
TEST_CASE_METHOD(PipelineFixture, "a handler added after sync gets the cache replayed as initial adds, then changes",
                 "[broadcaster][item-48][actor]") {
  auto early = attach();
  replace({pod("a", "1"), pod("b", "1")});
  // The late joiner's attach travels behind a change the Controller already applied.
  watch({{DeltaType::updated, pod("a", "2")}});
  auto late = attach();
  watch({{DeltaType::added, pod("c", "3")}});
  std::sort(late.log->begin(), late.log->begin() + 2);  // the replay's order is unspecified
  CHECK(*late.log == Strings{"add default/a 2 initial", "add default/b 1 initial", "add default/c 3"});
  CHECK(early.log->size() == 4);
}

TEST_CASE_METHOD(PipelineFixture, "a late joiner's handle syncs only once its replay was handled",
                 "[broadcaster][item-48][actor]") {
  replace({pod("a", "1"), pod("b", "1")});
  Recorder late;
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 7;
  registration->owned = true;
  auto log = late.log;
  registration->handler =
      track(actors::spawn_handler(sys, [log](const actors::Notification& n) { log->push_back(describe(n)); }));
  late.registration = registration;
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  sched.prioritize(controller);
  sched.run_once();  // the Controller snapshots and forwards
  sched.prioritize(broadcaster);
  sched.run_once();  // the broadcaster queues the replay for the handler
  CHECK(registration->status->attached);
  CHECK_FALSE(handle_synced(*this, late));
  run();
  CHECK(late.log->size() == 2);
  CHECK(handle_synced(*this, late));
}

// upstream: TestStateSharedInformer (handle HasSynced after the initial OnAdds)
TEST_CASE_METHOD(PipelineFixture, "a handler registered before the list syncs after handling the initial list",
                 "[broadcaster][item-47][actor]") {
  auto early = attach();
  CHECK_FALSE(handle_synced(*this, early));
  replace({pod("a", "1")});
  CHECK(*early.log == Strings{"add default/a 1 initial"});
  CHECK(handle_synced(*this, early));
}

TEST_CASE_METHOD(PipelineFixture, "a handler that throws neither crashes nor stops the others",
                 "[broadcaster][handler][actor]") {
  auto stats = std::make_shared<actors::HandlerStats>();
  auto seen = std::make_shared<Strings>();
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 50;
  registration->owned = true;
  registration->handler = track(actors::spawn_handler(
      sys,
      [seen](const actors::Notification& n) {
        if (n.key() == "default/b") throw std::runtime_error("boom");
        seen->push_back(std::string(n.key()));
      },
      stats));
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  auto other = attach();
  replace({pod("a", "1"), pod("b", "1"), pod("c", "1")});
  watch({{DeltaType::added, pod("d", "2")}});
  CHECK(*seen == Strings{"default/a", "default/c", "default/d"});
  CHECK(stats->failures == 1);
  CHECK(stats->notifications == 4);
  CHECK(other.log->size() == 4);
}

TEST_CASE_METHOD(PipelineFixture, "the lambda form calls only the functions it has", "[handler][actor]") {
  auto adds = std::make_shared<Strings>();
  auto deletes = std::make_shared<Strings>();
  actors::HandlerFuncs funcs;
  funcs.on_add = [adds](const kinformer::ObjectPtr& o, bool initial) {
    adds->push_back(std::string(o->key()) + (initial ? " initial" : ""));
  };
  funcs.on_delete = [deletes](const actors::DeletedObject& d) {
    deletes->push_back(std::string(d.key()) + (d.is_tombstone() ? " tombstone" : ""));
  };
  attach_func(actors::dispatch_to(funcs));
  replace({pod("a", "1"), pod("b", "1")});
  watch({{DeltaType::updated, pod("a", "2")}, {DeltaType::deleted, pod("a", "3")}});
  replace({}, "9");
  CHECK(*adds == Strings{"default/a initial", "default/b initial"});
  CHECK(*deletes == Strings{"default/a", "default/b tombstone"});
}

// upstream: TestDeletionHandlingObjectToName
TEST_CASE("a tombstone's key is the deletion-handling key", "[handler][item-60][unit]") {
  auto tombstone = std::make_shared<kinformer::Tombstone>(kinformer::Tombstone{"ns/gone", nullptr});
  actors::DeletedObject deleted{nullptr, tombstone};
  CHECK(deleted.key() == "ns/gone");
  CHECK(deleted.last_known() == nullptr);
  actors::DeletedObject real{pod("x", "1"), nullptr};
  CHECK(real.key() == "default/x");
}

// upstream: TestSharedInformerRemoveHandler, TestRemovingRemovedSharedInformer
TEST_CASE_METHOD(PipelineFixture, "a removed handler gets nothing more and removing twice is harmless",
                 "[broadcaster][item-54][actor]") {
  auto kept = attach();
  auto removed = attach();
  replace({pod("a", "1")});
  detach(removed);
  detach(removed);
  self->send(controller, actors::detach_atom::value, actors::RegistrationId{12345});  // unknown id
  run();
  watch({{DeltaType::added, pod("b", "2")}});
  CHECK(*removed.log == Strings{"add default/a 1 initial"});
  CHECK(*kept.log == Strings{"add default/a 1 initial", "add default/b 2"});
  CHECK(removed.registration->status->removed);
}

TEST_CASE_METHOD(PipelineFixture, "a handler actor that dies is dropped and the others go on",
                 "[broadcaster][handler][actor]") {
  auto doomed = attach();
  auto other = attach();
  replace({pod("a", "1")});
  caf::anon_send_exit(doomed.registration->handler, caf::exit_reason::kill);
  run();
  watch({{DeltaType::added, pod("b", "2")}});
  CHECK(other.log->size() == 2);
  CHECK(status->handler_failures == 1);
  CHECK(doomed.registration->status->removed);
}

namespace {
struct OneKeyBatches : PipelineFixture {
  OneKeyBatches() : PipelineFixture(/*max_buffered_keys=*/1000, /*max_batch=*/1) {}
};
}  // namespace

TEST_CASE_METHOD(OneKeyBatches, "a handler's mailbox never holds more than the window of batches",
                 "[broadcaster][credit][actor]") {
  caf::scoped_actor silent{sys};  // never answers
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 77;
  registration->handler = caf::actor_cast<actors::HandlerActor>(silent.ptr());
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  run();
  std::vector<kinformer::ObjectPtr> items;
  for (int i = 0; i < 10; ++i) items.push_back(pod("p" + std::to_string(i), "1"));
  replace(items);
  CHECK(indexer->size() == 10);  // the Controller was not held back (credit 1000)...
  CHECK(silent->mailbox().size() == 2);  // ...but the handler got two batches only
}
