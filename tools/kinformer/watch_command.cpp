// kinformer watch: runs a full informer (Reflector → DeltaFIFO → Controller →
// Indexer → Processor → one handler) on a cluster or the embedded API server and
// prints every ADDED / UPDATED / DELETED with its key, resourceVersion and, for
// updates, the fields that changed. SIGINT / SIGTERM stop it with a summary:
// events by type, relists, and the cache's size.
//   kinformer watch pods --server http://127.0.0.1:8080 -n default -l app=web
//   kinformer watch configmaps --kubeconfig ~/.kube/config --context kind-kind -o json
// Events go to stdout, one per line; diagnostics to stderr (runtime/log.hpp).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <nlohmann/json.hpp>

#include "actors/errors.hpp"
#include "actors/scheduler.hpp"
#include "actors/shared_informer.hpp"
#include "runtime/http/client.hpp"
#include "runtime/http/http_list_watch.hpp"
#include "runtime/http/kubeconfig.hpp"
#include "runtime/log.hpp"
#include "runtime/metrics.hpp"
#include "runtime/metrics_server.hpp"
#include "runtime/selector.hpp"
#include "runtime/stop_signals.hpp"
#include "tools/kinformer/command.hpp"

namespace {

using nlohmann::json;

constexpr const char* watch_usage =
    "usage: kinformer watch RESOURCE [options]\n"
    "\n"
    "Runs an informer on RESOURCE and prints each ADDED, UPDATED and DELETED with its key,\n"
    "resourceVersion and (updates) the fields that changed, until SIGINT or SIGTERM; then a\n"
    "summary: events by type, relists, cache size.\n"
    "\n"
    "RESOURCE: pods, configmaps, services, secrets, events, namespaces, nodes, deployments,\n"
    "  replicasets, statefulsets, daemonsets, or GROUP/VERSION/PLURAL (v1/PLURAL for the core group)\n"
    "\n"
    "options:\n"
    "  -n, --namespace NS     only this namespace (default: every namespace)\n"
    "  -l, --selector SEL     label selector, e.g. app=web,tier!=db\n"
    "  --server URL           the API server (e.g. the embedded one: http://127.0.0.1:8080)\n"
    "  --token-file FILE      bearer token for --server\n"
    "  --kubeconfig FILE      read the server and credentials from FILE (default: $KUBECONFIG,\n"
    "                         ~/.kube/config, else the in-cluster service account)\n"
    "  --context NAME         the kubeconfig context (default: its current-context)\n"
    "  -o, --output FORMAT    line (default) or json (one object per line)\n"
    "  --metrics-port N       serve the informer's /metrics, /healthz, /readyz on 127.0.0.1:N\n"
    "                         (0 picks a free port; logged on stderr)\n"
    "  --log-level LEVEL      trace, debug, info (default), warn, error or off\n"
    "  --help                 this text\n";

struct Target {
  std::string group, version, plural;
  bool namespaced = true;
};

bool resolve(const std::string& name, Target& out) {
  static const std::map<std::string, Target, std::less<>> known = {
      {"pods", {"", "v1", "pods", true}},
      {"configmaps", {"", "v1", "configmaps", true}},
      {"services", {"", "v1", "services", true}},
      {"secrets", {"", "v1", "secrets", true}},
      {"events", {"", "v1", "events", true}},
      {"namespaces", {"", "v1", "namespaces", false}},
      {"nodes", {"", "v1", "nodes", false}},
      {"deployments", {"apps", "v1", "deployments", true}},
      {"replicasets", {"apps", "v1", "replicasets", true}},
      {"statefulsets", {"apps", "v1", "statefulsets", true}},
      {"daemonsets", {"apps", "v1", "daemonsets", true}},
  };
  if (auto found = known.find(name); found != known.end()) return out = found->second, true;
  std::vector<std::string> parts;
  for (std::size_t at = 0;;) {
    auto slash = name.find('/', at);
    parts.push_back(name.substr(at, slash - at));
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  for (const auto& part : parts)
    if (part.empty()) return false;
  if (parts.size() == 2) return out = Target{"", parts[0], parts[1], true}, true;
  if (parts.size() == 3) return out = Target{parts[0], parts[1], parts[2], true}, true;
  return false;
}

// -- changed fields --

// Leaf paths of `value` ("spec.containers[0].image") with their values.
void flatten(const json& value, const std::string& path, std::map<std::string, json>& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [key, child] : value.items()) flatten(child, path.empty() ? key : path + "." + key, out);
  } else if (value.is_array() && !value.empty()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      flatten(value[i], path + "[" + std::to_string(i) + "]", out);
  } else {
    out[path] = value;
  }
}

// Paths whose value differs between the two objects; what the server changes on
// every write (resourceVersion, managedFields) is left out, and so are apiVersion
// and kind, which list items of built-in kinds omit.
std::vector<std::string> changed_fields(const kinformer::Object& before, const kinformer::Object& after) {
  auto a = json::parse(before.json(), nullptr, false);
  auto b = json::parse(after.json(), nullptr, false);
  if (a.is_discarded() || b.is_discarded()) return {"(unparsable)"};
  std::map<std::string, json> left, right;
  flatten(a, "", left);
  flatten(b, "", right);
  auto noise = [](const std::string& path) {
    return path == "apiVersion" || path == "kind" || path == "metadata.resourceVersion" ||
           path.rfind("metadata.managedFields", 0) == 0;
  };
  std::vector<std::string> out;
  for (const auto& [path, value] : left) {
    auto found = right.find(path);
    if (!noise(path) && (found == right.end() || found->second != value)) out.push_back(path);
  }
  for (const auto& [path, value] : right)
    if (!noise(path) && left.count(path) == 0) out.push_back(path);
  std::sort(out.begin(), out.end());
  return out;
}

// -- printing --

class Printer {
 public:
  explicit Printer(bool as_json) : json_(as_json) {}

  void event(const char* type, std::string_view key, std::string_view rv, bool initial,
             const std::vector<std::string>* changed, bool tombstone) {
    std::string line;
    if (json_) {
      json out = {{"type", type}, {"key", key}, {"rv", rv}};
      if (initial) out["initial"] = true;
      if (tombstone) out["tombstone"] = true;
      if (changed) out["changed"] = *changed;
      line = out.dump();
    } else {
      line = std::string(type) + std::string(8 - std::char_traits<char>::length(type), ' ') +
             std::string(key) + " rv=" + (rv.empty() ? "?" : std::string(rv));
      if (initial) line += " (initial list)";
      if (tombstone) line += " (final state unknown)";
      if (changed) {
        line += " changed=";
        for (std::size_t i = 0; i < changed->size(); ++i) line += (i ? "," : "") + (*changed)[i];
        if (changed->empty()) line += "(nothing but resourceVersion)";
      }
    }
    write(line);
  }

  void summary(std::uint64_t added, std::uint64_t updated, std::uint64_t deleted, std::uint64_t relists,
               std::size_t cache) {
    if (json_) {
      write(json{{"summary",
                  {{"added", added},
                   {"updated", updated},
                   {"deleted", deleted},
                   {"relists", relists},
                   {"cache", cache}}}}
                .dump());
    } else {
      write("summary: added=" + std::to_string(added) + " updated=" + std::to_string(updated) +
            " deleted=" + std::to_string(deleted) + " relists=" + std::to_string(relists) +
            " cache=" + std::to_string(cache));
    }
  }

 private:
  // One write and flush per line, so a pipe reader sees each event as it happens.
  void write(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }

  bool json_;
  std::mutex mu_;  // lines from the handler thread and the main thread do not interleave
};

bool parse_port(const char* text, std::uint16_t& out) {
  char* end = nullptr;
  long n = std::strtol(text, &end, 10);
  if (!end || *end != '\0' || n < 0 || n > 65535) return false;
  out = static_cast<std::uint16_t>(n);
  return true;
}

int run_watch(int argc, char** argv) {
  kinformer::http::ServerFlags flags;
  std::string resource, namespace_, selector, output = "line";
  bool serve_metrics = false;
  std::uint16_t metrics_port = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      std::fputs(watch_usage, stdout);
      return 0;
    } else if ((arg == "-n" || arg == "--namespace") && has_value) {
      namespace_ = argv[++i];
    } else if ((arg == "-l" || arg == "--selector") && has_value) {
      selector = argv[++i];
    } else if (has_value && flags.take(arg, argv[i + 1])) {
      ++i;
    } else if ((arg == "-o" || arg == "--output") && has_value) {
      output = argv[++i];
    } else if (arg == "--metrics-port" && has_value && parse_port(argv[i + 1], metrics_port)) {
      serve_metrics = true;
      ++i;
    } else if (arg == "--log-level" && has_value) {
      kinformer::log::Level level;
      if (!kinformer::log::parse_level(argv[++i], level)) {
        kinformer::log::error("watch", "unknown --log-level", {{"level", argv[i]}});
        return 2;
      }
      kinformer::log::set_level(level);
    } else if (!arg.empty() && arg[0] != '-' && resource.empty()) {
      resource = std::string(arg);
    } else {
      kinformer::log::error("watch", "bad or incomplete option", {{"option", arg}});
      std::fputs(watch_usage, stderr);
      return 2;
    }
  }
  Target target;
  if (resource.empty() || !resolve(resource, target)) {
    kinformer::log::error("watch", resource.empty() ? "no RESOURCE given" : "unknown RESOURCE",
                          {{"resource", resource}});
    std::fputs(watch_usage, stderr);
    return 2;
  }
  if (output != "line" && output != "json") {
    kinformer::log::error("watch", "-o takes line or json", {{"output", output}});
    return 2;
  }
  if (!flags.server.empty() && (!flags.kubeconfig.empty() || !flags.context.empty())) {
    kinformer::log::error("watch", "--server and --kubeconfig/--context exclude each other");
    return 2;
  }
  if (!selector.empty()) {
    if (auto parsed = kinformer::LabelSelector::parse(selector); !parsed) {
      kinformer::log::error("watch", "bad label selector",
                            {{"selector", selector}, {"error", parsed.error().message}});
      return 2;
    }
  }

  auto config = kinformer::http::client_config_from(flags);
  if (!config) {
    kinformer::log::error("watch", "no server to watch", {{"error", config.error().message}});
    return 1;
  }

  // Block the stop signals before any thread starts, so only the wait below sees them.
  const kinformer::StopSignals stop_signals;
  auto client = kinformer::http::Client::create(config.value());
  if (!client) {
    kinformer::log::error("watch", "cannot make a client", {{"error", client.error().message}});
    return 1;
  }

  caf::actor_system_config cfg;
  kinformer::actors::configure_scheduler(cfg);
  kinformer::actors::register_errors(cfg);
  caf::actor_system system{cfg};
  kinformer::SharedInformerOptions options;
  options.source = std::make_shared<kinformer::http::HttpListWatch>(
      client.value(), kinformer::http::collection_path(target.group, target.version, target.plural,
                                                       target.namespaced ? namespace_ : ""));
  options.reflector.label_selector = selector;
  options.name = "watch";
  kinformer::SharedInformer informer(system, options);
  kinformer::log::info("watch", "watching",
                       {{"informer", informer.name()},
                        {"resource", target.plural},
                        {"namespace", namespace_.empty() ? "*" : namespace_},
                        {"selector", selector},
                        {"server", config->describe()}});

  Printer printer(output == "json");
  std::atomic<std::uint64_t> added{0}, updated{0}, deleted{0};
  kinformer::HandlerFuncs funcs;
  funcs.on_add = [&](const kinformer::ObjectPtr& object, bool initial) {
    ++added;
    printer.event("ADDED", object->key(), object->resource_version(), initial, nullptr, false);
  };
  funcs.on_update = [&](const kinformer::ObjectPtr& before, const kinformer::ObjectPtr& after) {
    ++updated;
    auto changed = changed_fields(*before, *after);
    printer.event("UPDATED", after->key(), after->resource_version(), false, &changed, false);
  };
  funcs.on_delete = [&](const kinformer::DeletedObject& gone) {
    ++deleted;
    const auto& last = gone.last_known();
    printer.event("DELETED", gone.key(), last ? last->resource_version() : std::string_view(), false, nullptr,
                  gone.is_tombstone());
  };
  kinformer::HandlerOptions handler_options;
  handler_options.name = "printer";
  if (auto handle = informer.add_handler(funcs, handler_options); !handle) {
    kinformer::log::error("watch", "cannot add the handler", {{"error", handle.error().message}});
    return 1;
  }
  kinformer::MetricsServer metrics({&kinformer::default_registry(), {}, "127.0.0.1", metrics_port});
  if (serve_metrics) {
    auto bound = metrics.start();
    if (!bound) {
      kinformer::log::error("watch", "cannot serve metrics", {{"error", bound.error().message}});
      return 1;
    }
    kinformer::log::info("watch", "serving metrics",
                         {{"url", "http://127.0.0.1:" + std::to_string(*bound) + "/metrics"}});
  }
  informer.run();

  // Wait for a stop signal, saying once when the cache has synced.
  bool said_synced = false;
  const char* signal_name = nullptr;
  while (!signal_name) {
    signal_name = stop_signals.wait_for(std::chrono::milliseconds(100));
    if (!said_synced && informer.has_synced()) {
      said_synced = true;
      kinformer::log::info(
          "watch", "synced",
          {{"informer", informer.name()}, {"resource", target.plural}, {"cache", informer.indexer().size()}});
    }
  }
  kinformer::log::info(
      "watch", "stopping",
      {{"signal", signal_name}, {"informer", informer.name()}});
  informer.stop();
  metrics.stop();
  printer.summary(added, updated, deleted, informer.metrics().relists(), informer.indexer().size());
  return 0;
}

const bool watch_registered = kinformer::cli::register_command(
    {"watch", "run an informer and print every change (key, resourceVersion, changed fields)", run_watch});

}  // namespace
