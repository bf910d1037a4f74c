// apiserver/body_decoder.hpp
//
// decode_body(): turns a request body (JSON, or YAML for application/yaml and
// application/apply-patch+yaml) into a JSON document (kube-api-protocol.md §A6).
//
// Contract
//   * JSON is parsed strictly; YAML must be one document. YAML scalars keep their
//     YAML 1.2 core types (plain true/false/null/numbers; quoted text is a string).
//   * Malformed input is 400 BadRequest whose message says what and where; so is a
//     body nesting deeper than 256 levels (recursive parsing would exhaust the stack).
// Threading: pure functions. Errors: ApiError values; never throws.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"

namespace kinformer::apiserver {

enum class BodyFormat { json, yaml, protobuf };  // protobuf: apiserver/protobuf_decoder.hpp

ApiResult<nlohmann::json> decode_body(std::string_view body, BodyFormat format);

/// 400 BadRequest when a string or key of `document` is not valid UTF-8 (YAML and
/// protobuf carry raw bytes; JSON cannot hold them and dump() would throw on them).
std::optional<ApiError> invalid_utf8(const nlohmann::json& document, std::string_view what);

}  // namespace kinformer::apiserver
