// apiserver/delete_options.hpp
//
// DeleteOptions: the body of a DELETE (meta.k8s.io/v1 DeleteOptions,
// kube-api-protocol.md §A6.4) read as kube-apiserver reads it (issue 33: a number
// where a string belongs was a 500).
//
// Contract
//   * An empty body is the defaults. Otherwise the body must be a JSON object whose
//     known fields have their types: kind, apiVersion, propagationPolicy strings;
//     gracePeriodSeconds an integer within int64; preconditions an object of the
//     strings uid and resourceVersion; orphanDependents and
//     ignoreStoreReadErrorWithClusterBreakingPotential booleans; dryRun a list of
//     strings. null is the field's absence. A wrong type is 400 BadRequest naming the
//     field and both types (kube-apiserver's decoder refuses it the same way).
//   * Values kube-apiserver's ValidateDeleteOptions refuses are 422 Invalid (kind
//     DeleteOptions, group meta.k8s.io): propagationPolicy other than Orphan,
//     Background or Foreground; orphanDependents together with propagationPolicy; a
//     dryRun value other than All. Unknown fields are ignored.
//   * Error messages never echo a whole value: they name types, or cut the value.
// Threading: pure function. Errors: ApiError values; never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/storage/storage.hpp"

namespace kinformer::apiserver {

struct DeleteOptions {
  Storage::Preconditions preconditions;              // "" = none
  bool dry_run = false;                              // dryRun: ["All"]
  std::optional<std::int64_t> grace_period_seconds;  // read and checked; deletion is immediate here
  std::string propagation_policy;                    // "" = the kind's default
};

ApiResult<DeleteOptions> parse_delete_options(const nlohmann::json& body);

}  // namespace kinformer::apiserver
