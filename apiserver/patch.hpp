// apiserver/patch.hpp
//
// The PATCH document types the server accepts (kube-api-protocol.md §A6.3), each
// applied to a JSON object in place.
//
// Contract
//   * apply_merge_patch: RFC 7386 (objects merge recursively, null deletes, lists
//     are replaced). Strategic merge directives in it ($patch, $retainKeys, ...) are
//     dropped, never stored: kube-apiserver's decoding drops them as unknown fields.
//   * apply_strategic_merge_patch: the merge patch plus what kubectl sends for
//     built-in kinds: lists of objects with a known merge key (containers, env,
//     volumes, ports, volumeMounts, conditions, ...) merge element-wise by that key;
//     `$patch: replace|delete` on maps and list elements; `$deleteFromPrimitiveList/`;
//     `$setElementOrder/` and `$retainKeys` are accepted and ignored (order and
//     retained keys are not enforced). No directive is ever stored. Lists merge
//     through hash indexes of their keys or values: O(list + patch), not their product.
//   * apply_json_patch: RFC 6902 operations (add/remove/replace/move/copy/test),
//     at most limits.max_patch_operations of them, applied one by one in place. An
//     operation that would nest the object deeper than limits.max_depth is 422, one
//     that would grow it past limits.max_bytes (repeated `copy`) is 413, before it
//     runs; `add` under a string or number is 422. A `path` or `from` with more
//     segments than limits.max_depth is 422 before anything runs (its text is scanned
//     once). `move` moves the value, never copies it.
//   * Every engine charges its steps to the request's WorkBudget and answers the
//     budget's 413 once it is spent.
//   * list_merge_rule(field, first element): how strategic merge combines that list
//     field, for whoever must agree with it (server-side apply's field sets).
//   * On error the target is unspecified: callers patch a copy. Malformed patch
//     documents are 400 BadRequest, operations that do not apply 422 Invalid.
// Threading: pure functions. Errors: ApiError values; never throws.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/object_limits.hpp"
#include "apiserver/work_budget.hpp"

namespace kinformer::apiserver {

std::optional<ApiError> apply_merge_patch(nlohmann::json& target, const nlohmann::json& patch,
                                          WorkBudget& budget);
std::optional<ApiError> apply_strategic_merge_patch(nlohmann::json& target, const nlohmann::json& patch,
                                                    WorkBudget& budget);
std::optional<ApiError> apply_json_patch(nlohmann::json& target, const nlohmann::json& operations,
                                         const ObjectLimits& limits, WorkBudget& budget);

/// How strategic merge combines a list field of a built-in kind (the Kubernetes API
/// types' patchStrategy and patchMergeKey): element by element by `key`, as a set of
/// values (finalizers), or replaced whole.
struct ListMergeRule {
  enum class Kind { by_key, set_of_values, replace } kind = Kind::replace;
  const char* key = nullptr;  // by_key only
};
ListMergeRule list_merge_rule(const std::string& field, const nlohmann::json& first_element);

}  // namespace kinformer::apiserver
