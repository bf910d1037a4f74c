#include "actors/informer_metrics.hpp"

#include <map>
#include <mutex>
#include <set>

#include "runtime/indexer.hpp"

namespace kinformer::actors {
namespace {

const std::vector<std::string> informer_labels = {"informer", "resource"};

std::vector<std::string> with_label(const char* extra) {
  auto out = informer_labels;
  out.emplace_back(extra);
  return out;
}

// Informer names in use per registry, so that two live informers never share a gauge.
std::mutex names_mu;
std::map<const MetricsRegistry*, std::set<std::string>>& names_in_use() {  // guarded by names_mu
  static std::map<const MetricsRegistry*, std::set<std::string>> names;
  return names;
}

std::string reserve_name(const MetricsRegistry& registry, const std::string& wanted) {
  std::lock_guard<std::mutex> lock(names_mu);
  auto& taken = names_in_use()[&registry];
  std::string name = wanted;
  for (int n = 2; taken.count(name) > 0; ++n) name = wanted + "-" + std::to_string(n);
  taken.insert(name);
  return name;
}

void release_name(const MetricsRegistry& registry, const std::string& name) {
  std::lock_guard<std::mutex> lock(names_mu);
  auto found = names_in_use().find(&registry);
  if (found == names_in_use().end()) return;
  found->second.erase(name);
  if (found->second.empty()) names_in_use().erase(found);
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::shared_ptr<InformerMetrics> InformerMetrics::make(MetricsRegistry& registry, std::string name,
                                                       std::string resource) {
  if (name.empty()) name = resource.empty() ? "informer" : resource;
  auto reserved = reserve_name(registry, name);
  return std::shared_ptr<InformerMetrics>(
      new InformerMetrics(registry, std::move(reserved), std::move(resource)));
}

InformerMetrics::InformerMetrics(MetricsRegistry& registry, std::string informer, std::string resource)
    : lists(registry
                .counter("kinformer_reflector_lists_total", "Lists the reflector completed.", informer_labels)
                .with({informer, resource})),
      events_added(registry
                       .counter("kinformer_reflector_events_total", "Watch events received, by type.",
                                with_label("type"))
                       .with({informer, resource, "added"})),
      events_modified(registry
                          .counter("kinformer_reflector_events_total", "Watch events received, by type.",
                                   with_label("type"))
                          .with({informer, resource, "modified"})),
      events_deleted(registry
                         .counter("kinformer_reflector_events_total", "Watch events received, by type.",
                                  with_label("type"))
                         .with({informer, resource, "deleted"})),
      events_bookmark(registry
                          .counter("kinformer_reflector_events_total", "Watch events received, by type.",
                                   with_label("type"))
                          .with({informer, resource, "bookmark"})),
      fifo_depth(registry.gauge("kinformer_fifo_depth", "Keys queued in the DeltaFIFO.", informer_labels)
                     .with({informer, resource})),
      fifo_adds(registry
                    .counter("kinformer_fifo_adds_total",
                             "Deltas queued in the DeltaFIFO (list items and watch events).", informer_labels)
                    .with({informer, resource})),
      fifo_pops(
          registry.counter("kinformer_fifo_pops_total", "Keys popped from the DeltaFIFO.", informer_labels)
              .with({informer, resource})),
      controller_batches(registry
                             .counter("kinformer_controller_batches_total",
                                      "Popped batches the controller applied to the indexer.",
                                      informer_labels)
                             .with({informer, resource})),
      apply_seconds(registry
                        .histogram("kinformer_controller_apply_duration_seconds",
                                   "Time to apply one popped batch to the indexer.", informer_labels)
                        .with({informer, resource})),
      notifications(registry
                        .counter("kinformer_controller_notifications_total",
                                 "Notifications the controller handed to the processor.", informer_labels)
                        .with({informer, resource})),
      registry_(registry),
      informer_(std::move(informer)),
      resource_(std::move(resource)),
      relists_(registry.counter("kinformer_reflector_relists_total",
                                "Lists after the first, by the cause that ended the previous cycle.",
                                with_label("cause"))),
      watch_restarts_(registry.counter(
          "kinformer_reflector_watch_restarts_total",
          "Watches opened again from the last resourceVersion, without a relist.", with_label("reason"))),
      errors_(registry.counter("kinformer_reflector_errors_total",
                               "Errors the reflector reported (lists, watches, skipped events).",
                               with_label("reason"))),
      rv_age_(registry
                  .gauge("kinformer_reflector_last_resource_version_age_seconds",
                         "Seconds since the reflector's resourceVersion last advanced (list or watch event).",
                         informer_labels)
                  .with({informer_, resource_})),
      objects_(
          registry.gauge("kinformer_indexer_objects", "Objects in the informer's cache.", informer_labels)
              .with({informer_, resource_})),
      index_values_(registry.gauge("kinformer_indexer_index_values",
                                   "Distinct values in each index of the cache.", with_label("index"))),
      synced_(registry
                  .gauge("kinformer_informer_synced", "1 once the informer's first list is in its cache.",
                         informer_labels)
                  .with({informer_, resource_})) {}

InformerMetrics::~InformerMetrics() { release_name(registry_, informer_); }

std::vector<std::string> InformerMetrics::labels(std::string_view extra) const {
  return {informer_, resource_, std::string(extra)};
}

void InformerMetrics::relisted(std::string_view cause) {
  relists_total_.fetch_add(1, std::memory_order_relaxed);
  relists_.with(labels(cause)).inc();
}
void InformerMetrics::watch_restarted(std::string_view reason) { watch_restarts_.with(labels(reason)).inc(); }
void InformerMetrics::error(std::string_view reason) { errors_.with(labels(reason)).inc(); }

void InformerMetrics::event(std::string_view type) {
  if (type == "added")
    events_added.inc();
  else if (type == "modified")
    events_modified.inc();
  else if (type == "deleted")
    events_deleted.inc();
  else
    events_bookmark.inc();
}

void InformerMetrics::rv_advanced() noexcept {
  rv_advanced_ns_.store(steady_ns(), std::memory_order_relaxed);
}

HandlerMetrics InformerMetrics::handler(const std::string& name) {
  auto values = labels(name);
  const auto names = with_label("handler");
  HandlerMetrics m;
  m.deliveries =
      &registry_.counter("kinformer_handler_deliveries_total", "Notifications sent to the handler.", names)
           .with(values);
  m.batch_seconds = &registry_
                         .histogram("kinformer_handler_batch_duration_seconds",
                                    "Time from sending a batch to the handler to its answer.", names)
                         .with(values);
  m.failures = &registry_
                    .counter("kinformer_handler_failures_total",
                             "Failed handler batches (an exception, no answer in time, a dead actor).", names)
                    .with(values);
  m.restarts =
      &registry_
           .counter("kinformer_handler_restarts_total", "Handler actors restarted by supervision.", names)
           .with(values);
  m.dead_letters = &registry_
                        .counter("kinformer_handler_dead_letters_total",
                                 "Notifications given up on (dead letters).", names)
                        .with(values);
  return m;
}

GroupMetrics InformerMetrics::group(const std::string& name) {
  auto values = labels(name);
  const auto names = with_label("group");
  GroupMetrics m;
  m.coalesced = &registry_
                     .counter("kinformer_handler_coalesced_total",
                              "Notifications merged away in a slow handler group's backlog.", names)
                     .with(values);
  m.backlog =
      &registry_
           .gauge("kinformer_handler_backlog", "Notifications waiting in a handler group's backlog.", names)
           .with(values);
  return m;
}

void InformerMetrics::collect(const Indexer& indexer, const std::vector<std::string>& index_names,
                              bool synced) {
  objects_.set(static_cast<double>(indexer.size()));
  for (const auto& index : index_names)
    index_values_.with(labels(index)).set(static_cast<double>(indexer.list_index_func_values(index).size()));
  synced_.set(synced ? 1 : 0);
  const auto at = rv_advanced_ns_.load(std::memory_order_relaxed);
  rv_age_.set(at == 0 ? 0 : static_cast<double>(steady_ns() - at) / 1e9);
}

}  // namespace kinformer::actors
