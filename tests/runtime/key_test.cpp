#include "runtime/key.hpp"

#include <catch2/catch.hpp>

#include "tests/support/objects.hpp"

using kinformer::Errc;

TEST_CASE("keys are namespace/name, or name when cluster-scoped", "[key][unit]") {
  CHECK(kinformer::make_key("default", "web") == "default/web");
  CHECK(kinformer::make_key("", "kube-system") == "kube-system");
  CHECK(kinformer::testing::pod("web", "1")->key() == "default/web");
  CHECK(kinformer::testing::pod("node-a", "1", {}, "")->key() == "node-a");
}

TEST_CASE("split_key inverts make_key and rejects extra segments", "[key][unit]") {
  auto two = kinformer::split_key("ns/name");
  REQUIRE(two);
  CHECK(two->first == "ns");
  CHECK(two->second == "name");
  auto one = kinformer::split_key("name");
  REQUIRE(one);
  CHECK(one->first.empty());
  CHECK(one->second == "name");
  auto bad = kinformer::split_key("a/b/c");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::invalid_key);
  CHECK(bad.error().message == "unexpected key format: \"a/b/c\"");
}
