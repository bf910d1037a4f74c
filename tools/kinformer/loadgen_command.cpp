// kinformer loadgen: drives creates, updates and deletes of ConfigMaps against any
// API server over HTTP (runtime/http/client.hpp), at a target rate, with a progress
// line on stderr each second and a final report on stdout (issue 8, item 7).
//   kinformer loadgen --server http://127.0.0.1:8080 --objects 200 --rate 500 --duration 10
// A run takes over the loadgen-N objects an earlier run left in the namespace (issue 31):
// they join its working set and its new names start after theirs, so it never creates a
// name that exists.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "runtime/http/api_status.hpp"
#include "runtime/http/client.hpp"
#include "runtime/http/http_list_watch.hpp"
#include "runtime/http/kubeconfig.hpp"
#include "runtime/http/list_decoder.hpp"
#include "runtime/log.hpp"
#include "tools/kinformer/command.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* loadgen_usage =
    "usage: kinformer loadgen [options]\n"
    "\n"
    "Creates, updates and deletes ConfigMaps named loadgen-N on an API server at a\n"
    "target rate, prints a progress line on stderr each second and a report at the end.\n"
    "The loadgen-N objects of an earlier run are taken over: updated and deleted like its own.\n"
    "\n"
    "options:\n"
    "  --server URL           the API server (else the kubeconfig's)\n"
    "  --token-file FILE      bearer token for --server\n"
    "  --kubeconfig FILE      a kubeconfig (default $KUBECONFIG or ~/.kube/config)\n"
    "  --context NAME         the kubeconfig context (default its current-context)\n"
    "  --namespace NS         where the ConfigMaps go (default: the context's, else default)\n"
    "  --objects N            the working set: at most N live objects (default 100)\n"
    "  --rate R               operations per second (default 100)\n"
    "  --update-ratio F       share of operations that update a live object (default 0.6)\n"
    "  --delete-ratio F       share that delete one (default 0.1); the rest create\n"
    "  --duration S           seconds to run (default 10)\n"
    "  --object-size BYTES    payload bytes per object (default 256)\n"
    "  --seed N               random seed (default 1)\n"
    "  --help                 this text\n";

struct Options {
  std::string server, token_file, kubeconfig, context, namespace_;
  long objects = 100;
  double rate = 100;
  double update_ratio = 0.6;
  double delete_ratio = 0.1;
  double duration = 10;
  long object_size = 256;
  unsigned long seed = 1;
};

bool number(const char* text, double min, double max, double& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtod(text, &end);
  return end && *end == '\0' && errno == 0 && out >= min && out <= max;
}

struct Tally {
  std::uint64_t creates = 0, updates = 0, deletes = 0, errors = 0;
  std::vector<double> latencies_ms;
  std::string first_error;
  std::uint64_t ops() const { return creates + updates + deletes + errors; }
};

std::string configmap(const std::string& name, const std::string& payload) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"(","labels":{"app":"loadgen"}},"data":{"payload":")" + payload + "\"}}";
}

// The loadgen-N ConfigMaps already in the collection (an earlier run's), and the first N
// after theirs.
struct Leftovers {
  std::vector<std::string> names;
  std::uint64_t next_name = 0;
};

kinformer::Result<Leftovers> earlier_objects(const std::shared_ptr<kinformer::http::Client>& client,
                                             const std::string& collection) {
  kinformer::http::Request request;
  request.target = collection + "?labelSelector=" + kinformer::http::url_encode("app=loadgen");
  auto response = client->request_sync(request);
  if (!response) return response.error();
  if (response->status != 200)
    return kinformer::http::error_from_response(response->status, response->body, response->retry_after);
  auto list = kinformer::http::decode_list(response->body, response->body.capacity());
  if (!list) return list.error();
  Leftovers leftovers;
  constexpr std::string_view prefix = "loadgen-";
  for (const auto& object : list->items) {
    const std::string_view name = object->name();
    if (name.substr(0, prefix.size()) != prefix || name.size() == prefix.size()) continue;
    const std::string suffix(name.substr(prefix.size()));
    // at most 18 digits: stoull cannot overflow on a name someone else made
    if (suffix.size() > 18 || suffix.find_first_not_of("0123456789") != std::string::npos) continue;
    leftovers.names.emplace_back(name);
    leftovers.next_name = std::max<std::uint64_t>(leftovers.next_name, std::stoull(suffix) + 1);
  }
  return leftovers;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1,
                         static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}

int run_loadgen(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i += 2) {  // every option takes a value
    std::string_view arg = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    double n = 0;
    bool ok = v != nullptr;
    if (arg == "--help" || arg == "-h") {
      std::fputs(loadgen_usage, stdout);
      return 0;
    } else if (arg == "--server" && ok) {
      o.server = v;
    } else if (arg == "--token-file" && ok) {
      o.token_file = v;
    } else if (arg == "--kubeconfig" && ok) {
      o.kubeconfig = v;
    } else if (arg == "--context" && ok) {
      o.context = v;
    } else if (arg == "--namespace" && ok) {
      o.namespace_ = v;
    } else if (arg == "--objects" && ok && number(v, 1, 10000000, n)) {
      o.objects = static_cast<long>(n);
    } else if (arg == "--rate" && ok && number(v, 0.1, 1000000, n)) {
      o.rate = n;
    } else if (arg == "--update-ratio" && ok && number(v, 0, 1, n)) {
      o.update_ratio = n;
    } else if (arg == "--delete-ratio" && ok && number(v, 0, 1, n)) {
      o.delete_ratio = n;
    } else if (arg == "--duration" && ok && number(v, 0.1, 86400, n)) {
      o.duration = n;
    } else if (arg == "--object-size" && ok && number(v, 0, 1 << 20, n)) {
      o.object_size = static_cast<long>(n);
    } else if (arg == "--seed" && ok && number(v, 0, 4e9, n)) {
      o.seed = static_cast<unsigned long>(n);
    } else {
      kinformer::log::error("loadgen", std::string("bad or incomplete option '") + argv[i] + "'");
      std::fputs(loadgen_usage, stderr);
      return 2;
    }
  }
  if (o.update_ratio + o.delete_ratio > 1) {
    kinformer::log::error("loadgen", "--update-ratio plus --delete-ratio must be at most 1");
    return 2;
  }

  kinformer::Result<kinformer::http::ClientConfig> config = kinformer::http::ClientConfig{};
  if (!o.server.empty()) {
    config->server = o.server;
    config->token_file = o.token_file;
  } else {
    kinformer::http::KubeconfigOptions kubeconfig;
    if (!o.kubeconfig.empty()) kubeconfig.paths.push_back(o.kubeconfig);
    kubeconfig.context = o.context;
    config = kinformer::http::load_kubeconfig(kubeconfig);
  }
  if (!config) {
    kinformer::log::error("loadgen", config.error().message);
    return 1;
  }
  const std::string ns = o.namespace_.empty() ? config->namespace_ : o.namespace_;
  auto client = kinformer::http::Client::create(config.value());
  if (!client) {
    kinformer::log::error("loadgen", client.error().message);
    return 1;
  }
  const std::string collection = kinformer::http::collection_path("", "v1", "configmaps", ns);
  kinformer::log::info("loadgen", "starting",
                       {{"server", config->describe()}, {"namespace", ns}, {"rate", o.rate}, {"duration_s", o.duration}});

  auto leftovers = earlier_objects(client.value(), collection);
  if (!leftovers) {
    kinformer::log::error("loadgen", "listing earlier loadgen objects: " + leftovers.error().to_string());
    return 1;
  }
  if (!leftovers->names.empty())
    kinformer::log::info("loadgen", "taking over an earlier run's objects", {{"objects", leftovers->names.size()}});

  std::mt19937_64 random(o.seed);
  std::uniform_real_distribution<double> coin(0, 1);
  // names of the live objects: taken over from an earlier run, or created by this one
  std::vector<std::string> live = std::move(leftovers->names);
  std::uint64_t next_name = leftovers->next_name, version = 0;
  Tally tally;
  const auto payload = [&] {
    std::string text(static_cast<std::size_t>(o.object_size), 'x');
    const std::string stamp = std::to_string(++version);
    std::copy(stamp.begin(), stamp.begin() + std::min(stamp.size(), text.size()), text.begin());
    return text;
  };
  const auto start = Clock::now();
  const auto end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration));
  auto next_progress = start + std::chrono::seconds(1);
  for (std::uint64_t i = 0;; ++i) {
    const auto due =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i / o.rate));
    if (due >= end) break;
    std::this_thread::sleep_until(due);
    const double r = coin(random);
    kinformer::http::Request request;
    enum { create, update, remove } kind = create;
    std::size_t victim = 0;
    std::string created;
    // The ratios pick the kind; a full working set turns a create into an update.
    const bool full = static_cast<long>(live.size()) >= o.objects;
    if (!live.empty() && r < o.delete_ratio) {
      kind = remove;
    } else if (!live.empty() && (r < o.delete_ratio + o.update_ratio || full)) {
      kind = update;
    }
    if (kind != create) victim = std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(random);
    if (kind == create) {
      request.method = "POST";
      request.target = collection;
      created = "loadgen-" + std::to_string(next_name++);
      request.body = configmap(created, payload());
    } else if (kind == update) {
      request.method = "PATCH";
      request.target = collection + "/" + live[victim];
      request.body = R"({"data":{"payload":")" + payload() + "\"}}";
      request.content_type = "application/merge-patch+json";
    } else {
      request.method = "DELETE";
      request.target = collection + "/" + live[victim];
    }
    const auto sent = Clock::now();
    auto response = client.value()->request_sync(request);
    tally.latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
    const bool ok = response && response->status >= 200 && response->status < 300;
    if (!ok) {
      ++tally.errors;
      if (tally.first_error.empty())
        tally.first_error = response ? "HTTP " + std::to_string(response->status) + " on " + request.method +
                                           ": " + response->body.substr(0, 200)
                                     : response.error().to_string();
      if (!response && tally.ops() == 1) {
        kinformer::log::error("loadgen", tally.first_error);
        return 1;
      }
    } else if (kind == create) {
      ++tally.creates;
      live.push_back(created);
    } else if (kind == update) {
      ++tally.updates;
    } else {
      ++tally.deletes;
      live[victim] = live.back();
      live.pop_back();
    }
    if (Clock::now() >= next_progress) {
      next_progress += std::chrono::seconds(1);
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      char seconds[16];
      std::snprintf(seconds, sizeof seconds, "%.1f", elapsed);
      kinformer::log::info("loadgen", "progress",
                           {{"elapsed_s", seconds},
                            {"ops", tally.ops()},
                            {"creates", tally.creates},
                            {"updates", tally.updates},
                            {"deletes", tally.deletes},
                            {"errors", tally.errors},
                            {"ops_per_s", static_cast<std::uint64_t>(tally.ops() / elapsed)},
                            {"live", live.size()}});
    }
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf(
      "loadgen: %llu operations in %.1f s (%.0f ops/s, target %.0f): %llu creates, %llu updates, %llu "
      "deletes, "
      "%llu errors; latency p50 %.2f ms, p99 %.2f ms; %zu objects live\n",
      static_cast<unsigned long long>(tally.ops()), elapsed, tally.ops() / elapsed, o.rate,
      static_cast<unsigned long long>(tally.creates), static_cast<unsigned long long>(tally.updates),
      static_cast<unsigned long long>(tally.deletes), static_cast<unsigned long long>(tally.errors),
      percentile(tally.latencies_ms, 0.5), percentile(tally.latencies_ms, 0.99), live.size());
  if (!tally.first_error.empty()) std::printf("loadgen: first error: %s\n", tally.first_error.c_str());
  return tally.errors == 0 ? 0 : 1;
}

const bool loadgen_registered = kinformer::cli::register_command(
    {"loadgen", "drive creates, updates and deletes against an API server", run_loadgen});

}  // namespace
