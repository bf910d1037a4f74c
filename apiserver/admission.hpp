// apiserver/admission.hpp
//
// admit(): the kind-specific rules every object passes before the Store keeps it,
// whatever the verb (create, update, every patch type, server-side apply), as
// kube-apiserver's validation and defaulting strategies (issue 17).
//
// Contract
//   * First the kind's defaults are filled in (apiserver/defaults.hpp), as
//     kube-apiserver defaults before it validates.
//   * Secrets: stringData is merged into data as base64 (stringData wins) and
//     dropped; every data value must be a valid base64 string (422 Invalid with the
//     field path data[<key>]). A secret value never appears in an error message.
//     An absent type defaults to Opaque.
//   * A custom resource with a schema (ResourceRegistry::schema()) must satisfy it:
//     422 Invalid with one cause per violation, at most max_invalid_causes of them
//     (apiserver/schema.hpp); the validation is charged to the request's WorkBudget
//     (413 once spent).
//   * Built-in kinds' numeric fields hold what their types and ranges allow
//     (apiserver/builtin_fields.hpp): 400 or 422.
//   * prepare_for_create(): a kind with a /status subresource starts without status,
//     as kube-apiserver's create strategies reset it; pods, services and nodes keep
//     what the creator sent (kubelet and tests create them with a status).
//   * A CustomResourceDefinition must define a kind the registry can serve
//     (apiserver/crd.hpp); its status gets the Established and NamesAccepted
//     conditions, as kube-apiserver's CRD controllers set them.
// Threading: pure functions of their arguments (the registry is thread-safe).
// Errors: ApiError values; never throws.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>

#include "apiserver/api_error.hpp"
#include "apiserver/resources.hpp"
#include "apiserver/work_budget.hpp"

namespace kinformer::apiserver {

/// Drops the status a create may not set (see the contract); call before admit().
void prepare_for_create(const ResourceType& type, nlohmann::json& object);

/// Normalizes `object` in place and checks it; nullopt when it may be stored.
std::optional<ApiError> admit(const ResourceRegistry& registry, const ResourceType& type,
                              nlohmann::json& object, WorkBudget& budget);

}  // namespace kinformer::apiserver
