// apiserver/server_metrics.hpp
//
// ServerMetrics: the ServerObserver that counts the API server's traffic into a
// MetricsRegistry (runtime/metrics.hpp), as kube-apiserver's own metrics do:
//   kinformer_apiserver_requests_total{verb,resource,code}            counter
//   kinformer_apiserver_request_duration_seconds{verb,resource}       histogram (not watches)
//   kinformer_apiserver_watchers{resource}                            gauge, open watch streams
//   kinformer_apiserver_watch_events_sent_total{resource}             counter
//   kinformer_apiserver_watchers_dropped_total{resource,reason}       counter, reason =
//                                                                      fell_behind | write_timeout
//
//   auto metrics = std::make_shared<apiserver::ServerMetrics>(default_registry());
//   options.observer = metrics;          // ServerOptions
//
// Contract
//   * verb follows kube-apiserver: GET on a collection is list (watch with watch=true
//     or watch=1, or under /watch/), GET on a name get, POST create, PUT update, PATCH
//     patch, DELETE on a name delete, on a collection deletecollection; other methods
//     and paths outside /api and /apis lower-case the method. resource is the plural,
//     with "/subresource" when there is one ("pods/status"); "" for non-resource paths
//     (/api, /version, /openapi/v2).
//   * Label values come from request paths: each family keeps at most 1000 label
//     sets (runtime/metrics.hpp overflow), so random paths cannot grow memory.
//   * A watch's children are looked up once when it starts; its events cost one
//     atomic add per batch.
// Threading: every member may be called from any thread.
#pragma once

#include <string>
#include <string_view>

#include "apiserver/server_observer.hpp"
#include "runtime/metrics.hpp"

namespace kinformer::apiserver {

/// The kube verb and resource label of a request: {"list", "pods"}.
struct RequestLabels {
  std::string verb;
  std::string resource;
};
RequestLabels request_labels(std::string_view method, std::string_view target);

class ServerMetrics final : public ServerObserver {
 public:
  /// Registers the families above in `registry`, which must outlive this object.
  explicit ServerMetrics(MetricsRegistry& registry);

  void on_request(std::string_view method, std::string_view target, int status,
                  std::chrono::steady_clock::duration latency) override;
  std::unique_ptr<WatchObserver> on_watch_started(std::string_view resource) override;

 private:
  Family<Counter>& requests_;
  Family<Histogram>& latency_;
  Family<Gauge>& watchers_;
  Family<Counter>& events_sent_;
  Family<Counter>& dropped_;
};

}  // namespace kinformer::apiserver
