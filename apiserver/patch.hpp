// apiserver/patch.hpp
//
// The PATCH document types the server accepts (kube-api-protocol.md §A6.3), each
// applied to a JSON object in place.
//
// Contract
//   * apply_merge_patch: RFC 7386 (objects merge recursively, null deletes, lists
//     are replaced).
//   * apply_strategic_merge_patch: the merge patch plus what kubectl sends for
//     built-in kinds: lists of objects with a known merge key (containers, env,
//     volumes, ports, volumeMounts, conditions, ...) merge element-wise by that key;
//     `$patch: replace|delete` on maps and list elements; `$deleteFromPrimitiveList/`;
//     `$setElementOrder/` and `$retainKeys` are accepted and ignored (order and
//     retained keys are not enforced).
//   * apply_json_patch: RFC 6902 operations (add/remove/replace/move/copy/test). The
//     values its "copy" operations copy total at most max_json_patch_copy_bytes (as
//     JSON text), else 422: copies of copies would grow the object exponentially.
//   * removal_patch(previous, next): the strategic merge patch that removes what an
//     earlier applied configuration set and the next one no longer does (keys become
//     null, keyed list elements `$patch: delete`): server-side apply's field removal
//     for one field manager, without managedFields.
//   * On error the target is unspecified: callers patch a copy. Malformed patch
//     documents are 400 BadRequest, operations that do not apply 422 Invalid.
// Threading: pure functions. Errors: ApiError values; never throws.
#pragma once

#include <cstddef>
#include <optional>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"

namespace kinformer::apiserver {

/// kube-apiserver's request body limit (3 MiB), reused as the bound on copied values.
constexpr std::size_t max_json_patch_copy_bytes = 3 * 1024 * 1024;

std::optional<ApiError> apply_merge_patch(nlohmann::json& target, const nlohmann::json& patch);
std::optional<ApiError> apply_strategic_merge_patch(nlohmann::json& target, const nlohmann::json& patch);
std::optional<ApiError> apply_json_patch(nlohmann::json& target, const nlohmann::json& operations);
nlohmann::json removal_patch(const nlohmann::json& previous, const nlohmann::json& next);

}  // namespace kinformer::apiserver
