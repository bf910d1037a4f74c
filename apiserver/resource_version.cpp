#include "apiserver/resource_version.hpp"

#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

std::optional<std::uint64_t> parse_resource_version(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    // max_revision is below 2^63, so value * 10 + digit cannot wrap while this holds.
    if (value > (max_revision - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

std::string format_resource_version(std::uint64_t revision) { return std::to_string(revision); }

bool same_resource_version(std::string_view text, std::uint64_t revision) {
  return text == format_resource_version(revision);
}

void set_resource_version(nlohmann::json& object, std::uint64_t revision) {
  object["metadata"]["resourceVersion"] = format_resource_version(revision);
}

}  // namespace kinformer::apiserver
