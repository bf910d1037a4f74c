// apiserver/object_limits.hpp
//
// ObjectLimits: the size and depth budget every decoded or patched object must fit
// before the store serializes it (issue 11). Recursive serialization of a deep
// object exhausts the stack, and an object grown by YAML aliases or JSON Patch
// copies exhausts memory, so both are bounded on the value itself, not only on
// the request text.
//
// Contract
//   * check_object_limits(): nullopt when `object` nests at most max_depth levels,
//     its estimated serialized size is at most max_bytes, and every string and key is
//     valid UTF-8, and every number finite. Else 422 Invalid (too deep), 413
//     RequestEntityTooLarge (too big) or 400 BadRequest (bad text or number). It walks iteratively and
//     stops at the first violation, so checking costs O(min(size, max_bytes)).
//   * bounded_size(): the estimated serialized size of a value (strings and keys
//     counted without escapes), counting stops once it exceeds `cap`.
//   * is_valid_utf8(): RFC 3629 (no overlongs, no surrogates, at most U+10FFFF).
//   * text_nests_within(): whether JSON (or YAML flow) text opens at most `max_depth`
//     brackets at once, strings in double quotes excluded. Deep documents would exhaust
//     the stack in recursive parsing or dumping, so the raw text is checked before any
//     parser sees it (request bodies; the write-ahead log and snapshots, issue 33).
// Threading: pure functions. Errors: ApiError values; never throws (beyond bad_alloc).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/work_budget.hpp"

namespace kinformer::apiserver {

struct ObjectLimits {
  std::size_t max_bytes = 3 * 1024 * 1024;  // one object, serialized (kube-apiserver's request limit)
  std::size_t max_depth = 256;  // nesting of objects and arrays; recursion stays far from the stack's end
  std::size_t max_patch_operations = 10000;  // JSON Patch operations per request (kube-apiserver's limit)
  WorkLimits work;  // CPU time of the patch engines and validation per request (apiserver/work_budget.hpp)
};

std::optional<ApiError> check_object_limits(const nlohmann::json& object, const ObjectLimits& limits);
std::size_t bounded_size(const nlohmann::json& value, std::size_t cap);
bool is_valid_utf8(std::string_view text);
bool text_nests_within(std::string_view text, std::size_t max_depth);

/// 413 for an object (or its patched result) above `limit` bytes.
ApiError object_too_large(std::size_t limit);
/// 422 for an object nesting deeper than `limit` levels.
ApiError object_too_deep(std::size_t limit);

}  // namespace kinformer::apiserver
