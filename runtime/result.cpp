#include "runtime/result.hpp"

namespace kinformer {

std::string_view to_string(Errc code) noexcept {
  switch (code) {
    case Errc::decode_failed: return "decode_failed";
    case Errc::missing_field: return "missing_field";
    case Errc::invalid_selector: return "invalid_selector";
    case Errc::invalid_key: return "invalid_key";
    case Errc::unknown_index: return "unknown_index";
    case Errc::index_exists: return "index_exists";
    case Errc::fifo_closed: return "fifo_closed";
    case Errc::requeue: return "requeue";
    case Errc::transform_failed: return "transform_failed";
    case Errc::gone: return "gone";
    case Errc::too_large_rv: return "too_large_rv";
    case Errc::too_many_requests: return "too_many_requests";
    case Errc::connection_failed: return "connection_failed";
    case Errc::server_error: return "server_error";
    case Errc::stopped: return "stopped";
    case Errc::backend_unavailable: return "backend_unavailable";
    case Errc::already_started: return "already_started";
    case Errc::unknown_model: return "unknown_model";
    case Errc::invalid_input: return "invalid_input";
    case Errc::overloaded: return "overloaded";
    case Errc::model_failed: return "model_failed";
  }
  return "unknown";
}

std::string Error::to_string() const {
  std::string out(kinformer::to_string(code));
  if (!message.empty()) {
    out += ": ";
    out += message;
  }
  return out;
}

}  // namespace kinformer
