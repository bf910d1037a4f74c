// kinformer apiserver: runs the embedded Kubernetes-compatible API server until
// SIGINT/SIGTERM (apiserver/server.hpp). kubectl works against it:
//   kinformer apiserver --port 8080 &
//   kubectl --server http://127.0.0.1:8080 get pods
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "apiserver/server.hpp"
#include "apiserver/server_metrics.hpp"
#include "runtime/log.hpp"
#include "runtime/metrics.hpp"
#include "runtime/metrics_server.hpp"
#include "runtime/stop_signals.hpp"
#include "tools/kinformer/command.hpp"

namespace {

using kinformer::apiserver::ResourceRegistry;
using kinformer::apiserver::Server;
using kinformer::apiserver::ServerOptions;

constexpr const char* apiserver_usage =
    "usage: kinformer apiserver [options]\n"
    "\n"
    "Serves a Kubernetes-compatible API (namespaces, pods, configmaps, services, events and\n"
    "extra resources) from memory until SIGINT or SIGTERM. kubectl works against it:\n"
    "  kubectl --server http://127.0.0.1:PORT get pods\n"
    "\n"
    "options:\n"
    "  --port N               port to listen on (default 8080; 0 picks a free port)\n"
    "  --bind ADDRESS         address to bind (default 127.0.0.1; others only when given here)\n"
    "  --token-file FILE      require 'Authorization: Bearer <token>' with the token in FILE\n"
    "  --tls-cert FILE        serve HTTPS with this PEM certificate (needs --tls-key)\n"
    "  --tls-key FILE         the PEM private key for --tls-cert\n"
    "  --client-ca FILE       accept client certificates signed by this PEM CA as authentication\n"
    "                         (needs --tls-cert; a token from --token-file also still works)\n"
    "  --data-file FILE       keep objects durably in FILE (a snapshot) and FILE.wal-N (a write-ahead\n"
    "                         log): a write is answered only once fsynced; a crash loses no answered write\n"
    "  --wal-max-bytes N      compact the log into a new snapshot when it passes N bytes (default 64 MiB)\n"
    "  --repair               truncate the log at a corrupt record (dropping it and every later write)\n"
    "                         instead of refusing to start\n"
    "  --watch-history N      events kept for watch resumption (on etcd, per resource type); older\n"
    "                         resourceVersions get 410 (default 10000)\n"
    "  --etcd-endpoints URL[,URL...]  keep objects in etcd 3.4 (http://host:port, failover in order), so\n"
    "                         several servers share them; excludes --data-file\n"
    "  --etcd-prefix P        the etcd key prefix (default /registry): P/<resource>/<namespace>/<name>\n"
    "  --etcd-compaction-interval S  compact etcd's old revisions every S seconds (default 300; 0 = never)\n"
    "  --resource G/V/KIND/PLURAL   serve an extra namespaced resource, e.g.\n"
    "                         metrics.kinformer.io/v1/MetricSeries/metricseries (repeatable)\n"
    "  --resources-file FILE  one G/V/KIND/PLURAL per line ('#' comments)\n"
    "  --bookmark-interval S  seconds between watch bookmarks (default 60)\n"
    "  --threads N            I/O threads (default 2)\n"
    "  --log-requests         log one line per request (level info, on stderr: method and path;\n"
    "                         never credentials)\n"
    "  --metrics-port N       serve /metrics, /healthz and /readyz on this port (0 picks a free one;\n"
    "                         printed as the second stdout line); on the --bind address\n"
    "  --log-level LEVEL      trace, debug, info (default), warn, error or off; KINFORMER_LOG_LEVEL too\n"
    "  --help                 this text\n"
    "\n"
    "bounds (what one client can make the server hold; see the README's Security section):\n"
    "  --max-body-bytes N     request body limit; larger bodies get 413 (default 3145728)\n"
    "  --max-object-bytes N   one object after decoding or patching (YAML aliases, JSON Patch copies)\n"
    "                         may not exceed this serialized size: 413 (default 3145728)\n"
    "  --max-depth N          nesting limit of bodies and objects: 400/422 (default 256, at most 1000)\n"
    "  --max-patch-ops N      JSON Patch operations per request: 422 beyond (default 10000)\n"
    "  --request-cpu-ms N     CPU time any request may spend patching and validating: 413 beyond\n"
    "                         (default 100), plus --request-cpu-ns-per-byte per byte of its body\n"
    "                         and of the object it patches (default 1000)\n"
    "  --max-connections N    open connections; beyond it the one waiting longest for its request\n"
    "                         (idle, or with part of it sent) is closed, else the newcomer is\n"
    "                         (default 4096, and never more than the open-file limit minus 64)\n"
    "  --max-connections-per-client N  the same from one IP address (default 1024)\n"
    "  --max-full-state-watches N  open watches without a resourceVersion (each starts with every\n"
    "                         object); beyond it 429 with Retry-After: 1 (default 200)\n"
    "  --max-full-state-watches-per-client N  the same from one IP address (default 50)\n"
    "  --idle-timeout S       seconds a kept-alive connection may wait for its next request (default 90)\n"
    "  --header-timeout S     seconds for a request's header, or a TLS handshake, to arrive (default 30)\n"
    "  --read-timeout S       seconds for a request's body to arrive after its header (default 60)\n"
    "  --write-timeout S      seconds for each response write to complete (default 60; watches: 30)\n"
    "  --watch-history-bytes N  bytes of watch history kept, besides --watch-history events\n"
    "                         (default 268435456)\n";

bool parse_number(const char* text, unsigned long long max, unsigned long long& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(text, &end, 10);
  return end && *end == '\0' && errno == 0 && text[0] != '-' && out <= max;
}

bool read_token(const std::string& path, std::string& token) {
  std::ifstream in(path);
  if (!in) return false;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
  return !token.empty();
}

int run_apiserver(int argc, char** argv) {
  ServerOptions options;
  options.port = 8080;
  auto registry = ResourceRegistry::with_builtins();
  bool serve_metrics = false;
  std::uint16_t metrics_port = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](const char*& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    const char* v = nullptr;
    unsigned long long n = 0;
    if (arg == "--help" || arg == "-h") {
      std::fputs(apiserver_usage, stdout);
      return 0;
    } else if (arg == "--log-requests") {
      options.log_requests = true;
    } else if (arg == "--metrics-port" && value(v) && parse_number(v, 65535, n)) {
      serve_metrics = true;
      metrics_port = static_cast<std::uint16_t>(n);
    } else if (arg == "--log-level" && value(v)) {
      kinformer::log::Level level;
      if (!kinformer::log::parse_level(v, level)) {
        kinformer::log::error("apiserver", std::string("unknown --log-level ") + v);
        return 2;
      }
      kinformer::log::set_level(level);
    } else if (arg == "--port" && value(v) && parse_number(v, 65535, n)) {
      options.port = static_cast<std::uint16_t>(n);
    } else if (arg == "--bind" && value(v)) {
      options.bind_address = v;
    } else if (arg == "--token-file" && value(v)) {
      if (!read_token(v, options.token)) {
        kinformer::log::error("apiserver", "cannot read a token", {{"token_file", v}});
        return 1;
      }
    } else if (arg == "--tls-cert" && value(v)) {
      options.tls_cert_file = v;
    } else if (arg == "--tls-key" && value(v)) {
      options.tls_key_file = v;
    } else if (arg == "--client-ca" && value(v)) {
      options.client_ca_file = v;
    } else if (arg == "--max-body-bytes" && value(v) && parse_number(v, 1ull << 32, n) && n > 0) {
      options.max_body_bytes = static_cast<std::size_t>(n);
    } else if (arg == "--max-object-bytes" && value(v) && parse_number(v, 1ull << 32, n) && n > 0) {
      options.limits.max_bytes = static_cast<std::size_t>(n);
    } else if (arg == "--max-depth" && value(v) && parse_number(v, 1000, n) && n > 1) {
      options.limits.max_depth = static_cast<std::size_t>(n);
    } else if (arg == "--max-patch-ops" && value(v) && parse_number(v, 1000000, n) && n > 0) {
      options.limits.max_patch_operations = static_cast<std::size_t>(n);
    } else if (arg == "--request-cpu-ms" && value(v) && parse_number(v, 3600000, n) && n > 0) {
      options.limits.work.base = std::chrono::milliseconds(n);
    } else if (arg == "--request-cpu-ns-per-byte" && value(v) && parse_number(v, 1000000, n)) {
      options.limits.work.per_byte = std::chrono::nanoseconds(n);
    } else if (arg == "--max-connections" && value(v) && parse_number(v, 1000000, n) && n > 0) {
      options.max_connections = static_cast<std::size_t>(n);
    } else if (arg == "--max-connections-per-client" && value(v) && parse_number(v, 1000000, n) && n > 0) {
      options.max_connections_per_client = static_cast<std::size_t>(n);
    } else if (arg == "--max-full-state-watches" && value(v) && parse_number(v, 1000000, n) && n > 0) {
      options.full_state_watches.max_total = static_cast<std::size_t>(n);
    } else if (arg == "--max-full-state-watches-per-client" && value(v) && parse_number(v, 1000000, n) && n > 0) {
      options.full_state_watches.max_per_client = static_cast<std::size_t>(n);
    } else if (arg == "--idle-timeout" && value(v) && parse_number(v, 86400, n) && n > 0) {
      options.idle_timeout = std::chrono::seconds(n);
    } else if (arg == "--header-timeout" && value(v) && parse_number(v, 86400, n) && n > 0) {
      options.header_timeout = std::chrono::seconds(n);
    } else if (arg == "--read-timeout" && value(v) && parse_number(v, 86400, n) && n > 0) {
      options.read_timeout = std::chrono::seconds(n);
    } else if (arg == "--write-timeout" && value(v) && parse_number(v, 86400, n) && n > 0) {
      options.write_timeout = std::chrono::seconds(n);
    } else if (arg == "--watch-history-bytes" && value(v) && parse_number(v, 1ull << 40, n) && n > 0) {
      options.watch_history_bytes = static_cast<std::size_t>(n);
    } else if (arg == "--data-file" && value(v)) {
      options.data_file = v;
    } else if (arg == "--etcd-endpoints" && value(v)) {
      options.etcd.endpoints.clear();
      const std::string urls = v;
      for (std::size_t start = 0; start <= urls.size();) {
        auto comma = urls.find(',', start);
        auto endpoint = urls.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!endpoint.empty()) options.etcd.endpoints.push_back(endpoint);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      if (options.etcd.endpoints.empty()) {
        kinformer::log::error("apiserver", "--etcd-endpoints names no endpoint");
        return 2;
      }
    } else if (arg == "--etcd-prefix" && value(v)) {
      options.etcd.prefix = v;
    } else if (arg == "--etcd-compaction-interval" && value(v) && parse_number(v, 86400 * 365, n)) {
      options.etcd.compaction_interval = std::chrono::seconds(n);
    } else if (arg == "--repair") {
      options.repair = true;
    } else if (arg == "--wal-max-bytes" && value(v) && parse_number(v, 1ull << 40, n) && n >= 4096) {
      options.wal_compact_bytes = n;
    } else if (arg == "--watch-history" && value(v) && parse_number(v, 100000000, n) && n > 0) {
      options.watch_history = static_cast<std::size_t>(n);
    } else if (arg == "--bookmark-interval" && value(v) && parse_number(v, 86400, n) && n > 0) {
      options.bookmark_interval = std::chrono::seconds(n);
    } else if (arg == "--threads" && value(v) && parse_number(v, 64, n) && n > 0) {
      options.threads = static_cast<unsigned>(n);
    } else if (arg == "--resource" && value(v)) {
      auto type = ResourceRegistry::parse_spec(v);
      auto added = type ? registry.add(std::move(type).value()) : kinformer::Result<void>(type.error());
      if (!added) {
        kinformer::log::error("apiserver", added.error().message);
        return 2;
      }
    } else if (arg == "--resources-file" && value(v)) {
      if (auto added = registry.add_from_file(v); !added) {
        kinformer::log::error("apiserver", added.error().message);
        return 2;
      }
    } else {
      kinformer::log::error("apiserver", std::string("bad or incomplete option '") + argv[i] + "'");
      std::fputs(apiserver_usage, stderr);
      return 2;
    }
  }

  // Block the stop signals before any thread starts, so only the wait below sees them.
  const kinformer::StopSignals stop_signals;

  // The server's own metrics (apiserver/server_metrics.hpp), in the process's default registry.
  if (serve_metrics) options.observer = std::make_shared<kinformer::apiserver::ServerMetrics>(kinformer::default_registry());
  Server server(options, std::move(registry));
  auto port = server.start();
  if (!port) {
    kinformer::log::error("apiserver", "cannot start: " + port.error().message);
    return 1;
  }
  std::printf("kinformer apiserver: serving on %s (kubectl --server %s ...)\n", server.url().c_str(),
              server.url().c_str());
  std::fflush(stdout);
  const char* auth = options.token.empty()
                         ? (options.client_ca_file.empty() ? "none" : "client certificate")
                         : (options.client_ca_file.empty() ? "bearer token" : "bearer token or client certificate");
  kinformer::log::info("apiserver", "serving",
                       {{"url", server.url()}, {"tls", !options.tls_cert_file.empty()}, {"auth", auth},
                        {"data_file", options.data_file.empty() ? "-" : options.data_file},
                        {"etcd", options.etcd.endpoints.empty() ? "-" : options.etcd.endpoints.front()}});
  // Ready once serving: the store is loaded (start() recovers the data file first).
  kinformer::MetricsServer metrics({&kinformer::default_registry(), {}, options.bind_address, metrics_port});
  if (serve_metrics) {
    auto bound = metrics.start();
    if (!bound) {
      kinformer::log::error("apiserver", bound.error().message);
      (void)server.stop();
      return 1;
    }
    std::printf("kinformer apiserver: metrics on http://%s:%u/metrics\n", options.bind_address.c_str(),
                static_cast<unsigned>(*bound));
    std::fflush(stdout);
    kinformer::log::info("apiserver", "serving metrics", {{"port", *bound}, {"paths", "/metrics /healthz /readyz"}});
  }
  const char* signal_name = stop_signals.wait();
  kinformer::log::info("apiserver", "shutting down", {{"signal", signal_name}});
  metrics.stop();
  if (auto stopped = server.stop(); !stopped) {
    kinformer::log::error("apiserver", "stopping: " + stopped.error().message);
    return 1;
  }
  if (!options.data_file.empty()) kinformer::log::info("apiserver", "saved", {{"data_file", options.data_file}});
  return 0;
}

const bool apiserver_registered =
    kinformer::cli::register_command({"apiserver", "run the embedded Kubernetes-compatible API server", run_apiserver});

}  // namespace
