#include "runtime/http/list_decoder.hpp"

#include <catch2/catch.hpp>
#include <cstddef>
#include <string>

#include "tests/support/heap_in_use.hpp"
#include "tests/support/objects.hpp"

using kinformer::testing::pod_json;

namespace {

// Bytes the allocator has handed out and not had back (mallinfo2, or ASan's count under ASan).
std::size_t heap_bytes() { return static_cast<std::size_t>(kinformer::testing::heap_in_use()); }

// A list page of about 1 MB (~3000 small pods), padded for simdjson.
std::string page(const std::string& continue_token) {
  std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":")" +
                     continue_token + R"("},"items":[)";
  for (int i = 0; body.size() < (1u << 20); ++i) {
    if (i > 0) body += ',';
    body += pod_json("p" + std::to_string(i), "5");
  }
  body += "]}";
  body.reserve(body.size() + 64);
  return body;
}

}  // namespace

// issue 29: the parser's buffers (~5.7x a page) stayed for the I/O thread's life,
// through the pops after a 150k-pod list where the informer's RSS peaks.
TEST_CASE("decode_list keeps its parser between pages and frees it after a list's last page",
          "[http][list_decoder][unit]") {
  const std::string middle = page("more");
  const std::string last = page("");
  const std::size_t before = heap_bytes();
  REQUIRE(kinformer::http::decode_list(middle, middle.capacity()));  // the objects go with the result
  const std::size_t after_middle = heap_bytes();
  INFO("heap in use: " << before << " B before, " << after_middle << " B after a middle page");
  CHECK(after_middle >= before + 4 * middle.size());  // the parser, kept for the next page
  REQUIRE(kinformer::http::decode_list(last, last.capacity()));
  const std::size_t after_last = heap_bytes();
  INFO("heap in use after the last page: " << after_last << " B");
  CHECK(after_last < before + middle.size() / 4);  // the parser went with the list
}
