// Tests of what every actor's behaviour is built with (actors/every_actor.hpp).
#include "actors/every_actor.hpp"

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <catch2/catch.hpp>

using kinformer::actors::handed_off;

TEST_CASE("handed_off keeps a lambda's signature and result", "[every_actor][unit]") {
  auto joined = handed_off([](const std::string& a, int b) { return a + std::to_string(b); });
  static_assert(std::is_invocable_r_v<std::string, decltype(joined), const std::string&, int>);
  CHECK(joined("p", 7) == "p7");
}

TEST_CASE("handed_off keeps a mutable lambda mutable, its captures living from call to call",
          "[every_actor][unit]") {
  auto count = handed_off([n = 0]() mutable { return ++n; });
  CHECK(count() == 1);
  CHECK(count() == 2);
  // A capture it moves out of, as a response promise is delivered once.
  auto take = handed_off([owned = std::make_unique<int>(5)]() mutable {
    return owned ? *std::exchange(owned, nullptr) : 0;
  });
  CHECK(take() == 5);
  CHECK(take() == 0);
}
