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
  // Messages may quote request bytes that are not UTF-8 (a protobuf kind, a YAML
  // key): replaced with U+FFFD rather than dump() throwing (issue 19).
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

ApiError ApiError::invalid(const std::string& group, const std::string& kind, const std::string& name,
                           std::vector<Cause> causes) {
  std::string message = kind + " \"" + name + "\" is invalid: ";
  for (std::size_t i = 0; i < causes.size(); ++i) {
    if (i) message += ", ";
    message += causes[i].field.empty() ? causes[i].message : causes[i].field + ": " + causes[i].message;
  }
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

ApiError ApiError::internal(std::string message) {
  return ApiError{500, "InternalError", std::move(message), {}, {}, {}, {}, {}};
}

}  // namespace kinformer::apiserver
