// The forecasts that need no model (models/baseline_forecasts.hpp) on hand-made windows,
// where the right answer is known.
#include "models/baseline_forecasts.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

namespace models = kinformer::models;

namespace {

// One channel whose every row is given; windows of seq_len rows then pred_len rows.
models::EttWindows series_windows(const std::vector<float>& values, int seq_len, int pred_len) {
  models::EttWindows w;
  w.scaled = values;
  w.channels = 1;
  w.time_features = 0;
  w.rows = static_cast<int64_t>(values.size());
  w.seq_len = seq_len;
  w.label_len = seq_len / 2;
  w.pred_len = pred_len;
  return w;
}

}  // namespace

TEST_CASE("the three naive forecasts repeat the last value, the last day and its mean", "[models][baselines][unit]") {
  // two channels, 6 rows, a "day" of 3 rows
  const std::vector<float> enc = {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 9, 90};
  std::vector<float> out(8);
  models::naive_forecast(models::NaiveKind::last_value, enc.data(), 6, 2, 4, 3, out.data());
  CHECK(out == std::vector<float>{9, 90, 9, 90, 9, 90, 9, 90});
  models::naive_forecast(models::NaiveKind::last_day, enc.data(), 6, 2, 4, 3, out.data());
  CHECK(out == std::vector<float>{4, 40, 5, 50, 9, 90, 4, 40});
  models::naive_forecast(models::NaiveKind::last_day_mean, enc.data(), 6, 2, 4, 3, out.data());
  CHECK(out == std::vector<float>{6, 60, 6, 60, 6, 60, 6, 60});
  CHECK(models::steps_per_day('h') == 24);
  CHECK(models::steps_per_day('t') == 96);
}

TEST_CASE("the ridge baseline learns a linear rule from the train windows and picks the penalty on val",
          "[models][baselines][unit]") {
  // A noisy daily cycle: the naive forecasts err by the noise and the phase; a linear map
  // over 48 rows can average the noise out and follow the cycle.
  std::mt19937 rng(11);
  std::normal_distribution<float> noise(0.f, 0.3f);
  std::vector<float> values;
  for (int t = 0; t < 3000; ++t) values.push_back(static_cast<float>(std::sin(2 * M_PI * t / 24.0)) + noise(rng));
  const std::vector<float> train(values.begin(), values.begin() + 2000), val(values.begin() + 2000, values.begin() + 2500),
      test(values.begin() + 2500, values.end());
  auto report = models::evaluate_baselines(series_windows(train, 48, 12), series_windows(val, 48, 12),
                                           series_windows(test, 48, 12), 400, 24);
  // The noise alone costs 0.09 per step: the ridge map gets close to it, the naive ones cannot.
  CHECK(report.ridge.mse < 0.12);
  CHECK(report.best == models::NaiveKind::last_day);
  CHECK(report.best_mse() > 0.15);
  CHECK(report.ridge.mse < report.best_mse());
  CHECK(report.ridge_penalty > 0);
}
