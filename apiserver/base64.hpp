// apiserver/base64.hpp
//
// Standard base64 (RFC 4648 §4, with '=' padding), as Kubernetes encodes []byte
// fields in JSON: a Secret's data, binaryData of a ConfigMap, protobuf bytes.
//
// Contract
//   * base64_encode() pads to a multiple of four characters.
//   * base64_decode() takes what is_base64() accepts, else nullopt.
//   * is_base64() accepts exactly what Go's base64.StdEncoding decodes: the
//     standard alphabet, padded length, '=' only at the end, no whitespace.
// Threading: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kinformer::apiserver {

std::string base64_encode(std::string_view raw);
bool is_base64(std::string_view text);
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace kinformer::apiserver
