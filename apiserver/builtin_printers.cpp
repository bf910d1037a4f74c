#include "apiserver/builtin_printers.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

using printer_cells::at;
using printer_cells::count;
using printer_cells::flag;
using printer_cells::format_labels;
using printer_cells::integer;
using printer_cells::items;
using printer_cells::joined;
using printer_cells::or_none;
using printer_cells::parse_time;
using printer_cells::text;

std::string age(const json& object, TableClock::time_point now) {
  return age_of(at(object, {"metadata", "creationTimestamp"}), now);
}

// The containers' names and images, each comma-joined, in spec order.
std::pair<std::string, std::string> container_cells(const json& pod_spec) {
  std::vector<std::string> names, images;
  for (const auto& c : items(pod_spec, {"containers"})) {
    names.push_back(text(c, {"name"}));
    images.push_back(text(c, {"image"}));
  }
  return {joined(names), joined(images)};
}

TableColumn name_column() {
  return {"Name", "string", "name", "The object's name, unique within its namespace.", 0};
}
TableColumn age_column() { return {"Age", "string", "", "The time since the object was created.", 0}; }
TableColumn column(const char* name, const char* type, const char* description, int priority = 0) {
  return {name, type, "", description, priority};
}

json row_of(std::initializer_list<json> cells) {
  json out = json::object();
  out["cells"] = json(std::vector<json>(cells));
  return out;
}

// ---- core/v1 ----

bool condition_true(const json& status, const char* type) {
  for (const auto& c : items(status, {"conditions"}))
    if (text(c, {"type"}) == type) return text(c, {"status"}) == "True";
  return false;
}

json pod_row(const json& pod, TableClock::time_point now) {
  const json& spec = at(pod, {"spec"});
  const json& status = at(pod, {"status"});
  std::size_t total = count(spec, {"containers"});
  std::set<std::string> restartable_init;  // sidecars: init containers with restartPolicy Always
  for (const auto& c : items(spec, {"initContainers"}))
    if (text(c, {"restartPolicy"}) == "Always") {
      restartable_init.insert(text(c, {"name"}));
      ++total;
    }
  std::size_t ready = 0;
  std::int64_t restarts = 0, sidecar_restarts = 0;
  std::optional<TableClock::time_point> last_restart, last_sidecar_restart;
  auto note_termination = [](const json& s, std::optional<TableClock::time_point>& latest) {
    if (auto finished = parse_time(at(s, {"lastState", "terminated", "finishedAt"})))
      if (!latest || *finished > *latest) latest = finished;
  };
  auto exit_reason = [](const json& terminated, const std::string& prefix) {
    if (auto r = text(terminated, {"reason"}); !r.empty()) return prefix + r;
    if (auto signal = integer(terminated, {"signal"}); signal != 0) return prefix + "Signal:" + std::to_string(signal);
    return prefix + "ExitCode:" + std::to_string(integer(terminated, {"exitCode"}));
  };

  std::string phase = text(status, {"phase"});
  std::string reason = phase;
  if (auto r = text(status, {"reason"}); !r.empty()) reason = r;
  for (const auto& c : items(status, {"conditions"}))
    if (text(c, {"type"}) == "PodScheduled" && text(c, {"reason"}) == "SchedulingGated") reason = "SchedulingGated";

  bool initializing = false;
  const json& init_statuses = items(status, {"initContainerStatuses"});
  for (std::size_t i = 0; i < init_statuses.size(); ++i) {
    const json& s = init_statuses[i];
    restarts += integer(s, {"restartCount"});
    note_termination(s, last_restart);
    bool sidecar = restartable_init.count(text(s, {"name"})) > 0;
    if (sidecar) {
      sidecar_restarts += integer(s, {"restartCount"});
      note_termination(s, last_sidecar_restart);
    }
    const json& terminated = at(s, {"state", "terminated"});
    const json& waiting = at(s, {"state", "waiting"});
    if (terminated.is_object() && integer(terminated, {"exitCode"}) == 0) continue;
    if (sidecar && flag(s, {"started"})) {
      if (flag(s, {"ready"})) ++ready;
      continue;
    }
    if (terminated.is_object()) {
      reason = exit_reason(terminated, "Init:");
    } else if (auto w = text(waiting, {"reason"}); !w.empty() && w != "PodInitializing") {
      reason = "Init:" + w;
    } else {
      reason = "Init:" + std::to_string(i) + "/" + std::to_string(count(spec, {"initContainers"}));
    }
    initializing = true;
    break;
  }
  if (!initializing || condition_true(status, "Initialized")) {
    restarts = sidecar_restarts;
    last_restart = last_sidecar_restart;
    bool running = false;
    const json& statuses = items(status, {"containerStatuses"});
    for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
      const json& s = *it;
      restarts += integer(s, {"restartCount"});
      note_termination(s, last_restart);
      const json& terminated = at(s, {"state", "terminated"});
      if (auto w = text(s, {"state", "waiting", "reason"}); !w.empty()) {
        reason = w;
      } else if (terminated.is_object()) {
        reason = exit_reason(terminated, "");
      } else if (flag(s, {"ready"}) && at(s, {"state", "running"}).is_object()) {
        running = true;
        ++ready;
      }
    }
    if (reason == "Completed" && running) reason = condition_true(status, "Ready") ? "Running" : "NotReady";
  }
  if (at(pod, {"metadata", "deletionTimestamp"}).is_string()) {
    if (text(status, {"reason"}) == "NodeLost") reason = "Unknown";
    else if (phase != "Succeeded" && phase != "Failed") reason = "Terminating";
  }
  std::string restart_text = std::to_string(restarts);
  if (restarts != 0 && last_restart)
    restart_text += " (" + human_duration(std::chrono::duration_cast<std::chrono::seconds>(now - *last_restart)) + " ago)";

  std::string ip;
  if (const json& ips = items(status, {"podIPs"}); !ips.empty()) ip = text(ips[0], {"ip"});
  std::string gates = "<none>";
  if (const json& wanted = items(spec, {"readinessGates"}); !wanted.empty()) {
    std::size_t met = 0;
    for (const auto& g : wanted) {
      for (const auto& c : items(status, {"conditions"}))
        if (text(c, {"type"}) == text(g, {"conditionType"})) {
          if (text(c, {"status"}) == "True") ++met;
          break;
        }
    }
    gates = std::to_string(met) + "/" + std::to_string(wanted.size());
  }
  json row = row_of({text(pod, {"metadata", "name"}), std::to_string(ready) + "/" + std::to_string(total), reason,
                     restart_text, age(pod, now), or_none(ip), or_none(text(spec, {"nodeName"})),
                     or_none(text(status, {"nominatedNodeName"})), gates});
  if (phase == "Succeeded" || phase == "Failed")
    row["conditions"] = json::array({{{"type", "Completed"}, {"status", "True"}, {"reason", phase},
                                      {"message", phase == "Succeeded" ? "The pod has completed successfully."
                                                                       : "The pod failed."}}});
  return row;
}

std::string service_external_ip(const json& spec, const json& status) {
  std::vector<std::string> external;
  for (const auto& ip : items(spec, {"externalIPs"}))
    if (ip.is_string()) external.push_back(ip.get<std::string>());
  auto type = text(spec, {"type"});
  if (type == "ClusterIP" || type == "NodePort") return external.empty() ? "<none>" : joined(external);
  if (type == "ExternalName") return text(spec, {"externalName"});
  if (type != "LoadBalancer") return "<unknown>";
  std::set<std::string> balancer;
  for (const auto& ingress : items(status, {"loadBalancer", "ingress"})) {
    if (auto ip = text(ingress, {"ip"}); !ip.empty()) balancer.insert(ip);
    else if (auto host = text(ingress, {"hostname"}); !host.empty()) balancer.insert(host);
  }
  std::vector<std::string> all(balancer.begin(), balancer.end());
  all.insert(all.end(), external.begin(), external.end());
  return all.empty() ? "<pending>" : joined(all);
}

json service_row(const json& svc, TableClock::time_point now) {
  const json& spec = at(svc, {"spec"});
  std::string cluster_ip;
  if (const json& ips = items(spec, {"clusterIPs"}); !ips.empty() && ips[0].is_string()) cluster_ip = ips[0].get<std::string>();
  else cluster_ip = text(spec, {"clusterIP"});
  std::vector<std::string> ports;
  for (const auto& p : items(spec, {"ports"})) {
    auto protocol = text(p, {"protocol"});
    auto node_port = integer(p, {"nodePort"});
    ports.push_back(std::to_string(integer(p, {"port"})) + (node_port > 0 ? ":" + std::to_string(node_port) : "") + "/" +
                    protocol);
  }
  return row_of({text(svc, {"metadata", "name"}), text(spec, {"type"}), or_none(cluster_ip),
                 service_external_ip(spec, at(svc, {"status"})), or_none(joined(ports)), age(svc, now),
                 format_labels(at(spec, {"selector"}))});
}

json config_map_row(const json& cm, TableClock::time_point now) {
  return row_of({text(cm, {"metadata", "name"}), static_cast<std::int64_t>(count(cm, {"data"}) + count(cm, {"binaryData"})),
                 age(cm, now)});
}

json secret_row(const json& secret, TableClock::time_point now) {
  return row_of({text(secret, {"metadata", "name"}), text(secret, {"type"}),
                 static_cast<std::int64_t>(count(secret, {"data"})), age(secret, now)});
}

json namespace_row(const json& ns, TableClock::time_point now) {
  return row_of({text(ns, {"metadata", "name"}), text(ns, {"status", "phase"}), age(ns, now)});
}

json service_account_row(const json& sa, TableClock::time_point now) {
  return row_of({text(sa, {"metadata", "name"}), static_cast<std::int64_t>(count(sa, {"secrets"})), age(sa, now)});
}

std::string node_address(const json& node, const char* type) {
  for (const auto& a : items(node, {"status", "addresses"}))
    if (text(a, {"type"}) == type) return text(a, {"address"});
  return "<none>";
}

json node_row(const json& node, TableClock::time_point now) {
  std::vector<std::string> status;
  for (const auto& c : items(node, {"status", "conditions"}))
    if (text(c, {"type"}) == "Ready") {
      status.push_back(text(c, {"status"}) == "True" ? "Ready" : "NotReady");
      break;
    }
  if (status.empty()) status.push_back("Unknown");
  if (flag(node, {"spec", "unschedulable"})) status.push_back("SchedulingDisabled");
  std::set<std::string> roles;
  if (const json& labels = at(node, {"metadata", "labels"}); labels.is_object())
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      const std::string prefix = "node-role.kubernetes.io/";
      if (it.key().rfind(prefix, 0) == 0 && it.key().size() > prefix.size()) roles.insert(it.key().substr(prefix.size()));
      else if (it.key() == "kubernetes.io/role" && it.value().is_string() && !it.value().get<std::string>().empty())
        roles.insert(it.value().get<std::string>());
    }
  auto unknown_if_empty = [](std::string s) { return s.empty() ? std::string("<unknown>") : s; };
  const json& info = at(node, {"status", "nodeInfo"});
  return row_of({text(node, {"metadata", "name"}), joined(status), or_none(joined({roles.begin(), roles.end()})),
                 age(node, now), text(info, {"kubeletVersion"}), node_address(node, "InternalIP"),
                 node_address(node, "ExternalIP"), unknown_if_empty(text(info, {"osImage"})),
                 unknown_if_empty(text(info, {"kernelVersion"})), unknown_if_empty(text(info, {"containerRuntimeVersion"}))});
}

json event_row(const json& event, TableClock::time_point now) {
  std::string first = at(event, {"firstTimestamp"}).is_string() ? age_of(at(event, {"firstTimestamp"}), now)
                                                                  : age_of(at(event, {"eventTime"}), now);
  std::string last = at(event, {"lastTimestamp"}).is_string() ? age_of(at(event, {"lastTimestamp"}), now) : first;
  std::int64_t n = integer(event, {"count"});
  if (at(event, {"series"}).is_object()) {
    last = age_of(at(event, {"series", "lastObservedTime"}), now);
    n = integer(event, {"series", "count"});
  } else if (n == 0) {
    n = 1;  // a singleton event of the events.k8s.io API has no count
  }
  std::string kind = text(event, {"involvedObject", "kind"});
  std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto involved = text(event, {"involvedObject", "name"});
  std::string component = text(event, {"source", "component"});
  if (component.empty()) component = text(event, {"reportingComponent"});
  std::string host = text(event, {"source", "host"});
  if (host.empty()) host = text(event, {"reportingInstance"});
  std::string message = text(event, {"message"});
  auto first_kept = message.find_first_not_of(" \t\r\n");
  message = first_kept == std::string::npos ? "" : message.substr(first_kept, message.find_last_not_of(" \t\r\n") - first_kept + 1);
  return row_of({last, text(event, {"type"}), text(event, {"reason"}), involved.empty() ? kind : kind + "/" + involved,
                 text(event, {"involvedObject", "fieldPath"}), host.empty() ? component : component + ", " + host, message,
                 first, n, text(event, {"metadata", "name"})});
}

json endpoints_row(const json& endpoints, TableClock::time_point now) {
  constexpr std::size_t shown = 3;
  std::vector<std::string> list;
  std::size_t total = 0;
  auto add = [&](std::string entry) {
    if (list.size() < shown) list.push_back(std::move(entry));
    ++total;
  };
  for (const auto& subset : items(endpoints, {"subsets"})) {
    const json& addresses = items(subset, {"addresses"});
    const json& ports = items(subset, {"ports"});
    if (ports.empty()) {
      for (const auto& a : addresses) add(text(a, {"ip"}));
      continue;
    }
    for (const auto& p : ports)
      for (const auto& a : addresses) {
        auto ip = text(a, {"ip"});
        auto port = std::to_string(integer(p, {"port"}));
        add(ip.find(':') != std::string::npos ? "[" + ip + "]:" + port : ip + ":" + port);  // net.JoinHostPort
      }
  }
  std::string cell = count(endpoints, {"subsets"}) == 0 ? "<none>" : joined(list);
  if (total > shown) cell += " + " + std::to_string(total - shown) + " more...";
  return row_of({text(endpoints, {"metadata", "name"}), cell, age(endpoints, now)});
}

// "RWO,ROX": the access modes as kubectl abbreviates them, in a fixed order.
std::string access_modes(const json& modes) {
  std::set<std::string> have;
  for (const auto& m : modes)
    if (m.is_string()) have.insert(m.get<std::string>());
  std::vector<std::string> out;
  for (auto [mode, short_name] : {std::pair{"ReadWriteOnce", "RWO"}, std::pair{"ReadOnlyMany", "ROX"},
                                  std::pair{"ReadWriteMany", "RWX"}, std::pair{"ReadWriteOncePod", "RWOP"}})
    if (have.count(mode)) out.push_back(short_name);
  return joined(out);
}

std::string storage_class(const json& object) {
  if (const json& beta = at(object, {"metadata", "annotations", "volume.beta.kubernetes.io/storage-class"}); beta.is_string())
    return beta.get<std::string>();
  return text(object, {"spec", "storageClassName"});
}

std::string unset_if_empty(std::string s) { return s.empty() ? "<unset>" : s; }

json pvc_row(const json& pvc, TableClock::time_point now) {
  const json& spec = at(pvc, {"spec"});
  std::string phase = at(pvc, {"metadata", "deletionTimestamp"}).is_string() ? "Terminating" : text(pvc, {"status", "phase"});
  bool bound = !text(spec, {"volumeName"}).empty();
  std::string capacity = bound ? text(pvc, {"status", "capacity", "storage"}) : "";
  std::string modes = bound ? access_modes(items(pvc, {"status", "accessModes"})) : "";
  return row_of({text(pvc, {"metadata", "name"}), phase, text(spec, {"volumeName"}), capacity, modes, storage_class(pvc),
                 unset_if_empty(text(spec, {"volumeAttributesClassName"})), age(pvc, now),
                 unset_if_empty(text(spec, {"volumeMode"}))});
}

json pv_row(const json& pv, TableClock::time_point now) {
  const json& spec = at(pv, {"spec"});
  std::string claim;
  if (at(spec, {"claimRef"}).is_object()) claim = text(spec, {"claimRef", "namespace"}) + "/" + text(spec, {"claimRef", "name"});
  std::string phase = at(pv, {"metadata", "deletionTimestamp"}).is_string() ? "Terminating" : text(pv, {"status", "phase"});
  return row_of({text(pv, {"metadata", "name"}), text(spec, {"capacity", "storage"}),
                 access_modes(items(spec, {"accessModes"})), text(spec, {"persistentVolumeReclaimPolicy"}), phase, claim,
                 storage_class(pv), unset_if_empty(text(spec, {"volumeAttributesClassName"})),
                 text(pv, {"status", "reason"}), age(pv, now), unset_if_empty(text(spec, {"volumeMode"}))});
}

json replication_controller_row(const json& rc, TableClock::time_point now) {
  auto [names, images] = container_cells(at(rc, {"spec", "template", "spec"}));
  return row_of({text(rc, {"metadata", "name"}), integer(rc, {"spec", "replicas"}), integer(rc, {"status", "replicas"}),
                 integer(rc, {"status", "readyReplicas"}), age(rc, now), names, images,
                 format_labels(at(rc, {"spec", "selector"}))});
}

// ---- apps/v1, batch/v1, networking, coordination ----

json deployment_row(const json& d, TableClock::time_point now) {
  auto [names, images] = container_cells(at(d, {"spec", "template", "spec"}));
  return row_of({text(d, {"metadata", "name"}),
                 std::to_string(integer(d, {"status", "readyReplicas"})) + "/" + std::to_string(integer(d, {"spec", "replicas"})),
                 integer(d, {"status", "updatedReplicas"}), integer(d, {"status", "availableReplicas"}), age(d, now), names,
                 images, label_selector_text(at(d, {"spec", "selector"}))});
}

json replica_set_row(const json& rs, TableClock::time_point now) {
  auto [names, images] = container_cells(at(rs, {"spec", "template", "spec"}));
  return row_of({text(rs, {"metadata", "name"}), integer(rs, {"spec", "replicas"}), integer(rs, {"status", "replicas"}),
                 integer(rs, {"status", "readyReplicas"}), age(rs, now), names, images,
                 or_none(label_selector_text(at(rs, {"spec", "selector"})))});
}

json stateful_set_row(const json& sts, TableClock::time_point now) {
  auto [names, images] = container_cells(at(sts, {"spec", "template", "spec"}));
  return row_of({text(sts, {"metadata", "name"}),
                 std::to_string(integer(sts, {"status", "readyReplicas"})) + "/" + std::to_string(integer(sts, {"spec", "replicas"})),
                 age(sts, now), names, images});
}

json daemon_set_row(const json& ds, TableClock::time_point now) {
  const json& status = at(ds, {"status"});
  auto [names, images] = container_cells(at(ds, {"spec", "template", "spec"}));
  return row_of({text(ds, {"metadata", "name"}), integer(status, {"desiredNumberScheduled"}),
                 integer(status, {"currentNumberScheduled"}), integer(status, {"numberReady"}),
                 integer(status, {"updatedNumberScheduled"}), integer(status, {"numberAvailable"}),
                 format_labels(at(ds, {"spec", "template", "spec", "nodeSelector"})), age(ds, now), names, images,
                 or_none(label_selector_text(at(ds, {"spec", "selector"})))});
}

json job_row(const json& job, TableClock::time_point now) {
  const json& spec = at(job, {"spec"});
  const json& status = at(job, {"status"});
  auto succeeded = std::to_string(integer(status, {"succeeded"}));
  std::string completions;
  if (at(spec, {"completions"}).is_number()) completions = succeeded + "/" + std::to_string(integer(spec, {"completions"}));
  else if (integer(spec, {"parallelism"}) > 1) completions = succeeded + "/1 of " + std::to_string(integer(spec, {"parallelism"}));
  else completions = succeeded + "/1";
  std::string duration;
  if (auto start = parse_time(at(status, {"startTime"}))) {
    auto end = parse_time(at(status, {"completionTime"})).value_or(now);
    duration = human_duration(std::chrono::duration_cast<std::chrono::seconds>(end - *start));
  }
  std::string state = "Running";
  if (condition_true(status, "Complete")) state = "Complete";
  else if (condition_true(status, "Failed")) state = "Failed";
  else if (at(job, {"metadata", "deletionTimestamp"}).is_string()) state = "Terminating";
  else if (condition_true(status, "Suspended")) state = "Suspended";
  else if (condition_true(status, "FailureTarget")) state = "FailureTarget";
  auto [names, images] = container_cells(at(spec, {"template", "spec"}));
  return row_of({text(job, {"metadata", "name"}), state, completions, duration, age(job, now), names, images,
                 or_none(label_selector_text(at(spec, {"selector"})))});
}

json cron_job_row(const json& cj, TableClock::time_point now) {
  const json& spec = at(cj, {"spec"});
  const json& suspend = at(spec, {"suspend"});
  const json& last = at(cj, {"status", "lastScheduleTime"});
  const json& job_spec = at(spec, {"jobTemplate", "spec"});
  auto [names, images] = container_cells(at(job_spec, {"template", "spec"}));
  return row_of({text(cj, {"metadata", "name"}), text(spec, {"schedule"}), or_none(text(spec, {"timeZone"})),
                 suspend.is_boolean() ? (suspend.get<bool>() ? "True" : "False") : "<unset>",
                 static_cast<std::int64_t>(count(cj, {"status", "active"})), last.is_string() ? age_of(last, now) : "<none>",
                 age(cj, now), names, images, or_none(label_selector_text(at(job_spec, {"selector"})))});
}

json ingress_row(const json& ing, TableClock::time_point now) {
  const json& spec = at(ing, {"spec"});
  constexpr std::size_t shown = 3;
  std::vector<std::string> hosts;
  const json& rules = items(spec, {"rules"});
  for (const auto& r : rules)
    if (auto h = text(r, {"host"}); !h.empty() && hosts.size() < shown) hosts.push_back(h);
  std::string host_cell = hosts.empty() ? "*" : joined(hosts);
  if (rules.size() > shown && !hosts.empty()) host_cell += " + " + std::to_string(rules.size() - shown) + " more...";
  std::set<std::string> addresses;
  for (const auto& i : items(ing, {"status", "loadBalancer", "ingress"})) {
    if (auto ip = text(i, {"ip"}); !ip.empty()) addresses.insert(ip);
    else if (auto host = text(i, {"hostname"}); !host.empty()) addresses.insert(host);
  }
  return row_of({text(ing, {"metadata", "name"}), or_none(text(spec, {"ingressClassName"})), host_cell,
                 joined({addresses.begin(), addresses.end()}), count(spec, {"tls"}) ? "80, 443" : "80", age(ing, now)});
}

json lease_row(const json& lease, TableClock::time_point now) {
  return row_of({text(lease, {"metadata", "name"}), text(lease, {"spec", "holderIdentity"}), age(lease, now)});
}

TableColumn containers_column() {
  return column("Containers", "string", "Names of each container in the template.", 1);
}
TableColumn images_column() { return column("Images", "string", "Images referenced by each container in the template.", 1); }
TableColumn selector_column(int priority = 1) {
  return column("Selector", "string", "The label selector of the pods it manages.", priority);
}

const std::map<std::string, BuiltinPrinter>& printers() {
  static const std::map<std::string, BuiltinPrinter> all = {
      {"/pods",
       {{name_column(), column("Ready", "string", "Ready containers out of all containers."),
         column("Status", "string", "The aggregate status of the pod's containers."),
         column("Restarts", "string", "Container restarts, and how long ago the last one was."), age_column(),
         column("IP", "string", "The pod's first IP address.", 1), column("Node", "string", "The node it is bound to.", 1),
         column("Nominated Node", "string", "The node the scheduler nominated for it.", 1),
         column("Readiness Gates", "string", "Readiness gates that are met out of all.", 1)},
        pod_row}},
      {"/services",
       {{name_column(), column("Type", "string", "ClusterIP, NodePort, LoadBalancer or ExternalName."),
         column("Cluster-IP", "string", "The virtual IP inside the cluster."),
         column("External-IP", "string", "External IPs and load-balancer addresses."),
         column("Port(s)", "string", "The service's ports (port[:nodePort]/protocol)."), age_column(),
         column("Selector", "string", "The labels of the pods it routes to.", 1)},
        service_row}},
      {"/configmaps", {{name_column(), column("Data", "string", "The number of data and binaryData entries."), age_column()}, config_map_row}},
      {"/secrets",
       {{name_column(), column("Type", "string", "The secret's type."), column("Data", "string", "The number of data entries."),
         age_column()},
        secret_row}},
      {"/namespaces", {{name_column(), column("Status", "string", "The namespace's phase."), age_column()}, namespace_row}},
      {"/serviceaccounts",
       {{name_column(), column("Secrets", "string", "The number of secrets listed."), age_column()}, service_account_row}},
      {"/nodes",
       {{name_column(), column("Status", "string", "The status of the node"), column("Roles", "string", "The roles of the node"),
         age_column(), column("Version", "string", "The kubelet's version."),
         column("Internal-IP", "string", "The node's internal IP.", 1), column("External-IP", "string", "The node's external IP.", 1),
         column("OS-Image", "string", "The node's OS image.", 1), column("Kernel-Version", "string", "The node's kernel.", 1),
         column("Container-Runtime", "string", "The node's container runtime.", 1)},
        node_row}},
      {"/events",
       {{column("Last Seen", "string", "The time since it was last seen."), column("Type", "string", "Normal or Warning."),
         column("Reason", "string", "Why it happened."), column("Object", "string", "The object it is about."),
         column("Subobject", "string", "The part of the object it is about.", 1),
         column("Source", "string", "The component that reported it.", 1), column("Message", "string", "What happened."),
         column("First Seen", "string", "The time since it was first seen.", 1),
         column("Count", "string", "How often it happened.", 1), TableColumn{"Name", "string", "name", "The event's name.", 1}},
        event_row}},
      {"/endpoints", {{name_column(), column("Endpoints", "string", "The first addresses (ip:port)."), age_column()}, endpoints_row}},
      {"/persistentvolumeclaims",
       {{name_column(), column("Status", "string", "The claim's phase."), column("Volume", "string", "The bound volume."),
         column("Capacity", "string", "The bound volume's capacity."), column("Access Modes", "string", "The access modes."),
         column("StorageClass", "string", "StorageClass of the pvc"),
         column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"), age_column(),
         column("VolumeMode", "string", "Filesystem or Block.", 1)},
        pvc_row}},
      {"/persistentvolumes",
       {{name_column(), column("Capacity", "string", "The volume's capacity."), column("Access Modes", "string", "The access modes."),
         column("Reclaim Policy", "string", "What happens when the claim is released."),
         column("Status", "string", "The volume's phase."), column("Claim", "string", "The bound claim."),
         column("StorageClass", "string", "StorageClass of the pv"),
         column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
         column("Reason", "string", "Why it is in this phase."), age_column(),
         column("VolumeMode", "string", "Filesystem or Block.", 1)},
        pv_row}},
      {"/replicationcontrollers",
       {{name_column(), column("Desired", "integer", "The desired replicas."), column("Current", "integer", "The current replicas."),
         column("Ready", "integer", "The ready replicas."), age_column(), containers_column(), images_column(), selector_column()},
        replication_controller_row}},
      {"apps/deployments",
       {{name_column(), column("Ready", "string", "Ready replicas out of the desired ones."),
         column("Up-to-date", "string", "Replicas of the newest template."),
         column("Available", "string", "Replicas available to serve."), age_column(), containers_column(), images_column(),
         selector_column()},
        deployment_row}},
      {"apps/replicasets",
       {{name_column(), column("Desired", "integer", "The desired replicas."), column("Current", "integer", "The current replicas."),
         column("Ready", "integer", "The ready replicas."), age_column(), containers_column(), images_column(), selector_column()},
        replica_set_row}},
      {"apps/statefulsets",
       {{name_column(), column("Ready", "string", "Ready replicas out of the desired ones."), age_column(), containers_column(),
         images_column()},
        stateful_set_row}},
      {"apps/daemonsets",
       {{name_column(), column("Desired", "integer", "Nodes that should run the pod."),
         column("Current", "integer", "Nodes that run the pod."), column("Ready", "integer", "Nodes where it is ready."),
         column("Up-to-date", "integer", "Nodes that run the newest template."),
         column("Available", "integer", "Nodes where it is available."),
         column("Node Selector", "string", "The template's node selector."), age_column(), containers_column(),
         images_column(), selector_column()},
        daemon_set_row}},
      {"batch/jobs",
       {{name_column(), column("Status", "string", "Status of the job."),
         column("Completions", "string", "Succeeded pods out of the completions wanted."),
         column("Duration", "string", "Time required to complete the job."), age_column(), containers_column(),
         images_column(), selector_column()},
        job_row}},
      {"batch/cronjobs",
       {{name_column(), column("Schedule", "string", "The cron schedule."), column("Timezone", "string", "The schedule's time zone."),
         column("Suspend", "boolean", "Whether new runs are suspended."), column("Active", "integer", "Jobs running now."),
         column("Last Schedule", "string", "The time since the last run was scheduled."), age_column(), containers_column(),
         images_column(), selector_column()},
        cron_job_row}},
      {"networking.k8s.io/ingresses",
       {{name_column(),
         column("Class", "string", "The name of the IngressClass resource that should be used for additional configuration"),
         column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
         column("Address", "string", "Address is a list containing ingress points for the load-balancer"),
         column("Ports", "string", "Ports of TLS configurations that open"), age_column()},
        ingress_row}},
      {"coordination.k8s.io/leases",
       {{name_column(), column("Holder", "string", "The identity of the holder."), age_column()}, lease_row}},
  };
  return all;
}

}  // namespace

const BuiltinPrinter* builtin_printer(const ResourceType& type) {
  if (!type.builtin) return nullptr;
  auto it = printers().find(type.group + "/" + type.plural);
  return it == printers().end() ? nullptr : &it->second;
}


}  // namespace kinformer::apiserver
