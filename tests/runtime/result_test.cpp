#include "runtime/result.hpp"

#include <catch2/catch.hpp>

#include <memory>

using kinformer::Errc;
using kinformer::Error;
using kinformer::Result;

TEST_CASE("a Result holds either its value or an error naming the failure", "[result][unit]") {
  Result<int> ok = 7;
  REQUIRE(ok);
  CHECK(ok.value() == 7);

  Result<int> bad = Error{Errc::decode_failed, "unexpected end of input at byte 17"};
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::decode_failed);
  CHECK(bad.error().to_string() == "decode_failed: unexpected end of input at byte 17");
}

TEST_CASE("a Result moves move-only values out", "[result][unit]") {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(3);
  auto p = std::move(r).value();
  CHECK(*p == 3);
}

TEST_CASE("Result<void> is success unless built from an error", "[result][unit]") {
  Result<void> ok;
  CHECK(ok);
  Result<void> bad{Errc::fifo_closed, "closed"};
  REQUIRE_FALSE(bad);
  CHECK(kinformer::to_string(bad.error().code) == "fifo_closed");
}
