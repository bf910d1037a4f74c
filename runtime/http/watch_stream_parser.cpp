#include "runtime/http/watch_stream_parser.hpp"

#include <simdjson.h>

#include <cstring>
#include <optional>

#include "runtime/http/api_status.hpp"

namespace kinformer::http {

struct WatchStreamParser::Json {
  simdjson::ondemand::parser parser;
};

namespace {

// An event as API servers write it, {"type":"ADDED","object":{...}} with no spaces:
// its type and the object's bytes, found without walking the envelope with On-Demand
// (which costs a second stage 1 over the object and a skip through all its tokens).
// Anything else, including a line whose object then fails to parse, takes the general
// path, so this path accepts and rejects exactly the same lines.
struct PlainEnvelope {
  WatchEventType type;
  std::string_view object;
};

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_json_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_json_space(text.back())) text.remove_suffix(1);
  return text;
}

std::optional<PlainEnvelope> plain_envelope(std::string_view line) {
  constexpr std::string_view head = R"({"type":")";
  constexpr std::string_view object_field = R"(","object":)";
  if (line.substr(0, head.size()) != head || line.back() != '}') return std::nullopt;
  const std::size_t type_end = line.find('"', head.size());
  if (type_end == std::string_view::npos || line.compare(type_end, object_field.size(), object_field) != 0)
    return std::nullopt;
  const std::string_view type = line.substr(head.size(), type_end - head.size());
  PlainEnvelope out{WatchEventType::added, {}};
  if (type == "MODIFIED") out.type = WatchEventType::modified;
  else if (type == "DELETED") out.type = WatchEventType::deleted;
  else if (type != "ADDED") return std::nullopt;  // BOOKMARK and ERROR are rare: the general path
  const std::size_t object_start = type_end + object_field.size();
  out.object = trim(line.substr(object_start, line.size() - 1 - object_start));
  return out;
}

}  // namespace

WatchStreamParser::WatchStreamParser(std::size_t max_event_bytes)
    : json_(new Json), max_event_bytes_(max_event_bytes) {
  pending_.reserve(64 * 1024 + simdjson::SIMDJSON_PADDING);
}

WatchStreamParser::~WatchStreamParser() { delete json_; }

bool WatchStreamParser::fail(Errc code, std::string message) {
  failure_ = Error{code, std::move(message)};
  pending_.clear();
  return false;
}

bool WatchStreamParser::feed(std::string_view bytes) {
  if (failure_) return false;
  std::size_t start = 0;               // of the first unparsed line in pending_
  std::size_t scan = pending_.size();  // bytes before it hold no '\n'
  // Grow in steps of the data at hand; the padding keeps On-Demand's reads in bounds.
  if (pending_.capacity() < pending_.size() + bytes.size() + simdjson::SIMDJSON_PADDING)
    pending_.reserve(pending_.size() + bytes.size() + simdjson::SIMDJSON_PADDING);
  pending_.append(bytes.data(), bytes.size());
  for (;;) {
    const void* hit = std::memchr(pending_.data() + scan, '\n', pending_.size() - scan);
    if (!hit) break;
    const std::size_t newline = static_cast<const char*>(hit) - pending_.data();
    if (newline - start > max_event_bytes_)
      return fail(Errc::decode_failed, "watch event on line " + std::to_string(lines_ + 1) + " is " +
                                           std::to_string(newline - start) + " bytes, over the limit of " +
                                           std::to_string(max_event_bytes_));
    if (!parse_line(start, newline - start)) return false;
    start = scan = newline + 1;
  }
  if (pending_.size() - start > max_event_bytes_)
    return fail(Errc::decode_failed, "watch event on line " + std::to_string(lines_ + 1) +
                                         " is over the limit of " + std::to_string(max_event_bytes_) +
                                         " bytes before its end");
  pending_.erase(0, start);
  return true;
}

bool WatchStreamParser::finish() {
  if (failure_) return false;
  if (!pending_.empty() && !parse_line(0, pending_.size())) return false;  // it skips a blank rest
  pending_.clear();
  return true;
}

std::vector<WatchEvent> WatchStreamParser::take_events() {
  std::vector<WatchEvent> out;
  out.swap(events_);
  return out;
}

bool WatchStreamParser::parse_line(std::size_t offset, std::size_t size) {
  ++lines_;
  const char* line = pending_.data() + offset;
  const std::string_view text = trim(std::string_view(line, size));
  if (text.empty()) return true;  // a keep-alive blank line
  if (auto plain = plain_envelope(text)) {
    if (auto parsed = Object::parse(plain->object)) {
      WatchEvent out;
      out.type = plain->type;
      out.object = std::move(parsed).value();
      out.resource_version = std::string(out.object->resource_version());
      events_.push_back(std::move(out));
      return true;
    }
  }
  const auto bad = [&](std::string_view what) {
    return fail(Errc::decode_failed,
                "malformed watch event on line " + std::to_string(lines_) + ": " + std::string(what));
  };
  simdjson::ondemand::document doc;
  if (auto error = json_->parser.iterate(line, size, pending_.capacity() - offset).get(doc))
    return bad(simdjson::error_message(error));
  simdjson::ondemand::object event;
  if (auto error = doc.get_object().get(event)) return bad(simdjson::error_message(error));
  std::string_view type;
  if (auto error = event.find_field_unordered("type").get_string().get(type))
    return bad(std::string("no string \"type\": ") + simdjson::error_message(error));
  simdjson::ondemand::object object;
  if (auto error = event.find_field_unordered("object").get_object().get(object))
    return bad(std::string("no \"object\": ") + simdjson::error_message(error));

  WatchEvent out;
  if (type == "BOOKMARK") {
    out.type = WatchEventType::bookmark;
    simdjson::ondemand::object metadata;
    if (auto error = object.find_field_unordered("metadata").get_object().get(metadata))
      return bad(std::string("bookmark without metadata: ") + simdjson::error_message(error));
    std::string_view rv;
    if (metadata.find_field_unordered("resourceVersion").get_string().get(rv) || rv.empty())
      return bad("bookmark without metadata.resourceVersion");
    out.resource_version = std::string(rv);
    simdjson::ondemand::object annotations;
    if (!metadata.find_field_unordered("annotations").get_object().get(annotations)) {
      std::string_view end_marker;
      if (!annotations.find_field_unordered("k8s.io/initial-events-end").get_string().get(end_marker))
        out.initial_events_end = end_marker == "true";
    }
    events_.push_back(std::move(out));
    return true;
  }
  std::string_view raw;
  if (auto error = object.raw_json().get(raw)) return bad(simdjson::error_message(error));
  raw = trim(raw);  // raw_json() runs on to the next token
  if (type == "ERROR") {
    failure_ = error_from_status_object(raw);
    pending_.clear();
    return false;
  }
  if (type == "ADDED") {
    out.type = WatchEventType::added;
  } else if (type == "MODIFIED") {
    out.type = WatchEventType::modified;
  } else if (type == "DELETED") {
    out.type = WatchEventType::deleted;
  } else {
    return bad("unknown event type '" + std::string(type.substr(0, 64)) + "'");
  }
  auto parsed = Object::parse(raw);
  if (!parsed) return bad(parsed.error().to_string());
  out.object = std::move(parsed).value();
  out.resource_version = std::string(out.object->resource_version());
  events_.push_back(std::move(out));
  return true;
}

}  // namespace kinformer::http
