#include "apiserver/storage/etcd/etcd_error.hpp"

#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

using nlohmann::json;

EtcdError gateway_error(unsigned status, std::string_view body) {
  auto parsed = json::parse(body, nullptr, false);
  std::string message(body.substr(0, 300));
  int code = 0;
  if (parsed.is_object()) {
    if (auto m = parsed.find("message"); m != parsed.end() && m->is_string()) message = m->get<std::string>();
    if (auto c = parsed.find("code"); c != parsed.end() && c->is_number_integer()) code = c->get<int>();
  }
  if (message.find("required revision has been compacted") != std::string::npos)
    return {EtcdErrc::compacted, message};
  if (message.find("required revision is a future revision") != std::string::npos)
    return {EtcdErrc::future_revision, message};
  // gRPC UNAVAILABLE (14) and DEADLINE_EXCEEDED (4): etcd without quorum or leader.
  if (code == 14 || code == 4 || status == 503) return {EtcdErrc::unavailable, "etcd unavailable: " + message};
  return {EtcdErrc::refused, "etcd: " + message + " (HTTP " + std::to_string(status) + ")"};
}

EtcdError transport_error(const std::string& endpoint, const Error& error) {
  // runtime/http's client names a timeout only in its message ("timed out").
  const bool timed_out = error.message.find("timed out") != std::string::npos;
  return {timed_out ? EtcdErrc::timed_out : EtcdErrc::unavailable,
          "etcd unavailable: " + endpoint + ": " + error.message};
}

Error EtcdError::to_error() const {
  switch (code) {
    case EtcdErrc::unavailable:
    case EtcdErrc::timed_out:
      return {Errc::connection_failed, message};
    case EtcdErrc::compacted:
      return {Errc::gone, message};
    case EtcdErrc::future_revision:
      return {Errc::too_large_rv, message};
    case EtcdErrc::bad_answer:
      return {Errc::decode_failed, message};
    case EtcdErrc::refused:
      break;
  }
  return {Errc::server_error, message};
}

ApiError EtcdError::to_api_error() const {
  switch (code) {
    case EtcdErrc::compacted:
      return ApiError::expired("too old resource version: " + message);
    case EtcdErrc::future_revision:
      return ApiError{504, "Timeout", "Too large resource version: " + message, {}, {}, {},
                      {{"ResourceVersionTooLarge", "Too large resource version", ""}}, {}};
    case EtcdErrc::timed_out:
      return ApiError{504, "Timeout", "Timeout: etcd did not answer in time: " + message, {}, {}, {}, {}, {}};
    case EtcdErrc::unavailable:
      return ApiError{503, "ServiceUnavailable", message, {}, {}, {}, {}, {}};
    case EtcdErrc::bad_answer:
    case EtcdErrc::refused:
      break;
  }
  return ApiError::internal(message);
}

}  // namespace kinformer::apiserver
