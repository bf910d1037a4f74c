// apiserver/resources.hpp
//
// ResourceType and ResourceRegistry: which kinds the embedded API server serves
// and how each behaves (kube-api-protocol.md §A1, §A3, §A8).
//
// Contract
//   * The built-ins (with_builtins()) are core/v1 namespaces, nodes and
//     persistentvolumes (cluster-scoped), pods, configmaps, services, events, secrets,
//     serviceaccounts, persistentvolumeclaims, endpoints and replicationcontrollers
//     (the last two kinds because kubectl apply --prune lists them); apps/v1 deployments, statefulsets,
//     daemonsets and replicasets; batch/v1 jobs and cronjobs; networking.k8s.io/v1
//     ingresses; coordination.k8s.io/v1 leases; apiextensions.k8s.io/v1
//     customresourcedefinitions (cluster-scoped). Extra resources are custom kinds
//     added with add() or from a spec line "group/version/Kind/plural" (parse_spec()),
//     or at run time from a CustomResourceDefinition (add_or_update_custom()).
//   * A resource is identified by (group, version, plural); kinds are unique per
//     group/version among the served resources.
//   * A ResourceType, once added, lives as long as the registry at the same address
//     and never changes (the Store keys its buckets and objects by that address).
//     retire() stops serving it: find(), find_kind() and all() skip it; a later CRD
//     with the same names and scope serves the same entry again, a different one adds
//     a new entry. The custom schema of a type may change; schema() reads it.
//   * selectable_fields lists the field-selector paths besides metadata.name and
//     metadata.namespace (pods: spec.nodeName, status.phase, ...).
// Threading: every member is thread-safe (one mutex); all() returns a snapshot.
//   Moving a registry is only allowed before any other thread uses it.
// Errors: add()/parse_spec() return a message naming the bad part; never throw.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/iterator/indirect_iterator.hpp>

#include "runtime/result.hpp"

namespace kinformer::apiserver {

struct ResourceType {
  std::string group;      // "" for core
  std::string version;    // "v1"
  std::string kind;       // "Pod"
  std::string plural;     // "pods"
  std::string singular;   // "pod"
  std::vector<std::string> short_names;
  std::vector<std::string> categories;  // "all" makes `kubectl get all` include it
  bool namespaced = true;
  bool builtin = false;            // strategic merge patch allowed; list items omit kind/apiVersion
  bool status_subresource = false; // writes to the main resource keep .status; /status writes only .status
  bool scale_subresource = false;  // serves <plural>/scale, an autoscaling/v1 Scale (apiserver/scale_subresource.hpp)
  bool tracks_generation = false;  // metadata.generation bumps when anything outside metadata/status changes
  bool delete_returns_object = false;  // DELETE answers the object (pods) rather than a success Status
  std::vector<std::string> selectable_fields;

  /// "v1" or "group/version".
  std::string api_version() const;
  /// "PodList".
  std::string list_kind() const { return kind + "List"; }
  /// "pods" or "metricseries.metrics.kinformer.io", as kube-apiserver names resources in messages.
  std::string qualified_name() const;
};

class OpenApiSchema;  // apiserver/schema.hpp

/// A snapshot of the served resources; iterating yields `const ResourceType&` at the
/// registry's stable addresses.
class ResourceList {
 public:
  using const_iterator = boost::indirect_iterator<std::vector<const ResourceType*>::const_iterator>;
  explicit ResourceList(std::vector<const ResourceType*> types) : types_(std::move(types)) {}
  const_iterator begin() const { return const_iterator(types_.begin()); }
  const_iterator end() const { return const_iterator(types_.end()); }
  std::size_t size() const { return types_.size(); }

 private:
  std::vector<const ResourceType*> types_;
};

class ResourceRegistry {
 public:
  ResourceRegistry() = default;
  ResourceRegistry(ResourceRegistry&& other) noexcept;
  ResourceRegistry& operator=(ResourceRegistry&&) = delete;
  ResourceRegistry(const ResourceRegistry&) = delete;

  /// The built-in kinds listed in the contract above.
  static ResourceRegistry with_builtins();

  /// Adds a namespaced custom resource. Fails when the plural or kind is already
  /// served in that group/version, or a name is not a lower-case DNS label.
  Result<void> add(ResourceType type);

  /// Parses "group/version/Kind/plural" (e.g. "metrics.kinformer.io/v1/MetricSeries/metricseries").
  static Result<ResourceType> parse_spec(std::string_view spec);

  /// Adds every spec line of a file (blank lines and '#' comments are skipped).
  Result<void> add_from_file(const std::string& path);

  /// Serves a CustomResourceDefinition's kind (`type` with `schema`, may be null): a new
  /// entry, a retired entry with the same names and scope served again, or the served
  /// entry's schema replaced. Fails (a message naming the field) when it clashes with
  /// another served kind, or changes the kind, scope or subresources of a served one.
  Result<const ResourceType*> add_or_update_custom(ResourceType type, std::shared_ptr<const OpenApiSchema> schema);
  /// Whether add_or_update_custom(type, ...) would succeed now.
  Result<void> can_serve_custom(ResourceType type) const;
  /// Stops serving `type` (a deleted CRD's kind); built-ins cannot be retired.
  void retire(const ResourceType* type);
  /// The validation schema of a CRD-defined type; nullptr for every other type.
  std::shared_ptr<const OpenApiSchema> schema(const ResourceType* type) const;

  /// nullptr when (group, version, plural) is not served.
  const ResourceType* find(std::string_view group, std::string_view version, std::string_view plural) const;
  const ResourceType* find_kind(std::string_view group, std::string_view version, std::string_view kind) const;
  const ResourceType* namespaces() const { return find("", "v1", "namespaces"); }

  /// Every served resource, in registration order (core first). Pointers stay valid.
  ResourceList all() const;

  /// The served group names other than core, sorted, each once.
  std::vector<std::string> groups() const;

 private:
  const ResourceType* find_locked(std::string_view group, std::string_view version, std::string_view plural) const;
  const ResourceType* find_kind_locked(std::string_view group, std::string_view version,
                                       std::string_view kind) const;

  /// The served entry `type` would update (nullptr: none), or why it cannot be served.
  Result<const ResourceType*> custom_clash_locked(const ResourceType& type) const;

  mutable std::mutex mu_;
  std::deque<ResourceType> types_;          // guarded by mu_; a deque keeps pointers stable on push_back
  std::set<const ResourceType*> retired_;   // guarded by mu_; entries of types_ no longer served
  std::map<const ResourceType*, std::shared_ptr<const OpenApiSchema>> schemas_;  // guarded by mu_
};

/// RFC 1123 label: [a-z0-9-], at most 63, alphanumeric at both ends.
bool is_dns_label(std::string_view s);
/// RFC 1123 subdomain: dot-separated labels, at most 253 characters.
bool is_dns_subdomain(std::string_view s);
/// kube-apiserver's name rule, for writes and for what a data file holds alike: namespace
/// names are labels; every other kind's (nodes, CRDs' "plural.group", ...) are subdomains.
bool is_valid_object_name(const ResourceType& type, std::string_view name);

}  // namespace kinformer::apiserver
