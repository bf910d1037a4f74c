// apiserver/http/refusals.hpp
//
// The answers the HTTP layer gives by itself, before or instead of the API handler:
// while the data file's disk is full, when a write could not be made durable, and for
// requests the framing or the admission limits refuse (server.hpp "Bounds").
//
// Contract
//   * answer_while_disk_full(): while the log cannot grow (storage/wal.hpp), a write
//     (POST, PUT, PATCH, DELETE) is 507 with Retry-After: 10 before it is applied;
//     /healthz is 200 saying why and /readyz 500; anything else is nullopt (served).
//   * The rest are the Status answers Go's net/http or kube-apiserver give: 431 for a
//     header or trailer over max_header_bytes, 501 for a Transfer-Encoding but chunked,
//     429 with Retry-After: 1.
// Threading: pure functions. Errors: none; never throws (beyond std::bad_alloc).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "apiserver/api.hpp"
#include "apiserver/api_error.hpp"

namespace kinformer::apiserver {

namespace storage {
class Persistence;
}  // namespace storage

ApiError not_persisted();
/// `persistence` may be null (no data file).
std::optional<HttpResponse> answer_while_disk_full(const storage::Persistence* persistence,
                                                   const std::string& method, const std::string& target);
ApiError header_too_large();
HttpResponse too_many_requests(const std::string& why);
ApiError unsupported_transfer_encoding(std::string_view value);

}  // namespace kinformer::apiserver
