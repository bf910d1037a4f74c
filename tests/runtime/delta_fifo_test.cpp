#include "runtime/delta_fifo.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/objects.hpp"

using kinformer::Delta;
using kinformer::DeltaFIFO;
using kinformer::DeltaFIFOOptions;
using kinformer::Deltas;
using kinformer::DeltaType;
using kinformer::Errc;
using kinformer::Error;
using kinformer::ObjectPtr;
using kinformer::PoppedDeltas;
using kinformer::Result;
using kinformer::testing::pod;

namespace {

DeltaFIFOOptions known(std::vector<ObjectPtr> objects, bool emit_replaced = true) {
  DeltaFIFOOptions options;
  options.known_objects = std::move(objects);
  options.emit_delta_type_replaced = emit_replaced;
  return options;
}

DeltaFIFOOptions no_known_objects() {
  DeltaFIFOOptions options;
  options.track_known_objects = false;
  return options;
}

// Producer calls in tests must succeed; a failure is a test bug worth stopping on.
void ok(const Result<void>& r) {
  INFO((r ? std::string() : r.error().to_string()));
  REQUIRE(r);
}

PoppedDeltas pop_one(DeltaFIFO& fifo) {
  auto popped = fifo.pop();
  INFO((popped ? std::string("queue empty") : popped.error().to_string()));
  REQUIRE(popped);
  REQUIRE(popped->has_value());
  return std::move(**popped);
}

std::vector<DeltaType> types(const Deltas& deltas) {
  std::vector<DeltaType> out;
  for (const Delta& d : deltas) out.push_back(d.type);
  return out;
}

// The resourceVersion of each delta's (newest) object; "-" for a tombstone without one.
std::vector<std::string> rvs(const Deltas& deltas) {
  std::vector<std::string> out;
  for (const Delta& d : deltas)
    out.emplace_back(d.newest_object() ? std::string(d.newest_object()->resource_version()) : "-");
  return out;
}

std::string newest_rv(const PoppedDeltas& p) { return std::string(p.deltas.back().newest_object()->resource_version()); }

bool queue_is_empty(DeltaFIFO& fifo) {
  auto popped = fifo.pop();
  return popped && !popped->has_value();
}

}  // namespace

// upstream: TestDeltaFIFO_addUpdate
TEST_CASE("changes to one key before a pop come out as one pop ending with the newest",
          "[delta_fifo][item-1][unit]") {
  DeltaFIFO fifo;
  ok(fifo.add(pod("foo", "10")));
  ok(fifo.update(pod("foo", "12")));
  ok(fifo.delete_object(pod("foo", "15")));
  CHECK(fifo.size() == 1);
  PoppedDeltas p = pop_one(fifo);
  CHECK(types(p.deltas) == std::vector{DeltaType::added, DeltaType::updated, DeltaType::deleted});
  CHECK(rvs(p.deltas) == std::vector<std::string>{"10", "12", "15"});
  CHECK(queue_is_empty(fifo));
}

// upstream: TestDeltaFIFO_detectLineJumpers
TEST_CASE("keys pop in order of first arrival and a re-added key goes to the tail",
          "[delta_fifo][item-2][unit]") {
  DeltaFIFO fifo;
  ok(fifo.add(pod("foo", "10")));
  ok(fifo.add(pod("bar", "1")));
  ok(fifo.add(pod("foo", "11")));
  ok(fifo.add(pod("foo", "13")));
  ok(fifo.add(pod("zab", "30")));
  CHECK(fifo.list_keys() == std::vector<std::string>{"default/foo", "default/bar", "default/zab"});

  PoppedDeltas foo = pop_one(fifo);
  CHECK(foo.deltas.back().key() == "default/foo");
  CHECK(newest_rv(foo) == "13");
  ok(fifo.add(pod("foo", "14")));  // after foo was popped: behind zab

  CHECK(pop_one(fifo).deltas.back().key() == "default/bar");
  CHECK(pop_one(fifo).deltas.back().key() == "default/zab");
  PoppedDeltas again = pop_one(fifo);
  CHECK(again.deltas.back().key() == "default/foo");
  CHECK(rvs(again.deltas) == std::vector<std::string>{"14"});
}

// upstream: TestDeltaFIFO_enqueueingNoLister
TEST_CASE("without known objects a delete of a key with nothing queued is dropped",
          "[delta_fifo][item-3][unit]") {
  DeltaFIFO fifo(no_known_objects());
  ok(fifo.add(pod("foo", "10")));
  ok(fifo.update(pod("bar", "15")));
  ok(fifo.add(pod("qux", "17")));
  ok(fifo.delete_object(pod("qux", "18")));
  ok(fifo.delete_object(pod("baz", "20")));  // nothing queued, nothing known: dropped

  std::map<std::string, std::string> newest;
  while (!fifo.empty()) {
    PoppedDeltas p = pop_one(fifo);
    newest[std::string(p.deltas.back().key())] = newest_rv(p);
  }
  CHECK(newest == std::map<std::string, std::string>{
                      {"default/foo", "10"}, {"default/bar", "15"}, {"default/qux", "18"}});

  // Even a popped key is unknown without the view: its delete is dropped too.
  ok(fifo.delete_object(pod("foo", "11")));
  CHECK(fifo.empty());
  CHECK(fifo.known_count() == 0);
}

// upstream: TestDeltaFIFO_enqueueingWithLister, TestDeltaFIFO_DeleteExistingNonPropagated
TEST_CASE("with known objects a delete of a known key with nothing queued is queued",
          "[delta_fifo][item-4][unit]") {
  SECTION("a key known from the start") {
    DeltaFIFO fifo(known({pod("baz", "7")}));
    ok(fifo.delete_object(pod("baz", "7")));
    PoppedDeltas p = pop_one(fifo);
    CHECK(types(p.deltas) == std::vector{DeltaType::deleted});
    CHECK(!p.deltas.back().is_tombstone());
    CHECK(fifo.known_object("default/baz") == nullptr);
  }
  SECTION("a key popped but not yet applied by the consumer still counts as known") {
    DeltaFIFO fifo;
    ok(fifo.add(pod("x", "1")));
    (void)pop_one(fifo);  // in flight to the Controller; the FIFO must remember it
    ok(fifo.delete_object(pod("x", "2")));
    PoppedDeltas p = pop_one(fifo);
    CHECK(types(p.deltas) == std::vector{DeltaType::deleted});
    CHECK(newest_rv(p) == "2");
  }
  SECTION("a key never seen is still dropped") {
    DeltaFIFO fifo(known({pod("baz", "7")}));
    ok(fifo.delete_object(pod("other", "1")));
    CHECK(fifo.empty());
  }
}

// upstream: TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue, TestDeltaFIFO_ReplaceMakesDeletions
TEST_CASE("two deletions in a row collapse into one, preferring a real object over a tombstone",
          "[delta_fifo][item-5][unit]") {
  SECTION("a real deletion then a tombstone keeps the real deletion") {
    DeltaFIFO fifo(known({pod("foo", "5")}));
    ok(fifo.delete_object(pod("foo", "5")));
    ok(fifo.replace({}, "6"));  // appends a tombstone for foo
    PoppedDeltas p = pop_one(fifo);
    REQUIRE(p.deltas.size() == 1);
    CHECK(p.deltas[0].type == DeltaType::deleted);
    CHECK(!p.deltas[0].is_tombstone());
    CHECK(p.deltas[0].object->resource_version() == "5");
  }
  SECTION("a tombstone then a real deletion keeps the real deletion") {
    DeltaFIFO fifo(known({pod("foo", "5")}));
    ok(fifo.replace({}, "6"));
    REQUIRE(fifo.get_by_key("default/foo"));
    CHECK(fifo.get_by_key("default/foo")->back().is_tombstone());
    ok(fifo.delete_object(pod("foo", "7")));
    PoppedDeltas p = pop_one(fifo);
    REQUIRE(p.deltas.size() == 1);
    CHECK(!p.deltas[0].is_tombstone());
    CHECK(p.deltas[0].object->resource_version() == "7");
  }
  SECTION("two real deletions keep the older one") {
    DeltaFIFO fifo;
    ok(fifo.add(pod("foo", "1")));
    ok(fifo.delete_object(pod("foo", "2")));
    ok(fifo.delete_object(pod("foo", "3")));
    CHECK(rvs(pop_one(fifo).deltas) == std::vector<std::string>{"1", "2"});
  }
}

// upstream: TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue
TEST_CASE("replace tombstones a key only queued, once across several replaces",
          "[delta_fifo][item-6][unit]") {
  DeltaFIFO fifo;
  ObjectPtr foo = pod("foo", "1");
  ok(fifo.add(foo));
  ok(fifo.replace({}, "2"));
  auto deltas = fifo.get_by_key("default/foo");
  REQUIRE(deltas);
  CHECK(types(*deltas) == std::vector{DeltaType::added, DeltaType::deleted});
  REQUIRE((*deltas)[1].is_tombstone());
  CHECK((*deltas)[1].tombstone->key == "default/foo");
  CHECK((*deltas)[1].tombstone->last_known == foo);

  ok(fifo.replace({}, "3"));
  CHECK(types(pop_one(fifo).deltas) == std::vector{DeltaType::added, DeltaType::deleted});
  CHECK(queue_is_empty(fifo));
}

namespace {

// Pops a replace's outcome: the listed keys first (in list order), then the
// tombstones, whose relative order the contract leaves open.
void check_replace_makes_deletions(bool emit_replaced, DeltaType listed_type) {
  DeltaFIFO fifo(known({pod("foo", "5"), pod("bar", "6"), pod("baz", "7")}, emit_replaced));
  ok(fifo.replace({pod("foo", "5")}, "8"));
  CHECK(fifo.size() == 3);

  PoppedDeltas foo = pop_one(fifo);
  CHECK(foo.deltas.back().key() == "default/foo");
  CHECK(types(foo.deltas) == std::vector{listed_type});

  std::map<std::string, std::string> tombstones;  // key -> last known rv
  for (int i = 0; i < 2; ++i) {
    PoppedDeltas p = pop_one(fifo);
    REQUIRE(p.deltas.size() == 1);
    CHECK(p.deltas[0].type == DeltaType::deleted);
    REQUIRE(p.deltas[0].is_tombstone());
    REQUIRE(p.deltas[0].tombstone->last_known);
    tombstones[p.deltas[0].tombstone->key] = std::string(p.deltas[0].tombstone->last_known->resource_version());
  }
  CHECK(tombstones == std::map<std::string, std::string>{{"default/bar", "6"}, {"default/baz", "7"}});
  CHECK(queue_is_empty(fifo));
  CHECK(fifo.known_count() == 1);
}

}  // namespace

// upstream: TestDeltaFIFO_ReplaceMakesDeletions, TestDeltaFIFO_HasSyncedCorrectOnDeletion
TEST_CASE("replace without Replaced deltas syncs listed keys and tombstones known ones missing",
          "[delta_fifo][item-7][unit]") {
  check_replace_makes_deletions(false, DeltaType::sync);
}

// upstream: TestDeltaFIFO_ReplaceMakesDeletionsReplaced, TestDeltaFIFO_ReplaceDeltaType
TEST_CASE("replace with Replaced deltas marks listed keys replaced and tombstones known ones missing",
          "[delta_fifo][item-8][unit]") {
  check_replace_makes_deletions(true, DeltaType::replaced);
}

// upstream: TestDeltaFIFO_replaceWithDeleteDeltaIn (kubernetes issue 83810)
TEST_CASE("a queued deletion followed by a replace listing the key keeps the re-creation",
          "[delta_fifo][item-9][unit]") {
  for (bool emit_replaced : {true, false}) {
    DeltaFIFO fifo(known({pod("foo", "5")}, emit_replaced));
    ok(fifo.delete_object(pod("foo", "5")));
    ok(fifo.replace({pod("foo", "6")}, "7"));
    PoppedDeltas p = pop_one(fifo);
    CHECK(types(p.deltas) ==
          std::vector{DeltaType::deleted, emit_replaced ? DeltaType::replaced : DeltaType::sync});
    CHECK(rvs(p.deltas) == std::vector<std::string>{"5", "6"});
  }
}

// upstream: TestDeltaFIFO_ReplaceMakesDeletions (third block)
TEST_CASE("a replace tombstone carries the newest queued object, not the known one",
          "[delta_fifo][item-10][unit]") {
  DeltaFIFO fifo(known({pod("bar", "6")}));
  ok(fifo.delete_object(pod("bar", "6")));
  ok(fifo.add(pod("bar", "100")));
  ok(fifo.replace({pod("foo", "1")}, "101"));
  auto deltas = fifo.get_by_key("default/bar");
  REQUIRE(deltas);
  CHECK(types(*deltas) == std::vector{DeltaType::deleted, DeltaType::added, DeltaType::deleted});
  CHECK(rvs(*deltas) == std::vector<std::string>{"6", "100", "100"});
  CHECK(deltas->back().is_tombstone());
}

// upstream: TestDeltaFIFO_Resync
TEST_CASE("resync queues one Sync per known key with nothing queued", "[delta_fifo][item-11][unit]") {
  SECTION("with known objects") {
    ObjectPtr foo = pod("foo", "5");
    DeltaFIFO fifo(known({foo}));
    ok(fifo.resync());
    CHECK(fifo.size() == 1);
    PoppedDeltas p = pop_one(fifo);
    REQUIRE(p.deltas.size() == 1);
    CHECK(p.deltas[0].type == DeltaType::sync);
    CHECK(p.deltas[0].object == foo);  // the cached object itself, not a copy
  }
  SECTION("without known objects it does nothing") {
    DeltaFIFO fifo(no_known_objects());
    ok(fifo.add(pod("foo", "5")));
    (void)pop_one(fifo);
    ok(fifo.resync());
    CHECK(fifo.empty());
  }
}

// upstream: TestDeltaFIFO_UpdateResyncRace
TEST_CASE("resync adds nothing for a key that already has a queued update", "[delta_fifo][item-12][unit]") {
  DeltaFIFO fifo(known({pod("foo", "5")}));
  ok(fifo.update(pod("foo", "6")));
  ok(fifo.resync());
  PoppedDeltas p = pop_one(fifo);
  CHECK(types(p.deltas) == std::vector{DeltaType::updated});
  CHECK(rvs(p.deltas) == std::vector<std::string>{"6"});
  CHECK(queue_is_empty(fifo));
}

// upstream: TestDeltaFIFO_ResyncNonExisting
TEST_CASE("resync leaves a queued deletion of a known key as the only delta", "[delta_fifo][item-13][unit]") {
  DeltaFIFO fifo(known({pod("foo", "5")}));
  ok(fifo.delete_object(pod("foo", "5")));
  ok(fifo.resync());
  PoppedDeltas p = pop_one(fifo);
  CHECK(types(p.deltas) == std::vector{DeltaType::deleted});
  CHECK(queue_is_empty(fifo));
}

// upstream: TestDeltaFIFO_HasSynced
TEST_CASE("has_synced waits for the first replace's keys to be popped", "[delta_fifo][item-14][unit]") {
  SECTION("a fresh FIFO has not synced") { CHECK_FALSE(DeltaFIFO().has_synced()); }
  SECTION("a first add syncs at once") {
    DeltaFIFO fifo;
    ok(fifo.add(pod("a", "1")));
    CHECK(fifo.has_synced());
  }
  SECTION("an empty first replace syncs at once") {
    DeltaFIFO fifo;
    ok(fifo.replace({}, "1"));
    CHECK(fifo.has_synced());
  }
  SECTION("a replace of two keys syncs after two pops") {
    DeltaFIFO fifo;
    ok(fifo.replace({pod("a", "1"), pod("b", "2")}, "3"));
    CHECK_FALSE(fifo.has_synced());
    (void)pop_one(fifo);
    CHECK_FALSE(fifo.has_synced());
    (void)pop_one(fifo);
    CHECK(fifo.has_synced());
  }
  SECTION("a duplicate key in the list counts once") {
    DeltaFIFO fifo;
    ok(fifo.replace({pod("a", "1"), pod("a", "2"), pod("b", "3")}, "4"));
    CHECK(fifo.size() == 2);
    (void)pop_one(fifo);
    CHECK_FALSE(fifo.has_synced());
    (void)pop_one(fifo);
    CHECK(fifo.has_synced());
  }
  SECTION("a later replace does not unsync") {
    DeltaFIFO fifo;
    ok(fifo.replace({}, "1"));
    ok(fifo.replace({pod("a", "1")}, "2"));
    CHECK(fifo.has_synced());
  }
}

// upstream: TestDeltaFIFO_HasSyncedCorrectOnDeletion
TEST_CASE("tombstones of the first replace count toward the initial population",
          "[delta_fifo][item-15][unit]") {
  DeltaFIFO fifo(known({pod("foo", "5"), pod("bar", "6"), pod("baz", "7")}));
  ok(fifo.replace({pod("foo", "5")}, "8"));
  for (int i = 0; i < 3; ++i) {
    CHECK_FALSE(fifo.has_synced());
    CHECK(pop_one(fifo).is_in_initial_list);
  }
  CHECK(fifo.has_synced());
  ok(fifo.add(pod("new", "9")));
  CHECK_FALSE(pop_one(fifo).is_in_initial_list);
}

// upstream: TestDeltaFIFO_requeueOnPop, TestFIFO_requeueOnPop
TEST_CASE("a process function can requeue the popped deltas", "[delta_fifo][item-16][unit]") {
  DeltaFIFO fifo;
  ok(fifo.add(pod("foo", "10")));

  SECTION("requeue without an inner error: the pop succeeds and the key is back") {
    auto r = fifo.pop([](const PoppedDeltas& p) -> Result<void> {
      CHECK(p.deltas.back().key() == "default/foo");
      return Error{Errc::requeue, ""};
    });
    REQUIRE(r);
    REQUIRE(r->has_value());
    CHECK(fifo.list_keys() == std::vector<std::string>{"default/foo"});
    CHECK(rvs(*fifo.get_by_key("default/foo")) == std::vector<std::string>{"10"});
    CHECK(fifo.known_count() == 0);  // not applied, not known
  }
  SECTION("requeue with an inner error: the pop returns it and the key is back") {
    auto r = fifo.pop([](const PoppedDeltas&) -> Result<void> { return Error{Errc::requeue, "test error"}; });
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "test error");
    CHECK(fifo.list_keys() == std::vector<std::string>{"default/foo"});
  }
  SECTION("success: the key is gone and known") {
    bool called = false;
    auto r = fifo.pop([&](const PoppedDeltas&) -> Result<void> {
      called = true;
      return {};
    });
    REQUIRE(r);
    CHECK(called);
    CHECK(fifo.empty());
    CHECK(fifo.known_object("default/foo") != nullptr);
  }
  SECTION("another error: returned, the deltas dropped") {
    auto r = fifo.pop([](const PoppedDeltas&) -> Result<void> { return Error{Errc::server_error, "boom"}; });
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::server_error);
    CHECK(fifo.empty());
  }
}

// upstream: TestDeltaFIFO_addIfNotPresent
TEST_CASE("add_if_not_present re-queues popped deltas only when nothing newer is queued",
          "[delta_fifo][item-17][unit]") {
  DeltaFIFO fifo;
  ok(fifo.add(pod("b", "3")));
  ok(fifo.add(pod("c", "4")));
  PoppedDeltas b3 = pop_one(fifo);
  PoppedDeltas c4 = pop_one(fifo);
  ok(fifo.add(pod("a", "1")));
  ok(fifo.add(pod("b", "2")));
  fifo.add_if_not_present(b3.deltas);
  fifo.add_if_not_present(c4.deltas);
  fifo.add_if_not_present({});  // empty deltas are ignored
  CHECK(fifo.size() == 3);
  std::vector<std::string> popped;
  while (!fifo.empty()) popped.push_back(newest_rv(pop_one(fifo)));
  CHECK(popped == std::vector<std::string>{"1", "2", "4"});
}

// upstream: TestDeltaFIFO_PopShouldUnblockWhenClosed (single-owner form; the actor test
// covers parked pops)
TEST_CASE("a closed FIFO drains what is queued, then every pop fails with fifo_closed",
          "[delta_fifo][item-18][unit]") {
  DeltaFIFO fifo;
  auto parked = fifo.pop();
  REQUIRE(parked);
  CHECK_FALSE(parked->has_value());  // empty and open: the owner parks the request

  ok(fifo.add(pod("a", "1")));
  ok(fifo.add(pod("b", "1")));
  fifo.close();
  CHECK(fifo.is_closed());
  CHECK(pop_one(fifo).deltas.back().key() == "default/a");
  auto batch = fifo.pop_batch(10);
  REQUIRE(batch);
  CHECK(batch->size() == 1);

  auto plain = fifo.pop();
  REQUIRE_FALSE(plain);
  CHECK(plain.error().code == Errc::fifo_closed);
  auto processed = fifo.pop([](const PoppedDeltas&) -> Result<void> {
    FAIL("process called on a closed, empty FIFO");
    return {};
  });
  REQUIRE_FALSE(processed);
  CHECK(processed.error().code == Errc::fifo_closed);
  auto batched = fifo.pop_batch(4);
  REQUIRE_FALSE(batched);
  CHECK(batched.error().code == Errc::fifo_closed);
}

// upstream: TestDeltaFIFO_transformer
TEST_CASE("the transformer sees every incoming object once, never sync deltas or tombstones",
          "[delta_fifo][item-19][unit]") {
  std::map<std::string, int> calls;  // key@rv -> calls
  DeltaFIFOOptions options;
  options.transformer = [&](ObjectPtr object) -> Result<ObjectPtr> {
    ++calls[std::string(object->key()) + "@" + std::string(object->resource_version())];
    if (object->name() == "bad") return Error{Errc::transform_failed, "rejected"};
    // the transformed object is what gets queued: mark it with a label
    return pod(std::string(object->name()), std::string(object->resource_version()), {{"transformed", "yes"}});
  };
  DeltaFIFO fifo(std::move(options));

  ok(fifo.add(pod("foo", "1")));
  ok(fifo.update(pod("foo", "2")));
  ok(fifo.delete_object(pod("foo", "3")));
  ok(fifo.add(pod("bar", "4")));
  ok(fifo.replace({pod("baz", "5")}, "6"));  // tombstones foo and bar: no calls
  while (!fifo.empty()) {
    PoppedDeltas p = pop_one(fifo);
    for (const Delta& d : p.deltas)
      if (d.object) CHECK(d.object->label("transformed") == std::string_view("yes"));
  }
  ok(fifo.resync());  // sync of the known baz: no call
  CHECK(fifo.size() == 1);

  CHECK(calls == std::map<std::string, int>{{"default/foo@1", 1},
                                            {"default/foo@2", 1},
                                            {"default/foo@3", 1},
                                            {"default/bar@4", 1},
                                            {"default/baz@5", 1}});

  SECTION("an error aborts the call; a replace keeps what it queued before") {
    auto added = fifo.add(pod("bad", "7"));
    REQUIRE_FALSE(added);
    CHECK(added.error().code == Errc::transform_failed);
    CHECK_FALSE(fifo.get_by_key("default/bad"));
    auto replaced = fifo.replace({pod("ok", "8"), pod("bad", "8"), pod("late", "8")}, "9");
    REQUIRE_FALSE(replaced);
    CHECK(fifo.get_by_key("default/ok"));
    CHECK_FALSE(fifo.get_by_key("default/late"));
  }
}

// upstream: TestDeltaFIFO_KeyOf
TEST_CASE("the key of deltas is the newest object's, or a tombstone's own key", "[delta_fifo][item-20][unit]") {
  ObjectPtr foo = pod("foo", "1");
  CHECK(Delta{DeltaType::added, foo, nullptr}.key() == "default/foo");
  auto tombstone = std::make_shared<const kinformer::Tombstone>(kinformer::Tombstone{"ns/gone", foo});
  CHECK(Delta{DeltaType::deleted, nullptr, tombstone}.key() == "ns/gone");

  // The FIFO queues deltas under that key: a tombstone's key wins over its object's.
  DeltaFIFO fifo;
  fifo.add_if_not_present({Delta{DeltaType::deleted, nullptr, tombstone}});
  CHECK(fifo.list_keys() == std::vector<std::string>{"ns/gone"});
  fifo.add_if_not_present({Delta{DeltaType::added, pod("x", "1"), nullptr}, Delta{DeltaType::updated, pod("y", "2"), nullptr}});
  CHECK(fifo.list_keys() == std::vector<std::string>{"ns/gone", "default/y"});
}

// upstream: TestDeltaFIFO_basic (single-owner form: the producers' calls interleave)
TEST_CASE("two producers' items each pop in their own insertion order", "[delta_fifo][item-21][unit]") {
  DeltaFIFO fifo;
  std::mt19937 rng(21);
  int next_a = 0, next_b = 0;
  while (next_a < 50 || next_b < 50) {
    bool a_turn = next_b >= 50 || (next_a < 50 && rng() % 2 == 0);
    if (a_turn) ok(fifo.add(pod("a" + std::to_string(next_a++), "1")));
    else ok(fifo.add(pod("b" + std::to_string(next_b++), "1")));
  }
  int last_a = -1, last_b = -1;
  while (!fifo.empty()) {
    std::string name(pop_one(fifo).deltas.back().object->name());
    int n = std::stoi(name.substr(1));
    int& last = name[0] == 'a' ? last_a : last_b;
    CHECK(n == last + 1);
    last = n;
  }
  CHECK(last_a == 49);
  CHECK(last_b == 49);
}

TEST_CASE("pop_batch pops up to n keys in order, each with its own initial-list flag",
          "[delta_fifo][unit]") {
  DeltaFIFO fifo;
  ok(fifo.replace({pod("a", "1"), pod("b", "1")}, "1"));
  ok(fifo.add(pod("c", "1")));
  auto empty = fifo.pop_batch(0);
  REQUIRE(empty);
  CHECK(empty->empty());
  auto batch = fifo.pop_batch(5);
  REQUIRE(batch);
  REQUIRE(batch->size() == 3);
  CHECK((*batch)[0].is_in_initial_list);
  CHECK((*batch)[1].is_in_initial_list);
  CHECK_FALSE((*batch)[2].is_in_initial_list);
  CHECK((*batch)[2].deltas.back().key() == "default/c");
  CHECK(fifo.has_synced());
  CHECK(fifo.known_count() == 3);
  auto none = fifo.pop_batch(5);
  REQUIRE(none);
  CHECK(none->empty());
}

TEST_CASE("the known view follows pops: newest object kept, deletions forgotten", "[delta_fifo][unit]") {
  DeltaFIFO fifo;
  ObjectPtr foo2 = pod("foo", "2");
  ok(fifo.add(pod("foo", "1")));
  ok(fifo.update(foo2));
  CHECK(fifo.known_object("default/foo") == nullptr);  // queued is not known
  (void)pop_one(fifo);
  CHECK(fifo.known_object("default/foo") == foo2);
  ok(fifo.delete_object(pod("foo", "3")));
  (void)pop_one(fifo);
  CHECK(fifo.known_object("default/foo") == nullptr);
  CHECK(fifo.known_count() == 0);
}

// informer-semantics.md §10, the relist race: the FIFO's consumer may not have
// applied a popped change yet when the next relist arrives.
TEST_CASE("a relist tombstones a key popped but not yet applied by the consumer", "[delta_fifo][unit]") {
  DeltaFIFO fifo;
  ObjectPtr x = pod("x", "1");
  ok(fifo.add(x));
  (void)pop_one(fifo);  // in flight to the Controller
  ok(fifo.replace({}, "2"));
  PoppedDeltas p = pop_one(fifo);
  REQUIRE(p.deltas.size() == 1);
  REQUIRE(p.deltas[0].is_tombstone());
  CHECK(p.deltas[0].tombstone->last_known == x);
}
