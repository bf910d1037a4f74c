// apiserver/base64.hpp: the codec the etcd storage decodes every key and value with.
#include <catch2/catch.hpp>
#include <string>

#include "apiserver/base64.hpp"

namespace kinformer::apiserver {
namespace {

TEST_CASE("base64 decodes what it encodes for every length and byte", "[apiserver][base64][item-16][unit]") {
  std::string bytes;
  for (int i = 0; i < 260; ++i) {
    const auto text = base64_encode(bytes);
    REQUIRE(is_base64(text));
    auto back = base64_decode(text);
    REQUIRE(back);
    CHECK(*back == bytes);
    bytes += static_cast<char>((i * 37 + 11) & 0xff);
  }
  CHECK(base64_decode("L3JlZ2lzdHJ5L2E=") == std::optional<std::string>("/registry/a"));
}

TEST_CASE("base64 decoding refuses what Go's StdEncoding refuses", "[apiserver][base64][item-16][unit]") {
  for (const char* bad : {"abc", "ab=c", "a b=", "ab\ncd==", "====", "ab-_", "ab\xff=", "\x80\x80\x80\x80"}) {
    INFO(bad);
    CHECK_FALSE(base64_decode(bad));
  }
}

}  // namespace
}  // namespace kinformer::apiserver
