// fuzz/fuzz_watch_stream.cpp: the HTTP client's WatchStreamParser on an arbitrary watch
// body. The first byte chooses where the body is cut into two reads (chunking and
// socket reads cut lines anywhere); finish() then ends the body. Every input must give
// events or a failure(), and the parser never holds more than its limit plus one read.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/http/watch_stream_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  constexpr std::size_t max_event_bytes = 4096;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t cut = body.empty() ? 0 : data[0] % (body.size() + 1);
  kinformer::http::WatchStreamParser parser(max_event_bytes);
  bool ok = parser.feed(body.substr(0, cut));
  if (ok && parser.pending_bytes() > max_event_bytes + cut) __builtin_trap();
  if (ok) ok = parser.feed(body.substr(cut));
  if (ok && parser.pending_bytes() > max_event_bytes + body.size() - cut) __builtin_trap();
  if (ok) ok = parser.finish();
  if (!ok && !parser.failure()) __builtin_trap();  // a failed stream says why
  (void)parser.take_events();
  return 0;
}
