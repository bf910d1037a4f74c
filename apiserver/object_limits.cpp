#include "apiserver/object_limits.hpp"

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

// Bytes of a scalar in the serialized form; numbers are estimated (their text is not rendered).
std::size_t scalar_size(const json& value) {
  switch (value.type()) {
    case json::value_t::string:
      return value.get_ref<const std::string&>().size() + 2;
    case json::value_t::boolean:
      return 5;
    case json::value_t::null:
      return 4;
    default:
      return 8;
  }
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  const auto n = text.size();
  while (i < n) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    std::uint32_t code = 0;
    if ((c & 0xe0) == 0xc0)
      length = 2, code = c & 0x1f;
    else if ((c & 0xf0) == 0xe0)
      length = 3, code = c & 0x0f;
    else if ((c & 0xf8) == 0xf0)
      length = 4, code = c & 0x07;
    else
      return false;
    if (i + length > n) return false;
    for (std::size_t k = 1; k < length; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code = code << 6 | (next & 0x3f);
    }
    static const std::uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < smallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    i += length;
  }
  return true;
}

ApiError object_too_large(std::size_t limit) {
  ApiError error = ApiError::too_large(limit);
  error.message = "the object is larger than the server accepts (" + std::to_string(limit) +
                  " bytes, serialized); a YAML alias or a JSON Patch copy may have multiplied it";
  return error;
}

ApiError object_too_deep(std::size_t limit) {
  return ApiError::invalid(
      "", "Object", "",
      {{"FieldValueInvalid",
        "Invalid value: the object nests deeper than " + std::to_string(limit) + " levels", ""}});
}

std::size_t bounded_size(const json& value, std::size_t cap) {
  std::size_t total = 0;
  std::vector<const json*> stack{&value};
  while (!stack.empty() && total <= cap) {
    const json* at = stack.back();
    stack.pop_back();
    if (at->is_object()) {
      total += 2 + at->size();  // braces and separators
      for (auto it = at->begin(); it != at->end(); ++it) {
        total += it.key().size() + 3;
        stack.push_back(&it.value());
      }
    } else if (at->is_array()) {
      total += 2 + at->size();
      for (const auto& element : *at) stack.push_back(&element);
    } else {
      total += scalar_size(*at);
    }
  }
  return total;
}

std::optional<ApiError> check_object_limits(const json& object, const ObjectLimits& limits) {
  std::size_t total = 0;
  std::vector<std::pair<const json*, std::size_t>> stack{{&object, 1}};
  while (!stack.empty()) {
    auto [at, depth] = stack.back();
    stack.pop_back();
    if (depth > limits.max_depth) return object_too_deep(limits.max_depth);
    if (at->is_object()) {
      total += 2 + at->size();
      for (auto it = at->begin(); it != at->end(); ++it) {
        if (!is_valid_utf8(it.key()))
          return ApiError::bad_request("the object holds a key that is not valid UTF-8");
        total += it.key().size() + 3;
        stack.emplace_back(&it.value(), depth + 1);
      }
    } else if (at->is_array()) {
      total += 2 + at->size();
      for (const auto& element : *at) stack.emplace_back(&element, depth + 1);
    } else {
      if (at->is_string() && !is_valid_utf8(at->get_ref<const std::string&>()))
        return ApiError::bad_request("the object holds a string that is not valid UTF-8");
      if (at->is_number_float() && !std::isfinite(at->get<double>()))
        return ApiError::bad_request("the object holds a number that is out of range");
      total += scalar_size(*at);
    }
    if (total > limits.max_bytes) return object_too_large(limits.max_bytes);
  }
  return std::nullopt;
}

bool text_nests_within(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

}  // namespace kinformer::apiserver
