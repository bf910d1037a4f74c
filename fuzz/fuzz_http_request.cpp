// fuzz/fuzz_http_request.cpp: the API server's request framing (issue 33): Beast's
// request parser with the server's limits, fed as the server feeds it (BufferedPut,
// runtime/framed_read.hpp) through a read buffer bounded as the server bounds it
// (runtime/http_framing.hpp), in pieces whose sizes the first byte picks. The second
// byte inserts that many KiB of one of the input's bytes, at the place the third byte
// picks (its share of 256 of the input), so inputs within scripts/fuzz's 16 KiB reach
// past the 64 KiB bounds (a trailer field's value). Any input must end in a whole
// request, a framing error or a full buffer, never an exception (Beast threw
// length_error for a 70 000-byte trailer field and aborted the process) or an assertion
// (Beast asserted on an empty chunked body fed a byte at a time: the seed
// empty_chunked_bytewise), and the Transfer-Encoding check must hold for every parsed
// header.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "runtime/framed_read.hpp"
#include "runtime/http_framing.hpp"

namespace http = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::size_t piece = 1 + data[0] % 64;
  std::string bytes(reinterpret_cast<const char*>(data) + 3, size - 3);
  const std::size_t at = bytes.size() * data[2] / 256;
  bytes.insert(at, std::size_t{data[1]} * 1024, bytes[at]);
  std::string_view input(bytes);
  boost::beast::flat_buffer buffer{kinformer::max_header_bytes};
  http::request_parser<http::string_body> parser;
  parser.header_limit(kinformer::max_header_bytes);
  parser.body_limit(3 * 1024 * 1024);
  parser.eager(true);
  kinformer::BufferedPut put;
  while (!parser.is_done()) {
    if (put(parser, buffer)) break;
    if (parser.is_header_done()) (void)kinformer::transfer_encoding_supported(parser.get());
    if (parser.is_done()) break;
    // The server's read: as much as the bounded buffer takes; a full one is buffer_overflow.
    const auto room = buffer.max_size() - buffer.size();
    if (room == 0 || input.empty()) break;
    const auto n = std::min({piece, room, input.size()});
    auto space = buffer.prepare(n);
    std::copy_n(input.data(), n, static_cast<char*>(space.data()));
    buffer.commit(n);
    input.remove_prefix(n);
  }
  return 0;
}
