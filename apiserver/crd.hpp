// apiserver/crd.hpp
//
// CustomResourceDefinitions (apiextensions.k8s.io/v1) read as the kind they define,
// so that applying one serves its custom resource at once (issue 17).
//
// Contract
//   * custom_kind_of() reads spec.group, spec.names (plural, singular, kind,
//     shortNames, categories), spec.scope and the one served version with its
//     openAPIV3Schema and subresources (status, scale). metadata.name must be
//     "<plural>.<group>". kinformer serves exactly one version per CRD: a CRD with
//     several served versions is 422 (no conversion between versions).
//   * Every failure is 422 Invalid with the field path (spec.names.plural, ...).
//   * set_crd_status() writes what kube-apiserver's CRD controllers would:
//     acceptedNames, storedVersions and the NamesAccepted and Established conditions.
//   * follow_crd() is the one place that decides that a stored CRD means a served
//     kind. Every path by which a CRD's state becomes known calls it: a write or
//     delete through the API (api.cpp), recovery from a data file (the snapshot's CRDs
//     before its other objects, then every log event in log order: persistence.cpp),
//     and etcd (the CRDs present at start, and those another replica writes, from the
//     watch: etcd_storage.cpp). ADDED or MODIFIED serves the kind (a new entry, a
//     retired one with the same shape served again, or the served one's schema
//     replaced: ResourceRegistry::add_or_update_custom()); DELETED retires it.
// Threading: custom_kind_of() and set_crd_status() are pure; follow_crd() changes the
//   registry (thread-safe).
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/resources.hpp"
#include "apiserver/storage/storage.hpp"
#include "apiserver/stored_object.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver {

class OpenApiSchema;

struct CustomKind {
  ResourceType type;
  std::shared_ptr<const OpenApiSchema> schema;  // nullptr: the version declares none
};

/// True for apiextensions.k8s.io/v1 customresourcedefinitions.
bool is_crd_type(const ResourceType& type);

ApiResult<CustomKind> custom_kind_of(const nlohmann::json& crd);

void set_crd_status(nlohmann::json& crd);

/// What `event` on `object` means for the served kinds (see the contract); nothing
/// for any other kind than CRDs. Returns the kind served or retired (nullptr: none,
/// e.g. a deleted CRD whose kind was not served), or why the CRD cannot be served.
Result<const ResourceType*> follow_crd(ResourceRegistry& registry, EventType event, const StoredObject& object);

/// Deletes every object of a retired custom kind, one event each: what follows a
/// CRD's deletion (api.cpp), and what recovery finishes when a crash cut that short
/// (storage/persistence.cpp). A create that passed find() just before the retirement
/// may land after a pass, so it sweeps until a pass finds nothing (at most four).
void delete_custom_objects(Storage& storage, const ResourceType& type);

}  // namespace kinformer::apiserver
