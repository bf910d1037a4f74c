// apiserver/request_params.hpp
//
// Reading a request target: path segments, query parameters and the parameter
// conventions of the Kubernetes API (kube-api-protocol.md §A4, §B6.5), and the
// opaque continue tokens of paginated lists.
//
// Contract
//   * Path segments and query keys/values are percent-decoded ('+' is a space).
//   * flag(): absent, "false" and "0" (any case) are false; anything else, even "", is true.
//   * Continue tokens are base64url("<rv>\n<last key>[\n<remaining>]"); rv 0 means "continue from the
//     latest state" (an inconsistent continuation after 410). decode_continue() gives
//     nullopt for anything it did not make.
// Threading: pure functions. Errors: resource_version_param() is 400 for what
//   parse_resource_version() refuses.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apiserver/api_error.hpp"

namespace kinformer::apiserver {

using Query = std::map<std::string, std::string>;

std::string url_decode(std::string_view in);
Query parse_query(std::string_view query);
/// "/api/v1/namespaces/default/pods" -> {"api", "v1", "namespaces", "default", "pods"}
std::vector<std::string> split_path(std::string_view path);
/// The parameter's value, "" when absent.
std::string param(const Query& q, const char* name);
bool flag(const Query& q, const char* name);
/// A non-negative decimal integer of at most 19 digits.
std::optional<std::uint64_t> parse_unsigned(const std::string& text);
/// resourceVersion: absent (nullopt) or a revision (apiserver/resource_version.hpp); anything else is 400.
ApiResult<std::optional<std::uint64_t>> resource_version_param(const std::string& text);

/// `remaining`: the matching items after `key` in that snapshot, so that the next page
/// need not count them again (remainingItemCount without selectors).
std::string encode_continue(std::uint64_t rv, const std::string& key,
                            std::optional<std::size_t> remaining = std::nullopt);
struct ContinueToken {
  std::uint64_t rv = 0;
  std::string key;
  std::optional<std::size_t> remaining;
};
std::optional<ContinueToken> parse_continue(const std::string& token);
std::optional<std::pair<std::uint64_t, std::string>> decode_continue(const std::string& token);

}  // namespace kinformer::apiserver
