// apiserver/builtin_fields.hpp
//
// check_builtin_fields(): the numeric fields of the built-in kinds, checked as
// kube-apiserver's decoder and validation check them (issue 33: `replicas: 2^64` was
// stored), so that a controller reading the object back finds values its int32 and
// int64 fields can hold.
//
// Contract
//   * Each rule names a kind, a path (`*` for every element of a list) and an integer
//     type with a range:
//       apps Deployment, StatefulSet, ReplicaSet and core ReplicationController:
//         spec.replicas, spec.minReadySeconds, spec.revisionHistoryLimit int32 >= 0;
//       batch Job: spec.parallelism, spec.completions, spec.backoffLimit,
//         spec.ttlSecondsAfterFinished int32 >= 0; spec.activeDeadlineSeconds int64 >= 1;
//       core Pod: spec.terminationGracePeriodSeconds int64 >= 0,
//         spec.activeDeadlineSeconds int64 >= 1, spec.containers[*].ports[*].containerPort
//         and spec.initContainers[*].ports[*].containerPort 1..65535;
//       core Service: spec.ports[*].port 1..65535, spec.ports[*].nodePort 0..65535.
//   * A value that is not an integer of its type (a string, a fraction, 2^64 for an
//     int32) is 400 BadRequest, as kube-apiserver's decoder refuses it; an integer out
//     of the field's range is 422 Invalid with the field path. null or absent is fine.
//   * Anything else of the object is not looked at; other kinds pass.
// Threading: pure function. Errors: ApiError values; never throws.
#pragma once

#include <optional>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/resources.hpp"

namespace kinformer::apiserver {

std::optional<ApiError> check_builtin_fields(const ResourceType& type, const nlohmann::json& object);

}  // namespace kinformer::apiserver
