#include "apiserver/api_error.hpp"

#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

std::string ApiError::to_status_json() const {
  nlohmann::json status = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
                           {"status", "Failure"}, {"message", message}, {"code", code}};
  if (!reason.empty()) status["reason"] = reason;
  if (!continue_token.empty()) status["metadata"]["continue"] = continue_token;
  nlohmann::json details = nlohmann::json::object();
  if (!name.empty()) details["name"] = name;
  if (!group.empty()) details["group"] = group;
  if (!kind.empty()) details["kind"] = kind;
  if (!causes.empty()) {
    auto& out = details["causes"] = nlohmann::json::array();
    for (const auto& c : causes) {
      nlohmann::json cause = {{"reason", c.type}, {"message", c.message}};
      if (!c.field.empty()) cause["field"] = c.field;
      out.push_back(std::move(cause));
    }
  }
  if (!details.empty()) status["details"] = std::move(details);
  return status.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// kube-apiserver names a resource in messages as "plural.group" (just "plural" for core).
std::string qualified(const std::string& group, const std::string& plural) {
  return group.empty() ? plural : plural + "." + group;
}

}  // namespace

ApiError ApiError::bad_request(std::string message) {
  return ApiError{400, "BadRequest", std::move(message), {}, {}, {}, {}, {}};
}

ApiError ApiError::not_found(const std::string& group, const std::string& plural, const std::string& name) {
  return ApiError{404, "NotFound", qualified(group, plural) + " \"" + name + "\" not found", name, group, plural, {}, {}};
}

ApiError ApiError::path_not_found() {
  return ApiError{404, "NotFound", "the server could not find the requested resource", {}, {}, {}, {}, {}};
}

ApiError ApiError::already_exists(const std::string& group, const std::string& plural, const std::string& name) {
  return ApiError{409, "AlreadyExists", qualified(group, plural) + " \"" + name + "\" already exists",
                  name, group, plural, {}, {}};
}

ApiError ApiError::conflict(const std::string& group, const std::string& plural, const std::string& name,
                            const std::string& why) {
  return ApiError{409, "Conflict",
                  "Operation cannot be fulfilled on " + qualified(group, plural) + " \"" + name + "\": " + why,
                  name, group, plural, {}, {}};
}

std::string cut_text(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  static const std::string_view ellipsis = "...";
  if (limit < ellipsis.size()) return std::string(ellipsis.substr(0, limit));
  std::size_t end = limit - ellipsis.size();
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;  // a continuation byte
  return std::string(text.substr(0, end)) + std::string(ellipsis);
}

ApiError ApiError::invalid(const std::string& group, const std::string& kind, const std::string& name,
                           std::vector<Cause> causes) {
  const bool more = causes.size() > max_invalid_causes;
  if (more) causes.resize(max_invalid_causes);
  std::string message = kind + " \"" + cut_text(name, max_cause_field_bytes) + "\" is invalid: ";
  for (std::size_t i = 0; i < causes.size(); ++i) {
    auto& cause = causes[i];
    cause.field = cut_text(cause.field, max_cause_field_bytes);
    cause.message = cut_text(cause.message, max_cause_message_bytes);
    if (i) message += ", ";
    message += cause.field.empty() ? cause.message : cause.field + ": " + cause.message;
  }
  if (more)
    message += ", and more errors (the server lists the first " + std::to_string(max_invalid_causes) + ")";
  return ApiError{422, "Invalid", std::move(message), name, group, kind, std::move(causes), {}};
}

ApiError ApiError::method_not_allowed() {
  return ApiError{405, "MethodNotAllowed", "the server does not allow this method on the requested resource",
                  {}, {}, {}, {}, {}};
}

ApiError ApiError::unsupported_media_type(const std::string& content_type) {
  return ApiError{415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types "
                  "include: application/json, application/yaml" + std::string(content_type.empty() ? "" : " (got " + content_type + ")"),
                  {}, {}, {}, {}, {}};
}

ApiError ApiError::too_large(std::size_t limit) {
  return ApiError{413, "RequestEntityTooLarge",
                  "the request body is larger than the server accepts (" + std::to_string(limit) + " bytes)",
                  {}, {}, {}, {}, {}};
}

ApiError ApiError::expired(std::string message) {
  return ApiError{410, "Expired", std::move(message), {}, {}, {}, {}, {}};
}

ApiError ApiError::unauthorized() {
  return ApiError{401, "Unauthorized", "Unauthorized", {}, {}, {}, {}, {}};
}

ApiError ApiError::forbidden(const std::string& group, const std::string& plural, const std::string& name,
                             const std::string& why) {
  return ApiError{403,  "Forbidden", qualified(group, plural) + " \"" + name + "\" is forbidden: " + why,
                  name, group,       plural,
                  {},   {}};
}

ApiError ApiError::too_large_resource_version(std::uint64_t requested, std::uint64_t current) {
  return ApiError{
      504,
      "Timeout",
      "Too large resource version: " + std::to_string(requested) + ", current: " + std::to_string(current),
      {},
      {},
      {},
      {{"ResourceVersionTooLarge", "Too large resource version", ""}},
      {}};
}

ApiError ApiError::internal(std::string message) {
  return ApiError{500, "InternalError", std::move(message), {}, {}, {}, {}, {}};
}

}  // namespace kinformer::apiserver
