#include "runtime/http/api_status.hpp"

#include <simdjson.h>

#include <chrono>
#include <cstdint>

#include "runtime/list_watch.hpp"

namespace kinformer::http {
namespace {

struct StatusFields {
  std::int64_t code = 0;
  std::string reason;
  std::string message;
  bool too_large_cause = false;
};

// A best-effort read: a body that is not a Status leaves the fields empty.
StatusFields read_status(std::string_view body) {
  StatusFields fields;
  if (body.empty() || body.front() != '{') return fields;
  simdjson::padded_string padded(body);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(padded).get(doc)) return fields;
  std::int64_t code = 0;
  if (!doc["code"].get(code)) fields.code = code;
  std::string_view text;
  if (!doc["reason"].get(text)) fields.reason = std::string(text);
  if (!doc["message"].get(text)) fields.message = std::string(text);
  simdjson::dom::array causes;
  if (!doc["details"]["causes"].get(causes)) {
    for (auto cause : causes) {
      std::string_view type;
      if (!cause["reason"].get(type) && type == "ResourceVersionTooLarge") fields.too_large_cause = true;
    }
  }
  return fields;
}

std::string describe(unsigned http_status, const StatusFields& status, std::string_view body) {
  std::string text = "HTTP " + std::to_string(http_status);
  if (!status.reason.empty()) text += " " + status.reason;
  std::string_view message = status.message;
  if (message.empty() && !(body.size() > 0 && body.front() == '{')) message = body;
  if (!message.empty()) {
    text += ": ";
    text += message.substr(0, 512);
  }
  return text;
}

Error classify(unsigned http_status, const StatusFields& status, std::string_view body,
               std::string_view retry_after_header) {
  const unsigned code = status.code > 0 ? static_cast<unsigned>(status.code) : http_status;
  std::string text = describe(code, status, body);
  if (code == 410 || status.reason == "Expired" || status.reason == "Gone")
    return Error{Errc::gone, std::move(text)};
  if (code == 429) {
    std::int64_t seconds = 0;
    for (char c : retry_after_header) {
      if (c < '0' || c > '9' || seconds > 86400) {
        seconds = 0;
        break;
      }
      seconds = seconds * 10 + (c - '0');
    }
    Error error = too_many_requests(std::chrono::seconds(seconds > 0 ? seconds : 1));
    error.message += " (" + text + ")";
    return error;
  }
  if (code == 504 &&
      (status.too_large_cause || status.message.find("Too large resource version") != std::string::npos))
    return Error{Errc::too_large_rv, std::move(text)};
  return Error{Errc::server_error, std::move(text)};
}

}  // namespace

Error error_from_response(unsigned http_status, std::string_view body, std::string_view retry_after_header) {
  return classify(http_status, read_status(body), body, retry_after_header);
}

Error error_from_status_object(std::string_view status_json) {
  auto status = read_status(status_json);
  if (status.code == 0 && status.reason.empty() && status.message.empty())
    return Error{Errc::server_error, "watch ERROR event without a readable Status"};
  Error error = classify(status.code > 0 ? static_cast<unsigned>(status.code) : 500, status, status_json, "");
  error.message = "watch ERROR event: " + error.message;
  return error;
}

}  // namespace kinformer::http
