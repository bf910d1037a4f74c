// examples/pod_logger.cpp
//
// The project's acceptance check: an informer on pods over HTTP whose handler
// logs every change, e.g.
//
//   build/bin/pod_logger --server http://127.0.0.1:8080 &
//   kubectl --server http://127.0.0.1:8080 apply -f examples/manifests/nginx-pod.yaml
//   → ADD event for default/nginx-pod
//   kubectl --server http://127.0.0.1:8080 label pod nginx-pod tier=web
//   → UPDATE event for default/nginx-pod
//   kubectl --server http://127.0.0.1:8080 delete pod nginx-pod
//   → DELETE event for default/nginx-pod
//
// Against a real cluster: --kubeconfig FILE [--context NAME] (or neither: $KUBECONFIG,
// ~/.kube/config, then the in-cluster service account). Runs until SIGINT/SIGTERM,
// or for --duration seconds.
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "actors/errors.hpp"
#include "actors/scheduler.hpp"
#include "actors/shared_informer.hpp"
#include "runtime/http/http_list_watch.hpp"
#include "runtime/http/kubeconfig.hpp"
#include "runtime/stop_signals.hpp"

namespace {

constexpr const char* usage =
    "usage: pod_logger [--server URL [--token-file FILE] | --kubeconfig FILE [--context NAME]]\n"
    "                  [--namespace NS] [--resource PLURAL] [--duration SECONDS]\n"
    "Logs ADD/UPDATE/DELETE events of pods (or another core/v1 resource such as\n"
    "configmaps), in all namespaces unless --namespace.\n";

void say(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  kinformer::http::ServerFlags flags;
  std::string namespace_, resource = "pods";
  long duration = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage, stdout);
      return 0;
    } else if (has_value && flags.take(arg, argv[i + 1])) {
      ++i;
    } else if (arg == "--namespace" && has_value) {
      namespace_ = argv[++i];
    } else if (arg == "--resource" && has_value) {
      resource = argv[++i];
    } else if (arg == "--duration" && has_value) {
      duration = std::strtol(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "pod_logger: bad or incomplete option '%s'\n%s", argv[i], usage);
      return 2;
    }
  }

  // --server, else the kubeconfig, else in-cluster (runtime/http/kubeconfig.hpp)
  auto config = kinformer::http::client_config_from(flags);
  if (!config) {
    std::fprintf(stderr, "pod_logger: %s\n", config.error().message.c_str());
    return 1;
  }
  auto client = kinformer::http::Client::create(config.value());
  if (!client) {
    std::fprintf(stderr, "pod_logger: %s\n", client.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "pod_logger: watching %s on %s\n", resource.c_str(), config->describe().c_str());

  // Block the stop signals before any thread starts, so only the wait below sees them.
  const kinformer::StopSignals stop_signals;

  caf::actor_system_config cfg;
  kinformer::actors::configure_scheduler(cfg);
  kinformer::actors::register_errors(cfg);
  caf::actor_system system{cfg};
  kinformer::SharedInformerOptions options;
  options.source = std::make_shared<kinformer::http::HttpListWatch>(
      client.value(), kinformer::http::collection_path("", "v1", resource, namespace_));
  kinformer::SharedInformer informer(system, options);
  (void)informer.set_watch_error_handler([](const kinformer::Error& e) {
    std::fprintf(stderr, "pod_logger: watch error, recovering: %s\n", e.to_string().c_str());
  });
  kinformer::HandlerFuncs funcs;
  funcs.on_add = [](const kinformer::ObjectPtr& pod, bool) {
    say("ADD event for " + std::string(pod->key()));
  };
  funcs.on_update = [](const kinformer::ObjectPtr& old_pod, const kinformer::ObjectPtr& pod) {
    if (old_pod->resource_version() != pod->resource_version())
      say("UPDATE event for " + std::string(pod->key()));
  };
  funcs.on_delete = [](const kinformer::DeletedObject& deleted) {
    say("DELETE event for " + std::string(deleted.key()));
  };
  if (!informer.add_handler(funcs)) return 1;
  informer.run();
  if (informer.wait_for_sync(std::chrono::seconds(30)))
    std::fprintf(stderr, "pod_logger: synced, %zu %s in the cache\n", informer.indexer().size(),
                 resource.c_str());
  else
    std::fprintf(stderr, "pod_logger: not synced after 30 s; still trying\n");

  if (duration > 0) (void)stop_signals.wait_for(std::chrono::seconds(duration));
  else (void)stop_signals.wait();
  informer.stop();
  std::fprintf(stderr, "pod_logger: stopped\n");
  return 0;
}
