#include "apiserver/watch_encoder.hpp"

#include <array>

#include <nlohmann/json.hpp>

#include "apiserver/resource_version.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

LineType line_type(EventType type) {
  switch (type) {
    case EventType::added:
      return LineType::added;
    case EventType::modified:
      return LineType::modified;
    case EventType::deleted:
      return LineType::deleted;
  }
  return LineType::modified;
}

const std::string& line_prefix(LineType type) {
  static const std::array<std::string, 5> prefixes = {
      "{\"type\":\"ADDED\",\"object\":", "{\"type\":\"MODIFIED\",\"object\":", "{\"type\":\"DELETED\",\"object\":",
      "{\"type\":\"BOOKMARK\",\"object\":", "{\"type\":\"ERROR\",\"object\":"};
  return prefixes[static_cast<std::size_t>(type)];
}

const std::string& line_suffix() {
  static const std::string suffix = "}\n";
  return suffix;
}

std::string event_line(LineType type, std::string_view object_json) {
  const auto& prefix = line_prefix(type);
  std::string line;
  line.reserve(prefix.size() + object_json.size() + line_suffix().size());
  line.append(prefix).append(object_json).append(line_suffix());
  return line;
}

std::string object_at_revision(std::string_view object_json, std::uint64_t revision) {
  json object = json::parse(object_json);
  set_resource_version(object, revision);
  return object.dump();
}

std::string bookmark_line(const ResourceType& type, std::uint64_t resource_version, bool initial_events_end) {
  json object = {{"kind", type.kind}, {"apiVersion", type.api_version()}, {"metadata", json::object()}};
  set_resource_version(object, resource_version);
  if (initial_events_end) object["metadata"]["annotations"] = {{"k8s.io/initial-events-end", "true"}};
  return event_line(LineType::bookmark, object.dump());
}

std::string error_line(const ApiError& error) { return event_line(LineType::error, error.to_status_json()); }

}  // namespace kinformer::apiserver
