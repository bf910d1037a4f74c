// runtime/http/lease_lock.hpp
//
// lease_lock(): the LeaseLock of runtime/leader_election.hpp over the HTTP client:
// a coordination.k8s.io/v1 Lease on a real or the embedded API server (issue 17).
//
// Contract
//   * get() is GET .../leases/{name}: 404 → nullopt; create() is POST; update() is
//     PUT carrying metadata.resourceVersion, so a Lease changed since it was read is
//     the server's 409 Conflict, reported as an Error (never an overwrite).
//   * spec.holderIdentity, leaseDurationSeconds, acquireTime, renewTime and
//     leaseTransitions map to LeaseRecord; other Lease fields are not kept.
//   * Any non-2xx answer is an Error (api_status.hpp); callbacks run on the
//     client's I/O thread.
// Threading: any thread. Errors: Result values; never throws.
#pragma once

#include <memory>
#include <string>

#include "runtime/http/client.hpp"
#include "runtime/leader_election.hpp"

namespace kinformer::http {

std::shared_ptr<LeaseLock> lease_lock(std::shared_ptr<Client> client, std::string namespace_name,
                                      std::string name);

}  // namespace kinformer::http
