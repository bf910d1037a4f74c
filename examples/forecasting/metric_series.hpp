// examples/forecasting/metric_series.hpp
//
// MetricSeries: the custom resource of the forecasting examples
// (metrics.kinformer.io/v1, namespaced, plural "metricseries"). Its spec holds a
// metric's most recent points, oldest first; its status holds the latest forecast
// that examples/forecasting/forecast_chain.hpp wrote.
//
//   spec:   {metric: "oil temperature", unit: "°C", intervalSeconds: 3600,
//            points: [{time: "2016-07-01T00:00:00Z", value: 30.531}, ...]}
//   status: {forecast: {model: "etth1_s_24", basedOn: "<time of the last point used>",
//            points: [{time, value}, ...],
//            lastScore: {basedOn, points, modelMae, naiveMae, naive: "last_day", ratio}}}
//   lastScore is how the newest forecast that could be checked turned out against the
//   points that arrived since, beside the naive forecast (forecast_score.hpp).
//
// Contract
//   * decode() reads an Object once (Informer<MetricSeries> does it at ingest). A
//     missing spec.points is an empty series; a point without a parsable time or a
//     numeric value, or times that do not increase, is Errc::decode_failed naming
//     the point. Values are doubles exactly as written (JSON round-trips them).
//   * Times are whole UTC seconds, written as RFC 3339 "YYYY-MM-DDTHH:MM:SSZ".
//   * The bodies below are the only JSON the examples send: a new series (POST), an
//     append of points that drops the oldest (JSON Patch, so the server applies it
//     to the current points), and the forecast as a merge patch of .status.
//   * forecast_status_target() is the one place that says where status is written:
//     the main resource today (a merge patch of .status); "/status" once the API
//     server serves that subresource (issue 17).
// Threading: plain values and pure functions. Errors: Result, never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/object.hpp"
#include "runtime/result.hpp"

namespace kinformer::forecasting {

/// "group/version/Kind/plural", as `kinformer apiserver --resource` takes it.
inline constexpr std::string_view metric_series_spec = "metrics.kinformer.io/v1/MetricSeries/metricseries";

struct MetricPoint {
  std::int64_t time = 0;  // UTC, seconds since the epoch
  double value = 0;
};

// A forecast checked against the points that arrived (examples/forecasting/forecast_score.hpp).
struct ForecastScore {
  std::int64_t based_on = 0;  // the checked forecast's basedOn
  int points = 0;             // how many of its points have arrived
  double model_mae = 0;       // its mean absolute error over them, in the metric's unit
  double naive_mae = 0;       // the same for the last day repeated from the same history
  double ratio = 0;           // model_mae / naive_mae: below 1, the model helps on this series
};

struct SeriesForecast {
  std::string model;
  std::int64_t based_on = 0;  // time of the last point the forecast was made from
  std::vector<MetricPoint> points;
  std::optional<ForecastScore> last_score;  // status.forecast.lastScore
};

struct MetricSeries {
  static constexpr std::string_view resource = "metrics.kinformer.io/v1/metricseries";

  std::string key;  // namespace/name
  std::string namespace_;
  std::string name;
  std::string resource_version;
  std::int64_t generation = 0;
  std::string metric;                      // spec.metric: what is measured ("" when absent)
  std::string unit;                        // spec.unit ("" when absent)
  std::int64_t interval_seconds = 0;       // spec.intervalSeconds: the points' spacing (0: unknown)
  std::vector<MetricPoint> points;         // spec.points, oldest first, strictly increasing times
  std::optional<SeriesForecast> forecast;  // status.forecast

  static Result<MetricSeries> decode(const Object& object);
};

/// "2016-07-01T00:00:00Z".
std::string format_time(std::int64_t unix_seconds);
/// Parses "YYYY-MM-DDTHH:MM:SSZ" (also with a space for 'T', as the ETT CSVs write it, without 'Z').
Result<std::int64_t> parse_time(std::string_view text);

/// "/apis/metrics.kinformer.io/v1/namespaces/NS/metricseries"
std::string series_collection_path(std::string_view namespace_);
/// ".../metricseries/NAME"
std::string series_path(std::string_view namespace_, std::string_view name);
/// Where the forecast's status patch goes (see the contract).
std::string forecast_status_target(std::string_view namespace_, std::string_view name);

/// A namespace object's JSON (POST /api/v1/namespaces).
std::string namespace_body(std::string_view name);
/// A new MetricSeries' JSON (POST to series_collection_path).
std::string new_series_body(std::string_view namespace_, std::string_view name, std::string_view metric,
                            std::string_view unit, std::int64_t interval_seconds,
                            const std::vector<MetricPoint>& points);
/// A JSON Patch (application/json-patch+json) removing the `drop_oldest` first
/// points and appending `added`; the server applies it to the points it holds.
std::string append_points_patch(const std::vector<MetricPoint>& added, std::size_t drop_oldest);
/// A merge patch (application/merge-patch+json) setting status.forecast.
std::string forecast_status_patch(const SeriesForecast& forecast);

}  // namespace kinformer::forecasting
