#include "bench/vs_client_go/stamped_writer.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "apiserver/server.hpp"

namespace kinformer::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::string realtime_ns_text() {
  return std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count());
}

// Pads `object` with a "bench.kinformer.io/pad" annotation to `bytes` of JSON.
std::string padded(nlohmann::json object, std::size_t bytes) {
  object["metadata"]["annotations"]["bench.kinformer.io/pad"] = "";
  const std::size_t size = object.dump().size();
  if (size < bytes) object["metadata"]["annotations"]["bench.kinformer.io/pad"] = std::string(bytes - size, 'p');
  return object.dump();
}

}  // namespace

StampedWriter::StampedWriter(apiserver::Server& server, std::string stamp_key, std::size_t object_bytes)
    : server_(server), stamp_key_(std::move(stamp_key)), object_bytes_(object_bytes) {}

void StampedWriter::create(const std::string& path, const std::string& body) {
  const auto answer = server_.call("POST", path, body);
  if (answer.status != 201) {
    std::fprintf(stderr, "bench_vs_client_go: POST %s: %d %s\n", path.c_str(), answer.status, answer.body.c_str());
    std::exit(1);
  }
}

void StampedWriter::create_namespace(const std::string& namespace_) {
  create("/api/v1/namespaces", nlohmann::json{{"apiVersion", "v1"},
                                              {"kind", "Namespace"},
                                              {"metadata", {{"name", namespace_}}}}
                                   .dump());
}

void StampedWriter::create_pods(const std::string& namespace_, std::size_t count) {
  const std::string path = "/api/v1/namespaces/" + namespace_ + "/pods";
  for (std::size_t i = 0; i < count; ++i) {
    const nlohmann::json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata",
         {{"name", "pod-" + std::to_string(i)},
          {"namespace", namespace_},
          {"labels", {{"app", "web"}, {"tier", "frontend"}, {"pod-template-hash", "7d9f8c6b5d"}}}}},
        {"spec",
         {{"containers",
           {{{"name", "app"},
             {"image", "registry.example.com/team/app:1.2.0"},
             {"ports", {{{"containerPort", 8080}, {"protocol", "TCP"}}}},
             {"resources", {{"requests", {{"cpu", "250m"}, {"memory", "256Mi"}}}}}}}},
          {"nodeName", "node-" + std::to_string(i % 100)},
          {"restartPolicy", "Always"}}},
        {"status", {{"phase", "Running"}, {"podIP", "10.244.3.17"}}}};
    create(path, padded(pod, object_bytes_));
  }
}

void StampedWriter::create_configmaps(const std::string& namespace_, std::size_t count) {
  const std::string path = "/api/v1/namespaces/" + namespace_ + "/configmaps";
  for (std::size_t i = 0; i < count; ++i) {
    const nlohmann::json configmap = {
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata", {{"name", "cm-" + std::to_string(i)}, {"namespace", namespace_}}},
        {"data", {{"mode", "production"}, {"log-level", "info"}}}};
    create(path, padded(configmap, object_bytes_));
  }
}

double StampedWriter::update_at_rate(const std::string& namespace_, std::size_t keys, std::size_t count,
                                     double rate) {
  const auto* configmaps = server_.registry().find("", "v1", "configmaps");
  const auto stamp = [this](const nlohmann::json* current) -> apiserver::ApiResult<nlohmann::json> {
    nlohmann::json next = *current;
    next["metadata"]["annotations"][stamp_key_] = realtime_ns_text();  // under the store's lock: the commit
    return next;
  };
  const auto start = Clock::now();
  for (std::size_t i = 0; i < count; ++i) {
    std::this_thread::sleep_until(start + std::chrono::nanoseconds(static_cast<std::int64_t>(i * 1e9 / rate)));
    if (!server_.store().write(*configmaps, namespace_, "cm-" + std::to_string(i % keys), stamp, false, false)) {
      std::fprintf(stderr, "bench_vs_client_go: an update of cm-%zu was refused\n", i % keys);
      std::exit(1);
    }
  }
  if (count == 0) return 0;
  return static_cast<double>(count) / std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace kinformer::bench
