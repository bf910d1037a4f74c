// apiserver/crd.hpp
//
// CustomResourceDefinitions (apiextensions.k8s.io/v1) read as the kind they define,
// so that applying one serves its custom resource at once (issue 17).
//
// Contract
//   * custom_kind_of() reads spec.group, spec.names (plural, singular, kind,
//     shortNames, categories), spec.scope and the one served version with its
//     openAPIV3Schema and subresources.status. metadata.name must be
//     "<plural>.<group>". kinformer serves exactly one version per CRD: a CRD with
//     several served versions is 422 (no conversion between versions).
//   * Every failure is 422 Invalid with the field path (spec.names.plural, ...).
//   * set_crd_status() writes what kube-apiserver's CRD controllers would:
//     acceptedNames, storedVersions and the NamesAccepted and Established conditions.
// Threading: pure functions.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/resources.hpp"

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

}  // namespace kinformer::apiserver
