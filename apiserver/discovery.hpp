// apiserver/discovery.hpp
//
// The documents kubectl reads before it touches a resource (kube-api-protocol.md
// §A9, §B3, §B4): /version, legacy and aggregated discovery, and the stub OpenAPI
// v3 documents.
//
// Contract
//   * /version reports major "1", minor "32": the installed kubectl dispatcher picks
//     its kubectl binary by the server's minor (§B1).
//   * Aggregated discovery bodies must be sent with aggregated_content_type(); the
//     legacy ones with plain application/json. Both list the /status and /scale
//     subresources (scale as autoscaling/v1 Scale, which kubectl scale looks up).
//   * The OpenAPI v3 document of a group-version declares, for every kind, a PATCH
//     operation with x-kubernetes-group-version-kind and a fieldValidation query
//     parameter: kubectl then leaves validation to the server. components.schemas
//     holds a minimal schema per kind for `kubectl explain` (apiVersion, kind,
//     metadata, the kind's top-level fields; a CRD's own openAPIV3Schema).
//   * Functions returning std::optional give nullopt for a group/version not served.
// Threading: pure functions of the (read-only) registry.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "apiserver/resources.hpp"

namespace kinformer::apiserver {

std::string version_json();

/// True when the Accept header asks for aggregated discovery (apidiscovery.k8s.io v2 or v2beta1);
/// `version` is set to "v2" or "v2beta1".
bool wants_aggregated_discovery(std::string_view accept, std::string& version);
std::string aggregated_content_type(const std::string& version);
/// The APIGroupDiscoveryList for /api (core) or /apis (named groups).
std::string aggregated_discovery_json(const ResourceRegistry& registry, bool core, const std::string& version);

std::string api_versions_json(const std::string& server_address);  // /api
std::string api_group_list_json(const ResourceRegistry& registry);  // /apis
std::optional<std::string> api_group_json(const ResourceRegistry& registry, std::string_view group);  // /apis/{g}
std::optional<std::string> api_resource_list_json(const ResourceRegistry& registry, std::string_view group,
                                                   std::string_view version);  // /api/v1, /apis/{g}/{v}

std::string openapi_root_json(const ResourceRegistry& registry);  // /openapi/v3
/// /openapi/v3/api/v1 or /openapi/v3/apis/{g}/{v}
std::optional<std::string> openapi_group_version_json(const ResourceRegistry& registry, std::string_view group,
                                                      std::string_view version);

}  // namespace kinformer::apiserver
