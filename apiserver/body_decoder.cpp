#include "apiserver/body_decoder.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

json plain_scalar(const std::string& text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  char* end = nullptr;
  errno = 0;
  long long integer = std::strtoll(text.c_str(), &end, 10);
  if (end && *end == '\0' && errno == 0 && text.find_first_not_of("+-0123456789") == std::string::npos) return integer;
  if (text.find_first_not_of("+-0123456789.eE") == std::string::npos && text.find_first_of("0123456789") != std::string::npos) {
    double real = std::strtod(text.c_str(), &end);
    if (end && *end == '\0') return real;
  }
  return text;
}

// Thrown when a YAML document expands into more nodes than its text can hold without
// aliases: each *alias is a copy of its anchor's whole subtree, so anchors of aliases of
// anchors (the "billion laughs" document) would grow exponentially.
struct TooManyNodes {};

json from_yaml(const YAML::Node& node, std::size_t& budget) {
  if (budget == 0) throw TooManyNodes{};
  --budget;
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      // "!" marks a quoted scalar: always a string
      return node.Tag() == "!" ? json(node.Scalar()) : plain_scalar(node.Scalar());
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(from_yaml(item, budget));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& entry : node) out[entry.first.as<std::string>()] = from_yaml(entry.second, budget);
      return out;
    }
  }
  return nullptr;
}

// Deeply nested documents would exhaust the stack in recursive parsing or dumping, so
// the raw text's bracket depth is bounded first (strings in double quotes excluded).
constexpr int max_nesting = 256;

bool nesting_within_limit(std::string_view body) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > max_nesting) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if ((c >> 5) == 0x6) n = 1, cp = c & 0x1f;
    else if ((c >> 4) == 0xe) n = 2, cp = c & 0x0f;
    else if ((c >> 3) == 0x1e) n = 3, cp = c & 0x07;
    else return false;
    if (i + n >= s.size()) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 0x2) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;  // overlong, out of range or a surrogate
    i += n + 1;
  }
  return true;
}

bool all_utf8(const json& value) {
  if (value.is_string()) return valid_utf8(value.get_ref<const std::string&>());
  if (value.is_array())
    return std::all_of(value.begin(), value.end(), [](const json& v) { return all_utf8(v); });
  if (value.is_object())
    for (auto it = value.begin(); it != value.end(); ++it)
      if (!valid_utf8(it.key()) || !all_utf8(it.value())) return false;
  return true;
}

}  // namespace

std::optional<ApiError> invalid_utf8(const json& document, std::string_view what) {
  if (all_utf8(document)) return std::nullopt;
  return ApiError::bad_request("the request body's " + std::string(what) + " holds a string that is not valid UTF-8");
}

ApiResult<json> decode_body(std::string_view body, BodyFormat format) {
  if (!nesting_within_limit(body))
    return ApiError::bad_request("the request body nests deeper than " + std::to_string(max_nesting) + " levels");
  if (format == BodyFormat::json) {
    try {
      return json::parse(body.begin(), body.end());
    } catch (const json::parse_error& e) {
      return ApiError::bad_request(std::string("the request body is not valid JSON: ") + e.what());
    }
  }
  if (format == BodyFormat::protobuf) return ApiError::internal("protobuf bodies go to decode_protobuf()");
  try {
    auto documents = YAML::LoadAll(std::string(body));
    if (documents.size() != 1)
      return ApiError::bad_request("the request body must hold exactly one YAML document (found " +
                                   std::to_string(documents.size()) + ")");
    // A node takes at least one byte of text without aliases ("[a,b]", "a: 1"): twice
    // the body's size bounds every alias-free document and keeps expansion linear.
    std::size_t budget = 2 * body.size() + 64;
    try {
      json document = from_yaml(documents.front(), budget);
      // Found by fuzz_body_decoder (issue 19): YAML scalars may hold any bytes.
      if (auto bad = invalid_utf8(document, "YAML")) return *bad;
      return document;
    } catch (const TooManyNodes&) {
      return ApiError::bad_request("the request body's YAML aliases expand to more than " +
                                   std::to_string(2 * body.size() + 64) + " nodes");
    }
  } catch (const YAML::Exception& e) {
    return ApiError::bad_request(std::string("the request body is not valid YAML: ") + e.what());
  }
}

}  // namespace kinformer::apiserver
