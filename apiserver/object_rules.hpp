// apiserver/object_rules.hpp
//
// The rules every Storage applies to an object it is about to store, written once:
// metadata validation, generateName, and the server-owned metadata kube-apiserver
// sets on create and keeps on update (kube-api-protocol.md §A3).
//
// Contract
//   * validate_metadata(): labels and annotations are maps of strings; label keys and
//     values, annotation keys (lower-cased) and finalizers follow Kubernetes' qualified
//     name rules; annotations hold at most total_annotation_size_limit bytes of keys and
//     values (422 "Too long"); finalizers are a list of strings (else 400, as
//     kube-apiserver's decoder); managedFields entries are well-formed.
//   * prepare_create(): validates metadata (validate_metadata()), sets the
//     namespace (or removes it for a cluster-scoped kind), picks a name for
//     generateName (retrying against `taken`), checks the name (422), asks `taken`
//     for AlreadyExists (409), then sets kind, apiVersion, uid, creationTimestamp,
//     generation 1 and a Pod's / Namespace's initial status. resourceVersion is the
//     caller's. `check_namespace` runs after validation, before naming (404 there).
//   * prepare_update(): validates `after`, answers 409 Conflict when it names a
//     resourceVersion other than the current one, 400 for a different name, restores
//     the server-owned metadata (name, namespace, uid, creationTimestamp, generation,
//     deletionTimestamp), and reports whether anything changed; a change outside
//     metadata and status bumps the generation of kinds that track it. On return,
//     after's metadata.resourceVersion is the current one; the caller sets the new one.
//   * Both keep metadata.managedFields (server-side apply's state) by
//     keep_managed_fields(): an update that leaves them out keeps the current ones,
//     `[{}]` clears them; validate_metadata() refuses malformed entries (422).
//   * deletion_refused(): 409 for a failed uid / resourceVersion precondition, 403 for
//     the bootstrap namespaces (default, kube-system, kube-public).
// Threading: pure functions (the uid generator is thread-safe).
// Errors: ApiError values as kube-apiserver words them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/resources.hpp"
#include "apiserver/storage/storage.hpp"
#include "apiserver/stored_object.hpp"

namespace kinformer::apiserver {

/// The server's clock as a metadata timestamp (RFC 3339, UTC, seconds).
std::string now_rfc3339();

/// kube-apiserver's TotalAnnotationSizeLimitB: keys and values of an object's annotations together.
constexpr std::size_t total_annotation_size_limit = 256 * 1024;

/// Metadata that is not a map of strings, or labels Kubernetes refuses: the 400/422 error.
std::optional<ApiError> validate_metadata(const ResourceType& type, const nlohmann::json& object);

/// Fills a new object's server-owned fields (see the contract). `taken(key)`: the key
/// (object_key()) exists already.
std::optional<ApiError> prepare_create(const ResourceType& type, std::string_view ns, nlohmann::json& object,
                                       const std::function<std::optional<ApiError>()>& check_namespace,
                                       const std::function<bool(const std::string& key)>& taken);

/// Applies the update rules to `after` against `current` (whose JSON is `before`).
/// true: something changed.
ApiResult<bool> prepare_update(const ResourceType& type, const StoredObject& current, const nlohmann::json& before,
                               nlohmann::json& after);

/// Why `current` may not be deleted, or nothing. is_namespace: `type` is namespaces.
std::optional<ApiError> deletion_refused(const ResourceType& type, bool is_namespace, const StoredObject& current,
                                         const Storage::Preconditions& preconditions);

}  // namespace kinformer::apiserver
