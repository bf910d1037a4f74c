// apiserver/watch_encoder.hpp
//
// The one encoder of watch lines (kube-api-protocol.md §A5): every
// {"type":"...","object":{...}}\n the server sends, whether rendered once per store
// event (stored_object.hpp), per watcher (watch_filter.hpp), or written in pieces
// that point into a stored object (the HTTP watch stream's initial state).
//
// Contract
//   * line_prefix(type) + object JSON + line_suffix() is the line event_line() builds;
//     both pieces are static text, so a buffer may point into them for the process's life.
//   * object_at_revision() is the object's JSON with metadata.resourceVersion replaced:
//     the previous content a watcher gets as DELETED when an update takes the object out
//     of its selection, at the event's revision.
//   * bookmark_line(): a BOOKMARK whose object carries only kind, apiVersion and
//     metadata.resourceVersion (and the initial-events-end annotation when asked).
// Threading: pure functions. Errors: object_at_revision() expects JSON the store wrote
//   (it throws nlohmann's parse_error on anything else, which the store never holds).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "apiserver/api_error.hpp"
#include "apiserver/resources.hpp"
#include "apiserver/stored_object.hpp"

namespace kinformer::apiserver {

enum class LineType : std::uint8_t { added, modified, deleted, bookmark, error };
/// The line type of a store event.
LineType line_type(EventType type);

/// "{\"type\":\"ADDED\",\"object\":" and the like.
const std::string& line_prefix(LineType type);
/// "}\n"
const std::string& line_suffix();
/// {"type":"<type>","object":<object_json>}\n
std::string event_line(LineType type, std::string_view object_json);

/// The object's JSON with metadata.resourceVersion set to `revision`.
std::string object_at_revision(std::string_view object_json, std::uint64_t revision);

/// {"type":"BOOKMARK","object":{"kind":..,"apiVersion":..,"metadata":{"resourceVersion":"N"}}}
std::string bookmark_line(const ResourceType& type, std::uint64_t resource_version, bool initial_events_end);
/// {"type":"ERROR","object":<Status>}
std::string error_line(const ApiError& error);

}  // namespace kinformer::apiserver
