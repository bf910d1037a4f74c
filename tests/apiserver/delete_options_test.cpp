// Issue 33: a DELETE body read as kube-apiserver reads DeleteOptions
// (apiserver/delete_options.hpp); the HTTP side is in request_cost_test.cpp.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apiserver/delete_options.hpp"

using kinformer::apiserver::parse_delete_options;
using nlohmann::json;

TEST_CASE("DeleteOptions of the right types are read field by field", "[apiserver][issue-33][unit]") {
  auto options = parse_delete_options(json::parse(R"({"kind":"DeleteOptions","apiVersion":"v1",
      "preconditions":{"uid":"u-1","resourceVersion":"42"},"gracePeriodSeconds":30,
      "propagationPolicy":"Foreground","dryRun":["All"],"unknownField":{"kept":"ignored"}})"));
  REQUIRE(options);
  CHECK(options->preconditions.uid == "u-1");
  CHECK(options->preconditions.resource_version == "42");
  CHECK(options->grace_period_seconds == 30);
  CHECK(options->propagation_policy == "Foreground");
  CHECK(options->dry_run);
  SECTION("null is the field's absence, and an empty object the defaults") {
    auto nulls = parse_delete_options(
        json::parse(R"({"preconditions":{"uid":null},"gracePeriodSeconds":null,"dryRun":null})"));
    REQUIRE(nulls);
    CHECK(nulls->preconditions.uid.empty());
    CHECK_FALSE(nulls->grace_period_seconds);
    CHECK_FALSE(nulls->dry_run);
    CHECK(parse_delete_options(json::object()));
  }
}

TEST_CASE("a DeleteOptions field of the wrong type is 400 naming the field and never echoes the value",
          "[apiserver][issue-33][unit]") {
  const std::string secret(4096, 's');
  SECTION("preconditions.uid a number") {
    auto refused = parse_delete_options(json::parse(R"({"preconditions":{"uid":5}})"));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == 400);
    CHECK(refused.error().message == "DeleteOptions: preconditions.uid must be a string, not number");
  }
  SECTION("gracePeriodSeconds past int64") {
    auto refused = parse_delete_options(json::parse(R"({"gracePeriodSeconds":9223372036854775808})"));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == 400);
  }
  SECTION("a long unsupported value is cut") {
    auto refused = parse_delete_options(json{{"propagationPolicy", secret}});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == 422);
    CHECK(refused.error().to_status_json().size() < 2048);
  }
}
