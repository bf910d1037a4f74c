// apiserver/storage/etcd/etcd_error.hpp
//
// EtcdError: a failed etcd call as a typed value. etcd's JSON gateway says what went
// wrong only in text ({"error","message","code"}) and the HTTP client reports a timeout
// only in its message, so that text is read once, here, and every caller branches on
// the code (apiserver/storage/etcd/etcd_storage.hpp, etcd_watches.hpp).
//
// Contract
//   * gateway_error() classifies an error answer: "required revision has been
//     compacted" is compacted, "required revision is a future revision" is
//     future_revision, gRPC UNAVAILABLE (14) or DEADLINE_EXCEEDED (4) or HTTP 503 is
//     unavailable (etcd without quorum or leader), anything else is refused.
//   * transport_error() classifies a request that got no answer: timed_out when the
//     client gave up waiting, else unavailable.
//   * to_error() and to_api_error() are the one mapping to runtime's Errc and to what an
//     API client sees: 410 Expired, 504 Too large resource version, 503, 504 Timeout, 500.
// Threading: plain values. Errors: none; never throws (beyond std::bad_alloc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "apiserver/api_error.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver {

enum class EtcdErrc : std::uint8_t {
  unavailable,      // no endpoint answered, or none has a leader: try later (503)
  timed_out,        // an endpoint did not answer within request_timeout (504)
  compacted,        // the revision asked for is compacted: relist (410)
  future_revision,  // the revision asked for is ahead of etcd (504 ResourceVersionTooLarge)
  bad_answer,       // the answer is not JSON
  refused,          // any other etcd error, with etcd's message (500)
};

struct EtcdError {
  EtcdErrc code = EtcdErrc::refused;
  std::string message;

  Error to_error() const;
  ApiError to_api_error() const;
};

/// A T or the EtcdError that kept it from arriving.
template <class T>
using EtcdResult = std::variant<T, EtcdError>;

/// The error of a gateway answer with HTTP `status` and `body` (200 for a watch stream's error message).
EtcdError gateway_error(unsigned status, std::string_view body);
/// The error of a request to `endpoint` that got no answer (the HTTP client's Error).
EtcdError transport_error(const std::string& endpoint, const Error& error);

}  // namespace kinformer::apiserver
