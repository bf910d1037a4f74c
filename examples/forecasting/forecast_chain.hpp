// examples/forecasting/forecast_chain.hpp
//
// ForecastChain: the forecasting handler chain on an Informer<MetricSeries>, one
// group ("forecast") of three hops (actors/processor.hpp routes them):
//
//   window builder (10) ──▶ forecaster (20) ──async──▶ inference actor
//                                   │                         (batches windows)
//                                   ▼
//                           status writer (30) ──PATCH .status──▶ API server
//
//   * window builder: builds the model window of the series' last seq_len points
//     (series_window.hpp) and pins it on the WindowBoard; it stops a series whose
//     status already holds the forecast from its last point (nothing new: a
//     relist or a restart replays the series) and one whose points do not make a
//     window (a gap: reported to on_error).
//   * forecaster (forecaster.hpp): predicate `changed && window full`; asks the
//     inference actor for every window of a batch at once, answers through a
//     response promise.
//   * status writer (status_writer.hpp): the same predicate; PATCHes the forecast
//     into status and calls on_written.
//   `changed` = an add, or an update whose metadata.generation moved: the writer's
//   own status writes (and resyncs, deletes) never start another forecast.
//
// Contract
//   * add_to() registers the three handlers (before or after run()); the chain's
//     actors end with stop() (also from the destructor) — call it after the
//     informer stopped, or before, which drops what is in flight.
//   * Each hop has hop_timeout = forecast timeout + 10 s and the skip policy: a
//     stuck batch is dead-lettered rather than holding the chain.
// Threading: add_to()/stop() from the owning thread; stats from any thread.
// Errors: add_to() fails with the informer's registration error.
#pragma once

#include <atomic>
#include <caf/fwd.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/inference.hpp"
#include "actors/typed_informer.hpp"
#include "examples/forecasting/metric_series.hpp"
#include "examples/forecasting/series_window.hpp"
#include "examples/forecasting/status_writer.hpp"
#include "runtime/http/client.hpp"
#include "runtime/result.hpp"

namespace kinformer::forecasting {

struct ChainOptions {
  WindowShape shape;
  actors::InferenceActor inference;
  std::shared_ptr<http::Client> client;  // the API server the writer PATCHes
  std::chrono::milliseconds forecast_timeout{30000};
  std::string group = "forecast";
  std::function<void(const WrittenForecast&)> on_written;  // on the writer's actor thread
  std::function<void(const std::string&)> on_error;        // on whichever hop's thread
};

struct ChainStats {
  std::shared_ptr<std::atomic<std::uint64_t>> windows = std::make_shared<std::atomic<std::uint64_t>>(0);
  std::shared_ptr<std::atomic<std::uint64_t>> up_to_date = std::make_shared<std::atomic<std::uint64_t>>(0);
  std::shared_ptr<std::atomic<std::uint64_t>> forecasts = std::make_shared<std::atomic<std::uint64_t>>(0);
  std::shared_ptr<std::atomic<std::uint64_t>> written = std::make_shared<std::atomic<std::uint64_t>>(0);
  std::shared_ptr<std::atomic<std::uint64_t>> errors = std::make_shared<std::atomic<std::uint64_t>>(0);
};

/// An add, or an update whose generation moved (spec changed).
actors::Predicate series_changed();
/// The notification's series (Informer<MetricSeries> decoded it) holds a full window.
actors::Predicate window_is_full(const WindowShape& shape);

class ForecastChain {
 public:
  static Result<std::unique_ptr<ForecastChain>> add_to(Informer<MetricSeries>& informer,
                                                       ChainOptions options);
  ~ForecastChain();
  ForecastChain(const ForecastChain&) = delete;
  ForecastChain& operator=(const ForecastChain&) = delete;

  /// Ends the forecaster and writer actors (idempotent).
  void stop();
  const ChainStats& stats() const { return stats_; }

 private:
  // Every forecaster and writer actor spawned, restarts included (the builder
  // belongs to the informer); the factories add to it from the Processor's thread.
  struct Spawned {
    std::mutex mu;
    std::vector<actors::HandlerActor> actors;  // guarded by mu
    actors::HandlerActor add(actors::HandlerActor actor);
  };
  ForecastChain() = default;
  std::shared_ptr<Spawned> spawned_ = std::make_shared<Spawned>();
  ChainStats stats_;
};

}  // namespace kinformer::forecasting
