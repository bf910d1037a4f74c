// apiserver/body_decoder.hpp
//
// decode_body(): turns a request body (JSON, or YAML for application/yaml and
// application/apply-patch+yaml) into a JSON document (kube-api-protocol.md §A6).
//
// Contract
//   * JSON is parsed strictly; YAML must be one document. A YAML body that is a JSON
//     object is parsed as JSON (the same document, without yaml-cpp's cost). YAML scalars keep their
//     YAML 1.2 core types (plain true/false/null/numbers; quoted text is a string).
//   * Malformed input is 400 BadRequest whose message says what and where; so is a
//     body nesting deeper than limits.max_depth (recursive parsing would exhaust the
//     stack), text that is not UTF-8, and a number out of double range (1e400).
//   * The decoded document fits `limits` (object_limits.hpp): YAML aliases expand
//     within the byte budget and depth, so an alias cycle or a "billion laughs" bomb
//     is 422/413, never a crash. A YAML number out of range stays a string.
// Threading: pure functions. Errors: ApiError values; never throws.
#pragma once

#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/object_limits.hpp"

namespace kinformer::apiserver {

enum class BodyFormat { json, yaml, protobuf };  // protobuf: apiserver/protobuf_decoder.hpp

ApiResult<nlohmann::json> decode_body(std::string_view body, BodyFormat format,
                                      const ObjectLimits& limits = {});

}  // namespace kinformer::apiserver
