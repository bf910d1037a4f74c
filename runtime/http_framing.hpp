// runtime/http_framing.hpp
//
// The request framing rules our HTTP servers (the API server, the metrics endpoint) add
// to Beast's parser (issue 33).
//
// Contract
//   * transfer_encoding_supported(): true when a request has no Transfer-Encoding or one
//     that is exactly "chunked" (any case, surrounding blanks ignored). Any other coding
//     ("gzip, chunked", "identity", two header lines) is unsupported: Beast would read
//     "gzip, chunked" as plain chunked and hand the still-compressed body on. Go's
//     net/http, and so kube-apiserver, answer such a request 501 Not Implemented and
//     close the connection, and so do we: the body's framing is unknown, so nothing
//     after the header can be read.
//   * Trailers: Beast checks a request's header against header_limit but reads a chunked
//     body's trailer with no limit beyond the read buffer's, and throws length_error for a
//     field over 65533 bytes. Each server bounds its read buffer (max_header_bytes for the
//     API server, its header limit too): the trailer then fits that bound or the read
//     fails with buffer_overflow, before a field can reach Beast's throwing size.
//     fuzz/fuzz_http_request.cpp drives Beast's parser through such a buffer.
// Threading: pure functions.
#pragma once

#include <string_view>

#include <cstddef>

namespace kinformer {

/// The API server's bound on a request's header, and on a chunked body's trailer.
constexpr std::size_t max_header_bytes = 64 * 1024;

/// `Fields`: a Beast header (http::fields); looked up by name so this header needs no Beast.
template <class Fields>
bool transfer_encoding_supported(const Fields& fields) {
  const auto count = fields.count("Transfer-Encoding");
  if (count == 0) return true;
  if (count > 1) return false;
  const auto field = fields["Transfer-Encoding"];  // Beast's string_view: boost's or std's, by build
  std::string_view value(field.data(), field.size());
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  static constexpr std::string_view chunked = "chunked";
  if (value.size() != chunked.size()) return false;
  for (std::size_t i = 0; i < chunked.size(); ++i)
    if ((value[i] | 0x20) != chunked[i]) return false;
  return true;
}

}  // namespace kinformer
