#include "runtime/object_set.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "tests/support/objects.hpp"

using kinformer::ObjectPtr;
using kinformer::detail::ObjectSet;
using kinformer::testing::pod;

namespace {

std::set<std::string> keys_of(const ObjectSet& set) {
  std::set<std::string> out;
  set.for_each([&out](const ObjectPtr& o) { out.emplace(o->key()); });
  return out;
}

}  // namespace

TEST_CASE("an ObjectSet keeps one object per key through growth, erasure and copies", "[object_set][unit]") {
  ObjectSet set;
  CHECK(set.find("default/a") == nullptr);
  CHECK(set.erase("default/a") == nullptr);
  std::vector<ObjectPtr> v1, v2;
  for (int i = 0; i < 1000; ++i) {
    v1.push_back(pod("p" + std::to_string(i), "1"));
    v2.push_back(pod("p" + std::to_string(i), "2"));
  }
  for (const ObjectPtr& o : v1) CHECK(set.insert_or_assign(o) == nullptr);
  CHECK(set.size() == 1000);
  for (int i = 0; i < 1000; i += 2) CHECK(set.insert_or_assign(v2[i]) == v1[i]);  // replaced, returned
  CHECK(set.size() == 1000);
  for (int i = 0; i < 1000; i += 3) CHECK(set.erase(v1[i]->key()) != nullptr);
  CHECK(set.size() == 1000 - 334);
  // Erase-then-insert churn must not fill the table with erased marks.
  for (int round = 0; round < 20; ++round)
    for (int i = 0; i < 1000; i += 3) {
      set.insert_or_assign(v1[i]);
      set.erase(v1[i]->key());
    }
  CHECK(set.table_bytes() <= 2048 * (sizeof(ObjectPtr) + sizeof(std::uint32_t)));  // at most 2048 slots
  ObjectSet copy(set);
  for (int i = 0; i < 1000; ++i) {
    const ObjectPtr* found = copy.find(v1[i]->key());
    if (i % 3 == 0) {
      CHECK(found == nullptr);
    } else {
      REQUIRE(found);
      CHECK(*found == (i % 2 == 0 ? v2[i] : v1[i]));
    }
  }
  CHECK(keys_of(copy) == keys_of(set));
  ObjectSet moved(std::move(copy));
  CHECK(moved.size() == set.size());
  CHECK(copy.empty());  // NOLINT: a moved-from set is empty by contract of this class
  set.clear();
  CHECK(set.empty());
  CHECK(set.find(v1[1]->key()) == nullptr);
  CHECK(moved.find(v1[1]->key()) != nullptr);
}
