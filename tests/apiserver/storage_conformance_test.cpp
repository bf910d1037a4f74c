// The Storage conformance suite (apiserver/storage/storage.hpp): written once and run on
// every implementation — the memory Store and EtcdStorage on a real etcd that the
// test starts itself (tests/support/etcd_process.hpp) — so the two cannot drift.
// The etcd-only tests at the end cover what memory has no counterpart for: two
// servers on one etcd, and etcd going away and coming back.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/storage/etcd/etcd_storage.hpp"
#include "apiserver/storage/store.hpp"
#include "apiserver/store_list_watch.hpp"
#include "tests/support/etcd_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/watch_recorder.hpp"

namespace kinformer::apiserver {
namespace {

using nlohmann::json;
using testing::eventually;
using LabelMap = std::map<std::string, std::string>;

testing::EtcdProcess& shared_etcd() {
  static testing::EtcdProcess etcd;
  return etcd;
}

// Every etcd storage of this process gets its own key prefix: tests do not see each other.
std::string fresh_prefix() {
  static std::atomic<int> counter{0};
  return "/conformance-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

Result<std::unique_ptr<EtcdStorage>> open_etcd(ResourceRegistry& registry, const std::string& endpoint,
                                               const std::string& prefix) {
  EtcdOptions options;
  options.endpoints = {endpoint};
  options.prefix = prefix;
  options.compaction_interval = std::chrono::milliseconds(0);
  options.request_timeout = std::chrono::milliseconds(2000);
  options.watch_failure_grace = std::chrono::milliseconds(1000);
  return EtcdStorage::open(registry, options);
}

/// One storage of the kind under test, with the registry it serves.
struct Backend {
  explicit Backend(const std::string& kind) {
    if (kind == "memory") {
      storage = std::make_shared<Store>(registry);
      return;
    }
    auto& etcd = shared_etcd();
    if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
    auto opened = open_etcd(registry, etcd.endpoint(), fresh_prefix());
    INFO((opened ? std::string() : opened.error().message));
    REQUIRE(opened);
    storage = std::shared_ptr<Storage>(std::move(opened).value());
  }

  ApiResult<Storage::WriteResult> create(const std::string& ns, const std::string& name, LabelMap labels = {}) {
    json object = {
        {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}};
    if (!labels.empty()) object["metadata"]["labels"] = labels;
    return storage->create(configmaps, ns, object, false);
  }

  /// Sets data.k; with `rv`, as a precondition (metadata.resourceVersion of the update).
  ApiResult<Storage::WriteResult> set_data(const std::string& ns, const std::string& name,
                                           const std::string& value, const std::string& rv = "",
                                           LabelMap labels = {}) {
    return storage->write(
        configmaps, ns, name,
        [&](const json* current) -> ApiResult<json> {
          json next = current ? *current : json{{"metadata", {{"name", name}}}};
          next["data"]["k"] = value;
          if (!rv.empty()) next["metadata"]["resourceVersion"] = rv;
          if (!labels.empty()) next["metadata"]["labels"] = labels;
          return next;
        },
        false, false);
  }

  static std::string data_of(const StoredPtr& object) {
    return json::parse(object->json)["data"].value("k", "");
  }

  /// The events of `type` after `rv`, as its watchers see them (they filter by type:
  /// the memory store answers every type's).
  std::vector<std::string> events_since(const ResourceType& type, std::uint64_t rv) {
    std::vector<EventPtr> events;
    if (!storage->events_after(type, rv, 100000, events)) return {"410"};
    std::vector<std::string> out;
    static const char* names[] = {"ADDED", "MODIFIED", "DELETED"};
    for (const auto& e : events)
      if (e->object->type == &type)
        out.push_back(std::string(names[static_cast<int>(e->type)]) + " " + e->object->type->plural + " " +
                    e->object->key);
    return out;
  }

  ResourceRegistry registry = ResourceRegistry::with_builtins();
  const ResourceType& configmaps = *registry.find("", "v1", "configmaps");
  const ResourceType& namespaces = *registry.namespaces();
  std::shared_ptr<Storage> storage;
};

/// WatchRecorder behind a mutex: callbacks come from the storage's threads.
class Recorder {
 public:
  ListWatch::EventsCallback on_events() {
    return [this, record = inner_.on_events()](std::vector<WatchEvent> batch) {
      std::lock_guard lock(mu_);
      record(std::move(batch));
    };
  }
  ListWatch::ClosedCallback on_closed() {
    return [this, record = inner_.on_closed()](Result<void> r) {
      std::lock_guard lock(mu_);
      record(std::move(r));
    };
  }
  /// "ADDED a@12", "BOOKMARK@14", ...
  std::vector<std::string> summary() {
    std::lock_guard lock(mu_);
    auto out = inner_.summary();
    auto rvs = inner_.rvs();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += "@" + rvs[i];
    return out;
  }
  std::size_t size() {
    std::lock_guard lock(mu_);
    return inner_.events.size();
  }
  std::vector<Result<void>> closes() {
    std::lock_guard lock(mu_);
    return inner_.closes;
  }

 private:
  std::mutex mu_;
  testing::WatchRecorder inner_;
};

WatchOptions watch_from(std::uint64_t rv) {
  WatchOptions options;
  options.resource_version = std::to_string(rv);
  options.allow_watch_bookmarks = false;
  return options;
}

std::string at(const StoredPtr& object) {
  return object->name + "@" + std::to_string(object->resource_version);
}

TEST_CASE("A storage creates an object once and refuses the same name again",
          "[storage][item-16][integration]") {
  const std::string kind = GENERATE(as<std::string>{}, "memory", "etcd");
  INFO("storage: " << kind);
  Backend b(kind);
  auto a = b.create("default", "a");
  REQUIRE(a);
  CHECK(a->created);
  const auto rv1 = a->object->resource_version;
  CHECK(rv1 > 0);
  auto got = b.storage->get(b.configmaps, "default", "a");
  REQUIRE(got);
  CHECK(got.value()->resource_version == rv1);
  CHECK(got.value()->uid == a->object->uid);
  CHECK(Backend::data_of(got.value()) == "v");

  auto again = b.create("default", "a");
  REQUIRE_FALSE(again);
  CHECK(again.error().code == 409);
  CHECK(again.error().reason == "AlreadyExists");

  auto nowhere = b.create("nowhere", "a");
  REQUIRE_FALSE(nowhere);
  CHECK(nowhere.error().code == 404);

  auto second = b.create("default", "b");
  REQUIRE(second);
  CHECK(second->object->resource_version > rv1);
  CHECK(b.storage->revision() >= second->object->resource_version);
}

TEST_CASE("A storage update with a stale resourceVersion is a Conflict and a no-op keeps the resourceVersion",
          "[storage][item-16][integration]") {
  const std::string kind = GENERATE(as<std::string>{}, "memory", "etcd");
  INFO("storage: " << kind);
  Backend b(kind);
  auto a = b.create("default", "a");
  REQUIRE(a);
  const auto rv1 = std::to_string(a->object->resource_version);
  auto updated = b.set_data("default", "a", "x", rv1);
  REQUIRE(updated);
  CHECK_FALSE(updated->created);
  const auto rv2 = updated->object->resource_version;
  CHECK(rv2 > a->object->resource_version);
  CHECK(Backend::data_of(b.storage->get(b.configmaps, "default", "a").value()) == "x");

  auto stale = b.set_data("default", "a", "y", rv1);
  REQUIRE_FALSE(stale);
  CHECK(stale.error().code == 409);
  CHECK(stale.error().reason == "Conflict");

  auto same = b.set_data("default", "a", "x");
  REQUIRE(same);
  CHECK(same->object->resource_version == rv2);

  auto missing = b.set_data("default", "zz", "x");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == 404);
  auto applied = b.storage->write(
      b.configmaps, "default", "zz",
      [](const json*) -> ApiResult<json> {
        return json{{"metadata", {{"name", "zz"}}}, {"data", {{"k", "z"}}}};
      },
      true, false);
  REQUIRE(applied);
  CHECK(applied->created);
}

TEST_CASE("A storage delete returns the last state at the deletion's resourceVersion",
          "[storage][item-16][integration]") {
  const std::string kind = GENERATE(as<std::string>{}, "memory", "etcd");
  INFO("storage: " << kind);
  Backend b(kind);
  auto a = b.create("default", "a");
  REQUIRE(a);
  Storage::Preconditions wrong;
  wrong.resource_version = "999999";
  auto refused = b.storage->remove(b.configmaps, "default", "a", wrong, false);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == 409);

  auto removed = b.storage->remove(b.configmaps, "default", "a", {}, false);
  REQUIRE(removed);
  CHECK(removed.value()->name == "a");
  CHECK(removed.value()->resource_version > a->object->resource_version);
  CHECK(Backend::data_of(removed.value()) == "v");
  auto gone = b.storage->get(b.configmaps, "default", "a");
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == 404);
  auto twice = b.storage->remove(b.configmaps, "default", "a", {}, false);
  REQUIRE_FALSE(twice);
  CHECK(twice.error().code == 404);
}

TEST_CASE("A storage list pages with limit and continue from one snapshot",
          "[storage][item-16][integration]") {
  const std::string kind = GENERATE(as<std::string>{}, "memory", "etcd");
  INFO("storage: " << kind);
  Backend b(kind);
  for (const char* name : {"c1", "c2", "c3", "c4", "c5"}) REQUIRE(b.create("default", name));
  REQUIRE(b.create("kube-system", "elsewhere"));

  Storage::ListQuery first;
  first.namespace_name = "default";
  first.limit = 2;
  auto page1 = b.storage->list(b.configmaps, first);
  REQUIRE(page1);
  REQUIRE(page1->items.size() == 2);
  CHECK(page1->items[0]->name == "c1");
  CHECK(page1->items[1]->name == "c2");
  CHECK(page1->last_key == "default/c2");
  CHECK(page1->remaining == 3);
  const auto snapshot = page1->revision;
  CHECK(snapshot >= page1->items[1]->resource_version);

  // Changes after the first page are not in the later ones.
  REQUIRE(b.create("default", "c6"));
  REQUIRE(b.set_data("default", "c3", "changed"));

  Storage::ListQuery next;
  next.namespace_name = "default";
  next.limit = 2;
  next.at_revision = snapshot;
  next.after_key = page1->last_key;
  auto page2 = b.storage->list(b.configmaps, next);
  REQUIRE(page2);
  REQUIRE(page2->items.size() == 2);
  CHECK(page2->items[0]->name == "c3");
  CHECK(Backend::data_of(page2->items[0]) == "v");
  CHECK(page2->items[1]->name == "c4");
  CHECK(page2->revision == snapshot);
  REQUIRE_FALSE(page2->last_key.empty());

  next.after_key = page2->last_key;
  auto page3 = b.storage->list(b.configmaps, next);
  REQUIRE(page3);
  REQUIRE(page3->items.size() == 1);
  CHECK(page3->items[0]->name == "c5");
  CHECK(page3->last_key.empty());

  auto now = b.storage->list(b.configmaps, Storage::ListQuery{});
  REQUIRE(now);
  CHECK(now->items.size() == 7);  // c1..c6 and kube-system/elsewhere
  CHECK(now->revision >= b.storage->get(b.configmaps, "default", "c3").value()->resource_version);
}

TEST_CASE("A storage serves an exact old revision and answers Expired once it is compacted",
          "[storage][item-16][integration]") {
  const std::string kind = GENERATE(as<std::string>{}, "memory", "etcd");
  INFO("storage: " << kind);
  Backend b(kind);
  auto a = b.create("default", "a");
  REQUIRE(a);
  const auto rv1 = a->object->resource_version;
  REQUIRE(b.set_data("default", "a", "x"));

  Storage::ListQuery old;
  old.at_revision = rv1;
  auto then = b.storage->list(b.configmaps, old);
  REQUIRE(then);
  REQUIRE(then->items.size() == 1);
  CHECK(Backend::data_of(then->items[0]) == "v");
  CHECK(then->revision == rv1);

  b.storage->compact();
  auto expired = b.storage->list(b.configmaps, old);
  REQUIRE_FALSE(expired);
  CHECK(expired.error().code == 410);
  std::vector<EventPtr> events;
  CHECK_FALSE(b.storage->events_after(b.configmaps, rv1, 10, events));
  CHECK(b.storage->compacted_through(b.configmaps) > rv1);
}

TEST_CASE("A storage watch from a resourceVersion gets the later changes and bookmarks",
          "[storage][item-16][integration]") {
  const std::string kind = GENERATE(as<std::string>{}, "memory", "etcd");
  INFO("storage: " << kind);
  Backend b(kind);
  auto a = b.create("default", "a");
  REQUIRE(a);
  StoreListWatch source(b.storage, b.configmaps);
  Recorder seen;
  WatchOptions options;
  options.resource_version = std::to_string(a->object->resource_version);
  options.allow_watch_bookmarks = true;
  auto watch = source.watch(options, seen.on_events(), seen.on_closed());

  auto added = b.create("default", "b");
  REQUIRE(added);
  auto modified = b.set_data("default", "a", "x");
  REQUIRE(modified);
  auto deleted = b.storage->remove(b.configmaps, "default", "b", {}, false);
  REQUIRE(deleted);
  const std::vector<std::string> expected{"ADDED " + at(added->object), "MODIFIED " + at(modified->object),
                                          "DELETED " + at(deleted.value())};
  eventually([&] { return seen.size() >= 3; }, "the three changes after the watch's resourceVersion");
  CHECK(seen.summary() == expected);

  source.bookmark();
  eventually([&] { return seen.size() >= 4; }, "a bookmark after the three changes");
  auto summary = seen.summary();
  REQUIRE(summary.size() == 4);
  CHECK(summary[3] == "BOOKMARK@" + std::to_string(deleted.value()->resource_version));
  CHECK(seen.closes().empty());
  watch->stop();
}

TEST_CASE("A storage list and watch filter by label and field selectors", "[storage][item-16][integration]") {
  const std::string kind = GENERATE(as<std::string>{}, "memory", "etcd");
  INFO("storage: " << kind);
  Backend b(kind);
  REQUIRE(b.create("default", "a", {{"app", "x"}}));
  REQUIRE(b.create("default", "b", {{"app", "y"}}));
  auto c = b.create("default", "c", {{"app", "x"}});
  REQUIRE(c);
  StoreListWatch source(b.storage, b.configmaps);
  auto names_of = [&](ListOptions options) {
    std::vector<std::string> out;
    source.list(options, [&](Result<ObjectList> r) {
      REQUIRE(r);
      for (const auto& o : r->items) out.emplace_back(o->name());
    });
    return out;
  };
  ListOptions by_label;
  by_label.label_selector = "app=x";
  CHECK(names_of(by_label) == std::vector<std::string>{"a", "c"});
  ListOptions by_field;
  by_field.field_selector = "metadata.name=b";
  CHECK(names_of(by_field) == std::vector<std::string>{"b"});
  ListOptions paged = by_label;
  paged.limit = 1;
  CHECK(names_of(paged) == std::vector<std::string>{"a"});

  Recorder seen;
  WatchOptions options;
  options.resource_version = std::to_string(c->object->resource_version);
  options.label_selector = "app=x";
  options.allow_watch_bookmarks = false;
  auto watch = source.watch(options, seen.on_events(), seen.on_closed());
  REQUIRE(b.create("default", "d", {{"app", "y"}}));
  auto e = b.create("default", "e", {{"app", "x"}});
  REQUIRE(e);
  // A later object the selector matches marks the end: nothing else came before it.
  auto marker = b.create("default", "f", {{"app", "x"}});
  REQUIRE(marker);
  eventually([&] { return seen.size() >= 2; }, "the ADDEDs of the two new objects the selector matches");
  CHECK(seen.summary() == std::vector<std::string>{"ADDED " + at(e->object), "ADDED " + at(marker->object)});
  watch->stop();
}

TEST_CASE("Deleting a namespace deletes its objects first with one event each",
          "[storage][item-16][integration]") {
  const std::string kind = GENERATE(as<std::string>{}, "memory", "etcd");
  INFO("storage: " << kind);
  Backend b(kind);
  REQUIRE(b.storage->create(b.namespaces, "", json{{"metadata", {{"name", "team"}}}}, false));
  REQUIRE(b.create("team", "t1"));
  REQUIRE(b.create("team", "t2"));
  REQUIRE(b.create("default", "keep"));
  const auto before = b.storage->revision();

  auto protected_ns = b.storage->remove(b.namespaces, "", "default", {}, false);
  REQUIRE_FALSE(protected_ns);
  CHECK(protected_ns.error().code == 403);

  auto removed = b.storage->remove(b.namespaces, "", "team", {}, false);
  REQUIRE(removed);
  CHECK(b.storage->get(b.configmaps, "team", "t1").error().code == 404);
  CHECK(b.storage->get(b.configmaps, "team", "t2").error().code == 404);
  CHECK(b.storage->get(b.namespaces, "", "team").error().code == 404);
  CHECK(b.storage->get(b.configmaps, "default", "keep"));
  auto refused = b.create("team", "late");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == 404);

  std::vector<std::string> deletions;
  eventually(
      [&] {
        deletions.clear();
        for (const auto* type : {&b.configmaps, &b.namespaces})
          for (const auto& e : b.events_since(*type, before))
            if (e.rfind("DELETED", 0) == 0) deletions.push_back(e);
        return deletions.size() >= 3;
      },
      "the DELETED events of the namespace's objects and of the namespace");
  CHECK(deletions == std::vector<std::string>{"DELETED configmaps team/t1", "DELETED configmaps team/t2",
                                              "DELETED namespaces team"});
}

// ---- etcd only: several servers, and etcd going away ----

/// A watch of `source` from `from` sees exactly the ADDED of a configmap `name` that `writer` creates.
void watch_sees_create(StoreListWatch& source, Storage& writer, const ResourceType& type, std::uint64_t from,
                       const std::string& name, const std::string& why) {
  Recorder seen;
  auto watch = source.watch(watch_from(from), seen.on_events(), seen.on_closed());
  json object = {{"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}};
  auto created = writer.create(type, "default", object, false);
  REQUIRE(created);
  eventually([&] { return seen.size() >= 1; }, why);
  CHECK(seen.summary() == std::vector<std::string>{"ADDED " + at(created->object)});
  watch->stop();
}

TEST_CASE("Two etcd storages on one etcd see each other's writes and watch them",
          "[storage][item-16][integration]") {
  auto& etcd = shared_etcd();
  if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
  const auto prefix = fresh_prefix();
  ResourceRegistry registry = ResourceRegistry::with_builtins();
  const auto& configmaps = *registry.find("", "v1", "configmaps");
  auto a = open_etcd(registry, etcd.endpoint(), prefix);
  auto b = open_etcd(registry, etcd.endpoint(), prefix);
  REQUIRE(a);
  REQUIRE(b);
  std::shared_ptr<Storage> replica_a(std::move(a).value());
  std::shared_ptr<Storage> replica_b(std::move(b).value());
  json object = {{"metadata", {{"name", "x"}}}, {"data", {{"k", "v"}}}};
  auto first = replica_a->create(configmaps, "default", object, false);
  REQUIRE(first);
  auto seen_by_b = replica_b->get(configmaps, "default", "x");
  REQUIRE(seen_by_b);
  CHECK(seen_by_b.value()->resource_version == first->object->resource_version);

  // An RV handed out by A is not "too large" on B, and B lists exactly at it.
  CHECK(replica_b->revision_at_least(first->object->resource_version) >= first->object->resource_version);
  Storage::ListQuery exact;
  exact.at_revision = first->object->resource_version;
  auto listed = replica_b->list(configmaps, exact);
  REQUIRE(listed);
  CHECK(listed->items.size() == 1);

  StoreListWatch source(replica_b, configmaps);
  watch_sees_create(source, *replica_a, configmaps, first->object->resource_version, "y",
                    "replica B's watcher to see the create made through replica A");
}

TEST_CASE("The etcd storage answers 503 while etcd is down and loses no acknowledged write",
          "[storage][item-16][integration]") {
  testing::EtcdProcess etcd;
  if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
  ResourceRegistry registry = ResourceRegistry::with_builtins();
  const auto& configmaps = *registry.find("", "v1", "configmaps");
  auto opened = open_etcd(registry, etcd.endpoint(), "/registry");
  REQUIRE(opened);
  std::shared_ptr<Storage> storage(std::move(opened).value());
  json object = {{"metadata", {{"name", "kept"}}}, {"data", {{"k", "v"}}}};
  auto kept = storage->create(configmaps, "default", object, false);
  REQUIRE(kept);

  StoreListWatch source(storage, configmaps);
  Recorder seen;
  auto watch = source.watch(watch_from(kept->object->resource_version), seen.on_events(), seen.on_closed());

  etcd.stop();
  object["metadata"]["name"] = "refused";
  auto refused = storage->create(configmaps, "default", object, false);
  REQUIRE_FALSE(refused);
  CHECK((refused.error().code == 503 || refused.error().code == 504));
  auto unreadable = storage->get(configmaps, "default", "kept");
  REQUIRE_FALSE(unreadable);
  CHECK((unreadable.error().code == 503 || unreadable.error().code == 504));
  // The watcher is told (410, so it relists) rather than left waiting silently.
  eventually([&] { return !seen.closes().empty(); }, "the watcher to be closed while etcd is away");
  auto closes = seen.closes();
  REQUIRE(closes.size() == 1);
  REQUIRE_FALSE(closes[0]);
  CHECK(closes[0].error().code == Errc::gone);

  REQUIRE(etcd.start());
  eventually([&] { return static_cast<bool>(storage->get(configmaps, "default", "kept")); },
             "reads to work again once etcd is back");
  CHECK(storage->get(configmaps, "default", "kept").value()->resource_version ==
        kept->object->resource_version);
  object["metadata"]["name"] = "after";
  auto after = storage->create(configmaps, "default", object, false);
  REQUIRE(after);
  CHECK(after->object->resource_version > kept->object->resource_version);

  // A new watch from the current state sees the writes that follow.
  watch_sees_create(source, *storage, configmaps, after->object->resource_version, "later",
                    "a watch opened after etcd returned to see a new create");
  watch->stop();
}

}  // namespace
}  // namespace kinformer::apiserver
