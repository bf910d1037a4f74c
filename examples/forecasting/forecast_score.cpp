#include "examples/forecasting/forecast_score.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "models/naive_forecast.hpp"

namespace kinformer::forecasting {

std::vector<MetricPoint> naive_last_day(const MetricSeries& series, std::int64_t based_on,
                                        const std::vector<std::int64_t>& times) {
  const auto end = std::upper_bound(series.points.begin(), series.points.end(), based_on,
                                    [](std::int64_t t, const MetricPoint& p) { return t < p.time; });
  const auto known = static_cast<int>(end - series.points.begin());
  if (known == 0 || times.empty()) return {};
  const int day = series.interval_seconds > 0 ? static_cast<int>(std::max<std::int64_t>(1, 86400 / series.interval_seconds)) : 24;
  std::vector<float> history;
  for (auto it = end - std::min(known, day); it != end; ++it) history.push_back(static_cast<float>(it->value));
  // The naive forecast repeats the day, so one day of it serves every step: a time far
  // ahead (status is written by any client) costs no more than a near one.
  const std::int64_t interval = series.interval_seconds > 0 ? series.interval_seconds : 3600;
  std::vector<float> one_day(history.size());
  models::naive_forecast(models::NaiveKind::last_day, history.data(), static_cast<int>(history.size()), 1,
                         static_cast<int>(one_day.size()), day, one_day.data());
  std::vector<MetricPoint> out;
  for (auto t : times) {
    const std::int64_t step = (t - based_on) / interval;
    if (step < 1) continue;  // at or before the basis: no forecast
    out.push_back({t, one_day[static_cast<std::size_t>((step - 1) % static_cast<std::int64_t>(one_day.size()))]});
  }
  return out;
}

std::optional<ForecastScore> score_forecast(const MetricSeries& series) {
  if (!series.forecast) return std::nullopt;
  std::map<std::int64_t, double> actual;
  for (const auto& p : series.points) actual.emplace(p.time, p.value);
  std::vector<std::int64_t> times;
  for (const auto& p : series.forecast->points) times.push_back(p.time);
  const auto naive = naive_last_day(series, series.forecast->based_on, times);
  if (naive.size() != times.size()) return std::nullopt;
  ForecastScore score;
  score.based_on = series.forecast->based_on;
  double model_error = 0, naive_error = 0;
  for (std::size_t i = 0; i < times.size(); ++i) {
    auto found = actual.find(times[i]);
    if (found == actual.end()) continue;
    model_error += std::fabs(series.forecast->points[i].value - found->second);
    naive_error += std::fabs(naive[i].value - found->second);
    ++score.points;
  }
  if (score.points == 0) return std::nullopt;
  score.model_mae = model_error / score.points;
  score.naive_mae = naive_error / score.points;
  score.ratio = score.naive_mae > 0 ? score.model_mae / score.naive_mae : 0;
  return score;
}

}  // namespace kinformer::forecasting
