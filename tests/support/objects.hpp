// tests/support/objects.hpp
//
// Tiny builders for test objects (after client-go's mkFifoObj): pod("foo", "5")
// is a Pod named foo in namespace "default" at resourceVersion 5; configmap_text("a", "1")
// is the body that creates ConfigMap a with data {"k": "1"}; configmaps_path and pods_path
// are the "default" namespace's collections on the API server.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "runtime/object.hpp"

namespace kinformer::testing {

using Labels = std::initializer_list<std::pair<const char*, const char*>>;

/// The JSON of a Pod; `ns` empty makes it cluster-scoped.
inline std::string pod_json(const std::string& name, const std::string& rv, Labels labels = {},
                            const std::string& ns = "default") {
  std::string json = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + "\"";
  if (!ns.empty()) json += R"(,"namespace":")" + ns + "\"";
  json += R"(,"uid":"uid-)" + name + R"(","resourceVersion":")" + rv + "\"";
  if (labels.size() > 0) {
    json += R"(,"labels":{)";
    bool first = true;
    for (const auto& [k, v] : labels) {
      if (!first) json += ',';
      first = false;
      json += std::string("\"") + k + "\":\"" + v + "\"";
    }
    json += '}';
  }
  json += R"(},"spec":{"nodeName":"node-1"}})";
  return json;
}

/// A parsed Pod; aborts the test binary on a builder bug (bad JSON).
inline ObjectPtr pod(const std::string& name, const std::string& rv, Labels labels = {},
                     const std::string& ns = "default") {
  auto parsed = Object::parse(pod_json(name, rv, labels, ns));
  if (!parsed) std::abort();
  return std::move(parsed).value();
}

inline const std::string configmaps_path = "/api/v1/namespaces/default/configmaps";
inline const std::string pods_path = "/api/v1/namespaces/default/pods";

/// A ConfigMap named `name` with data {"k": value}, as a client sends it.
inline nlohmann::json configmap_object(const std::string& name, const std::string& value = "v") {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", {{"k", value}}}};
}
inline std::string configmap_text(const std::string& name, const std::string& value = "v") {
  return configmap_object(name, value).dump();
}
/// Only the metadata and data, as the store's own tests hand objects to it.
inline nlohmann::json bare_configmap(const std::string& name, const std::string& value = "v") {
  return {{"metadata", {{"name", name}}}, {"data", {{"k", value}}}};
}

}  // namespace kinformer::testing
