// runtime/http/api_status.hpp
//
// How an API server's failure becomes an Error the Reflector acts on
// (kube-api-protocol.md A7; informer-semantics.md §5): the HTTP status, the
// Status object's code/reason/message, and Retry-After.
//
// Contract
//   * 410 (or a Status with code 410 / reason Expired or Gone) → Errc::gone.
//   * 429 → too_many_requests(Retry-After seconds; 1 s when absent or unreadable).
//   * 504 with reason Timeout and "Too large resource version" (or a cause of type
//     ResourceVersionTooLarge) → Errc::too_large_rv.
//   * Anything else (401, 403, 404, 5xx, ...) → Errc::server_error, retryable.
//   * The message is "HTTP 404 NotFound: pods \"x\" not found": the status, the
//     reason and the server's message, at most 512 bytes of it; never a header.
// Threading: pure functions. Errors: none thrown.
#pragma once

#include <string>
#include <string_view>

#include "runtime/result.hpp"

namespace kinformer::http {

/// The Error for a response with a status other than 2xx; `body` may be a Status
/// object, other text, or empty.
Error error_from_response(unsigned http_status, std::string_view body, std::string_view retry_after_header);

/// The Error for an ERROR watch event whose object is `status_json` (a Status).
Error error_from_status_object(std::string_view status_json);

}  // namespace kinformer::http
