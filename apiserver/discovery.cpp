#include "apiserver/discovery.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>

#include <nlohmann/json.hpp>

#include "apiserver/schema.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

const json main_verbs = {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};
const json status_verbs = {"get", "patch", "update"};  // /status and /scale
const json scale_kind = {{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}};

std::vector<std::string> versions_of(const ResourceRegistry& registry, std::string_view group) {
  std::vector<std::string> out;
  for (const auto& t : registry.all())
    if (t.group == group && std::find(out.begin(), out.end(), t.version) == out.end()) out.push_back(t.version);
  return out;
}

json group_json(const ResourceRegistry& registry, const std::string& group) {
  json versions = json::array();
  for (const auto& v : versions_of(registry, group)) versions.push_back({{"groupVersion", group + "/" + v}, {"version", v}});
  return {{"name", group}, {"versions", versions}, {"preferredVersion", versions.front()}};
}

// A short content hash, so kubectl's OpenAPI cache notices a changed resource set.
std::string openapi_hash(const ResourceRegistry& registry, std::string_view group, std::string_view version) {
  std::string all;
  for (const auto& t : registry.all())
    if (t.group == group && t.version == version) {
      all += t.kind + "/" + t.plural + ";";
      if (auto custom = registry.schema(&t)) all += custom->document().dump();
    }
  char out[17];
  std::snprintf(out, sizeof out, "%016zX", std::hash<std::string>{}(all));
  return out;
}

json described(const char* type, const std::string& description) {
  return {{"type", type}, {"description", description}};
}

// The name kube-apiserver gives a kind's schema: io.k8s.api.apps.v1.Deployment.
std::string schema_name(const ResourceType& t) {
  if (!t.builtin) {
    std::string reversed;  // example.com -> com.example
    std::size_t end = t.group.size();
    while (true) {
      auto dot = t.group.rfind('.', end == 0 ? 0 : end - 1);
      auto start = dot == std::string::npos ? 0 : dot + 1;
      if (!reversed.empty()) reversed += '.';
      reversed += t.group.substr(start, end - start);
      if (dot == std::string::npos) break;
      end = dot;
    }
    return reversed + "." + t.version + "." + t.kind;
  }
  auto group = t.group.empty() ? std::string("core") : t.group.substr(0, t.group.find('.'));
  return "io.k8s.api." + group + "." + t.version + "." + t.kind;
}

// A minimal schema for `kubectl explain`: the fields every object has, the top-level
// fields of the kind, and a custom resource's own openAPIV3Schema where it has one.
json kind_schema(const ResourceRegistry& registry, const ResourceType& t) {
  json properties = {
      {"apiVersion", described("string", "APIVersion defines the versioned schema of this representation of an "
                                         "object.")},
      {"kind", described("string", "Kind is a string value representing the REST resource this object "
                                   "represents.")},
      {"metadata", described("object", "Standard object's metadata: name, namespace, labels, annotations, "
                                       "resourceVersion, uid, generation, creationTimestamp.")}};
  json schema = {{"type", "object"},
                 {"description", t.kind + " (" + t.api_version() + ", served by kinformer's embedded API server)."}};
  if (auto custom = registry.schema(&t)) {
    schema = custom->document();
    if (!schema.contains("description"))
      schema["description"] = t.kind + " is a custom resource (" + t.api_version() + ").";
  } else if (t.kind == "ConfigMap" || t.kind == "Secret") {
    properties["data"] = described("object", t.kind == "Secret"
                                                 ? "Data contains the secret data, each value base64-encoded."
                                                 : "Data contains the configuration data.");
    properties["data"]["additionalProperties"] = {{"type", "string"}};
    if (t.kind == "Secret") {
      properties["stringData"] = described("object", "stringData is write-only: merged into data as base64.");
      properties["type"] = described("string", "Used to facilitate programmatic handling of secret data.");
    }
  } else if (t.kind == "Lease") {
    properties["spec"] = described("object", "Specification of the Lease.");
    properties["spec"]["properties"] = {
        {"holderIdentity", described("string", "The identity of the holder of a current lease.")},
        {"leaseDurationSeconds", described("integer", "How long candidates wait to force acquire this lease.")},
        {"acquireTime", described("string", "When the current lease was acquired.")},
        {"renewTime", described("string", "When the current holder last updated the lease.")},
        {"leaseTransitions", described("integer", "The number of transitions of a lease between holders.")}};
  } else if (t.kind != "Event" && t.kind != "Endpoints") {
    properties["spec"] = described("object", "The desired state of the " + t.kind + ".");
    if (t.status_subresource)
      properties["status"] = described("object", "The most recently observed state of the " + t.kind +
                                                     "; written through the /status subresource.");
  }
  if (!schema.contains("properties")) schema["properties"] = json::object();
  for (auto it = properties.begin(); it != properties.end(); ++it)
    if (!schema["properties"].contains(it.key())) schema["properties"][it.key()] = it.value();
  schema["x-kubernetes-group-version-kind"] = json::array({{{"group", t.group}, {"version", t.version}, {"kind", t.kind}}});
  return schema;
}

}  // namespace

std::string version_json() {
  return json{{"major", "1"},
              {"minor", "32"},
              {"gitVersion", "v1.32.0-kinformer"},
              {"gitCommit", "0000000000000000000000000000000000000000"},
              {"gitTreeState", "clean"},
              {"buildDate", "2026-01-01T00:00:00Z"},
              {"goVersion", "go1.23.0"},
              {"compiler", "gc"},
              {"platform", "linux/amd64"}}
      .dump();
}

bool wants_aggregated_discovery(std::string_view accept, std::string& version) {
  for (const char* v : {"v2", "v2beta1"}) {
    auto marker = std::string("g=apidiscovery.k8s.io;v=") + v + ";as=APIGroupDiscoveryList";
    if (accept.find(marker) != std::string_view::npos) {
      version = v;
      return true;
    }
  }
  return false;
}

std::string aggregated_content_type(const std::string& version) {
  return "application/json;g=apidiscovery.k8s.io;v=" + version + ";as=APIGroupDiscoveryList";
}

std::string aggregated_discovery_json(const ResourceRegistry& registry, bool core, const std::string& version) {
  json items = json::array();
  std::vector<std::string> groups = core ? std::vector<std::string>{""} : registry.groups();
  for (const auto& group : groups) {
    json versions = json::array();
    for (const auto& v : versions_of(registry, group)) {
      json resources = json::array();
      for (const auto& t : registry.all()) {
        if (t.group != group || t.version != v) continue;
        json kind = {{"group", t.group}, {"version", t.version}, {"kind", t.kind}};
        json resource = {{"resource", t.plural},
                         {"responseKind", kind},
                         {"scope", t.namespaced ? "Namespaced" : "Cluster"},
                         {"singularResource", t.singular},
                         {"verbs", main_verbs}};
        if (!t.short_names.empty()) resource["shortNames"] = t.short_names;
        if (!t.categories.empty()) resource["categories"] = t.categories;
        json subresources = json::array();
        if (t.status_subresource)
          subresources.push_back({{"subresource", "status"}, {"responseKind", kind}, {"verbs", status_verbs}});
        if (t.scale_subresource)
          subresources.push_back({{"subresource", "scale"}, {"responseKind", scale_kind}, {"verbs", status_verbs}});
        if (!subresources.empty()) resource["subresources"] = std::move(subresources);
        resources.push_back(std::move(resource));
      }
      versions.push_back({{"version", v}, {"freshness", "Current"}, {"resources", resources}});
    }
    items.push_back({{"metadata", {{"name", group}}}, {"versions", versions}});
  }
  return json{{"kind", "APIGroupDiscoveryList"},
              {"apiVersion", "apidiscovery.k8s.io/" + version},
              {"metadata", json::object()},
              {"items", items}}
      .dump();
}

std::string api_versions_json(const std::string& server_address) {
  return json{{"kind", "APIVersions"},
              {"versions", {"v1"}},
              {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}}}}
      .dump();
}

std::string api_group_list_json(const ResourceRegistry& registry) {
  json groups = json::array();
  for (const auto& g : registry.groups()) groups.push_back(group_json(registry, g));
  return json{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}}.dump();
}

std::optional<std::string> api_group_json(const ResourceRegistry& registry, std::string_view group) {
  if (group.empty() || versions_of(registry, group).empty()) return std::nullopt;
  json out = group_json(registry, std::string(group));
  out["kind"] = "APIGroup";
  out["apiVersion"] = "v1";
  return out.dump();
}

std::optional<std::string> api_resource_list_json(const ResourceRegistry& registry, std::string_view group,
                                                   std::string_view version) {
  json resources = json::array();
  for (const auto& t : registry.all()) {
    if (t.group != group || t.version != version) continue;
    json resource = {{"name", t.plural},         {"singularName", t.singular}, {"namespaced", t.namespaced},
                     {"kind", t.kind},           {"verbs", main_verbs}};
    if (!t.short_names.empty()) resource["shortNames"] = t.short_names;
    if (!t.categories.empty()) resource["categories"] = t.categories;
    resources.push_back(std::move(resource));
    if (t.status_subresource)
      resources.push_back({{"name", t.plural + "/status"}, {"singularName", ""}, {"namespaced", t.namespaced},
                           {"kind", t.kind}, {"verbs", status_verbs}});
    if (t.scale_subresource)
      resources.push_back({{"name", t.plural + "/scale"}, {"singularName", ""}, {"namespaced", t.namespaced},
                           {"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}, {"verbs", status_verbs}});
  }
  if (resources.empty()) return std::nullopt;
  std::string group_version = group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
  return json{{"kind", "APIResourceList"}, {"apiVersion", "v1"}, {"groupVersion", group_version}, {"resources", resources}}
      .dump();
}

std::string openapi_root_json(const ResourceRegistry& registry) {
  json paths = json::object();
  for (const auto& t : registry.all()) {
    auto path = t.group.empty() ? "api/" + t.version : "apis/" + t.group + "/" + t.version;
    if (!paths.contains(path))
      paths[path] = {{"serverRelativeURL", "/openapi/v3/" + path + "?hash=" + openapi_hash(registry, t.group, t.version)}};
  }
  return json{{"paths", paths}}.dump();
}

std::optional<std::string> openapi_group_version_json(const ResourceRegistry& registry, std::string_view group,
                                                      std::string_view version) {
  json paths = json::object();
  json schemas = json::object();
  for (const auto& t : registry.all()) {
    if (t.group != group || t.version != version) continue;
    schemas[schema_name(t)] = kind_schema(registry, t);
    auto prefix = t.group.empty() ? "/api/" + t.version : "/apis/" + t.group + "/" + t.version;
    auto item = t.namespaced ? prefix + "/namespaces/{namespace}/" + t.plural + "/{name}" : prefix + "/" + t.plural + "/{name}";
    json operation = {
        {"x-kubernetes-group-version-kind", {{"group", t.group}, {"version", t.version}, {"kind", t.kind}}},
        {"parameters",
         {{{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}}}},
          {{"name", "fieldManager"}, {"in", "query"}, {"schema", {{"type", "string"}}}},
          {{"name", "dryRun"}, {"in", "query"}, {"schema", {{"type", "string"}}}}}},
        {"responses", {{"200", {{"description", "OK"}}}}}};
    paths[item] = {{"patch", operation}};
  }
  if (paths.empty()) return std::nullopt;
  return json{{"openapi", "3.0.0"},
              {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
              {"paths", paths},
              {"components", {{"schemas", schemas}}}}
      .dump();
}

}  // namespace kinformer::apiserver
