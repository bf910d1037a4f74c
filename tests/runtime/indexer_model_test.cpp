// Randomized operation sequences checked against a reference model of the store:
// a std::map of key -> object, with every index answer recomputed by brute force
// from the index functions (informer-semantics.md §2.2–2.4).
#include "runtime/indexer.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/support/objects.hpp"

using kinformer::Indexer;
using kinformer::Indexers;
using kinformer::Object;
using kinformer::ObjectPtr;

namespace {


void check_equal(const Indexer& indexer, const std::map<std::string, ObjectPtr>& model, const Indexers& indexers) {
  std::vector<std::string> keys = indexer.list_keys();
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> model_keys;
  for (const auto& [key, object] : model) model_keys.push_back(key);
  REQUIRE(keys == model_keys);
  REQUIRE(indexer.size() == model.size());
  for (const auto& [key, object] : model) REQUIRE(indexer.get_by_key(key) == object);

  for (const auto& [name, func] : indexers) {
    std::map<std::string, std::set<std::string>> expected;  // value -> keys
    for (const auto& [key, object] : model)
      for (const std::string& v : func(*object)) expected[v].insert(key);
    std::vector<std::string> values;
    for (const auto& [v, ks] : expected) values.push_back(v);
    INFO("index " << name);
    REQUIRE(indexer.list_index_func_values(name) == values);
    for (const auto& [v, ks] : expected) {
      auto got = indexer.index_keys(name, v);
      REQUIRE(got);
      REQUIRE(*got == std::vector<std::string>(ks.begin(), ks.end()));
      auto objects = indexer.by_index(name, v);
      REQUIRE(objects);
      REQUIRE(objects->size() == ks.size());
      for (const ObjectPtr& o : *objects) REQUIRE(model.at(std::string(o->key())) == o);
    }
  }
}

}  // namespace

TEST_CASE("random operation sequences leave the Indexer exactly where the reference model is",
          "[indexer][model][unit]") {
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    auto multi = [](const Object& o) {
      std::vector<std::string> out;
      for (const Object::Entry& e : o.labels()) out.emplace_back(e.value);
      return out;
    };
    Indexers indexers{{"namespace", kinformer::namespace_index_func}, {"multi", multi}};
    Indexer indexer({{"multi", multi}});
    std::map<std::string, ObjectPtr> model;
    int rv = 0;
    auto random_pod = [&] {
      const std::string name = "p" + std::to_string(rng() % 12);
      const std::string ns = "ns" + std::to_string(rng() % 3);
      const char* values[] = {"red", "blue", "green", "red"};
      std::string a = values[rng() % 4], b = values[rng() % 4];
      switch (rng() % 3) {
        case 0: return kinformer::testing::pod(name, std::to_string(++rv), {}, ns);
        case 1: return kinformer::testing::pod(name, std::to_string(++rv), {{"a", a.c_str()}}, ns);
        default: return kinformer::testing::pod(name, std::to_string(++rv), {{"a", a.c_str()}, {"b", b.c_str()}}, ns);
      }
    };
    for (int op = 0; op < 3000; ++op) {
      const unsigned dice = rng() % 100;
      INFO("op " << op << " dice " << dice);
      if (dice < 55) {
        ObjectPtr o = random_pod();
        indexer.update(o);
        model[std::string(o->key())] = o;
      } else if (dice < 85) {
        ObjectPtr o = random_pod();  // often a key that is not there
        indexer.delete_object(*o);
        model.erase(std::string(o->key()));
      } else if (dice < 90) {
        std::vector<ObjectPtr> list;
        model.clear();
        for (unsigned i = rng() % 10; i > 0; --i) {
          ObjectPtr o = random_pod();
          list.push_back(o);
          model[std::string(o->key())] = o;  // a later duplicate wins
        }
        indexer.replace(list);
      } else if (op > 1500 && indexers.count("labels") == 0) {
        REQUIRE(indexer.add_indexers({{"labels", kinformer::labels_index_func}}));
        indexers.emplace("labels", kinformer::labels_index_func);
      }
      check_equal(indexer, model, indexers);
    }
    REQUIRE(indexers.count("labels") == 1);
  }
}
