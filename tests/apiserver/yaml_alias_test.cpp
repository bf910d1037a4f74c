// Regression tests for issue 19 (fuzzing): YAML bodies whose aliases refer to anchors
// that hold aliases (the "billion laughs" document) expanded exponentially when turned
// into JSON; decode_body now bounds the nodes it builds by the body's size.
#include <catch2/catch.hpp>
#include <string>

#include <nlohmann/json.hpp>

#include "apiserver/body_decoder.hpp"

using kinformer::apiserver::BodyFormat;
using kinformer::apiserver::decode_body;

TEST_CASE("issue 19: a YAML body of nested aliases is 400 instead of exhausting memory",
          "[apiserver][item-1][unit]") {
  // 10 levels of 10 aliases each: 10^10 nodes from about 400 bytes.
  std::string body = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 10; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    body += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) body += (j ? ", " : "") + prev;
    body += "]\n";
  }
  auto decoded = decode_body(body, BodyFormat::yaml);
  REQUIRE_FALSE(decoded);
  CHECK(decoded.error().code == 400);
  CHECK_THAT(decoded.error().message, Catch::Contains("aliases expand"));
}

TEST_CASE("issue 19: YAML aliases that expand modestly still decode", "[apiserver][item-1][unit]") {
  auto decoded = decode_body("base: &b {app: web, tier: db}\ncopy: *b\nlist: [*b, *b]\n", BodyFormat::yaml);
  REQUIRE(decoded);
  CHECK(decoded.value()["copy"] == nlohmann::json({{"app", "web"}, {"tier", "db"}}));
  CHECK(decoded.value()["list"].size() == 2);
  // Block style, many small nodes: the budget is never hit by an alias-free document.
  std::string block;
  for (int i = 0; i < 500; ++i) block += "k" + std::to_string(i) + ":\n- a\n- \n";
  REQUIRE(decode_body(block, BodyFormat::yaml));
}
