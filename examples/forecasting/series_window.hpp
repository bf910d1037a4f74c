// examples/forecasting/series_window.hpp
//
// The window builder's arithmetic: turns a MetricSeries' last points into one
// model window (actors::ForecastRequest) and a forecast back into timed points in
// the metric's units. It is what makes a series forecast equal the official ETT
// pipeline's (models/ett_dataset.hpp): the same scaling expression, the same
// timeF features, x_dec = the last label_len scaled points then pred_len zeros.
//
// Contract
//   * A univariate model only (enc_in = dec_in = c_out = 1): a series is one metric.
//   * scale(v) = float((v − mean) / std), exactly models::make_windows' expression;
//     unscale(y) = y·std + mean (the scaler's inverse_transform).
//   * build_window() uses the last seq_len points; they must be interval_seconds
//     apart (Errc::invalid_input names the first gap), and the decoder's future
//     time features are those of the next pred_len steps of that interval.
//     Fewer than seq_len points: Errc::invalid_input (the chain's predicate keeps
//     such series away: window_full()).
//   * Time features take the point's UTC time as the ETT CSVs' local "date" column.
// Threading: pure functions. Errors: Result.
#pragma once

#include <cstdint>
#include <string>

#include "actors/inference_messages.hpp"
#include "examples/forecasting/metric_series.hpp"
#include "models/ett_dataset.hpp"
#include "models/informer_config.hpp"
#include "runtime/result.hpp"

namespace kinformer::forecasting {

/// Which model a window is for, its lengths and the scaler of its training data.
struct WindowShape {
  std::string model;  // the inference actor's name for it
  int seq_len = 96, label_len = 48, pred_len = 24;
  char freq = 'h';
  double mean = 0, std_dev = 1;

  float scale(double value) const { return static_cast<float>((value - mean) / std_dev); }
  double unscale(float scaled) const { return static_cast<double>(scaled) * std_dev + mean; }
};

/// The shape of a univariate model (Errc::invalid_input for any other).
Result<WindowShape> window_shape(std::string model, const models::InformerConfig& config,
                                 const models::EttScaler& scaler);

/// True when the series holds at least a window's seq_len points.
inline bool window_full(const MetricSeries& series, const WindowShape& shape) {
  return series.points.size() >= static_cast<std::size_t>(shape.seq_len);
}

/// The model window of the series' last seq_len points (see the contract).
Result<actors::ForecastRequest> build_window(const MetricSeries& series, const WindowShape& shape);

/// The forecast as points in the series' units, one interval apart after its last point,
/// with the score of the forecast the series' status holds (score_forecast), or the
/// score that one carried while none of its points has arrived.
SeriesForecast to_forecast(const MetricSeries& series, const WindowShape& shape,
                           const actors::ForecastReply& reply);

/// "YYYY-MM-DD HH:MM:SS", the ETT CSVs' date format (what models::time_features reads).
std::string ett_timestamp(std::int64_t unix_seconds);

}  // namespace kinformer::forecasting
