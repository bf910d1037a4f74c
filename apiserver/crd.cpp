#include "apiserver/crd.hpp"

#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/schema.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

const char* const crd_kind = "CustomResourceDefinition";
const char* const crd_group = "apiextensions.k8s.io";

ApiError invalid(const std::string& name, const std::string& field, const std::string& message) {
  return ApiError::invalid(crd_group, crd_kind, name,
                           {{"FieldValueInvalid", "Invalid value: " + message, field}});
}

ApiError required(const std::string& name, const std::string& field) {
  return ApiError::invalid(crd_group, crd_kind, name, {{"FieldValueRequired", "Required value", field}});
}

// A string member, "" when absent; false when present but not a string.
bool string_at(const json& object, const char* key, std::string& out) {
  out.clear();
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return true;
  if (!it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

bool strings_at(const json& object, const char* key, std::vector<std::string>& out) {
  out.clear();
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return true;
  if (!it->is_array()) return false;
  for (const auto& s : *it) {
    if (!s.is_string()) return false;
    out.push_back(s.get<std::string>());
  }
  return true;
}

}  // namespace

bool is_crd_type(const ResourceType& type) {
  return type.group == crd_group && type.plural == "customresourcedefinitions";
}

ApiResult<CustomKind> custom_kind_of(const json& crd) {
  std::string name;
  if (auto meta = crd.find("metadata"); meta != crd.end() && meta->is_object())
    name = meta->value("name", "");
  auto spec_it = crd.find("spec");
  if (spec_it == crd.end() || !spec_it->is_object()) return required(name, "spec");
  const json& spec = *spec_it;
  CustomKind out;
  ResourceType& t = out.type;
  if (!string_at(spec, "group", t.group) || t.group.empty()) return required(name, "spec.group");
  if (!is_dns_subdomain(t.group) || t.group.find('.') == std::string::npos)
    return invalid(name, "spec.group", "\"" + t.group + "\": should be a domain with at least one dot");
  auto names_it = spec.find("names");
  if (names_it == spec.end() || !names_it->is_object()) return required(name, "spec.names");
  const json& names = *names_it;
  if (!string_at(names, "plural", t.plural) || t.plural.empty()) return required(name, "spec.names.plural");
  if (!is_dns_label(t.plural))
    return invalid(name, "spec.names.plural", "\"" + t.plural + "\": must be a DNS label");
  if (!string_at(names, "kind", t.kind) || t.kind.empty()) return required(name, "spec.names.kind");
  if (!std::isupper(static_cast<unsigned char>(t.kind.front())))
    return invalid(name, "spec.names.kind", "\"" + t.kind + "\": must start with an upper-case letter");
  if (!string_at(names, "singular", t.singular) || (!t.singular.empty() && !is_dns_label(t.singular)))
    return invalid(name, "spec.names.singular", "must be a DNS label");
  if (!strings_at(names, "shortNames", t.short_names))
    return invalid(name, "spec.names.shortNames", "must be a list of strings");
  for (const auto& s : t.short_names)
    if (!is_dns_label(s)) return invalid(name, "spec.names.shortNames", "\"" + s + "\": must be a DNS label");
  if (!strings_at(names, "categories", t.categories))
    return invalid(name, "spec.names.categories", "must be a list of strings");
  if (name != t.plural + "." + t.group)
    return invalid(name, "metadata.name", "\"" + name + "\": must be spec.names.plural+\".\"+spec.group");
  std::string scope;
  if (!string_at(spec, "scope", scope) || scope.empty()) return required(name, "spec.scope");
  if (scope != "Namespaced" && scope != "Cluster")
    return ApiError::invalid(
        crd_group, crd_kind, name,
        {{"FieldValueNotSupported",
          "Unsupported value: \"" + scope + "\": supported values: \"Cluster\", \"Namespaced\"",
          "spec.scope"}});
  t.namespaced = scope == "Namespaced";
  auto versions = spec.find("versions");
  if (versions == spec.end() || !versions->is_array() || versions->empty())
    return required(name, "spec.versions");
  const json* served = nullptr;
  std::size_t served_index = 0;
  for (std::size_t i = 0; i < versions->size(); ++i) {
    const json& v = (*versions)[i];
    const std::string path = "spec.versions[" + std::to_string(i) + "]";
    if (!v.is_object()) return invalid(name, path, "must be an object");
    std::string version;
    if (!string_at(v, "name", version) || !is_dns_label(version)) return required(name, path + ".name");
    if (!v.value("served", false)) continue;
    if (served)
      return invalid(
          name, "spec.versions",
          "kinformer serves one version per CustomResourceDefinition (no conversion); mark one served");
    served = &v;
    served_index = i;
    t.version = version;
  }
  if (!served) return invalid(name, "spec.versions", "must have exactly one version marked served");
  const std::string path = "spec.versions[" + std::to_string(served_index) + "]";
  if (auto sub = served->find("subresources"); sub != served->end() && sub->is_object()) {
    t.status_subresource = sub->contains("status");
    t.scale_subresource = sub->contains("scale");
  }
  if (auto schema = served->find("schema"); schema != served->end() && schema->is_object()) {
    if (auto open_api = schema->find("openAPIV3Schema"); open_api != schema->end()) {
      auto parsed = OpenApiSchema::parse(*open_api);
      if (!parsed) return invalid(name, path + ".schema." + parsed.error().message, "is not a valid schema");
      out.schema = std::move(parsed).value();
    }
  }
  return out;
}

void set_crd_status(json& crd) {
  const json& spec = crd["spec"];
  json stored = json::array();
  for (const auto& v : spec["versions"])
    if (v.value("storage", false) || v.value("served", false)) stored.push_back(v.value("name", ""));
  auto condition = [](const char* type, const char* reason, const char* message) {
    return json{{"type", type}, {"status", "True"}, {"reason", reason}, {"message", message}};
  };
  crd["status"] = {
      {"acceptedNames", spec["names"]},
      {"storedVersions", stored},
      {"conditions",
       {condition("NamesAccepted", "NoConflicts", "no conflicts found"),
        condition("Established", "InitialNamesAccepted", "the initial names have been accepted")}}};
}

Result<const ResourceType*> follow_crd(ResourceRegistry& registry, EventType event, const StoredObject& object) {
  if (!object.type || !is_crd_type(*object.type)) return static_cast<const ResourceType*>(nullptr);
  auto parsed = json::parse(object.json, nullptr, false);
  auto kind = custom_kind_of(parsed);
  if (!kind) return Error{Errc::decode_failed, "CustomResourceDefinition " + object.name + ": " + kind.error().message};
  if (event != EventType::deleted) return registry.add_or_update_custom(std::move(kind->type), std::move(kind->schema));
  const ResourceType* served = registry.find(kind->type.group, kind->type.version, kind->type.plural);
  if (!served || served->builtin) return static_cast<const ResourceType*>(nullptr);
  registry.retire(served);
  return served;
}

void delete_custom_objects(Storage& storage, const ResourceType& type) {
  for (int pass = 0; pass < 4; ++pass) {
    auto page = storage.list(type, {});
    if (!page || page->items.empty()) return;
    for (const auto& item : page->items) (void)storage.remove(type, item->namespace_name, item->name, {}, false);
  }
}

}  // namespace kinformer::apiserver
