// runtime/http/watch_stream_parser.hpp
//
// WatchStreamParser: turns the body of a watch response — newline-terminated
// {"type":..,"object":..} lines cut into arbitrary pieces by chunking and reads —
// into WatchEvents (kube-api-protocol.md A5; deps-notes.md §1). No I/O: the HTTP
// client feeds it what one socket read produced and hands the events of that read
// on as one batch.
//
// Contract
//   * feed() appends complete lines' events to the pending batch in order; a
//     partial line is kept (with simdjson's padding) until its '\n' arrives. Lines
//     are parsed with simdjson On-Demand; ADDED/MODIFIED/DELETED objects become
//     Objects (their bytes copied once), BOOKMARKs carry only the resourceVersion
//     and the k8s.io/initial-events-end annotation. Blank lines are skipped. A line
//     in the API server's own layout ({"type":"ADDED","object":...}) is split
//     without walking its envelope; it accepts and rejects exactly what the general
//     path does (that path re-reads any line the split one could not parse).
//   * The stream must end (feed() returns false, failure() says why) on:
//       - a malformed line or unknown event type: Errc::decode_failed, naming the
//         line number and simdjson's or Object::parse's reason;
//       - a line longer than max_event_bytes: Errc::decode_failed; the parser never
//         holds more than that (plus one read) however long the line grows;
//       - an ERROR event: its Status as an Error (410 → Errc::gone, see api_status.hpp).
//     Events before the failing line stay in the batch; nothing after it is parsed.
//   * finish() is called at the clean end of the body: a last line without '\n'
//     is parsed as one more event.
// Threading: not thread-safe; one watch's I/O thread owns it.
// Errors: failure(); never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/list_watch.hpp"
#include "runtime/result.hpp"

namespace kinformer::http {

class WatchStreamParser {
 public:
  explicit WatchStreamParser(std::size_t max_event_bytes);
  ~WatchStreamParser();
  WatchStreamParser(const WatchStreamParser&) = delete;
  WatchStreamParser& operator=(const WatchStreamParser&) = delete;

  /// Takes the next body bytes; false once the stream must end (see failure()).
  bool feed(std::string_view bytes);
  /// The body ended cleanly; parses a trailing unterminated line. False on failure.
  bool finish();
  /// The events parsed since the last take, in stream order.
  std::vector<WatchEvent> take_events();
  const std::optional<Error>& failure() const noexcept { return failure_; }
  std::uint64_t lines() const noexcept { return lines_; }
  /// Bytes of an incomplete line held now.
  std::size_t pending_bytes() const noexcept { return pending_.size(); }

 private:
  bool parse_line(std::size_t offset, std::size_t size);
  bool fail(Errc code, std::string message);

  struct Json;  // the simdjson parser, kept out of this header
  Json* json_;
  std::size_t max_event_bytes_;
  std::string pending_;  // an incomplete line; capacity >= size + SIMDJSON_PADDING
  std::vector<WatchEvent> events_;
  std::optional<Error> failure_;
  std::uint64_t lines_ = 0;
};

}  // namespace kinformer::http
