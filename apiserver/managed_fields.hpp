// apiserver/managed_fields.hpp
//
// Server-side apply's state kept where kube-apiserver keeps it: in the object's own
// metadata.managedFields, so that it is stored, logged, snapshotted and shared through
// etcd with the object and a restart or another replica applies as this one would.
//
// Contract
//   * owned_fields(configuration, applier): the FieldsV1 set of the fields an applied
//     configuration sets: `f:<name>` for each object field, `k:{"<key>":<value>}` with a
//     `.` member for an element of a list merged by key and `v:<value>` for a value of a
//     list merged as a set (both by patch.hpp's list_merge_rule, built-in kinds only),
//     `{}` for every leaf: a scalar, an empty object or a list replaced whole. Left out,
//     as kube-apiserver does: apiVersion, kind and the server-owned metadata (name,
//     namespace, uid, resourceVersion, generation, creationTimestamp, selfLink,
//     managedFields); status on the main resource of a kind with a status subresource,
//     everything but status on /status.
//   * fields_difference / fields_union: set operations on FieldsV1 sets.
//   * remove_fields(object, fields): removes those fields from the object: a leaf or an
//     element owned itself (`.`) goes with everything under it; an object or list that
//     the removal leaves empty goes too.
//   * apply_configuration(): server-side apply for one manager: removes the fields the
//     manager's Apply entry owned before, no longer applies and no other entry owns;
//     merges the configuration in (strategic merge for built-in kinds, else a merge
//     patch); takes the fields whose values it changed out of every other entry (an
//     entry left with nothing goes); records the new set in the manager's Apply entry
//     (manager, operation "Apply", apiVersion, time, fieldsType "FieldsV1", fieldsV1,
//     subresource), whose time changes only when its set does, so an unchanged apply
//     changes nothing. An entry with an empty set is dropped, and so is an empty
//     managedFields list. Entries are read defensively (clients may write them): a
//     malformed entry or member is kept and owns nothing, and no entry can remove
//     apiVersion, kind, metadata itself or the server-owned metadata.
//   * Cost: every walk is linear in the configuration, the object and the entries'
//     sets: `k:` members find their list elements through a hash index of the keys,
//     removals from a list happen in one pass, and the entries' sets are united in
//     place. apply_configuration() charges its steps to the request's WorkBudget and
//     answers the budget's 413 once it is spent.
//   * Not here, unlike kube-apiserver: conflicts between managers (every apply acts as
//     --force-conflicts) and "Update" entries for writes other than apply.
//   * managed_fields_refused(configuration): 400 "metadata.managedFields must be nil"
//     when an apply configuration carries managedFields (kube-apiserver's rule).
//   * managed_fields_problem(list): why a client-written managedFields list is invalid
//     (kube-apiserver's ValidateManagedFields: operation Apply or Update, fieldsType
//     FieldsV1, manager at most 128 characters), with the field path; `[{}]` is valid.
//   * keep_managed_fields(metadata, current): what a create or update stores: `[{}]`
//     clears the list; an absent, null or empty list keeps the current object's
//     (none on create); any other list is the client's.
// Threading: pure functions. Errors: ApiError values; never throws on any JSON input.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/work_budget.hpp"

namespace kinformer::apiserver {

/// Who applies, and which part of the object an apply may own.
struct Applier {
  std::string manager;      // the fieldManager query parameter
  std::string api_version;  // of the applied kind, recorded in the entry
  std::string subresource;  // "" or "status"
  bool strategic = true;    // a built-in kind: lists merge by patch.hpp's rules
  bool status_apart = false;  // the kind has a status subresource
};

nlohmann::json owned_fields(const nlohmann::json& configuration, const Applier& applier);
/// The same, stopping early (with part of the set) once `budget` is spent.
nlohmann::json owned_fields(const nlohmann::json& configuration, const Applier& applier, WorkBudget& budget);
nlohmann::json fields_difference(const nlohmann::json& fields, const nlohmann::json& minus);
nlohmann::json fields_union(const nlohmann::json& a, const nlohmann::json& b);
/// Stops early (having removed part of them) once `budget` is spent.
void remove_fields(nlohmann::json& object, const nlohmann::json& fields, WorkBudget& budget);

/// `now` is the entry's time when its set changes (RFC 3339).
std::optional<ApiError> apply_configuration(nlohmann::json& object, const nlohmann::json& configuration,
                                            const Applier& applier, const std::string& now, WorkBudget& budget);

std::optional<ApiError> managed_fields_refused(const nlohmann::json& configuration);

struct FieldProblem {
  std::string field;  // "metadata.managedFields[0].operation"
  std::string message;
};
std::optional<FieldProblem> managed_fields_problem(const nlohmann::json& managed_fields);

void keep_managed_fields(nlohmann::json& metadata, const nlohmann::json* current_metadata);

}  // namespace kinformer::apiserver
