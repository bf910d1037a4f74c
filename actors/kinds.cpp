#include "actors/kinds.hpp"

#include <exception>
#include <utility>

#include <nlohmann/json.hpp>

namespace kinformer {
namespace {

/// A field's text, "" when the path is absent; other errors pass through.
Result<std::string> optional_field(const Object& object, std::string_view path) {
  auto value = object.field(path);
  if (!value && value.error().code == Errc::missing_field) return std::string();
  return value;
}

std::map<std::string, std::string> labels_of(const Object& object) {
  std::map<std::string, std::string> labels;
  for (const auto& [key, value] : object.labels()) labels.emplace(key, value);
  return labels;
}

}  // namespace

Result<Pod> Pod::decode(const Object& object) {
  Pod pod;
  pod.namespace_ = object.namespace_();
  pod.name = object.name();
  pod.uid = object.uid();
  pod.resource_version = object.resource_version();
  pod.labels = labels_of(object);
  auto node = optional_field(object, "spec.nodeName");
  auto phase = optional_field(object, "status.phase");
  auto containers = optional_field(object, "spec.containers");
  if (!node) return node.error();
  if (!phase) return phase.error();
  if (!containers) return containers.error();
  pod.node_name = std::move(node).value();
  pod.phase = std::move(phase).value();
  if (!containers->empty()) {
    try {
      for (const auto& c : nlohmann::json::parse(*containers)) pod.containers.push_back(c.value("name", ""));
    } catch (const std::exception& e) {
      return Error{Errc::decode_failed, std::string(object.key()) + ": spec.containers: " + e.what()};
    }
  }
  return pod;
}

Result<ConfigMap> ConfigMap::decode(const Object& object) {
  ConfigMap map;
  map.namespace_ = object.namespace_();
  map.name = object.name();
  map.resource_version = object.resource_version();
  auto data = optional_field(object, "data");
  if (!data) return data.error();
  if (!data->empty()) {
    try {
      auto json = nlohmann::json::parse(*data);  // items() refers to it: keep it alive
      for (const auto& [key, value] : json.items())
        if (value.is_string()) map.data.emplace(key, value.get<std::string>());
    } catch (const std::exception& e) {
      return Error{Errc::decode_failed, std::string(object.key()) + ": data: " + e.what()};
    }
  }
  return map;
}

}  // namespace kinformer
