// actors/informer_metrics.hpp
//
// InformerMetrics: one informer's instruments in a MetricsRegistry (issue 15,
// item 2), and its identity for log lines (informer name, resource). The
// SharedInformer makes one and hands the same shared_ptr to its Reflector, FIFO,
// Controller and Processor through their options; a part spawned without one
// (null) counts nothing.
//
// Metrics (labels informer, resource; the extra label in braces)
//   kinformer_reflector_lists_total                    counter   lists completed (a replace sent to the FIFO)
//   kinformer_reflector_relists_total{cause}           counter   lists after the first, by what ended the
//   cycle kinformer_reflector_watch_restarts_total{reason}   counter   watches opened again without a relist
//   kinformer_reflector_events_total{type}             counter   watch events: added, modified, deleted,
//   bookmark kinformer_reflector_errors_total{reason}           counter   errors reported (Errc name, or
//   very_short_watch) kinformer_reflector_last_resource_version_age_seconds  gauge  since the resourceVersion
//   last advanced kinformer_fifo_depth                               gauge     keys queued in the DeltaFIFO
//   kinformer_fifo_adds_total                          counter   deltas queued (list items, watch events)
//   kinformer_fifo_pops_total                          counter   keys popped by the Controller
//   kinformer_controller_batches_total                 counter   popped batches applied
//   kinformer_controller_apply_duration_seconds        histogram applying one batch to the Indexer
//   kinformer_controller_notifications_total           counter   notifications handed to the Processor
//   kinformer_indexer_objects                          gauge     objects cached (read at scrape)
//   kinformer_indexer_index_values{index}              gauge     distinct values of each index (read at
//   scrape) kinformer_informer_synced                          gauge     1 once the first list is in the
//   Indexer kinformer_handler_deliveries_total{handler}        counter   notifications sent to the handler
//   kinformer_handler_batch_duration_seconds{handler}  histogram from sending a batch to its answer
//   kinformer_handler_failures_total{handler}          counter   failed batches (threw, timed out, died)
//   kinformer_handler_restarts_total{handler}          counter   handler actors restarted by supervision
//   kinformer_handler_dead_letters_total{handler}      counter   notifications given up on
//   kinformer_handler_coalesced_total{group}           counter   notifications merged away in a group's
//   backlog kinformer_handler_backlog{group}                   gauge     notifications waiting in a group's
//   backlog
//
// Contract
//   * The hot path (events, adds, pops, batches, deliveries) is relaxed atomics on
//     children looked up once; the rare paths (relists, restarts, errors by
//     reason) look their child up, which locks the family briefly.
//   * Names: make() reserves `informer` (default: the resource, else "informer")
//     in its registry while the InformerMetrics lives; a second live informer
//     asking for a taken name gets "<name>-2", "<name>-3"…, so two informers never
//     share a gauge. Counters of a name used again later continue (client-go's
//     metrics are process-wide too); give informers explicit names to compare runs.
//   * collect() (the SharedInformer's collector, at scrape) sets the gauges read
//     from the cache and the age of the last resourceVersion.
// Threading: every member may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/metrics.hpp"

namespace kinformer {
class Indexer;
}

namespace kinformer::actors {

/// One handler registration's instruments.
struct HandlerMetrics {
  Counter* deliveries = nullptr;
  Histogram* batch_seconds = nullptr;
  Counter* failures = nullptr;
  Counter* restarts = nullptr;
  Counter* dead_letters = nullptr;
};

/// One handler group's instruments (a group of one is named after its handler).
struct GroupMetrics {
  Counter* coalesced = nullptr;
  Gauge* backlog = nullptr;
};

class InformerMetrics {
 public:
  /// The instruments of informer `name` over `resource` in `registry` (which must outlive them).
  static std::shared_ptr<InformerMetrics> make(MetricsRegistry& registry, std::string name,
                                               std::string resource);
  ~InformerMetrics();
  InformerMetrics(const InformerMetrics&) = delete;
  InformerMetrics& operator=(const InformerMetrics&) = delete;

  const std::string& informer() const { return informer_; }
  const std::string& resource() const { return resource_; }
  MetricsRegistry& registry() const { return registry_; }

  // -- Reflector --
  void relisted(std::string_view cause);
  /// Relists so far, over every cause.
  std::uint64_t relists() const noexcept { return relists_total_.load(std::memory_order_relaxed); }
  void watch_restarted(std::string_view reason);
  void error(std::string_view reason);
  void event(std::string_view type);  // added | modified | deleted | bookmark
  /// The resourceVersion advanced now (a list or a watch event).
  void rv_advanced() noexcept;
  Counter& lists;
  Counter& events_added;
  Counter& events_modified;
  Counter& events_deleted;
  Counter& events_bookmark;

  // -- DeltaFIFO --
  Gauge& fifo_depth;
  Counter& fifo_adds;
  Counter& fifo_pops;

  // -- Controller --
  Counter& controller_batches;
  Histogram& apply_seconds;
  Counter& notifications;

  // -- Processor (looked up once per registration or group) --
  HandlerMetrics handler(const std::string& name);
  GroupMetrics group(const std::string& name);

  /// Sets the scrape-time gauges: cache size, index sizes, synced, resourceVersion age.
  void collect(const Indexer& indexer, const std::vector<std::string>& index_names, bool synced);

 private:
  InformerMetrics(MetricsRegistry& registry, std::string informer, std::string resource);
  std::vector<std::string> labels(std::string_view extra = {}) const;

  MetricsRegistry& registry_;
  const std::string informer_;
  const std::string resource_;
  Family<Counter>& relists_;
  Family<Counter>& watch_restarts_;
  Family<Counter>& errors_;
  Gauge& rv_age_;
  Gauge& objects_;
  Family<Gauge>& index_values_;
  Gauge& synced_;
  std::atomic<std::int64_t> rv_advanced_ns_{0};  // steady clock; 0 = never
  std::atomic<std::uint64_t> relists_total_{0};
};

using InformerMetricsPtr = std::shared_ptr<InformerMetrics>;

}  // namespace kinformer::actors
