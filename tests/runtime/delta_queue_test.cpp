#include "runtime/delta_queue.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/objects.hpp"

using kinformer::Delta;
using kinformer::Deltas;
using kinformer::DeltaType;
using kinformer::ObjectPtr;
using kinformer::Tombstone;
using kinformer::detail::DeltaQueue;
using kinformer::testing::pod;

namespace {

Delta added(const ObjectPtr& object) { return Delta{DeltaType::added, object, nullptr}; }

std::vector<std::string> keys_in_order(const DeltaQueue& queue) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < queue.size(); ++i) out.emplace_back(queue[i].key());
  return out;
}

}  // namespace

TEST_CASE("a DeltaQueue finds each key and pops in order of first arrival through growth", "[delta_queue][unit]") {
  DeltaQueue queue;
  CHECK(queue.find("default/p0") == nullptr);
  std::vector<ObjectPtr> v1, v2;
  for (int i = 0; i < 1000; ++i) {
    v1.push_back(pod("p" + std::to_string(i), "1"));
    v2.push_back(pod("p" + std::to_string(i), "2"));
  }
  for (const ObjectPtr& o : v1) queue.push_back(added(o));
  for (int i = 0; i < 1000; i += 7) queue.find(v2[i]->key())->push_back(Delta{DeltaType::updated, v2[i], nullptr});
  REQUIRE(queue.size() == 1000);
  for (int i = 0; i < 1000; ++i) {
    const DeltaQueue::Entry* entry = queue.find(v1[i]->key());
    REQUIRE(entry);
    CHECK(entry->key() == v1[i]->key());
    CHECK(entry->size() == (i % 7 == 0 ? 2u : 1u));
    CHECK(entry->back().object == (i % 7 == 0 ? v2[i] : v1[i]));
  }
  for (int i = 0; i < 1000; ++i) {
    const Deltas popped = queue.pop_front();
    REQUIRE(popped.size() == (i % 7 == 0 ? 2u : 1u));
    CHECK(popped.front().object == v1[i]);
    CHECK(queue.find(v1[i]->key()) == nullptr);  // gone from the index with the pop
    if (i + 1 < 1000) CHECK(queue.find(v1[i + 1]->key()) != nullptr);
  }
  CHECK(queue.empty());
  CHECK(queue.table_bytes() == 0);  // a drained large queue keeps no table
}

TEST_CASE("a DeltaQueue keeps finding keys while pops and pushes churn past its table size",
          "[delta_queue][unit]") {
  // A steady watch: the queue never empties, so erased slots and the 32-bit
  // tickets must keep working as they wrap around the table many times.
  DeltaQueue queue;
  std::vector<ObjectPtr> objects;
  for (int i = 0; i < 64; ++i) objects.push_back(pod("p" + std::to_string(i), "1"));
  for (int i = 0; i < 8; ++i) queue.push_back(added(objects[i]));
  for (int step = 8; step < 20000; ++step) {
    const Deltas popped = queue.pop_front();
    REQUIRE(popped.size() == 1);
    CHECK(popped.front().object == objects[(step - 8) % 64]);
    queue.push_back(added(objects[step % 64]));
    REQUIRE(queue.find(objects[step % 64]->key()) != nullptr);
    REQUIRE(queue.find(objects[(step - 8) % 64]->key()) == nullptr);
  }
  CHECK(queue.size() == 8);
  CHECK(queue.table_bytes() <= 64 * 8);  // erased slots were shed, not grown over
}

TEST_CASE("a DeltaQueue entry keeps its key when its only delta is replaced", "[delta_queue][unit]") {
  // The DeltaFIFO folds a deletion into a lone tombstone by assigning over it; the
  // index reads the key from the entry's first delta, so it must still be found.
  DeltaQueue queue;
  const ObjectPtr foo = pod("foo", "1");
  auto tombstone = std::make_shared<const Tombstone>(Tombstone{std::string(foo->key()), foo});
  queue.push_back(Delta{DeltaType::deleted, nullptr, tombstone});
  queue.push_back(added(pod("bar", "1")));
  queue.find(foo->key())->back() = Delta{DeltaType::deleted, foo, nullptr};
  tombstone.reset();  // the tombstone that held the key text is gone
  REQUIRE(queue.find(foo->key()) != nullptr);
  CHECK(queue.find(foo->key())->back().object == foo);
  CHECK(keys_in_order(queue) == std::vector<std::string>{"default/foo", "default/bar"});
  const Deltas copied = queue.find("default/bar")->copy();
  CHECK(copied.size() == 1);
}

TEST_CASE("a moved-from DeltaQueue is empty and the moved-to one finds every key", "[delta_queue][unit]") {
  DeltaQueue queue;
  for (int i = 0; i < 300; ++i) queue.push_back(added(pod("p" + std::to_string(i), "1")));
  DeltaQueue moved(std::move(queue));
  CHECK(queue.empty());  // NOLINT: a moved-from queue is empty by contract of this class
  CHECK(queue.find("default/p1") == nullptr);
  CHECK(moved.size() == 300);
  CHECK(moved.find("default/p299") != nullptr);
}

TEST_CASE("a DeltaQueue entry of re-queued deltas is found under its newest delta's key", "[delta_queue][unit]") {
  // client-go's KeyOf takes Newest(): add_if_not_present may bring deltas whose
  // first object has another key.
  DeltaQueue queue;
  Deltas deltas{Delta{DeltaType::added, pod("x", "1"), nullptr}, Delta{DeltaType::updated, pod("y", "2"), nullptr}};
  queue.push_back(std::move(deltas));
  CHECK(queue.find("default/x") == nullptr);
  REQUIRE(queue.find("default/y") != nullptr);
  CHECK(queue.find("default/y")->size() == 2);
  CHECK(queue.pop_front().size() == 2);
  CHECK(queue.empty());
}
