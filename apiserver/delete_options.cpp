#include "apiserver/delete_options.hpp"

#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

ApiError wrong_type(const std::string& field, const char* wanted, const json& value) {
  return ApiError::bad_request(std::string("DeleteOptions: ") + field + " must be " + wanted + ", not " +
                               value.type_name());
}

ApiError unsupported(const std::string& field, const std::string& value, const std::string& supported) {
  return ApiError::invalid("meta.k8s.io", "DeleteOptions", "",
                           {{"FieldValueNotSupported",
                             "Unsupported value: " + json(cut_text(value, 256)).dump() + ": supported values: " +
                                 supported,
                             field}});
}

// The field of `object` when it is present and not null.
const json* present(const json& object, const char* field) {
  auto it = object.find(field);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

// A string field: nullopt when absent, else its text or the 400.
ApiResult<std::optional<std::string>> string_field(const json& object, const char* field,
                                                   const std::string& shown_as) {
  const json* value = present(object, field);
  if (!value) return std::optional<std::string>();
  if (!value->is_string()) return wrong_type(shown_as, "a string", *value);
  return std::optional<std::string>(value->get<std::string>());
}

}  // namespace

ApiResult<DeleteOptions> parse_delete_options(const json& body) {
  DeleteOptions options;
  if (body.is_null()) return options;
  if (!body.is_object()) return ApiError::bad_request(std::string("DeleteOptions must be a JSON object, not ") +
                                                      body.type_name());
  for (const char* field : {"kind", "apiVersion"})
    if (auto checked = string_field(body, field, field); !checked) return std::move(checked).error();

  if (const json* grace = present(body, "gracePeriodSeconds")) {
    if (grace->is_number_integer() && !grace->is_number_unsigned())
      options.grace_period_seconds = grace->get<std::int64_t>();
    else if (grace->is_number_unsigned() && grace->get<std::uint64_t>() <= INT64_MAX)
      options.grace_period_seconds = static_cast<std::int64_t>(grace->get<std::uint64_t>());
    else
      return grace->is_number() ? ApiError::bad_request("DeleteOptions: gracePeriodSeconds must be an integer "
                                                        "within int64")
                                : wrong_type("gracePeriodSeconds", "an integer", *grace);
  }

  if (const json* pre = present(body, "preconditions")) {
    if (!pre->is_object()) return wrong_type("preconditions", "an object", *pre);
    auto uid = string_field(*pre, "uid", "preconditions.uid");
    if (!uid) return std::move(uid).error();
    auto rv = string_field(*pre, "resourceVersion", "preconditions.resourceVersion");
    if (!rv) return std::move(rv).error();
    options.preconditions.uid = uid->value_or("");
    options.preconditions.resource_version = rv->value_or("");
  }

  for (const char* flag : {"orphanDependents", "ignoreStoreReadErrorWithClusterBreakingPotential"})
    if (const json* value = present(body, flag); value && !value->is_boolean())
      return wrong_type(flag, "a boolean", *value);

  auto policy = string_field(body, "propagationPolicy", "propagationPolicy");
  if (!policy) return std::move(policy).error();
  if (*policy) {
    const auto& p = **policy;
    if (p != "Orphan" && p != "Background" && p != "Foreground")
      return unsupported("propagationPolicy", p, "\"Background\", \"Foreground\", \"Orphan\"");
    if (present(body, "orphanDependents"))
      return ApiError::invalid("meta.k8s.io", "DeleteOptions", "",
                               {{"FieldValueInvalid",
                                 "Invalid value: \"" + p + "\": orphanDependents and propagationPolicy cannot both "
                                 "be set",
                                 "propagationPolicy"}});
    options.propagation_policy = p;
  }

  if (const json* dry = present(body, "dryRun")) {
    if (!dry->is_array()) return wrong_type("dryRun", "a list of strings", *dry);
    for (const auto& value : *dry) {
      if (!value.is_string()) return wrong_type("dryRun[]", "a string", value);
      if (value != "All") return unsupported("dryRun", value.get<std::string>(), "\"All\"");
    }
    options.dry_run = !dry->empty();
  }
  return options;
}

}  // namespace kinformer::apiserver
