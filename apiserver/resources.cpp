#include "apiserver/resources.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <tuple>

namespace kinformer::apiserver {

std::string ResourceType::api_version() const { return group.empty() ? version : group + "/" + version; }

std::string ResourceType::qualified_name() const { return group.empty() ? plural : plural + "." + group; }

namespace {

ResourceType builtin(std::string group, std::string version, std::string kind, std::string plural,
                     std::string singular, std::vector<std::string> short_names) {
  ResourceType t;
  t.group = std::move(group);
  t.version = std::move(version);
  t.kind = std::move(kind);
  t.plural = std::move(plural);
  t.singular = std::move(singular);
  t.short_names = std::move(short_names);
  t.builtin = true;
  return t;
}

ResourceType core(std::string kind, std::string plural, std::string singular, std::vector<std::string> short_names) {
  return builtin("", "v1", std::move(kind), std::move(plural), std::move(singular), std::move(short_names));
}

// A workload-style kind: spec/status with a /status subresource, generation on spec changes.
ResourceType with_spec_and_status(ResourceType t, bool in_all) {
  t.status_subresource = true;
  t.tracks_generation = true;
  if (in_all) t.categories = {"all"};
  return t;
}

}  // namespace

ResourceRegistry::ResourceRegistry(ResourceRegistry&& other) noexcept {
  std::lock_guard lock(other.mu_);
  types_ = std::move(other.types_);
  retired_ = std::move(other.retired_);
  schemas_ = std::move(other.schemas_);
}

bool is_dns_label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return s.front() != '-' && s.back() != '-';
}

bool is_valid_object_name(const ResourceType& type, std::string_view name) {
  const bool label_only = type.group.empty() && type.plural == "namespaces";
  return label_only ? is_dns_label(name) : is_dns_subdomain(name);
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

  auto secret = core("Secret", "secrets", "secret", {});
  secret.selectable_fields = {"type"};
  r.types_.push_back(std::move(secret));
  r.types_.push_back(core("ServiceAccount", "serviceaccounts", "serviceaccount", {"sa"}));
  auto pvc = core("PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim", {"pvc"});
  pvc.status_subresource = true;
  r.types_.push_back(std::move(pvc));
  r.types_.push_back(core("Endpoints", "endpoints", "endpoints", {"ep"}));
  // kubectl apply --prune lists these two (with the kinds above) by default
  auto pv = core("PersistentVolume", "persistentvolumes", "persistentvolume", {"pv"});
  pv.namespaced = false;
  pv.status_subresource = true;
  r.types_.push_back(std::move(pv));
  auto rc = with_spec_and_status(core("ReplicationController", "replicationcontrollers", "replicationcontroller", {"rc"}), true);
  rc.scale_subresource = true;
  r.types_.push_back(std::move(rc));
  auto node = core("Node", "nodes", "node", {"no"});
  node.namespaced = false;
  node.status_subresource = true;
  node.selectable_fields = {"spec.unschedulable"};
  r.types_.push_back(std::move(node));

  for (auto [kind, plural, singular, short_name] :
       {std::tuple{"Deployment", "deployments", "deployment", "deploy"},
        std::tuple{"StatefulSet", "statefulsets", "statefulset", "sts"},
        std::tuple{"DaemonSet", "daemonsets", "daemonset", "ds"},
        std::tuple{"ReplicaSet", "replicasets", "replicaset", "rs"}}) {
    auto t = with_spec_and_status(builtin("apps", "v1", kind, plural, singular, {short_name}), true);
    t.scale_subresource = t.kind != "DaemonSet";
    if (t.kind == "ReplicaSet") t.selectable_fields = {"status.replicas"};
    r.types_.push_back(std::move(t));
  }
  auto job = with_spec_and_status(builtin("batch", "v1", "Job", "jobs", "job", {}), true);
  job.selectable_fields = {"status.successful"};
  r.types_.push_back(std::move(job));
  r.types_.push_back(with_spec_and_status(builtin("batch", "v1", "CronJob", "cronjobs", "cronjob", {"cj"}), true));
  r.types_.push_back(
      with_spec_and_status(builtin("networking.k8s.io", "v1", "Ingress", "ingresses", "ingress", {"ing"}), false));
  r.types_.push_back(builtin("coordination.k8s.io", "v1", "Lease", "leases", "lease", {}));
  auto crd = with_spec_and_status(builtin("apiextensions.k8s.io", "v1", "CustomResourceDefinition",
                                          "customresourcedefinitions", "customresourcedefinition", {"crd", "crds"}),
                                  false);
  crd.namespaced = false;
  crd.builtin = false;  // kube-apiserver serves CRDs without strategic merge patch
  crd.categories = {"api-extensions"};
  r.types_.push_back(std::move(crd));
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
  type.builtin = false;
  type.tracks_generation = true;  // custom resources always track generation
  std::lock_guard lock(mu_);
  if (find_locked(type.group, type.version, type.plural) || find_kind_locked(type.group, type.version, type.kind))
    return {Errc::decode_failed, "resource " + type.plural + "." + type.group + "/" + type.version + " is already served"};
  types_.push_back(std::move(type));
  return {};
}

namespace {

void normalize_custom(ResourceType& type) {
  if (type.singular.empty()) type.singular = lower(type.kind);
  type.builtin = false;
  type.tracks_generation = true;  // custom resources always track generation
}

bool same_shape(const ResourceType& a, const ResourceType& b) {
  return a.group == b.group && a.version == b.version && a.plural == b.plural && a.kind == b.kind &&
         a.singular == b.singular && a.namespaced == b.namespaced && a.status_subresource == b.status_subresource &&
         a.scale_subresource == b.scale_subresource &&
         a.short_names == b.short_names && a.categories == b.categories && a.builtin == b.builtin;
}

}  // namespace

Result<const ResourceType*> ResourceRegistry::custom_clash_locked(const ResourceType& type) const {
  const ResourceType* served = find_locked(type.group, type.version, type.plural);
  const ResourceType* same_kind = find_kind_locked(type.group, type.version, type.kind);
  if (!served && !same_kind) return static_cast<const ResourceType*>(nullptr);
  const ResourceType* existing = served ? served : same_kind;
  if (existing->builtin) return {Errc::decode_failed, "resource " + existing->qualified_name() + " is a built-in kind"};
  if (!same_shape(*existing, type))
    return {Errc::decode_failed,
            "the kind, names, scope and subresources of a served custom resource cannot change in kinformer: "
            "delete the CustomResourceDefinition first"};
  return existing;
}

Result<void> ResourceRegistry::can_serve_custom(ResourceType type) const {
  normalize_custom(type);
  std::lock_guard lock(mu_);
  auto clash = custom_clash_locked(type);
  if (!clash) return clash.error();
  return {};
}

Result<const ResourceType*> ResourceRegistry::add_or_update_custom(ResourceType type,
                                                                   std::shared_ptr<const OpenApiSchema> schema) {
  normalize_custom(type);
  std::lock_guard lock(mu_);
  auto existing = custom_clash_locked(type);
  if (!existing) return existing.error();
  if (*existing) {
    schemas_[*existing] = std::move(schema);
    return *existing;
  }
  for (const auto* retired : retired_)
    if (same_shape(*retired, type)) {
      retired_.erase(retired);
      schemas_[retired] = std::move(schema);
      return retired;
    }
  types_.push_back(std::move(type));
  const ResourceType* added = &types_.back();
  schemas_[added] = std::move(schema);
  return added;
}

void ResourceRegistry::retire(const ResourceType* type) {
  if (!type || type->builtin) return;
  std::lock_guard lock(mu_);
  retired_.insert(type);
  schemas_.erase(type);
}

std::shared_ptr<const OpenApiSchema> ResourceRegistry::schema(const ResourceType* type) const {
  std::lock_guard lock(mu_);
  auto it = schemas_.find(type);
  return it == schemas_.end() ? nullptr : it->second;
}

ResourceList ResourceRegistry::all() const {
  std::lock_guard lock(mu_);
  std::vector<const ResourceType*> out;
  out.reserve(types_.size());
  for (const auto& t : types_)
    if (!retired_.count(&t)) out.push_back(&t);
  return ResourceList(std::move(out));
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
  std::lock_guard lock(mu_);
  return find_locked(group, version, plural);
}

const ResourceType* ResourceRegistry::find_kind(std::string_view group, std::string_view version,
                                                std::string_view kind) const {
  std::lock_guard lock(mu_);
  return find_kind_locked(group, version, kind);
}

const ResourceType* ResourceRegistry::find_locked(std::string_view group, std::string_view version,
                                                  std::string_view plural) const {
  for (const auto& t : types_)
    if (t.group == group && t.version == version && t.plural == plural && !retired_.count(&t)) return &t;
  return nullptr;
}

const ResourceType* ResourceRegistry::find_kind_locked(std::string_view group, std::string_view version,
                                                       std::string_view kind) const {
  for (const auto& t : types_)
    if (t.group == group && t.version == version && t.kind == kind && !retired_.count(&t)) return &t;
  return nullptr;
}

std::vector<std::string> ResourceRegistry::groups() const {
  std::vector<std::string> out;
  for (const auto& t : all())
    if (!t.group.empty() && std::find(out.begin(), out.end(), t.group) == out.end()) out.push_back(t.group);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kinformer::apiserver
