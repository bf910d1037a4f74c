// runtime/metrics.hpp
//
// Metrics: counters, gauges and histograms with labels, kept in a MetricsRegistry
// and rendered in the Prometheus text exposition format 0.0.4 (issue 15, item 2).
// Debian has no prometheus-cpp; this is the small subset kinformer needs.
//
// Usage
//   MetricsRegistry registry;
//   auto& requests = registry.counter("kinformer_requests_total", "Requests served.", {"verb", "code"});
//   Counter& ok_gets = requests.with({"get", "200"});   // look the child up once ...
//   ok_gets.inc();                                       // ... then each event is one atomic add
//   std::string text = registry.render();                // GET /metrics (runtime/metrics_server.hpp)
//
// Contract
//   * The hot path takes no lock: Counter::inc, Gauge::set/inc/dec and
//     Histogram::observe are lock-free atomics. Family::with() locks the family to
//     find or create the child; hold the returned reference (it stays valid for the
//     registry's lifetime) instead of calling with() per event.
//   * A family keeps at most max_children (default_max_children, 10000) label combinations, so label
//     values taken from input cannot grow memory without bound: past the limit, with()
//     returns one shared child whose label values are all "_overflow".
//   * Registering a name again with the same type, help and label names returns the
//     same family (two informers share one); anything else is a programming error:
//     invalid metric or label names (format 0.0.4: [a-zA-Z_:][a-zA-Z0-9_:]* and
//     [a-zA-Z_][a-zA-Z0-9_]*, no "__" prefix, no "le" on a histogram), a clash, a
//     wrong label count, or histogram bounds not strictly increasing throw
//     std::invalid_argument at registration or with(), never on the hot path.
//   * render(): families in registration order, children in label-value order; a
//     "# HELP" (backslash and newline escaped) and a "# TYPE" line per family; label
//     values escape backslash, double quote and newline; a histogram renders
//     cumulative name_bucket{...,le="<bound>"} lines ending with le="+Inf" (= count),
//     then name_sum and name_count. Values print as the shortest text that reads back
//     as the same double ("3", "0.1"); +Inf, -Inf and NaN as the format spells them.
//   * A render concurrent with updates sees each value at some moment of the render;
//     a histogram's buckets, sum and count are not one atomic snapshot.
//   * Collectors (add_collector) run at the start of every render(), in the
//     rendering thread, to set values that are cheaper to read than to track (a
//     cache's size, the age of a timestamp). Readiness checks (add_readiness_check)
//     are what GET /readyz asks (runtime/metrics_server.hpp): ready = every check
//     true. Both live while the returned RegistryHook does; its destructor waits
//     for a render or a readiness query that is calling it, so what the function
//     captures may die right after the hook. A hook function must not add or
//     remove hooks (it runs under the hooks lock).
// Threading: every member may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer {

/// A value that only goes up (Prometheus "counter"); its name should end in _total.
class Counter {
 public:
  void inc(double by = 1) noexcept;
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

/// A value that goes up and down (Prometheus "gauge").
class Gauge {
 public:
  void set(double value) noexcept { value_.store(value, std::memory_order_relaxed); }
  void inc(double by = 1) noexcept;
  void dec(double by = 1) noexcept { inc(-by); }
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

/// Observations counted into buckets by upper bound (Prometheus "histogram").
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value) noexcept;

  const std::vector<double>& upper_bounds() const { return bounds_; }
  /// Observations <= upper_bounds()[i] (cumulative, as rendered); i == size() is +Inf.
  std::uint64_t cumulative_count(std::size_t i) const noexcept;
  std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
  double sum() const noexcept { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // per bucket, not cumulative; last = +Inf
  std::atomic<std::uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

/// Default histogram bounds for latencies in seconds: 0.5 ms .. 10 s.
std::vector<double> latency_buckets();
/// Bounds start, start*factor, ... (count of them), e.g. exponential_buckets(1, 2, 8) for batch sizes.
std::vector<double> exponential_buckets(double start, double factor, std::size_t count);

enum class MetricType : std::uint8_t { counter, gauge, histogram };

/// The metrics of one name: one child per combination of label values.
template <class Metric>
class Family {
 public:
  /// The child for these label values (one per label name, in order). Locks the family.
  Metric& with(const std::vector<std::string>& label_values);
  Metric& with(std::initializer_list<std::string_view> label_values);
  /// The child without labels, for a family registered without label names.
  Metric& get() { return with(std::vector<std::string>{}); }

  // -- for the renderer --
  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  /// Calls f(label_values, metric) for every child, in label-value order, under the lock.
  template <class F>
  void for_each(F&& f) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [values, metric] : children_) f(values, *metric);
  }

 private:
  friend class MetricsRegistry;
  Family(std::string name, std::string help, std::vector<std::string> label_names, std::vector<double> bounds,
         std::size_t max_children);
  std::unique_ptr<Metric> make() const;

  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::vector<double> bounds_;  // histograms only
  const std::size_t max_children_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> children_;  // guarded by mu_
};

/// Label combinations a family keeps by default; see the contract.
inline constexpr std::size_t default_max_children = 10000;

class MetricsRegistry;

/// Keeps a collector or a readiness check registered until it is destroyed (move-only).
class RegistryHook {
 public:
  RegistryHook() = default;
  RegistryHook(RegistryHook&& other) noexcept;
  RegistryHook& operator=(RegistryHook&& other) noexcept;
  RegistryHook(const RegistryHook&) = delete;
  RegistryHook& operator=(const RegistryHook&) = delete;
  ~RegistryHook() { reset(); }
  /// Unregisters now (idempotent); waits for a call in progress to return, so never
  /// call it from inside a collector or a check.
  void reset();

 private:
  friend class MetricsRegistry;
  RegistryHook(MetricsRegistry* registry, std::uint64_t id) : registry_(registry), id_(id) {}
  MetricsRegistry* registry_ = nullptr;
  std::uint64_t id_ = 0;
};

class MetricsRegistry {
 public:
  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  Family<Counter>& counter(const std::string& name, const std::string& help,
                           std::vector<std::string> label_names = {},
                           std::size_t max_children = default_max_children);
  Family<Gauge>& gauge(const std::string& name, const std::string& help,
                       std::vector<std::string> label_names = {},
                       std::size_t max_children = default_max_children);
  Family<Histogram>& histogram(const std::string& name, const std::string& help,
                               std::vector<std::string> label_names,
                               std::vector<double> upper_bounds = latency_buckets(),
                               std::size_t max_children = default_max_children);

  /// Every family in the text exposition format 0.0.4 (after running the collectors).
  std::string render() const;

  /// `collect` runs at the start of every render(); see the contract.
  [[nodiscard]] RegistryHook add_collector(std::function<void()> collect);
  /// `ready` joins what /readyz asks; `name` says who is not ready (e.g. "informer pods").
  [[nodiscard]] RegistryHook add_readiness_check(std::string name, std::function<bool()> ready);
  /// The names of the readiness checks that answer false (or throw) now; empty = ready.
  std::vector<std::string> not_ready() const;

 private:
  friend class RegistryHook;
  struct Hook {
    std::string name;               // readiness checks only
    std::function<void()> collect;  // set for a collector
    std::function<bool()> ready;    // set for a readiness check
  };
  void remove_hook(std::uint64_t id);

  struct Entry;
  Entry& add(MetricType type, const std::string& name, const std::string& help,
             std::vector<std::string> label_names, std::vector<double> bounds, std::size_t max_children);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_;  // guarded by mu_; registration order
  // Held while a hook runs, so that removing one waits for its call to return.
  mutable std::mutex hooks_mu_;
  std::map<std::uint64_t, Hook> hooks_;  // guarded by hooks_mu_; by registration order
  std::uint64_t next_hook_ = 0;          // guarded by hooks_mu_
};

/// The registry a process shares by default (the CLI's, and what an embedding service
/// passes to its informers unless it keeps its own).
MetricsRegistry& default_registry();

// -- the format's rules, exposed for tests and for callers that build names --

bool valid_metric_name(std::string_view name) noexcept;
bool valid_label_name(std::string_view name) noexcept;
/// A label value with backslash, double quote and newline escaped.
std::string escape_label_value(std::string_view value);
/// A sample value: "42", "0.25", "+Inf", "-Inf", "NaN".
std::string format_value(double value);

extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

}  // namespace kinformer
