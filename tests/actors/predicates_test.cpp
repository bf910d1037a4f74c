// Tests of the predicate helpers (actors/predicates.hpp), without actors.
#include "actors/predicates.hpp"

#include <string>

#include <catch2/catch.hpp>

#include "tests/support/objects.hpp"

namespace actors = kinformer::actors;
using actors::Notification;
using actors::NotificationType;
using kinformer::testing::pod;

namespace {

Notification added(kinformer::ObjectPtr object) {
  Notification n;
  n.type = NotificationType::added;
  n.object = std::move(object);
  return n;
}

Notification updated(kinformer::ObjectPtr old_object, kinformer::ObjectPtr object) {
  Notification n;
  n.type = NotificationType::updated;
  n.old_object = std::move(old_object);
  n.object = std::move(object);
  return n;
}

Notification tombstone(std::string key) {
  Notification n;
  n.type = NotificationType::deleted;
  n.tombstone = std::make_shared<kinformer::Tombstone>(kinformer::Tombstone{std::move(key), nullptr});
  return n;
}

kinformer::ObjectPtr parse(const std::string& json) { return kinformer::Object::parse(json).value(); }

kinformer::ObjectPtr with_meta(const std::string& rv, int generation, const std::string& annotation) {
  return parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","namespace":"default","resourceVersion":")" +
      rv + R"(","generation":)" + std::to_string(generation) + R"(,"annotations":{"note":")" + annotation +
      R"("}},"spec":{"nodeName":"n1"}})");
}

}  // namespace

TEST_CASE("the default predicate matches everything and a lambda converts to one", "[predicates][unit]") {
  actors::Predicate all;
  CHECK(all.matches_all());
  CHECK(all(added(pod("a", "1"))));
  actors::Predicate only_a = [](const Notification& n) { return n.key() == "default/a"; };
  CHECK(only_a(added(pod("a", "1"))));
  CHECK_FALSE(only_a(added(pod("b", "1"))));
}

TEST_CASE("namespace label field and type helpers look at the object or the tombstone's key",
          "[predicates][unit]") {
  auto in_shop = actors::in_namespace("shop");
  CHECK(in_shop(added(pod("a", "1", {}, "shop"))));
  CHECK_FALSE(in_shop(added(pod("a", "1"))));
  CHECK(in_shop(tombstone("shop/gone")));
  auto web = actors::matching_labels("app=web");
  REQUIRE(web);
  CHECK(web.value()(added(pod("a", "1", {{"app", "web"}}))));
  CHECK_FALSE(web.value()(added(pod("a", "1", {{"app", "db"}}))));
  CHECK_FALSE(web.value()(tombstone("default/gone")));  // no state to look at
  auto bad = actors::matching_labels("app in (");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == kinformer::Errc::invalid_selector);
  auto node = actors::field_equals("spec.nodeName", "node-1");
  CHECK(node(added(pod("a", "1"))));
  auto fields = actors::matching_fields("spec.nodeName=node-2");
  REQUIRE(fields);
  CHECK_FALSE(fields.value()(added(pod("a", "1"))));
  auto adds = actors::of_type({NotificationType::added});
  CHECK(adds(added(pod("a", "1"))));
  CHECK_FALSE(adds(tombstone("default/a")));
}

TEST_CASE("the change helpers filter updates only", "[predicates][unit]") {
  auto gen = actors::generation_changed();
  auto rv = actors::resource_version_changed();
  auto note = actors::annotation_changed("note");
  auto base = with_meta("1", 1, "x");
  SECTION("a status-only update keeps the generation") {
    auto status_only = with_meta("2", 1, "x");
    CHECK_FALSE(gen(updated(base, status_only)));
    CHECK(rv(updated(base, status_only)));
    CHECK_FALSE(note(updated(base, status_only)));
  }
  SECTION("a resync keeps the resourceVersion") { CHECK_FALSE(rv(updated(base, base))); }
  SECTION("a spec change bumps the generation and an annotation change is seen") {
    CHECK(gen(updated(base, with_meta("3", 2, "x"))));
    CHECK(note(updated(base, with_meta("3", 1, "y"))));
  }
  SECTION("adds and deletes always pass") {
    CHECK(gen(added(base)));
    CHECK(rv(tombstone("default/x")));
  }
}

TEST_CASE("a canary takes a stable slice of the keys close to its percentage", "[predicates][unit]") {
  auto ten = actors::canary(10);
  int in = 0;
  for (int i = 0; i < 10000; ++i) {
    auto n = added(pod("p" + std::to_string(i), "1"));
    bool first = ten(n);
    CHECK(first == ten(n));  // stable
    in += first ? 1 : 0;
  }
  CHECK(in > 800);
  CHECK(in < 1200);
  CHECK(actors::stable_key_hash("default/a") == actors::stable_key_hash("default/a"));
  CHECK_FALSE(actors::canary(0)(added(pod("a", "1"))));
  CHECK(actors::canary(100)(added(pod("a", "1"))));
}

TEST_CASE("predicates compose with and or and not", "[predicates][unit]") {
  auto shop = actors::in_namespace("shop");
  auto web = actors::matching_labels("app=web").value();
  auto n = added(pod("a", "1", {{"app", "web"}}, "shop"));
  auto m = added(pod("b", "1", {{"app", "db"}}, "shop"));
  CHECK((shop && web)(n));
  CHECK_FALSE((shop && web)(m));
  CHECK((shop || web)(m));
  CHECK((!web)(m));
  CHECK(actors::all_of({shop, web})(n));
  CHECK_FALSE(actors::all_of({shop, web})(m));
  CHECK(actors::any_of({web, shop})(m));
}
