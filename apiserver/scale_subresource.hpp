// apiserver/scale_subresource.hpp
//
// The /scale subresource: an object's replica count as an autoscaling/v1 Scale, so
// that `kubectl scale` and HPA-style clients work against the embedded server
// (issue 32). Served for deployments, replicasets, statefulsets and
// replicationcontrollers, and for custom resources whose CRD declares
// subresources.scale (ResourceType::scale_subresource).
//
// Contract
//   * GET answers {"kind":"Scale","apiVersion":"autoscaling/v1"} with the object's
//     name, namespace, uid, resourceVersion and creationTimestamp, spec.replicas
//     (omitted at 0, as kube-apiserver's omitempty does), status.replicas (0 when
//     unset) and status.selector: the label selector as text for the built-ins, the
//     string at labelSelectorPath for a custom resource (omitted when there is none).
//   * PUT takes a Scale; PATCH takes a merge, strategic-merge or JSON patch of the
//     Scale. Either writes only spec.replicas (a custom resource: specReplicasPath)
//     of the object, through the same admission (defaults, schema) as every write,
//     and answers the new Scale. A Scale's metadata.resourceVersion is a
//     precondition: a stale one is 409 Conflict, as for the object itself.
//   * spec.replicas must be an integer from 0 to 2^31-1: a negative one is 422
//     Invalid (field spec.replicas), another type 400. A missing one is 0, as Go
//     decodes it. A name in the body that is not the URL's is 400.
//   * Apply patches (server-side apply) of a Scale are 415; dryRun=All writes nothing.
//   * The object itself missing is 404; a custom resource whose CRD no longer names
//     the paths is 404 as well.
// Threading: as thread-safe as the Storage and the registry.
// Errors: ApiError values as Status responses; never throws (Api::handle catches).
#pragma once

#include <string>

#include "apiserver/api.hpp"
#include "apiserver/work_budget.hpp"

namespace kinformer::apiserver {

struct ScaleRequest {
  const ResourceType* type = nullptr;
  std::string namespace_name;
  std::string name;
  std::string method;        // GET, PUT or PATCH
  std::string content_type;  // without parameters, lower-case
  std::string body;
  bool dry_run = false;
};

/// Serves one request to <resource>/<name>/scale (see the contract); its patching and
/// admission draw on the request's work budget like any other write.
HttpResponse serve_scale(const ResourceRegistry& registry, Storage& storage, const ObjectLimits& limits,
                         const ScaleRequest& request, WorkBudget& budget);

}  // namespace kinformer::apiserver
