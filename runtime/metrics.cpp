// runtime/metrics.cpp: the registry, its families and the 0.0.4 text renderer.
#include "runtime/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <type_traits>
#include <variant>

namespace kinformer {

namespace {

// fetch_add on atomic<double> is C++20; a CAS loop is the lock-free C++17 spelling.
void add_to(std::atomic<double>& target, double by) noexcept {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + by, std::memory_order_relaxed)) {
  }
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("metrics: " + what);
}

// HELP text escapes backslash and newline; a label value also the double quote.
std::string escape(std::string_view text, bool quote) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' && quote)
      out += "\\\"";
    else
      out += c;
  }
  return out;
}

const char* type_name(MetricType type) {
  switch (type) {
    case MetricType::counter:
      return "counter";
    case MetricType::gauge:
      return "gauge";
    case MetricType::histogram:
      return "histogram";
  }
  return "untyped";
}

// {a="x",b="y"} with an optional extra label (le) last; "" when there are none.
std::string label_set(const std::vector<std::string>& names, const std::vector<std::string>& values,
                      std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return "";
  std::string out = "{";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += names[i] + "=\"" + escape_label_value(values[i]) + "\"";
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ',';
    out += std::string(extra_name) + "=\"" + std::string(extra_value) + "\"";
  }
  return out + "}";
}

}  // namespace

// -- metrics --

void Counter::inc(double by) noexcept {
  if (by > 0) add_to(value_, by);  // a counter never goes down; negative or NaN increments are dropped
}

void Gauge::inc(double by) noexcept { add_to(value_, by); }

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), buckets_(new std::atomic<std::uint64_t>[bounds_.size() + 1]) {
  for (std::size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::observe(double value) noexcept {
  // First bound >= value: "le" is inclusive. NaN lands in +Inf only.
  auto i =
      static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  if (std::isnan(value)) i = bounds_.size();
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  add_to(sum_, value);
}

std::uint64_t Histogram::cumulative_count(std::size_t i) const noexcept {
  std::uint64_t total = 0;
  for (std::size_t b = 0; b <= std::min(i, bounds_.size()); ++b)
    total += buckets_[b].load(std::memory_order_relaxed);
  return total;
}

std::vector<double> latency_buckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::vector<double> exponential_buckets(double start, double factor, std::size_t count) {
  require(start > 0 && factor > 1, "exponential_buckets needs start > 0 and factor > 1");
  std::vector<double> out;
  for (double bound = start; out.size() < count; bound *= factor) out.push_back(bound);
  return out;
}

// -- families --

template <class Metric>
Family<Metric>::Family(std::string name, std::string help, std::vector<std::string> label_names,
                       std::vector<double> bounds, std::size_t max_children)
    : name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)),
      bounds_(std::move(bounds)),
      max_children_(std::max<std::size_t>(1, max_children)) {}

template <class Metric>
std::unique_ptr<Metric> Family<Metric>::make() const {
  if constexpr (std::is_same_v<Metric, Histogram>)
    return std::make_unique<Histogram>(bounds_);
  else
    return std::make_unique<Metric>();
}

template <class Metric>
Metric& Family<Metric>::with(const std::vector<std::string>& label_values) {
  require(label_values.size() == label_names_.size(),
          name_ + " takes " + std::to_string(label_names_.size()) + " label values, got " +
              std::to_string(label_values.size()));
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = children_.find(label_values); it != children_.end()) return *it->second;
  if (children_.size() >= max_children_) {
    std::vector<std::string> overflow(label_names_.size(), "_overflow");
    auto& child = children_[overflow];
    if (!child) child = make();
    return *child;
  }
  auto& child = children_[label_values];
  child = make();
  return *child;
}

template <class Metric>
Metric& Family<Metric>::with(std::initializer_list<std::string_view> label_values) {
  return with(std::vector<std::string>(label_values.begin(), label_values.end()));
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

// -- the registry --

struct MetricsRegistry::Entry {
  MetricType type;
  std::variant<std::unique_ptr<Family<Counter>>, std::unique_ptr<Family<Gauge>>,
               std::unique_ptr<Family<Histogram>>>
      family;
  const std::string& name() const {
    return std::visit([](const auto& f) -> const std::string& { return f->name(); }, family);
  }
};

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

MetricsRegistry::Entry& MetricsRegistry::add(MetricType type, const std::string& name,
                                             const std::string& help, std::vector<std::string> label_names,
                                             std::vector<double> bounds, std::size_t max_children) {
  require(valid_metric_name(name), "invalid metric name '" + name + "'");
  for (const auto& label : label_names) {
    require(valid_label_name(label), "invalid label name '" + label + "' on " + name);
    require(!(type == MetricType::histogram && label == "le"),
            "a histogram may not have a label 'le': " + name);
    require(std::count(label_names.begin(), label_names.end(), label) == 1,
            "label '" + label + "' repeated on " + name);
  }
  if (type == MetricType::histogram) {
    require(!bounds.empty(), "histogram " + name + " needs bucket bounds");
    for (std::size_t i = 0; i < bounds.size(); ++i)
      require(std::isfinite(bounds[i]) && (i == 0 || bounds[i - 1] < bounds[i]),
              "histogram " + name + " bounds must be finite and strictly increasing");
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& entry : entries_) {
    if (entry->name() != name) continue;
    bool same =
        entry->type == type &&
        std::visit([&](const auto& f) { return f->help() == help && f->label_names() == label_names; },
                   entry->family);
    if (same && type == MetricType::histogram)
      same = std::get<std::unique_ptr<Family<Histogram>>>(entry->family)->bounds_ == bounds;
    require(same, name + " is already registered with another type, help, labels or buckets");
    return *entry;
  }
  auto entry = std::make_unique<Entry>();
  entry->type = type;
  switch (type) {
    case MetricType::counter:
      entry->family.emplace<0>(new Family<Counter>(name, help, std::move(label_names), {}, max_children));
      break;
    case MetricType::gauge:
      entry->family.emplace<1>(new Family<Gauge>(name, help, std::move(label_names), {}, max_children));
      break;
    case MetricType::histogram:
      entry->family.emplace<2>(
          new Family<Histogram>(name, help, std::move(label_names), std::move(bounds), max_children));
      break;
  }
  entries_.push_back(std::move(entry));
  return *entries_.back();
}

Family<Counter>& MetricsRegistry::counter(const std::string& name, const std::string& help,
                                          std::vector<std::string> label_names, std::size_t max_children) {
  return *std::get<0>(add(MetricType::counter, name, help, std::move(label_names), {}, max_children).family);
}
Family<Gauge>& MetricsRegistry::gauge(const std::string& name, const std::string& help,
                                      std::vector<std::string> label_names, std::size_t max_children) {
  return *std::get<1>(add(MetricType::gauge, name, help, std::move(label_names), {}, max_children).family);
}
Family<Histogram>& MetricsRegistry::histogram(const std::string& name, const std::string& help,
                                              std::vector<std::string> label_names,
                                              std::vector<double> upper_bounds, std::size_t max_children) {
  return *std::get<2>(
      add(MetricType::histogram, name, help, std::move(label_names), std::move(upper_bounds), max_children)
          .family);
}

// -- hooks --

RegistryHook::RegistryHook(RegistryHook&& other) noexcept : registry_(other.registry_), id_(other.id_) {
  other.registry_ = nullptr;
}

RegistryHook& RegistryHook::operator=(RegistryHook&& other) noexcept {
  if (this != &other) {
    reset();
    registry_ = other.registry_;
    id_ = other.id_;
    other.registry_ = nullptr;
  }
  return *this;
}

void RegistryHook::reset() {
  if (registry_) registry_->remove_hook(id_);
  registry_ = nullptr;
}

RegistryHook MetricsRegistry::add_collector(std::function<void()> collect) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  hooks_[++next_hook_] = Hook{{}, std::move(collect), {}};
  return RegistryHook(this, next_hook_);
}

RegistryHook MetricsRegistry::add_readiness_check(std::string name, std::function<bool()> ready) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  hooks_[++next_hook_] = Hook{std::move(name), {}, std::move(ready)};
  return RegistryHook(this, next_hook_);
}

void MetricsRegistry::remove_hook(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  hooks_.erase(id);
}

std::vector<std::string> MetricsRegistry::not_ready() const {
  std::vector<std::string> out;
  std::lock_guard<std::mutex> lock(hooks_mu_);
  for (const auto& [id, hook] : hooks_) {
    if (!hook.ready) continue;
    bool ready = false;
    try {
      ready = hook.ready();
    } catch (...) {  // a check that throws is a check that failed
    }
    if (!ready) out.push_back(hook.name);
  }
  return out;
}

std::string MetricsRegistry::render() const {
  {
    std::lock_guard<std::mutex> hooks_lock(hooks_mu_);
    for (const auto& [id, hook] : hooks_) {
      if (!hook.collect) continue;
      try {
        hook.collect();
      } catch (...) {  // a collector that throws leaves its values as they were
      }
    }
  }
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& entry : entries_) {
    std::visit(
        [&](const auto& family) {
          out += "# HELP " + family->name() + " " + escape(family->help(), false) + "\n";
          out += "# TYPE " + family->name() + " " + type_name(entry->type) + "\n";
          const auto& names = family->label_names();
          family->for_each([&](const std::vector<std::string>& values, const auto& metric) {
            using Metric = std::decay_t<decltype(metric)>;
            if constexpr (std::is_same_v<Metric, Histogram>) {
              const auto& bounds = metric.upper_bounds();
              for (std::size_t i = 0; i <= bounds.size(); ++i) {
                std::string le = i < bounds.size() ? format_value(bounds[i]) : "+Inf";
                out += family->name() + "_bucket" + label_set(names, values, "le", le) + " " +
                       std::to_string(metric.cumulative_count(i)) + "\n";
              }
              out += family->name() + "_sum" + label_set(names, values) + " " + format_value(metric.sum()) +
                     "\n";
              out += family->name() + "_count" + label_set(names, values) + " " +
                     std::to_string(metric.count()) + "\n";
            } else {
              out += family->name() + label_set(names, values) + " " + format_value(metric.value()) + "\n";
            }
          });
        },
        entry->family);
  }
  return out;
}

MetricsRegistry& default_registry() {
  static MetricsRegistry registry;
  return registry;
}

// -- format rules --

bool valid_metric_name(std::string_view name) noexcept {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool valid_label_name(std::string_view name) noexcept {
  if (name.empty() || name.substr(0, 2) == "__") return false;  // "__" is reserved for Prometheus itself
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

std::string escape_label_value(std::string_view value) { return escape(value, true); }

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // The shortest text that reads back as the same double ("0.1", not "0.10000000000000001").
  char buffer[32];
  auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

}  // namespace kinformer
