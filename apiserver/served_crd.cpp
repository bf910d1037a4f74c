#include "apiserver/served_crd.hpp"

#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

using nlohmann::json;

std::optional<json> served_crd_version(const ResourceRegistry& registry, const Storage& storage,
                                       const ResourceType& type) {
  if (type.builtin) return std::nullopt;
  const ResourceType* crds = registry.find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
  if (!crds || crds == &type) return std::nullopt;
  auto stored = storage.get(*crds, "", type.plural + "." + type.group);
  if (!stored) return std::nullopt;
  auto crd = json::parse((*stored)->json, nullptr, false);
  if (!crd.is_object()) return std::nullopt;
  auto versions = crd.find("spec");
  if (versions == crd.end() || !versions->is_object()) return std::nullopt;
  auto list = versions->find("versions");
  if (list == versions->end() || !list->is_array()) return std::nullopt;
  for (auto& v : *list) {
    if (!v.is_object()) continue;
    auto served = v.find("served");
    auto name = v.find("name");
    if (served != v.end() && *served == true && name != v.end() && *name == type.version) return std::move(v);
  }
  return std::nullopt;
}

}  // namespace kinformer::apiserver
