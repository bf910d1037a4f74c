#include "apiserver/http/refusals.hpp"

#include "apiserver/storage/persistence.hpp"
#include "runtime/http_framing.hpp"

namespace kinformer::apiserver {

ApiError not_persisted() {
  return ApiError::internal("the write-ahead log failed: this request's effect may not survive a restart");
}

constexpr const char* disk_full_why =
    "the disk of the data file is full: writes are refused (507) until it has room again; reads and watches go on";

// While the log cannot grow (storage/wal.hpp) a write is refused before it is applied, so
// nothing acknowledged depends on room the disk does not have; /healthz still answers
// (the server serves reads) and says why, /readyz fails.
std::optional<HttpResponse> answer_while_disk_full(const storage::Persistence* persistence,
                                                   const std::string& method, const std::string& target) {
  if (!persistence || !persistence->disk_full()) return std::nullopt;
  if (method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE") {
    auto response = error_response(ApiError{507, "InsufficientStorage", disk_full_why, {}, {}, {}, {}, {}});
    response.retry_after_seconds = 10;
    return response;
  }
  auto path = std::string_view(target).substr(0, target.find('?'));
  if (path == "/healthz") return HttpResponse{200, "text/plain; charset=utf-8", std::string("ok\nwarning: ") + disk_full_why, nullptr};
  if (path == "/readyz")
    return HttpResponse{500, "text/plain; charset=utf-8", std::string("[-]log failed: ") + disk_full_why + "\nreadyz check failed", nullptr};
  return std::nullopt;
}

// Go's net/http answers 431 for a header over its limit; ours covers the trailer too.
ApiError header_too_large() {
  return ApiError{431, "RequestHeaderFieldsTooLarge",
                  "the request's header or trailer exceeds " + std::to_string(max_header_bytes) + " bytes",
                  {}, {}, {}, {}, {}};
}

// kube-apiserver's answer beyond --max-requests-inflight.
HttpResponse too_many_requests(const std::string& why) {
  auto response = error_response(
      ApiError{429, "TooManyRequests", "Too many requests, please try again later: " + why, {}, {}, {}, {}, {}});
  response.retry_after_seconds = 1;
  return response;
}

// Go's net/http (kube-apiserver) answers 501 to any Transfer-Encoding but "chunked".
ApiError unsupported_transfer_encoding(std::string_view value) {
  return ApiError{501, "NotImplemented",
                  "Transfer-Encoding \"" + std::string(value.substr(0, 256)) + "\" is not supported (only chunked)",
                  {}, {}, {}, {}, {}};
}

}  // namespace kinformer::apiserver
