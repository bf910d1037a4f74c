// Regression tests for issue 19 (fuzzing): a JSON patch whose "copy" operations copy
// copies grew the object exponentially (each copy of the root doubles it), so a few KB
// of patch could exhaust memory. The object's size is checked before each operation
// (apiserver/object_limits.hpp), so doubling stops at the limit with 413; ordinary copies work.
#include <catch2/catch.hpp>
#include <string>

#include <nlohmann/json.hpp>

#include "apiserver/patch.hpp"

using nlohmann::json;

namespace {

// The server's JSON patch with the default limits; these tests are about size, not CPU time.
std::optional<kinformer::apiserver::ApiError> apply_json_patch(json& target, const json& operations) {
  auto unbounded = kinformer::apiserver::WorkBudget::unbounded();
  return kinformer::apiserver::apply_json_patch(target, operations, {}, unbounded);
}

}  // namespace

TEST_CASE("issue 19: a JSON patch of doubling copies is 413 instead of exhausting memory",
          "[apiserver][item-1][unit]") {
  json target = {{"metadata", {{"name", "a"}}}, {"data", {{"k", std::string(1000, 'x')}}}};
  json operations = json::array();
  // Each copy doubles /data: 2^64 KB after 64 operations, if nothing stopped it.
  for (int i = 0; i < 64; ++i)
    operations.push_back({{"op", "copy"}, {"from", "/data"}, {"path", "/data/c" + std::to_string(i)}});
  auto failed = apply_json_patch(target, operations);
  REQUIRE(failed);
  CHECK(failed->code == 413);
  CHECK_THAT(failed->message, Catch::Contains("JSON Patch copy may have multiplied it"));
}

TEST_CASE("issue 19: JSON patch copies and the operations around them still apply in order",
          "[apiserver][item-1][unit]") {
  json target = {{"metadata", {{"name", "a"}}}, {"spec", {{"x", 1}}}};
  json operations = json::parse(R"([
    {"op":"add","path":"/spec/y","value":2},
    {"op":"copy","from":"/spec","path":"/status"},
    {"op":"replace","path":"/spec/x","value":3},
    {"op":"copy","from":"/spec/x","path":"/status/z"},
    {"op":"test","path":"/status/y","value":2}
  ])");
  REQUIRE_FALSE(apply_json_patch(target, operations));
  CHECK(target["spec"] == json({{"x", 3}, {"y", 2}}));
  CHECK(target["status"] == json({{"x", 1}, {"y", 2}, {"z", 3}}));
  json missing = json::parse(R"([{"op":"copy","from":"/nope","path":"/a"}])");
  auto failed = apply_json_patch(target, missing);
  REQUIRE(failed);
  CHECK(failed->code == 422);
}
