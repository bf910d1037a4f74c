// The resourceVersion rule (apiserver/resource_version.hpp): parse, compare, format.
#include "apiserver/resource_version.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace kinformer::apiserver {
namespace {

TEST_CASE("a resourceVersion parses from decimal digits in 0..max_revision", "[apiserver][resource_version][unit]") {
  CHECK(parse_resource_version("0") == std::optional<std::uint64_t>(0));
  CHECK(parse_resource_version("7") == std::optional<std::uint64_t>(7));
  SECTION("leading zeros are accepted, as Go's ParseUint accepts them") {
    CHECK(parse_resource_version("007") == std::optional<std::uint64_t>(7));
  }
  SECTION("the largest etcd revision parses and one more does not") {
    CHECK(parse_resource_version("9223372036854775807") == std::optional<std::uint64_t>(max_revision));
    CHECK_FALSE(parse_resource_version("9223372036854775808"));
    CHECK_FALSE(parse_resource_version("18446744073709551616"));  // past uint64 too: no wrap-around
  }
}

TEST_CASE("anything but decimal digits is not a resourceVersion", "[apiserver][resource_version][unit]") {
  for (const char* garbage : {"", "-1", "+1", " 1", "1 ", "abc", "1.5", "1e3", "0x10", "12a"}) {
    INFO("text: \"" << garbage << "\"");
    CHECK_FALSE(parse_resource_version(garbage));
  }
}

TEST_CASE("format writes the canonical text that parse reads back", "[apiserver][resource_version][unit]") {
  for (std::uint64_t revision : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{42}, max_revision}) {
    INFO("revision " << revision);
    CHECK(parse_resource_version(format_resource_version(revision)) == std::optional<std::uint64_t>(revision));
  }
  CHECK(format_resource_version(105) == "105");
}

TEST_CASE("a resourceVersion names a revision only in its canonical text", "[apiserver][resource_version][unit]") {
  CHECK(same_resource_version("105", 105));
  CHECK_FALSE(same_resource_version("0105", 105));
  CHECK_FALSE(same_resource_version("", 0));
  CHECK_FALSE(same_resource_version("106", 105));
}

TEST_CASE("set_resource_version writes metadata.resourceVersion as text", "[apiserver][resource_version][unit]") {
  nlohmann::json object = {{"kind", "ConfigMap"}};
  set_resource_version(object, 12);
  CHECK(object["metadata"]["resourceVersion"] == "12");
  set_resource_version(object, 13);
  CHECK(object["metadata"] == nlohmann::json{{"resourceVersion", "13"}});
}

}  // namespace
}  // namespace kinformer::apiserver
