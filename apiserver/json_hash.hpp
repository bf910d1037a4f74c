// apiserver/json_hash.hpp
//
// JsonHash: a hash of JSON values that agrees with nlohmann::json's operator==, for the
// hash indexes of the patch engines and schema validation (issue 33).
//
// Contract
//   * Values that compare equal hash equally. nlohmann's own std::hash folds in the
//     value's storage type, so 80 parsed (unsigned), 80 built in code (signed) and 80.0
//     (equal under ==) would land in different buckets; a number is hashed here by its
//     value as a double instead. Elsewhere it is nlohmann's hash.
// Threading: stateless.
#pragma once

#include <cstddef>
#include <functional>

#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

struct JsonHash {
  std::size_t operator()(const nlohmann::json& value) const {
    if (value.is_number()) return std::hash<double>{}(value.get<double>());
    return std::hash<nlohmann::json>{}(value);
  }
};

}  // namespace kinformer::apiserver
