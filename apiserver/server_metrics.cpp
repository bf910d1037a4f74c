// apiserver/server_metrics.cpp: request labels from the path, and the families.
#include "apiserver/server_metrics.hpp"

#include <cctype>
#include <vector>

namespace kinformer::apiserver {

namespace {

constexpr std::size_t max_label_sets = 1000;

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    auto slash = path.find('/');
    auto part = path.substr(0, slash);
    if (!part.empty()) out.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

bool query_says_watch(std::string_view query) {
  std::size_t at = 0;
  while (at <= query.size()) {
    auto end = query.find('&', at);
    auto param = query.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (param == "watch=true" || param == "watch=1") return true;
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  return false;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

class WatchMetrics final : public WatchObserver {
 public:
  WatchMetrics(Gauge& open, Counter& sent, Counter& fell_behind, Counter& write_timeout)
      : open_(open), sent_(sent), fell_behind_(fell_behind), write_timeout_(write_timeout) {
    open_.inc();
  }
  ~WatchMetrics() override { open_.dec(); }
  void events_sent(std::size_t count) override { sent_.inc(static_cast<double>(count)); }
  void dropped(WatchDrop why) override {
    (why == WatchDrop::fell_behind ? fell_behind_ : write_timeout_).inc();
  }

 private:
  Gauge& open_;
  Counter& sent_;
  Counter& fell_behind_;
  Counter& write_timeout_;
};

}  // namespace

RequestLabels request_labels(std::string_view method, std::string_view target) {
  auto question = target.find('?');
  auto path = split_path(target.substr(0, question));
  auto query = question == std::string_view::npos ? std::string_view{} : target.substr(question + 1);
  // /api/v1/... or /apis/GROUP/VERSION/...; anything else is a non-resource path.
  std::size_t at = 0;
  if (path.size() >= 2 && path[0] == "api")
    at = 2;
  else if (path.size() >= 3 && path[0] == "apis")
    at = 3;
  if (at == 0 || at >= path.size()) return {lower(method), ""};
  bool legacy_watch = false;
  if (path[at] == "watch") legacy_watch = true, ++at;  // /api/v1/watch/pods
  // namespaces/NS/RESOURCE..., unless it is the namespace itself (namespaces/NS[/SUB]).
  bool namespace_subresource =
      at + 3 == path.size() && (path[at + 2] == "status" || path[at + 2] == "finalize");
  if (at + 2 < path.size() && path[at] == "namespaces" && !namespace_subresource) at += 2;
  if (at >= path.size()) return {lower(method), ""};
  std::string resource(path[at]);
  bool named = at + 1 < path.size();
  if (at + 2 < path.size()) resource += "/" + std::string(path[at + 2]);
  std::string verb;
  if (method == "GET")
    verb = named ? (legacy_watch ? "watch" : "get")
                 : (legacy_watch || query_says_watch(query) ? "watch" : "list");
  else if (method == "POST")
    verb = "create";
  else if (method == "PUT")
    verb = "update";
  else if (method == "PATCH")
    verb = "patch";
  else if (method == "DELETE")
    verb = named ? "delete" : "deletecollection";
  else
    verb = lower(method);
  return {verb, resource};
}

ServerMetrics::ServerMetrics(MetricsRegistry& registry)
    : requests_(registry.counter("kinformer_apiserver_requests_total",
                                 "API requests answered, by kube verb, resource and HTTP status code.",
                                 {"verb", "resource", "code"}, max_label_sets)),
      latency_(registry.histogram("kinformer_apiserver_request_duration_seconds",
                                  "Time from a request's arrival to its response (watches excluded).",
                                  {"verb", "resource"}, latency_buckets(), max_label_sets)),
      watchers_(registry.gauge("kinformer_apiserver_watchers", "Watch streams open now.", {"resource"},
                               max_label_sets)),
      events_sent_(registry.counter("kinformer_apiserver_watch_events_sent_total",
                                    "Watch events written to watch streams.", {"resource"}, max_label_sets)),
      dropped_(registry.counter("kinformer_apiserver_watchers_dropped_total",
                                "Watchers the server closed for being too slow, by reason.",
                                {"resource", "reason"}, max_label_sets)) {}

void ServerMetrics::on_request(std::string_view method, std::string_view target, int status,
                               std::chrono::steady_clock::duration latency) {
  auto labels = method.empty() ? RequestLabels{"unknown", ""} : request_labels(method, target);
  requests_.with({labels.verb, labels.resource, std::to_string(status)}).inc();
  if (labels.verb != "watch")
    latency_.with({labels.verb, labels.resource}).observe(std::chrono::duration<double>(latency).count());
}

std::unique_ptr<WatchObserver> ServerMetrics::on_watch_started(std::string_view resource) {
  std::string r(resource);
  return std::make_unique<WatchMetrics>(watchers_.with({r}), events_sent_.with({r}),
                                        dropped_.with({r, "fell_behind"}),
                                        dropped_.with({r, "write_timeout"}));
}

}  // namespace kinformer::apiserver
