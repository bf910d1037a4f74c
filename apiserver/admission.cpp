#include "apiserver/admission.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/base64.hpp"
#include "apiserver/builtin_fields.hpp"
#include "apiserver/crd.hpp"
#include "apiserver/defaults.hpp"
#include "apiserver/schema.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

std::string name_of(const json& object) {
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object())
    return meta->value("name", "");
  return {};
}

std::optional<ApiError> admit_secret(const ResourceType& type, json& secret) {
  std::vector<ApiError::Cause> causes;
  if (auto string_data = secret.find("stringData"); string_data != secret.end()) {
    if (!string_data->is_object() && !string_data->is_null()) {
      causes.push_back({"FieldValueInvalid",
                        "Invalid value: \"" + std::string(string_data->type_name()) +
                            "\": stringData must be a map of strings",
                        "stringData"});
    } else if (string_data->is_object()) {
      for (auto it = string_data->begin(); it != string_data->end(); ++it) {
        if (!it.value().is_string()) {
          causes.push_back({"FieldValueInvalid", "Invalid value: the value must be a string",
                            "stringData[" + it.key() + "]"});
          continue;
        }
        if (!secret.contains("data") || !secret["data"].is_object()) secret["data"] = json::object();
        secret["data"][it.key()] = base64_encode(it.value().get<std::string>());
      }
    }
    secret.erase("stringData");
  }
  if (auto data = secret.find("data"); data != secret.end() && !data->is_null()) {
    if (!data->is_object()) {
      causes.push_back(
          {"FieldValueInvalid",
           "Invalid value: \"" + std::string(data->type_name()) + "\": data must be a map of base64 strings",
           "data"});
    } else {
      for (auto it = data->begin(); it != data->end(); ++it)
        if (!it.value().is_string() || !is_base64(it.value().get<std::string>()))
          // the value itself is secret: never echo it
          causes.push_back({"FieldValueInvalid",
                            "Invalid value: <omitted>: a valid base64 string is required",
                            "data[" + it.key() + "]"});
    }
  }
  if (!secret.contains("type") || secret["type"].is_null()) secret["type"] = "Opaque";
  if (!causes.empty()) return ApiError::invalid(type.group, type.kind, name_of(secret), std::move(causes));
  return std::nullopt;
}

}  // namespace

void prepare_for_create(const ResourceType& type, json& object) {
  if (!type.status_subresource) return;
  if (type.group.empty() && (type.plural == "pods" || type.plural == "services" || type.plural == "nodes"))
    return;
  object.erase("status");
}

std::optional<ApiError> admit(const ResourceRegistry& registry, const ResourceType& type, json& object,
                              WorkBudget& budget) {
  apply_defaults(registry, type, object);  // kube-apiserver defaults before it validates
  if (type.builtin && type.group.empty() && type.plural == "secrets") return admit_secret(type, object);
  if (is_crd_type(type)) {
    auto kind = custom_kind_of(object);
    if (!kind) return kind.error();
    if (auto clash = registry.can_serve_custom(kind->type); !clash)
      return ApiError::invalid(
          type.group, type.kind, name_of(object),
          {{"FieldValueInvalid", "Invalid value: " + clash.error().message, "spec.names"}});
    set_crd_status(object);
    return std::nullopt;
  }
  if (type.builtin) return check_builtin_fields(type, object);
  if (auto schema = registry.schema(&type)) {
    auto causes = schema->validate(object, budget);
    if (budget.exhausted()) return budget.error();
    if (!causes.empty()) return ApiError::invalid(type.group, type.kind, name_of(object), std::move(causes));
  }
  return std::nullopt;
}

}  // namespace kinformer::apiserver
