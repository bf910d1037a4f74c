// Tests of the coalescing backlog (actors/coalescing_backlog.hpp): the exact
// semantics actors/processor.hpp documents for slow handlers (item 56).
#include "actors/coalescing_backlog.hpp"

#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/actors/pipeline_fixture.hpp"
#include "tests/support/objects.hpp"

namespace actors = kinformer::actors;
using actors::CoalescingBacklog;
using actors::Notification;
using actors::NotificationType;
using kinformer::testing::describe;
using kinformer::testing::pod;
using Strings = std::vector<std::string>;

namespace {

Notification added(const std::string& name, const std::string& rv, bool initial = false) {
  Notification n;
  n.type = NotificationType::added;
  n.object = pod(name, rv);
  n.is_in_initial_list = initial;
  return n;
}

Notification updated(const std::string& name, const std::string& old_rv, const std::string& rv) {
  Notification n;
  n.type = NotificationType::updated;
  n.old_object = pod(name, old_rv);
  n.object = pod(name, rv);
  return n;
}

Notification deleted(const std::string& name, const std::string& rv) {
  Notification n;
  n.type = NotificationType::deleted;
  n.object = pod(name, rv);
  return n;
}

Strings drain(CoalescingBacklog& backlog) {
  Strings out;
  while (auto n = backlog.pop()) out.push_back(describe(*n));
  return out;
}

}  // namespace

TEST_CASE("updates merge into the first pending change and keep the old state the group last saw",
          "[coalescing][item-56][unit]") {
  CoalescingBacklog backlog;
  backlog.push(updated("a", "1", "2"));
  backlog.push(updated("a", "2", "3"));
  backlog.push(updated("a", "3", "4"));
  CHECK(backlog.size() == 1);
  CHECK(drain(backlog) == Strings{"update default/a 1->4"});
}

TEST_CASE("an add keeps its type and initial flag and takes the newest state",
          "[coalescing][item-56][unit]") {
  CoalescingBacklog backlog;
  CHECK(backlog.push(added("a", "1", true)) == 1);
  CHECK(backlog.push(updated("a", "1", "5")) == 0);
  CHECK(drain(backlog) == Strings{"add default/a 5 initial"});
}

TEST_CASE("an add and a delete both pending collapse to nothing", "[coalescing][item-56][unit]") {
  CoalescingBacklog backlog;
  backlog.push(added("a", "1", true));
  backlog.push(updated("a", "1", "2"));
  CHECK(backlog.push(deleted("a", "3")) == -1);
  CHECK(backlog.empty());
  CHECK(drain(backlog).empty());
}

TEST_CASE("a delete of a state the group had seen is never merged away", "[coalescing][item-56][unit]") {
  CoalescingBacklog backlog;
  backlog.push(updated("a", "1", "2"));
  backlog.push(deleted("a", "3"));
  backlog.push(added("a", "4"));  // re-created under the same key
  backlog.push(updated("a", "4", "5"));
  CHECK(backlog.size() == 2);
  CHECK(drain(backlog) == Strings{"delete default/a 3", "add default/a 5"});
}

TEST_CASE("a resync merged into a pending change disappears in it", "[coalescing][item-56][unit]") {
  CoalescingBacklog backlog;
  backlog.push(updated("a", "1", "2"));
  backlog.push(updated("a", "2", "2"));  // resync: old == new
  CHECK(drain(backlog) == Strings{"update default/a 1->2"});
}

TEST_CASE("keys come out in order of first arrival and a collapsed key keeps no memory",
          "[coalescing][item-56][unit]") {
  CoalescingBacklog backlog;
  backlog.push(updated("b", "1", "2"));
  backlog.push(updated("a", "1", "2"));
  for (int i = 0; i < 1000; ++i) {  // churn on one key grows nothing
    backlog.push(added("c", std::to_string(2 * i)));
    backlog.push(deleted("c", std::to_string(2 * i + 1)));
  }
  CHECK(backlog.keys() == 3);
  CHECK(backlog.size() == 2);
  backlog.push(updated("b", "2", "9"));
  CHECK(drain(backlog) == Strings{"update default/b 1->9", "update default/a 1->2"});
  CHECK(backlog.keys() == 0);
}

// Under churn: a random stream over a few keys, fed to the backlog while a
// "handler" pops now and then. Whatever the interleaving, the handler's view
// matches the source's final state, every delete of a state it was told about
// reaches it, and the backlog never holds more than two per key.
TEST_CASE("under random churn the handler ends with the source's final state and sees every delete it must",
          "[coalescing][item-56][unit]") {
  std::mt19937 rng(42);
  constexpr int keys = 8;
  std::vector<int> source_rv(keys, 0);  // 0 = absent
  std::vector<int> seen_rv(keys, 0);    // what the handler was told last; 0 = nothing / deleted
  CoalescingBacklog backlog;
  int rv = 0;
  auto deliver = [&](const Notification& n) {
    int k = std::stoi(std::string(n.key().substr(std::string("default/k").size())));
    if (n.type == NotificationType::deleted) {
      CHECK(seen_rv[k] != 0);  // never a delete of something it was not told about
      seen_rv[k] = 0;
    } else if (n.type == NotificationType::added) {
      CHECK(seen_rv[k] == 0);
      seen_rv[k] = std::stoi(std::string(n.object->resource_version()));
    } else {
      CHECK(seen_rv[k] == std::stoi(std::string(n.old_object->resource_version())));  // the old it last saw
      seen_rv[k] = std::stoi(std::string(n.object->resource_version()));
    }
  };
  for (int step = 0; step < 20000; ++step) {
    int k = static_cast<int>(rng() % keys);
    auto name = "k" + std::to_string(k);
    ++rv;
    if (source_rv[k] == 0) {
      backlog.push(added(name, std::to_string(rv)));
      source_rv[k] = rv;
    } else if (rng() % 3 == 0) {
      backlog.push(deleted(name, std::to_string(rv)));
      source_rv[k] = 0;
    } else {
      backlog.push(updated(name, std::to_string(source_rv[k]), std::to_string(rv)));
      source_rv[k] = rv;
    }
    REQUIRE(backlog.size() <= 2 * keys);
    if (rng() % 7 == 0)
      if (auto n = backlog.pop()) deliver(*n);
  }
  while (auto n = backlog.pop()) deliver(*n);
  CHECK(seen_rv == source_rv);
}
