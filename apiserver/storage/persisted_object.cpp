#include "apiserver/storage/persisted_object.hpp"

#include <nlohmann/json.hpp>

#include "apiserver/object_limits.hpp"

namespace kinformer::apiserver::storage {

using nlohmann::json;

std::string resource_id(const ResourceType& type) {
  return type.plural + "." + type.group + "/" + type.version;
}

const ResourceType* find_resource(const ResourceRegistry& registry, std::string_view id,
                                  const std::vector<const ResourceType*>& retired) {
  for (const auto& type : registry.all())
    if (resource_id(type) == id) return &type;
  for (auto it = retired.rbegin(); it != retired.rend(); ++it)
    if (resource_id(**it) == id) return *it;
  return nullptr;
}

Result<StoredPtr> decode_persisted_object(const ResourceRegistry& registry, const json& resource,
                                          const json& object, std::uint64_t newest_revision,
                                          const std::string& where, const std::vector<const ResourceType*>& retired) {
  auto fail = [&](const std::string& what, const std::string& why) {
    return Error{Errc::decode_failed, where + " (" + what + "): " + why};
  };
  if (!resource.is_string())
    return fail("?", "\"resource\" must be a string like \"pods./v1\", not " + resource.dump());
  auto id = resource.get<std::string>();
  const ResourceType* type = find_resource(registry, id, retired);
  if (!type) return fail(id, "this server does not serve that resource");
  if (!object.is_object())
    return fail(id, "\"object\" must be a JSON object, not " + object.dump().substr(0, 80));
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return fail(id, "metadata must be an object");
  auto string_field = [&](const json& in, const char* name) -> const std::string* {
    auto it = in.find(name);
    return it != in.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
  };
  const std::string* name = string_field(*meta, "name");
  if (!name || !is_valid_object_name(*type, *name))
    return fail(id, "metadata.name must be a valid name, not " +
                        (meta->contains("name") ? (*meta)["name"].dump() : std::string("absent")));
  std::string label = id + " ";
  const std::string* ns = string_field(*meta, "namespace");
  if (type->namespaced) {
    if (!ns || !is_dns_label(*ns))
      return fail(id + " " + *name, "metadata.namespace must be a namespace name");
    label += *ns + "/";
  } else if (meta->contains("namespace")) {
    return fail(id + " " + *name, "a cluster-scoped object has no metadata.namespace");
  }
  label += *name;
  auto kind = string_field(object, "kind");
  auto api_version = string_field(object, "apiVersion");
  if (!kind || *kind != type->kind || !api_version || *api_version != type->api_version())
    return fail(label, "kind/apiVersion must be " + type->kind + "/" + type->api_version());
  auto uid = string_field(*meta, "uid");
  if (!uid || uid->empty()) return fail(label, "metadata.uid must be a non-empty string");
  auto rv_text = string_field(*meta, "resourceVersion");
  // A stored object has been written at least once: revision 0 is nobody's.
  auto parsed_rv = rv_text ? parse_resource_version(*rv_text) : std::nullopt;
  if (!parsed_rv || *parsed_rv == 0)
    return fail(label,
                "metadata.resourceVersion must be a decimal revision in 1.." + std::to_string(max_revision) +
                    ", not " +
                    (meta->contains("resourceVersion") ? (*meta)["resourceVersion"].dump() : "absent"));
  const std::uint64_t rv = *parsed_rv;
  if (rv > newest_revision)
    return fail(label, "metadata.resourceVersion " + *rv_text + " is newer than the revision " +
                           std::to_string(newest_revision) + " it was saved at");
  for (const char* map_field : {"labels", "annotations"}) {
    auto m = meta->find(map_field);
    if (m == meta->end() || m->is_null()) continue;
    if (!m->is_object())
      return fail(label, std::string("metadata.") + map_field + " must be a map of strings");
    for (auto it = m->begin(); it != m->end(); ++it)
      if (!it.value().is_string())
        return fail(label, std::string("metadata.") + map_field + "." + it.key() + " must be a string");
  }
  for (const char* string_name : {"generateName", "creationTimestamp", "deletionTimestamp"}) {
    auto f = meta->find(string_name);
    if (f != meta->end() && !f->is_null() && !f->is_string())
      return fail(label, std::string("metadata.") + string_name + " must be a string");
  }
  auto generation = meta->find("generation");
  if (generation != meta->end() && !generation->is_number_integer())
    return fail(label, "metadata.generation must be an integer");
  return make_stored(*type, object, rv);
}

Result<nlohmann::json> parse_persisted_json(std::string_view text, const std::string& where) {
  if (!text_nests_within(text, max_persisted_depth))
    return Error{Errc::decode_failed, where + " nests deeper than " + std::to_string(max_persisted_depth) +
                                          " levels: no object this server stores does"};
  auto parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded()) return Error{Errc::decode_failed, where + " is not a JSON object (not JSON at all)"};
  return parsed;
}

}  // namespace kinformer::apiserver::storage
