#include "apiserver/defaults.hpp"

#include <nlohmann/json.hpp>

#include "apiserver/schema.hpp"
#include "apiserver/schema_defaults.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

// Go's "nil pointer": absent or null.
bool unset(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null();
}

// Go's zero string: absent, null or "".
bool unset_string(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() || (it->is_string() && it->get_ref<const std::string&>().empty());
}

// Go's zero number: absent, null or 0.
bool unset_number(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() || (it->is_number() && it->get<double>() == 0);
}

void fill(json& object, const char* key, json value) {
  if (object.is_object() && unset(object, key)) object[key] = std::move(value);
}

void fill_string(json& object, const char* key, const char* value) {
  if (object.is_object() && unset_string(object, key)) object[key] = value;
}

// The object at `key`, created when absent (a Go struct value or a defaulted
// pointer); nullptr when it holds something else, which validation reports.
json* member(json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  json& child = object[key];
  if (child.is_null()) child = json::object();
  return child.is_object() ? &child : nullptr;
}

// The object at `key` only when it is there.
json* present(json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? &*it : nullptr;
}

// The elements of an array member that are objects.
template <class F>
void each(json& object, const char* key, F&& f) {
  if (!object.is_object()) return;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return;
  for (auto& element : *it)
    if (element.is_object()) f(element);
}

void http_get(json& handler) {
  if (json* get = present(handler, "httpGet")) {
    fill_string(*get, "path", "/");
    fill_string(*get, "scheme", "HTTP");
  }
}

void probe(json& container, const char* key) {
  json* p = present(container, key);
  if (!p) return;
  for (auto [field, value] : {std::pair{"timeoutSeconds", 1}, std::pair{"periodSeconds", 10},
                              std::pair{"successThreshold", 1}, std::pair{"failureThreshold", 3}})
    if (unset_number(*p, field)) (*p)[field] = value;
  http_get(*p);
}

void container_defaults(json& c) {
  if (unset_string(c, "imagePullPolicy")) {
    auto image = c.find("image");
    c["imagePullPolicy"] = default_pull_policy(image != c.end() && image->is_string() ? image->get<std::string>() : "");
  }
  fill_string(c, "terminationMessagePath", "/dev/termination-log");
  fill_string(c, "terminationMessagePolicy", "File");
  each(c, "ports", [](json& port) { fill_string(port, "protocol", "TCP"); });
  for (const char* p : {"livenessProbe", "readinessProbe", "startupProbe"}) probe(c, p);
  if (json* lifecycle = present(c, "lifecycle"))
    for (const char* hook : {"postStart", "preStop"})
      if (json* handler = present(*lifecycle, hook)) http_get(*handler);
  each(c, "env", [](json& env) {
    if (json* from = present(env, "valueFrom"))
      if (json* field = present(*from, "fieldRef")) fill_string(*field, "apiVersion", "v1");
  });
}

void volume_defaults(json& volume) {
  bool has_source = false;
  for (auto it = volume.begin(); it != volume.end(); ++it)
    if (it.key() != "name" && !it.value().is_null()) has_source = true;
  if (!has_source) volume["emptyDir"] = json::object();
  for (const char* source : {"configMap", "secret", "projected", "downwardAPI"})
    if (json* s = present(volume, source)) fill(*s, "defaultMode", 420);
}

void pod_spec_defaults(json& spec) {
  fill_string(spec, "dnsPolicy", "ClusterFirst");
  fill_string(spec, "restartPolicy", "Always");
  fill(spec, "securityContext", json::object());
  fill(spec, "terminationGracePeriodSeconds", 30);
  fill_string(spec, "schedulerName", "default-scheduler");
  each(spec, "containers", container_defaults);
  each(spec, "initContainers", container_defaults);
  each(spec, "volumes", volume_defaults);
}

void template_defaults(json& owner) {
  if (json* tmpl = member(owner, "template"))
    if (json* spec = member(*tmpl, "spec")) pod_spec_defaults(*spec);
}

// What SetDefaults_Pod adds beyond a template's defaults.
void pod_defaults(json& pod) {
  json* spec = member(pod, "spec");
  if (!spec) return;
  pod_spec_defaults(*spec);
  fill(*spec, "enableServiceLinks", true);
  auto requests_from_limits = [](json& c) {
    json* resources = present(c, "resources");
    json* limits = resources ? present(*resources, "limits") : nullptr;
    if (!limits || limits->empty()) return;
    json* requests = member(*resources, "requests");
    if (!requests) return;
    for (auto it = limits->begin(); it != limits->end(); ++it)
      if (!requests->contains(it.key())) (*requests)[it.key()] = it.value();
  };
  each(*spec, "containers", requests_from_limits);
  each(*spec, "initContainers", requests_from_limits);
  if (spec->value("hostNetwork", json(false)) == true) {
    auto host_ports = [](json& c) {
      each(c, "ports", [](json& port) {
        if (unset_number(port, "hostPort") && port.contains("containerPort")) port["hostPort"] = port["containerPort"];
      });
    };
    each(*spec, "containers", host_ports);
    each(*spec, "initContainers", host_ports);
  }
}

void deployment_defaults(json& d) {
  json* spec = member(d, "spec");
  if (!spec) return;
  fill(*spec, "replicas", 1);
  if (json* strategy = member(*spec, "strategy")) {
    fill_string(*strategy, "type", "RollingUpdate");
    if ((*strategy)["type"] == "RollingUpdate")
      if (json* rolling = member(*strategy, "rollingUpdate")) {
        fill(*rolling, "maxUnavailable", "25%");
        fill(*rolling, "maxSurge", "25%");
      }
  }
  fill(*spec, "revisionHistoryLimit", 10);
  fill(*spec, "progressDeadlineSeconds", 600);
  template_defaults(*spec);
}

void replica_set_defaults(json& rs) {
  if (json* spec = member(rs, "spec")) {
    fill(*spec, "replicas", 1);
    template_defaults(*spec);
  }
}

void replication_controller_defaults(json& rc) {
  json* spec = member(rc, "spec");
  if (!spec) return;
  fill(*spec, "replicas", 1);
  json* tmpl = present(*spec, "template");
  if (!tmpl) return;
  if (json* meta = present(*tmpl, "metadata"); meta && meta->contains("labels") && (*meta)["labels"].is_object()) {
    const json& labels = (*meta)["labels"];
    if (unset(*spec, "selector") || ((*spec)["selector"].is_object() && (*spec)["selector"].empty()))
      (*spec)["selector"] = labels;
    if (json* own = member(rc, "metadata"); own && (unset(*own, "labels") || ((*own)["labels"].is_object() && (*own)["labels"].empty())))
      (*own)["labels"] = labels;
  }
  if (json* pod_spec = member(*tmpl, "spec")) pod_spec_defaults(*pod_spec);
}

void stateful_set_defaults(json& sts) {
  json* spec = member(sts, "spec");
  if (!spec) return;
  fill(*spec, "replicas", 1);
  fill_string(*spec, "podManagementPolicy", "OrderedReady");
  if (json* strategy = member(*spec, "updateStrategy")) {
    fill_string(*strategy, "type", "RollingUpdate");
    if ((*strategy)["type"] == "RollingUpdate")
      if (json* rolling = member(*strategy, "rollingUpdate")) fill(*rolling, "partition", 0);
  }
  fill(*spec, "revisionHistoryLimit", 10);
  if (json* retention = member(*spec, "persistentVolumeClaimRetentionPolicy")) {
    fill_string(*retention, "whenDeleted", "Retain");
    fill_string(*retention, "whenScaled", "Retain");
  }
  each(*spec, "volumeClaimTemplates", [](json& claim) {
    if (json* claim_spec = member(claim, "spec")) fill_string(*claim_spec, "volumeMode", "Filesystem");
  });
  template_defaults(*spec);
}

void daemon_set_defaults(json& ds) {
  json* spec = member(ds, "spec");
  if (!spec) return;
  if (json* strategy = member(*spec, "updateStrategy")) {
    fill_string(*strategy, "type", "RollingUpdate");
    if ((*strategy)["type"] == "RollingUpdate")
      if (json* rolling = member(*strategy, "rollingUpdate")) {
        fill(*rolling, "maxUnavailable", 1);
        fill(*rolling, "maxSurge", 0);
      }
  }
  fill(*spec, "revisionHistoryLimit", 10);
  template_defaults(*spec);
}

void job_defaults(json& job) {
  json* spec = member(job, "spec");
  if (!spec) return;
  if (unset(*spec, "completions") && unset(*spec, "parallelism")) {
    (*spec)["completions"] = 1;
    (*spec)["parallelism"] = 1;
  }
  fill(*spec, "parallelism", 1);
  if (unset(*spec, "backoffLimit"))
    (*spec)["backoffLimit"] = unset(*spec, "backoffLimitPerIndex") ? 6 : 2147483647;  // per-index limits replace the global one
  fill_string(*spec, "completionMode", "NonIndexed");
  fill(*spec, "suspend", false);
  fill_string(*spec, "podReplacementPolicy", unset(*spec, "podFailurePolicy") ? "TerminatingOrFailed" : "Failed");
  template_defaults(*spec);
}

void cron_job_defaults(json& cj) {
  json* spec = member(cj, "spec");
  if (!spec) return;
  fill_string(*spec, "concurrencyPolicy", "Allow");
  fill(*spec, "suspend", false);
  fill(*spec, "successfulJobsHistoryLimit", 3);
  fill(*spec, "failedJobsHistoryLimit", 1);
  if (json* job_template = member(*spec, "jobTemplate"))
    if (json* job_spec = member(*job_template, "spec")) template_defaults(*job_spec);
}

void service_defaults(json& svc) {
  json* spec = member(svc, "spec");
  if (!spec) return;
  fill_string(*spec, "type", "ClusterIP");
  fill_string(*spec, "sessionAffinity", "None");
  if ((*spec)["sessionAffinity"] == "ClientIP")
    if (json* config = member(*spec, "sessionAffinityConfig"))
      if (json* client_ip = member(*config, "clientIP")) fill(*client_ip, "timeoutSeconds", 10800);
  each(*spec, "ports", [](json& port) {
    fill_string(port, "protocol", "TCP");
    auto target = port.find("targetPort");
    if ((target == port.end() || target->is_null() || *target == 0 || *target == "") && port.contains("port"))
      port["targetPort"] = port["port"];
  });
  const json& type = (*spec)["type"];
  if (type != "ExternalName") fill_string(*spec, "internalTrafficPolicy", "Cluster");
  if (type == "NodePort" || type == "LoadBalancer") fill_string(*spec, "externalTrafficPolicy", "Cluster");
  if (type == "LoadBalancer") fill(*spec, "allocateLoadBalancerNodePorts", true);
}

void namespace_defaults(json& ns) {
  json* meta = member(ns, "metadata");
  if (!meta) return;
  auto name = meta->find("name");
  if (name == meta->end() || !name->is_string() || name->get_ref<const std::string&>().empty()) return;
  if (json* labels = member(*meta, "labels")) (*labels)["kubernetes.io/metadata.name"] = *name;
}

using Defaulter = void (*)(json&);

Defaulter builtin_defaulter(const ResourceType& type) {
  static const std::pair<const char*, Defaulter> table[] = {
      {"/pods", pod_defaults},
      {"/services", service_defaults},
      {"/namespaces", namespace_defaults},
      {"/replicationcontrollers", replication_controller_defaults},
      {"/endpoints",
       [](json& ep) {
         each(ep, "subsets", [](json& subset) { each(subset, "ports", [](json& p) { fill_string(p, "protocol", "TCP"); }); });
       }},
      {"/persistentvolumeclaims",
       [](json& pvc) {
         if (json* spec = member(pvc, "spec")) fill_string(*spec, "volumeMode", "Filesystem");
       }},
      {"/persistentvolumes",
       [](json& pv) {
         if (json* spec = member(pv, "spec")) {
           fill_string(*spec, "persistentVolumeReclaimPolicy", "Retain");
           fill_string(*spec, "volumeMode", "Filesystem");
         }
       }},
      {"apps/deployments", deployment_defaults},
      {"apps/replicasets", replica_set_defaults},
      {"apps/statefulsets", stateful_set_defaults},
      {"apps/daemonsets", daemon_set_defaults},
      {"batch/jobs", job_defaults},
      {"batch/cronjobs", cron_job_defaults},
  };
  const std::string key = type.group + "/" + type.plural;
  for (const auto& [name, defaulter] : table)
    if (key == name) return defaulter;
  return nullptr;
}

}  // namespace

const char* default_pull_policy(const std::string& image) {
  auto at = image.find('@');
  bool digest = at != std::string::npos;
  std::string name = digest ? image.substr(0, at) : image;
  auto slash = name.rfind('/');
  auto colon = name.find(':', slash == std::string::npos ? 0 : slash + 1);
  std::string tag = colon == std::string::npos ? std::string(digest ? "" : "latest") : name.substr(colon + 1);
  return tag == "latest" ? "Always" : "IfNotPresent";
}

void apply_defaults(const ResourceRegistry& registry, const ResourceType& type, json& object) {
  if (!object.is_object()) return;
  if (type.builtin) {
    if (auto defaulter = builtin_defaulter(type)) defaulter(object);
    return;
  }
  if (auto schema = registry.schema(&type)) apply_schema_defaults(schema->document(), object);
}

}  // namespace kinformer::apiserver
