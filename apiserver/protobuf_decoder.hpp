// apiserver/protobuf_decoder.hpp
//
// decode_protobuf(): the Kubernetes protobuf envelope ("k8s\0" + runtime.Unknown)
// turned into the JSON object, for the built-in kinds whose schema this server
// knows completely enough: ConfigMap and Namespace. kubectl's imperative commands
// (`kubectl create namespace`, `kubectl create configmap`) send protobuf bodies
// while accepting JSON answers.
//
// Contract
//   * Only ConfigMap (metadata, data, binaryData, immutable) and Namespace
//     (metadata, spec.finalizers, status.phase) decode. ObjectMeta keeps name,
//     generateName, namespace, uid, resourceVersion, generation, labels,
//     annotations and finalizers; server-owned timestamps are dropped.
//   * Any other kind, or a field this decoder does not know, is 415
//     UnsupportedMediaType naming it, rather than an object silently missing data.
//     Malformed bytes are 400 BadRequest.
// Threading: pure function. Errors: ApiError values; never throws.
#pragma once

#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"

namespace kinformer::apiserver {

ApiResult<nlohmann::json> decode_protobuf(std::string_view body);

}  // namespace kinformer::apiserver
