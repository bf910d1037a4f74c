// examples/forecasting/forecast_score.hpp
//
// How good the last forecast turned out, against the naive one (issue 28): once the
// points a forecast predicted have arrived, its error is set beside the error of the
// naive forecast made from the same history (the last day repeated), so a handler can
// decide whether to trust the model on this series. The status writer stores the
// newest score in status.forecast.lastScore; forecast_plot draws the same naive line.
//
// Contract
//   * naive_last_day(): the last day (86400 / intervalSeconds points, 24 for hourly
//     data; fewer when the history is shorter) of the points up to and including
//     `based_on`, repeated: a time n intervals after based_on gets the value the last
//     day had n intervals before it (modulo a day). Times at or before based_on are
//     left out. Empty when no point is at or before based_on.
//   * score_forecast(): scores series.forecast against the points of series.points
//     whose times it predicted: MAE of the forecast and of naive_last_day() over the
//     same points, and ratio = model / naive (0 when the naive MAE is 0). nullopt when
//     there is no forecast or none of its points has arrived yet.
// Threading: pure functions.
#pragma once

#include <optional>
#include <vector>

#include "examples/forecasting/metric_series.hpp"

namespace kinformer::forecasting {

std::vector<MetricPoint> naive_last_day(const MetricSeries& series, std::int64_t based_on,
                                        const std::vector<std::int64_t>& times);

std::optional<ForecastScore> score_forecast(const MetricSeries& series);

}  // namespace kinformer::forecasting
