#include "apiserver/object_rules.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>

#include "apiserver/managed_fields.hpp"
#include "apiserver/resource_version.hpp"
#include "runtime/selector.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

// Uniqueness matters, unpredictability does not: one generator for every storage,
// behind its own mutex (several storages may create at once).
std::uint64_t random_number() {
  static std::mutex mu;
  static std::mt19937_64 generator{std::random_device{}()};
  std::lock_guard lock(mu);
  return generator();
}

std::string new_uid() {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    auto nibble = random_number() & 0xf;
    if (i == 12) nibble = 4;                   // version 4
    if (i == 16) nibble = 8 | (nibble & 0x3);  // RFC 4122 variant
    out += hex[nibble];
  }
  return out;
}

std::string random_suffix() {
  static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // kube-apiserver's generateName alphabet
  std::string out;
  for (int i = 0; i < 5; ++i) out += alphabet[random_number() % (sizeof alphabet - 1)];
  return out;
}

json without_metadata_and_status(json object) {
  object.erase("metadata");
  object.erase("status");
  return object;
}

}  // namespace

std::string now_rfc3339() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&t, &utc);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return out;
}

std::optional<ApiError> validate_metadata(const ResourceType& type, const json& object) {
  auto invalid = [&](std::string field, std::string message) {
    std::string name;
    if (object.is_object() && object.contains("metadata") && object["metadata"].is_object() &&
        object["metadata"].contains("name") && object["metadata"]["name"].is_string())
      name = object["metadata"]["name"].get<std::string>();
    return ApiError::invalid(type.group, type.kind, name,
                             {{"FieldValueInvalid", std::move(message), std::move(field)}});
  };
  if (!object.is_object()) return ApiError::bad_request("the object must be a JSON object");
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object())
    return invalid("metadata", "Required value: metadata must be an object");
  for (const char* map_field : {"labels", "annotations"}) {
    auto m = meta->find(map_field);
    if (m == meta->end() || m->is_null()) continue;
    if (!m->is_object())
      return invalid(std::string("metadata.") + map_field, "Invalid value: must be a map of strings");
    for (auto it = m->begin(); it != m->end(); ++it)
      if (!it.value().is_string())
        return invalid(std::string("metadata.") + map_field + "." + it.key(),
                       "Invalid value: must be a string");
  }
  if (auto labels = meta->find("labels"); labels != meta->end() && labels->is_object()) {
    for (auto it = labels->begin(); it != labels->end(); ++it) {
      if (auto problem = label_key_problem(it.key()))
        return invalid("metadata.labels", "Invalid value: \"" + it.key() + "\": " + *problem);
      if (auto problem = label_value_problem(it.value().get_ref<const std::string&>()))
        return invalid("metadata.labels",
                       "Invalid value: \"" + it.value().get<std::string>() + "\": " + *problem);
    }
  }
  if (auto annotations = meta->find("annotations"); annotations != meta->end() && annotations->is_object()) {
    std::size_t total = 0;
    for (auto it = annotations->begin(); it != annotations->end(); ++it) {
      std::string lowered = it.key();
      std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (auto problem = label_key_problem(lowered))
        return invalid("metadata.annotations", "Invalid value: \"" + cut_text(it.key(), 256) + "\": " + *problem);
      total += it.key().size() + it.value().get_ref<const std::string&>().size();
    }
    if (total > total_annotation_size_limit)
      return invalid("metadata.annotations",
                     "Too long: must have at most " + std::to_string(total_annotation_size_limit) + " bytes");
  }
  if (auto finalizers = meta->find("finalizers"); finalizers != meta->end() && !finalizers->is_null()) {
    if (!finalizers->is_array()) return ApiError::bad_request("metadata.finalizers must be a list of strings");
    for (const auto& finalizer : *finalizers) {
      if (!finalizer.is_string()) return ApiError::bad_request("metadata.finalizers must be a list of strings");
      if (auto problem = label_key_problem(finalizer.get_ref<const std::string&>()))
        return invalid("metadata.finalizers",
                       "Invalid value: \"" + cut_text(finalizer.get_ref<const std::string&>(), 256) + "\": " +
                           *problem);
    }
  }
  if (auto listed = meta->find("managedFields"); listed != meta->end())
    if (auto problem = managed_fields_problem(*listed)) return invalid(problem->field, problem->message);
  for (const char* string_field : {"name", "namespace", "generateName", "resourceVersion", "uid"}) {
    auto f = meta->find(string_field);
    if (f != meta->end() && !f->is_null() && !f->is_string())
      return invalid(std::string("metadata.") + string_field, "Invalid value: must be a string");
  }
  return std::nullopt;
}

std::optional<ApiError> prepare_create(const ResourceType& type, std::string_view ns, json& object,
                                       const std::function<std::optional<ApiError>()>& check_namespace,
                                       const std::function<bool(const std::string& key)>& taken) {
  if (auto bad = validate_metadata(type, object)) return *bad;
  auto& meta = object["metadata"];
  if (type.namespaced) {
    meta["namespace"] = std::string(ns);
    if (auto missing = check_namespace()) return missing;
  } else {
    meta.erase("namespace");
  }
  std::string name = meta.value("name", "");
  if (name.empty()) {
    std::string prefix = meta.value("generateName", "");
    if (prefix.empty())
      return ApiError::invalid(
          type.group, type.kind, "",
          {{"FieldValueRequired", "Required value: name or generateName is required", "metadata.name"}});
    for (int attempt = 0; attempt < 8 && name.empty(); ++attempt) {
      auto candidate = prefix + random_suffix();
      if (!taken(object_key(type.namespaced ? ns : "", candidate))) name = candidate;
    }
    if (name.empty()) return ApiError::already_exists(type.group, type.plural, prefix + "*");
    meta["name"] = name;
  }
  if (!is_valid_object_name(type, name))
    return ApiError::invalid(
        type.group, type.kind, name,
        {{"FieldValueInvalid",
          "Invalid value: \"" + name + "\": a lowercase RFC 1123 " +
              (is_dns_subdomain(name) ? "label" : "subdomain") +  // a valid subdomain fails only where a label is needed
              " must consist of lower case alphanumeric characters, '-' or '.', and must "
              "start and end with an alphanumeric character",
          "metadata.name"}});
  auto key = object_key(type.namespaced ? ns : "", name);
  if (taken(key)) return ApiError::already_exists(type.group, type.plural, name);

  object["kind"] = type.kind;
  object["apiVersion"] = type.api_version();
  meta["uid"] = new_uid();
  meta["creationTimestamp"] = now_rfc3339();
  meta.erase("deletionTimestamp");
  keep_managed_fields(meta, nullptr);
  if (type.tracks_generation) meta["generation"] = 1;
  if (type.kind == "Pod" && !object.contains("status")) object["status"] = {{"phase", "Pending"}};
  if (type.kind == "Namespace") object["status"] = {{"phase", "Active"}};
  return std::nullopt;
}

ApiResult<bool> prepare_update(const ResourceType& type, const StoredObject& current, const json& before,
                               json& after) {
  if (auto bad = validate_metadata(type, after)) return *bad;
  auto& meta = after["metadata"];
  auto wanted_rv = meta.value("resourceVersion", "");
  if (!wanted_rv.empty() && !same_resource_version(wanted_rv, current.resource_version))
    return ApiError::conflict(
        type.group, type.plural, current.name,
        "the object has been modified; please apply your changes to the latest version and try again");
  if (meta.contains("name") && meta["name"] != current.name)
    return ApiError::bad_request("the name of the object (" + meta.value("name", "") +
                                 ") does not match the name on the URL (" + current.name + ")");
  // Server-owned metadata survives every update.
  const auto& old_meta = before["metadata"];
  meta["name"] = current.name;
  if (type.namespaced)
    meta["namespace"] = current.namespace_name;
  else
    meta.erase("namespace");
  for (const char* owned : {"uid", "creationTimestamp", "generation", "deletionTimestamp"}) {
    if (old_meta.contains(owned))
      meta[owned] = old_meta[owned];
    else
      meta.erase(owned);
  }
  keep_managed_fields(meta, &old_meta);
  after["kind"] = type.kind;
  after["apiVersion"] = type.api_version();
  set_resource_version(after, current.resource_version);
  if (after == before) return false;
  if (type.tracks_generation && without_metadata_and_status(after) != without_metadata_and_status(before))
    meta["generation"] = old_meta.value("generation", 0) + 1;
  return true;
}

std::optional<ApiError> deletion_refused(const ResourceType& type, bool is_namespace,
                                         const StoredObject& current,
                                         const Storage::Preconditions& preconditions) {
  if (!preconditions.uid.empty() && preconditions.uid != current.uid)
    return ApiError::conflict(type.group, type.plural, current.name,
                              "Precondition failed: UID in precondition: " + preconditions.uid +
                                  ", UID in object meta: " + current.uid);
  if (!preconditions.resource_version.empty() &&
      !same_resource_version(preconditions.resource_version, current.resource_version))
    return ApiError::conflict(
        type.group, type.plural, current.name,
        "Precondition failed: ResourceVersion in precondition: " + preconditions.resource_version +
            ", ResourceVersion in object meta: " + format_resource_version(current.resource_version));
  if (is_namespace &&
      (current.name == "default" || current.name == "kube-system" || current.name == "kube-public"))
    return ApiError{403,
                    "Forbidden",
                    "namespaces \"" + current.name + "\" is forbidden: this namespace may not be deleted",
                    current.name,
                    "",
                    "namespaces",
                    {},
                    {}};
  return std::nullopt;
}

}  // namespace kinformer::apiserver
