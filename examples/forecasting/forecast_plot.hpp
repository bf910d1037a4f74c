// examples/forecasting/forecast_plot.hpp
//
// An SVG chart of one MetricSeries: its points (history, solid), the forecast in its
// status (dashed, on a shaded band after the last point the forecast was made from),
// the naive forecast from the same history (the last day repeated, a faint line:
// forecast_score.hpp), and, when the caller knows them, the values that actually
// came (`actual`, dotted), with time and value axes, units, gridlines, a legend, the
// series' name and metric as the title, and the last score from status.
//
// Contract
//   * render_svg() is pure: the same series gives the same text. Times are UTC.
//     A series without points or forecast still renders (an empty chart that says so).
//   * Text from the object (name, metric, unit, model) is XML-escaped.
//   * write_svg() writes the file whole or fails with Errc::server_error naming it.
// Threading: pure functions. Errors: Result.
#pragma once

#include <string>
#include <vector>

#include "examples/forecasting/metric_series.hpp"
#include "runtime/result.hpp"

namespace kinformer::forecasting {

std::string render_svg(const MetricSeries& series, const std::vector<MetricPoint>& actual = {});
Result<void> write_svg(const std::string& path, const MetricSeries& series, const std::vector<MetricPoint>& actual = {});

}  // namespace kinformer::forecasting
