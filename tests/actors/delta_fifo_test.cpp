// Actor tests of the DeltaFIFO actor (actors/delta_fifo.hpp).
#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/error.hpp>

#include "actors/delta_fifo.hpp"
#include "actors/errors.hpp"
#include "tests/actors/informer_fixture.hpp"
#include "tests/support/objects.hpp"

using kinformer::DeltaType;
using kinformer::Errc;
using kinformer::ObjectPtr;
using kinformer::testing::pod;
namespace actors = kinformer::actors;

namespace {

actors::ListSnapshotPtr snapshot(std::vector<ObjectPtr> items, std::string rv = "1") {
  return std::make_shared<actors::ListSnapshot>(actors::ListSnapshot{std::move(items), std::move(rv)});
}

actors::DeltasPtr deltas(std::vector<kinformer::Delta> items) {
  return std::make_shared<kinformer::Deltas>(std::move(items));
}

struct FifoFixture : kinformer::testing::DeterministicFixture {
  actors::DeltaFIFOActor fifo = track(actors::spawn_delta_fifo(sys, {}));

  using PendingPop = std::shared_ptr<Answer<actors::PoppedBatchPtr>>;

  PendingPop pop(std::size_t n) { return ask_later<actors::PoppedBatchPtr>(fifo, actors::pop_atom::value, n); }

  std::size_t send_deltas(std::vector<kinformer::Delta> items) {
    return ask<std::size_t>(fifo, actors::deltas_atom::value, deltas(std::move(items)));
  }
};

}  // namespace

TEST_CASE_METHOD(FifoFixture, "producers get the queue depth back", "[delta_fifo][actor]") {
  CHECK(send_deltas({{DeltaType::added, pod("a", "1")}, {DeltaType::added, pod("b", "2")}}) == 2);
  CHECK(send_deltas({{DeltaType::updated, pod("a", "3")}}) == 2);
}

TEST_CASE_METHOD(FifoFixture, "a depth query reports the queue length and changes nothing", "[delta_fifo][actor]") {
  CHECK(ask<std::size_t>(fifo, actors::depth_atom::value) == 0);
  send_deltas({{DeltaType::added, pod("a", "1")}, {DeltaType::added, pod("b", "2")}});
  CHECK(ask<std::size_t>(fifo, actors::depth_atom::value) == 2);
  CHECK(ask<std::size_t>(fifo, actors::depth_atom::value) == 2);
  CHECK(ask<bool>(fifo, actors::synced_atom::value));  // watch deltas populate the FIFO (item 14)
  auto p = pop(10);
  REQUIRE(p->value.has_value());
  CHECK((*p->value)->size() == 2);
  CHECK(ask<std::size_t>(fifo, actors::depth_atom::value) == 0);
}

// issue 8: a paused Reflector resumes the moment the queue has drained to its low-water mark.
TEST_CASE_METHOD(FifoFixture, "a depth request with a mark is answered once pops bring the queue down to it",
                 "[delta_fifo][actor]") {
  send_deltas(
      {{DeltaType::added, pod("a", "1")}, {DeltaType::added, pod("b", "1")}, {DeltaType::added, pod("c", "1")}});
  CHECK(ask<std::size_t>(fifo, actors::depth_atom::value, std::size_t{3}) == 3);  // at the mark: at once
  auto waiting = ask_later<std::size_t>(fifo, actors::depth_atom::value, std::size_t{1});
  CHECK_FALSE(waiting->answered());
  pop(1);
  CHECK_FALSE(waiting->answered());  // 2 > 1
  pop(1);
  REQUIRE(waiting->value.has_value());
  CHECK(*waiting->value == 1);

  SECTION("shutdown answers a waiting request whatever the depth") {
    auto at_zero = ask_later<std::size_t>(fifo, actors::depth_atom::value, std::size_t{0});
    CHECK_FALSE(at_zero->answered());
    self->send(fifo, actors::shutdown_atom::value);
    run();
    REQUIRE(at_zero->value.has_value());
    CHECK(*at_zero->value == 1);
  }
}

TEST_CASE_METHOD(FifoFixture, "a pop on an empty FIFO is answered when something arrives", "[delta_fifo][actor]") {
  auto p = pop(10);
  REQUIRE_FALSE(p->answered());
  send_deltas({{DeltaType::added, pod("a", "1")}});
  REQUIRE(p->value.has_value());
  REQUIRE((*p->value)->size() == 1);
  CHECK((*p->value)->front().deltas.front().object->name() == "a");
}

TEST_CASE_METHOD(FifoFixture, "pop hands out at most n keys in queue order", "[delta_fifo][actor]") {
  send_deltas(
      {{DeltaType::added, pod("a", "1")}, {DeltaType::added, pod("b", "1")}, {DeltaType::added, pod("c", "1")}});
  auto p = pop(2);
  REQUIRE(p->value.has_value());
  REQUIRE((*p->value)->size() == 2);
  CHECK((*p->value)->at(0).deltas.front().object->name() == "a");
  CHECK((*p->value)->at(1).deltas.front().object->name() == "b");
}

// upstream: TestDeltaFIFO_PopShouldUnblockWhenClosed (actor form)
TEST_CASE_METHOD(FifoFixture, "shutdown answers every parked pop with fifo_closed", "[delta_fifo][item-18][actor]") {
  auto first = pop(1);
  auto second = pop(1);
  REQUIRE_FALSE(first->answered());
  self->send(fifo, actors::shutdown_atom::value);
  run();
  REQUIRE(first->error.has_value());
  REQUIRE(second->error.has_value());
  CHECK(*first->error == Errc::fifo_closed);
  CHECK(*second->error == Errc::fifo_closed);
}

TEST_CASE_METHOD(FifoFixture, "shutdown still drains queued keys before fifo_closed", "[delta_fifo][item-18][actor]") {
  send_deltas({{DeltaType::added, pod("a", "1")}, {DeltaType::added, pod("b", "1")}});
  self->send(fifo, actors::shutdown_atom::value);
  run();
  auto p = pop(1);
  REQUIRE(p->value.has_value());
  CHECK((*p->value)->front().deltas.front().object->name() == "a");
  p = pop(5);
  REQUIRE(p->value.has_value());
  CHECK((*p->value)->front().deltas.front().object->name() == "b");
  p = pop(5);  // closed and drained: the actor is gone or answers fifo_closed
  REQUIRE(p->error.has_value());
  CHECK((*p->error == Errc::fifo_closed || *p->error == caf::sec::request_receiver_down));
}

// upstream: TestDeltaFIFO_basic (actor form: two producers)
TEST_CASE_METHOD(FifoFixture, "each producer's items pop in its own order", "[delta_fifo][item-21][actor]") {
  caf::scoped_actor other{sys};
  for (int i = 0; i < 50; ++i) {
    self->send(fifo, actors::deltas_atom::value, deltas({{DeltaType::added, pod("a" + std::to_string(i), "1")}}));
    other->send(fifo, actors::deltas_atom::value, deltas({{DeltaType::added, pod("b" + std::to_string(i), "1")}}));
  }
  run();
  auto p = pop(1000);
  REQUIRE(p->value.has_value());
  std::vector<std::string> from_self, from_other, expected_self, expected_other;
  for (const auto& popped : **p->value) {
    std::string name(popped.deltas.front().object->name());
    (name[0] == 'a' ? from_self : from_other).push_back(name);
  }
  for (int i = 0; i < 50; ++i) {
    expected_self.push_back("a" + std::to_string(i));
    expected_other.push_back("b" + std::to_string(i));
  }
  CHECK(from_self == expected_self);
  CHECK(from_other == expected_other);
}

TEST_CASE_METHOD(FifoFixture, "an empty first list wakes a parked pop with an empty batch",
                 "[delta_fifo][item-14][actor]") {
  auto p = pop(4);
  REQUIRE_FALSE(p->answered());
  self->send(fifo, actors::replace_atom::value, snapshot({}));
  run();
  REQUIRE(p->value.has_value());
  CHECK((*p->value)->empty());
  CHECK(ask<bool>(fifo, actors::synced_atom::value));
}

TEST_CASE_METHOD(FifoFixture, "the initial list pops with the initial-list flag and then reports synced",
                 "[delta_fifo][item-15][actor]") {
  self->send(fifo, actors::replace_atom::value, snapshot({pod("a", "1"), pod("b", "1")}));
  run();
  CHECK_FALSE(ask<bool>(fifo, actors::synced_atom::value));
  auto p = pop(10);
  REQUIRE(p->value.has_value());
  REQUIRE((*p->value)->size() == 2);
  CHECK((*p->value)->at(0).is_in_initial_list);
  CHECK((*p->value)->at(1).is_in_initial_list);
  CHECK(ask<bool>(fifo, actors::synced_atom::value));
}

// informer-semantics.md §10: the FIFO keeps its own known view at pop time.
TEST_CASE_METHOD(FifoFixture, "a delete right after its add was popped is still queued",
                 "[delta_fifo][race][item-4][actor]") {
  send_deltas({{DeltaType::added, pod("x", "1")}});
  auto p = pop(1);  // popped, "in flight" to a Controller that has not applied it
  REQUIRE(p->value.has_value());
  CHECK(send_deltas({{DeltaType::deleted, pod("x", "2")}}) == 1);
  auto q = pop(1);
  REQUIRE(q->value.has_value());
  CHECK((*q->value)->front().deltas.front().type == DeltaType::deleted);
}

TEST_CASE_METHOD(FifoFixture, "a relist that lacks an object still in flight tombstones it",
                 "[delta_fifo][race][item-7][actor]") {
  send_deltas({{DeltaType::added, pod("x", "1")}});
  auto p = pop(1);
  REQUIRE(p->value.has_value());
  self->send(fifo, actors::replace_atom::value, snapshot({pod("y", "3")}, "3"));
  run();
  auto q = pop(10);
  REQUIRE(q->value.has_value());
  bool tombstoned = false;
  for (const auto& popped : **q->value)
    for (const auto& d : popped.deltas)
      if (d.is_tombstone() && d.key() == "default/x") tombstoned = true;
  CHECK(tombstoned);
}
