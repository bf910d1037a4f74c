// examples/forecasting/status_writer.hpp
//
// The status writer: the chain's last hop (priority 30). It turns the forecast
// the forecaster attached on the WindowBoard into points in the metric's units
// and PATCHes it into the MetricSeries' status through the API server over HTTP
// (forecast_status_target(), a merge patch). The requests run on the HTTP
// client's I/O thread; their outcomes come back to the actor as messages, and
// the hop answers the Processor through a response promise once every write of
// the batch has its outcome.
//
// Contract
//   * A written forecast is handed to on_written (on the actor's thread, after
//     the server answered 2xx) and its board entry erased; the notification goes
//     on (`next`). A notification without a forecast on the board, or whose
//     PATCH failed (connection error or non-2xx: the status and body are
//     reported to on_error), is stopped and counted.
//   * At most one batch at a time, answered exactly once.
// Threading: an actor; on_written / on_error run on it. Errors: per notification.
#pragma once

#include <atomic>
#include <caf/fwd.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "actors/inference_messages.hpp"
#include "actors/notification.hpp"
#include "examples/forecasting/series_window.hpp"
#include "examples/forecasting/window_board.hpp"
#include "runtime/http/client.hpp"

namespace kinformer::forecasting {

/// What on_written receives: the series as the chain saw it, the forecast in its
/// units (as written into status) and as the model gave it (scaled).
struct WrittenForecast {
  std::shared_ptr<const MetricSeries> series;
  SeriesForecast forecast;
  actors::ForecastReply scaled;
};

struct StatusWriterOptions {
  std::shared_ptr<http::Client> client;
  std::shared_ptr<WindowBoard> board;
  WindowShape shape;
  std::function<void(const WrittenForecast&)> on_written;  // optional
  std::function<void(const std::string&)> on_error;        // optional
  std::shared_ptr<std::atomic<std::uint64_t>> written;     // optional counters
  std::shared_ptr<std::atomic<std::uint64_t>> errors;
};

actors::HandlerActor spawn_status_writer(caf::actor_system& system, StatusWriterOptions options);

}  // namespace kinformer::forecasting
