// Tests of the Controller (actors/controller.hpp): DeltaApplier without actors,
// then the FIFO → Controller → Processor chain on the deterministic scheduler.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "actors/controller.hpp"
#include "tests/actors/pipeline_fixture.hpp"
#include "tests/support/objects.hpp"

using kinformer::DeltaType;
using kinformer::Indexer;
using kinformer::ObjectPtr;
using kinformer::PoppedDeltas;
using kinformer::Tombstone;
using kinformer::testing::describe;
using kinformer::testing::PipelineFixture;
using kinformer::testing::pod;
using Strings = std::vector<std::string>;
namespace actors = kinformer::actors;

namespace {

PoppedDeltas popped(std::vector<kinformer::Delta> deltas, bool initial = false) {
  return PoppedDeltas{std::move(deltas), initial};
}

kinformer::Delta delta(DeltaType type, ObjectPtr object) { return kinformer::Delta{type, std::move(object), nullptr}; }

Strings apply(actors::DeltaApplier& applier, const PoppedDeltas& p) {
  std::vector<actors::Notification> out;
  applier.apply(p, out);
  Strings lines;
  for (const auto& n : out) lines.push_back(describe(n));
  return lines;
}

}  // namespace

// informer-semantics.md §6, the processDeltas table
TEST_CASE("applying deltas follows the processDeltas table", "[controller][unit]") {
  auto indexer = std::make_shared<Indexer>();
  actors::DeltaApplier applier(indexer);

  SECTION("an Added delta for an absent key adds and notifies added with the initial-list flag") {
    CHECK(apply(applier, popped({delta(DeltaType::added, pod("a", "1"))}, true)) == Strings{"add default/a 1 initial"});
    CHECK(indexer->get_by_key("default/a") != nullptr);
  }
  SECTION("an Added delta for a cached key becomes an update") {
    (void)apply(applier, popped({delta(DeltaType::added, pod("a", "1"))}));
    CHECK(apply(applier, popped({delta(DeltaType::added, pod("a", "2"))})) == Strings{"update default/a 1->2"});
  }
  SECTION("an Updated delta for an unknown key becomes an add") {
    CHECK(apply(applier, popped({delta(DeltaType::updated, pod("a", "2"))})) == Strings{"add default/a 2"});
  }
  SECTION("Replaced and Sync deltas update a cached key") {
    (void)apply(applier, popped({delta(DeltaType::added, pod("a", "1"))}));
    CHECK(apply(applier, popped({delta(DeltaType::replaced, pod("a", "3"))})) == Strings{"update default/a 1->3"});
    CHECK(apply(applier, popped({delta(DeltaType::sync, indexer->get_by_key("default/a"))})) ==
          Strings{"update default/a 3->3"});
  }
  SECTION("a Deleted delta removes the key and notifies the final object") {
    (void)apply(applier, popped({delta(DeltaType::added, pod("a", "1"))}));
    CHECK(apply(applier, popped({delta(DeltaType::deleted, pod("a", "2"))})) == Strings{"delete default/a 2"});
    CHECK(indexer->size() == 0);
  }
  SECTION("a tombstone removes the key and notifies the tombstone") {
    (void)apply(applier, popped({delta(DeltaType::added, pod("a", "1"))}));
    kinformer::Delta gone{DeltaType::deleted, nullptr,
                          std::make_shared<Tombstone>(Tombstone{"default/a", indexer->get_by_key("default/a")})};
    CHECK(apply(applier, popped({gone})) == Strings{"delete default/a tombstone"});
    CHECK(indexer->size() == 0);
  }
  SECTION("all deltas of one key apply in order") {
    CHECK(apply(applier, popped({delta(DeltaType::added, pod("a", "1")), delta(DeltaType::updated, pod("a", "2")),
                                 delta(DeltaType::deleted, pod("a", "3"))})) ==
          Strings{"add default/a 1", "update default/a 1->2", "delete default/a 3"});
  }
}

TEST_CASE("a sync update is one whose old and new share the resourceVersion", "[controller][unit]") {
  auto indexer = std::make_shared<Indexer>();
  actors::DeltaApplier applier(indexer);
  std::vector<actors::Notification> out;
  applier.apply(popped({delta(DeltaType::added, pod("a", "1"))}), out);
  applier.apply(popped({delta(DeltaType::replaced, pod("a", "1"))}), out);
  applier.apply(popped({delta(DeltaType::replaced, pod("a", "2"))}), out);
  REQUIRE(out.size() == 3);
  CHECK(out[1].is_sync());
  CHECK_FALSE(out[2].is_sync());
}

TEST_CASE("a decoder runs once per new object and its value follows updates", "[controller][typed][unit]") {
  auto indexer = std::make_shared<Indexer>();
  int decoded = 0;
  actors::DeltaApplier applier(indexer, [&](const kinformer::Object& o) {
    ++decoded;
    return std::make_shared<const std::string>(o.resource_version());
  });
  std::vector<actors::Notification> out;
  applier.apply(popped({delta(DeltaType::added, pod("a", "1"))}), out);
  applier.apply(popped({delta(DeltaType::updated, pod("a", "2"))}), out);
  applier.apply(popped({delta(DeltaType::sync, indexer->get_by_key("default/a"))}), out);
  CHECK(decoded == 2);
  REQUIRE(out.size() == 3);
  CHECK(*std::static_pointer_cast<const std::string>(out[1].typed_old_object) == "1");
  CHECK(*std::static_pointer_cast<const std::string>(out[1].typed_object) == "2");
  CHECK(out[2].typed_object == out[2].typed_old_object);
  auto replay = applier.snapshot();
  REQUIRE(replay.size() == 1);
  CHECK(*std::static_pointer_cast<const std::string>(replay[0].typed_object) == "2");
}

TEST_CASE_METHOD(PipelineFixture, "the initial list reaches the cache and the handler flagged as initial",
                 "[controller][item-47][actor]") {
  auto handler = attach();
  replace({pod("a", "1"), pod("b", "1")});
  CHECK(cached_keys() == Strings{"default/a", "default/b"});
  CHECK(*handler.log == Strings{"add default/a 1 initial", "add default/b 1 initial"});
  CHECK(status->indexer_synced);
  CHECK(status->distributed_synced);
}

TEST_CASE_METHOD(PipelineFixture, "the informer is not synced before the first list is applied",
                 "[controller][actor]") {
  watch({});
  CHECK_FALSE(status->indexer_synced);
  replace({});
  CHECK(status->indexer_synced);  // an empty first list syncs at once
}

TEST_CASE_METHOD(PipelineFixture, "watch events after the list are not initial", "[controller][item-47][actor]") {
  auto handler = attach();
  replace({pod("a", "1")});
  watch({{DeltaType::added, pod("b", "2")}, {DeltaType::updated, pod("a", "3")}, {DeltaType::deleted, pod("b", "4")}});
  // keys pop in order of first arrival; b's deltas pop together
  CHECK(*handler.log ==
        Strings{"add default/a 1 initial", "add default/b 2", "delete default/b 4", "update default/a 1->3"});
  CHECK(cached_keys() == Strings{"default/a"});
}

// upstream: TestSharedInformerWatchDisruption
TEST_CASE_METHOD(PipelineFixture, "a relist updates changed objects, adds new ones and tombstones vanished ones",
                 "[controller][item-52][actor]") {
  auto plain = attach();
  actors::HandlerOptions resyncing;
  resyncing.resync_period = std::chrono::seconds(1);
  auto syncing = attach(resyncing);
  replace({pod("pod1", "1"), pod("pod2", "2"), pod("pod4", "4")});
  plain.log->clear();
  syncing.log->clear();
  // behind the watch's back: pod2 changed, pod3 created, pod4 deleted; then a relist
  replace({pod("pod1", "1"), pod("pod2", "5"), pod("pod3", "6")}, "6");
  CHECK(*plain.log == Strings{"update default/pod2 2->5", "add default/pod3 6", "delete default/pod4 tombstone"});
  CHECK(*syncing.log == Strings{"update default/pod1 1->1", "update default/pod2 2->5", "add default/pod3 6",
                                "delete default/pod4 tombstone"});
  CHECK(cached_keys() == Strings{"default/pod1", "default/pod2", "default/pod3"});
}

TEST_CASE_METHOD(PipelineFixture, "a resync reaches only handlers that asked for resyncs", "[controller][actor]") {
  auto plain = attach();
  actors::HandlerOptions resyncing;
  resyncing.resync_period = std::chrono::seconds(1);
  auto syncing = attach(resyncing);
  replace({pod("a", "1")});
  resync();
  CHECK(*plain.log == Strings{"add default/a 1 initial"});
  CHECK(*syncing.log == Strings{"add default/a 1 initial", "update default/a 1->1"});
}

// informer-semantics.md §10: create-then-quick-delete, with the pop in flight
TEST_CASE_METHOD(PipelineFixture, "a delete arriving while its add is in flight to the Controller is not lost",
                 "[controller][race][item-4][actor]") {
  auto handler = attach();
  replace({});
  // The FIFO answers the parked pop with the add; before the Controller runs, the
  // FIFO also takes the delete.
  fifo_only(actors::deltas_atom::value, deltas({{DeltaType::added, pod("x", "1")}}));
  fifo_only(actors::deltas_atom::value, deltas({{DeltaType::deleted, pod("x", "2")}}));
  run();
  CHECK(*handler.log == Strings{"add default/x 1", "delete default/x 2"});
  CHECK(cached_keys().empty());
}

// informer-semantics.md §10: relist during flight
TEST_CASE_METHOD(PipelineFixture, "a relist while an add is in flight tombstones the object",
                 "[controller][race][item-7][actor]") {
  auto handler = attach();
  replace({});
  fifo_only(actors::deltas_atom::value, deltas({{DeltaType::added, pod("x", "1")}}));
  auto list = std::make_shared<actors::ListSnapshot>(actors::ListSnapshot{{pod("y", "3")}, "3"});
  fifo_only(actors::replace_atom::value, actors::ListSnapshotPtr{list});
  run();
  CHECK(*handler.log == Strings{"add default/x 1", "add default/y 3", "delete default/x tombstone"});
  CHECK(cached_keys() == Strings{"default/y"});
}

TEST_CASE_METHOD(PipelineFixture, "shutdown drains the FIFO into the cache and ends the Controller and the Processor",
                 "[controller][actor]") {
  auto handler = attach();
  replace({pod("a", "1"), pod("b", "1")});
  watch({{DeltaType::added, pod("c", "2")}});
  self->monitor(controller);
  self->monitor(processor);
  self->monitor(handler.registration->handler);
  self->send(fifo, actors::shutdown_atom::value);
  run();
  CHECK(cached_keys() == Strings{"default/a", "default/b", "default/c"});
  int down = 0;
  self->receive_for(down, 3)([](caf::down_msg&) {}, caf::after(std::chrono::seconds(0)) >> [] {
    FAIL("an actor did not end after shutdown: controller, processor or the owned handler");
  });
}

namespace {
struct TightCredit : PipelineFixture {
  TightCredit() : PipelineFixture(credit(/*max_buffered_keys=*/2), /*max_batch=*/8) {}
};
}  // namespace

TEST_CASE_METHOD(TightCredit, "a handler that never answers holds back neither the cache nor the other handlers",
                 "[controller][credit][item-56][actor]") {
  // The credit comes back once every group handled a batch; the silent group is cut
  // loose 20 ms (lag_timeout) after the other one finished a batch it still holds.
  caf::scoped_actor silent{sys};  // never receives, so never answers
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 99;
  registration->handler = caf::actor_cast<actors::HandlerActor>(silent.ptr());
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  run();
  auto other = attach();
  replace({pod("a", "1"), pod("b", "1"), pod("c", "1"), pod("d", "1"), pod("e", "1")});
  CHECK(indexer->size() == 2);
  advance(std::chrono::milliseconds(20), std::chrono::milliseconds(1));
  CHECK(indexer->size() == 5);
  CHECK(other.log->size() == 5);
  CHECK(silent->mailbox().size() == 1);  // one batch at a time
}
