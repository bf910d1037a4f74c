// examples/forecasting/window_board.hpp
//
// WindowBoard: what the forecast chain's hops hand each other. Notifications are
// immutable and shared, so the window builder pins the window it built under the
// notification's (key, resourceVersion), the forecaster adds the forecast, and the
// writer takes the entry out. Keying by resourceVersion keeps two versions of one
// series apart while the chain pipelines them (version k at the writer while k+1
// is at the forecaster).
//
// Contract
//   * post() adds or replaces an entry; attach() sets the forecast of an entry
//     (false when it is gone); take() removes and returns it; erase() drops it.
//   * Every hop that ends a notification's route erases its entry, so the board
//     holds at most the chain's in-flight notifications. A batch the Processor
//     gives up on (hop_timeout) leaves its entries behind; max_entries bounds them
//     (post() fails beyond it: the builder then stops that notification).
// Threading: any thread (one mutex).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "actors/inference_messages.hpp"
#include "examples/forecasting/metric_series.hpp"

namespace kinformer::forecasting {

struct BoardEntry {
  std::shared_ptr<const MetricSeries> series;
  actors::ForecastRequest window;
  std::optional<actors::ForecastReply> forecast;
};

class WindowBoard {
 public:
  using Key = std::pair<std::string, std::string>;  // object key, resourceVersion

  explicit WindowBoard(std::size_t max_entries = 65536) : max_entries_(max_entries) {}

  bool post(Key key, BoardEntry entry) {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.size() >= max_entries_ && !entries_.count(key)) return false;
    entries_[std::move(key)] = std::move(entry);
    return true;
  }
  /// A copy of the entry's window (the forecaster sends it away), or nothing.
  std::optional<actors::ForecastRequest> window(const Key& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second.window;
  }
  bool attach(const Key& key, actors::ForecastReply forecast) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return false;
    it->second.forecast = std::move(forecast);
    return true;
  }
  std::optional<BoardEntry> take(const Key& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    BoardEntry entry = std::move(it->second);
    entries_.erase(it);
    return entry;
  }
  void erase(const Key& key) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.erase(key);
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }

 private:
  const std::size_t max_entries_;
  mutable std::mutex mu_;
  std::map<Key, BoardEntry> entries_;  // guarded by mu_
};

}  // namespace kinformer::forecasting
