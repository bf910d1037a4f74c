// models/baseline_forecasts.hpp
//
// The forecasts that need no model (issue 28), on the very windows a model is judged
// on, so that `kinformer eval-ett` and the forecasting examples can say whether the
// Informer is worth acting on. tools/reference/baselines.py computes the same in numpy;
// the two are cross-checked by tools/record_eval_ett.py.
//
// Contract
//   * The naive forecasts themselves are models/naive_forecast.hpp's.
//   * RidgeBaseline::fit(): one linear map, shared by all channels, from a window minus
//     its last value to the horizon minus that value, fitted by ridge regression on
//     every window of `train`; the penalty (relative to the mean diagonal of the Gram
//     matrix) is the grid value with the lowest MSE on every window of `val`. Test
//     windows are never seen. Costs O(N·C·L²) for N train windows of L rows.
//   * evaluate_baselines(): MSE and MAE of the three naive forecasts and the ridge map
//     over the first `count` windows of `test`, in order (the test loader's drop_last).
// Errors: ModelError when the splits' window shapes differ.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "models/ett_dataset.hpp"
#include "models/naive_forecast.hpp"

namespace kinformer::models {

class RidgeBaseline {
 public:
  static RidgeBaseline fit(const EttWindows& train, const EttWindows& val);

  /// out [pred_len, C] from enc [seq_len, C].
  void predict(const float* enc, int channels, float* out) const;
  double penalty() const { return penalty_; }
  double val_mse() const { return val_mse_; }

 private:
  int seq_len_ = 0, pred_len_ = 0;
  std::vector<double> w_;  // [seq_len, pred_len]
  double penalty_ = 0, val_mse_ = 0;
};

struct ForecastErrors {
  double mse = 0, mae = 0;
};

struct BaselineReport {
  std::array<ForecastErrors, 3> naive;  // in naive_kinds order
  ForecastErrors ridge;
  double ridge_penalty = 0;
  NaiveKind best = NaiveKind::last_value;  // the naive forecast with the lowest MSE
  double best_mse() const { return naive[static_cast<size_t>(best)].mse; }
};

BaselineReport evaluate_baselines(const EttWindows& train, const EttWindows& val, const EttWindows& test,
                                  int64_t count, int period);

}  // namespace kinformer::models
