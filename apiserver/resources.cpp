#include "apiserver/resources.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>

namespace kinformer::apiserver {

std::string ResourceType::api_version() const { return group.empty() ? version : group + "/" + version; }

std::string ResourceType::qualified_name() const { return group.empty() ? plural : plural + "." + group; }

namespace {

ResourceType core(std::string kind, std::string plural, std::string singular, std::vector<std::string> short_names) {
  ResourceType t;
  t.version = "v1";
  t.kind = std::move(kind);
  t.plural = std::move(plural);
  t.singular = std::move(singular);
  t.short_names = std::move(short_names);
  t.builtin = true;
  return t;
}

}  // namespace

bool is_dns_label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return s.front() != '-' && s.back() != '-';
}

bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (true) {
    auto dot = s.find('.', start);
    if (!is_dns_label(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start)))
      return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

ResourceRegistry ResourceRegistry::with_builtins() {
  ResourceRegistry r;
  auto ns = core("Namespace", "namespaces", "namespace", {"ns"});
  ns.namespaced = false;
  ns.selectable_fields = {"status.phase"};
  r.types_.push_back(std::move(ns));

  auto pod = core("Pod", "pods", "pod", {"po"});
  pod.status_subresource = true;
  pod.delete_returns_object = true;
  pod.categories = {"all"};
  pod.selectable_fields = {"spec.nodeName",   "spec.restartPolicy", "spec.schedulerName",
                           "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                           "status.podIP",    "status.nominatedNodeName"};
  r.types_.push_back(std::move(pod));

  r.types_.push_back(core("ConfigMap", "configmaps", "configmap", {"cm"}));

  auto svc = core("Service", "services", "service", {"svc"});
  svc.status_subresource = true;
  svc.categories = {"all"};
  r.types_.push_back(std::move(svc));

  auto ev = core("Event", "events", "event", {"ev"});
  ev.selectable_fields = {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                          "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                          "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"};
  r.types_.push_back(std::move(ev));
  return r;
}

Result<void> ResourceRegistry::add(ResourceType type) {
  if (!is_dns_subdomain(type.group) || type.group.find('.') == std::string::npos)
    return {Errc::decode_failed, "resource group \"" + type.group + "\" must be a DNS subdomain with a dot (example.com)"};
  if (!is_dns_label(type.version)) return {Errc::decode_failed, "resource version \"" + type.version + "\" is not a DNS label"};
  if (!is_dns_label(type.plural)) return {Errc::decode_failed, "resource plural \"" + type.plural + "\" must be a lower-case DNS label"};
  if (type.kind.empty() || !std::isupper(static_cast<unsigned char>(type.kind.front())))
    return {Errc::decode_failed, "resource kind \"" + type.kind + "\" must start with an upper-case letter"};
  if (type.singular.empty()) type.singular = lower(type.kind);
  if (find(type.group, type.version, type.plural) || find_kind(type.group, type.version, type.kind))
    return {Errc::decode_failed, "resource " + type.plural + "." + type.group + "/" + type.version + " is already served"};
  type.builtin = false;
  type.tracks_generation = true;  // custom resources always track generation
  types_.push_back(std::move(type));
  return {};
}

Result<ResourceType> ResourceRegistry::parse_spec(std::string_view spec) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto slash = spec.find('/', start);
    parts.emplace_back(spec.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() != 4)
    return {Errc::decode_failed, "resource spec \"" + std::string(spec) +
                                     "\" must be group/version/Kind/plural, e.g. metrics.kinformer.io/v1/MetricSeries/metricseries"};
  ResourceType t;
  t.group = parts[0];
  t.version = parts[1];
  t.kind = parts[2];
  t.plural = parts[3];
  return t;
}

Result<void> ResourceRegistry::add_from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {Errc::decode_failed, "cannot read resource file " + path};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    auto type = parse_spec(line);
    if (!type) return {Errc::decode_failed, path + ":" + std::to_string(number) + ": " + type.error().message};
    if (auto added = add(std::move(type).value()); !added)
      return {Errc::decode_failed, path + ":" + std::to_string(number) + ": " + added.error().message};
  }
  return {};
}

const ResourceType* ResourceRegistry::find(std::string_view group, std::string_view version,
                                           std::string_view plural) const {
  for (const auto& t : types_)
    if (t.group == group && t.version == version && t.plural == plural) return &t;
  return nullptr;
}

const ResourceType* ResourceRegistry::find_kind(std::string_view group, std::string_view version,
                                                std::string_view kind) const {
  for (const auto& t : types_)
    if (t.group == group && t.version == version && t.kind == kind) return &t;
  return nullptr;
}

std::vector<std::string> ResourceRegistry::groups() const {
  std::vector<std::string> out;
  for (const auto& t : types_)
    if (!t.group.empty() && std::find(out.begin(), out.end(), t.group) == out.end()) out.push_back(t.group);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kinformer::apiserver
