// apiserver/resources.hpp
//
// ResourceType and ResourceRegistry: which kinds the embedded API server serves
// and how each behaves (kube-api-protocol.md §A1, §A3, §A8).
//
// Contract
//   * The built-ins are namespaces (cluster-scoped), pods, configmaps, services and
//     events (core/v1). Extra resources are namespaced custom kinds added with
//     add() or from a spec line "group/version/Kind/plural" (see parse_spec()).
//   * A resource is identified by (group, version, plural); kinds are unique per
//     group/version.
//   * selectable_fields lists the field-selector paths besides metadata.name and
//     metadata.namespace (pods: spec.nodeName, status.phase, ...).
// Threading: fill the registry before the server starts; afterwards it is read-only
//   and any thread may read it.
// Errors: add()/parse_spec() return a message naming the bad part; never throw.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

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

class ResourceRegistry {
 public:
  /// namespaces, pods, configmaps, services, events.
  static ResourceRegistry with_builtins();

  /// Adds a namespaced custom resource. Fails when the plural or kind is already
  /// served in that group/version, or a name is not a lower-case DNS label.
  Result<void> add(ResourceType type);

  /// Parses "group/version/Kind/plural" (e.g. "metrics.kinformer.io/v1/MetricSeries/metricseries").
  static Result<ResourceType> parse_spec(std::string_view spec);

  /// Adds every spec line of a file (blank lines and '#' comments are skipped).
  Result<void> add_from_file(const std::string& path);

  /// nullptr when (group, version, plural) is not served.
  const ResourceType* find(std::string_view group, std::string_view version, std::string_view plural) const;
  const ResourceType* find_kind(std::string_view group, std::string_view version, std::string_view kind) const;
  const ResourceType* namespaces() const { return find("", "v1", "namespaces"); }

  /// Every resource, in registration order (core first). Pointers stay valid.
  const std::deque<ResourceType>& all() const { return types_; }

  /// The served group names other than core, sorted, each once.
  std::vector<std::string> groups() const;

 private:
  std::deque<ResourceType> types_;  // a deque keeps ResourceType pointers stable on add()
};

/// RFC 1123 label: [a-z0-9-], at most 63, alphanumeric at both ends.
bool is_dns_label(std::string_view s);
/// RFC 1123 subdomain: dot-separated labels, at most 253 characters.
bool is_dns_subdomain(std::string_view s);

}  // namespace kinformer::apiserver
