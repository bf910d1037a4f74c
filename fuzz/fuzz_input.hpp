// fuzz/fuzz_input.hpp
//
// How the API server's fuzz targets cut and grow their inputs (issue 33).
//
// Contract
//   * next_part(rest): the bytes up to the next NUL (all of them when there is none);
//     `rest` is left after it.
//   * grow_lists(value, times, left): every array in `value` repeated to `times` its
//     length, adding at most `left` values in all, each copied element counted with
//     every value nested in it (nested arrays multiply: a 3-deep input grown 250 times
//     was 15 million values and timed the target out), so that a small input reaches
//     the sizes where a quadratic cost shows. A copy of an object with a string "name"
//     gets "-<copy>" appended, so that lists merged by name hold distinct keys.
// Threading: pure functions. Errors: none.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kinformer::fuzz {

inline std::string_view next_part(std::string_view& rest) {
  auto nul = rest.find('\0');
  auto part = rest.substr(0, nul);
  rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  return part;
}

// Values in `value` nested at any depth, `value` itself not counted.
inline std::size_t nested_values(const nlohmann::json& value) {
  std::size_t n = 0;
  if (value.is_structured())
    for (const auto& child : value) n += 1 + nested_values(child);
  return n;
}

inline void grow_lists(nlohmann::json& value, std::size_t times, std::size_t& left) {
  if (value.is_object()) {
    for (auto& child : value) grow_lists(child, times, left);
  } else if (value.is_array()) {
    for (auto& child : value) grow_lists(child, times, left);
    const nlohmann::json once = value;
    const std::size_t per_copy = nested_values(once);
    for (std::size_t copy = 1; copy < times && left >= per_copy; ++copy, left -= per_copy)
      for (nlohmann::json element : once) {
        if (element.is_object())
          if (auto name = element.find("name"); name != element.end() && name->is_string())
            *name = name->get<std::string>() + "-" + std::to_string(copy);
        value.push_back(std::move(element));
      }
  }
}

}  // namespace kinformer::fuzz
