// models/instance_norm.hpp
//
// InstanceNorm: the per-window normalisation of issue 28 (RevIN, "Non-stationary
// Transformers"), applied around every backend's forward pass by Backend::forecast, so
// the reference, oneDNN and CUDA backends share one implementation of the rule.
// tools/reference/informer_ref.py's InstanceNorm is its PyTorch twin.
//
// Contract
//   * Statistics per window and channel from the encoder rows alone: mean_std and
//     naive_residual / linear_residual give shift = mean, scale = sqrt(population variance + 1e-5);
//     last_value gives shift = the last encoder row, scale = 1.
//   * normalize(): x_enc' = (x_enc − shift) / scale, then × weight + bias when the config
//     has a learned affine. x_dec's first L_dec − pred_len rows (the label rows) are
//     normalised the same way; its last pred_len rows (the placeholder) are zero in the
//     normalised space, whatever the caller put there.
//   * denormalize(): out = ((y − bias) / (weight + 1e-10)) × scale + shift, per window and
//     channel of the last normalize(). naive_residual adds the config's naive_base
//     forecast of the window (models/naive_forecast.hpp, period = a day of the config's
//     freq) instead of the shift: the network forecasts the correction to that naive
//     forecast, in units of the window's scale, so an output of `bias` is the naive forecast.
//     linear_residual does the same with a linear forecast instead of a naive one: per
//     channel, last + Σ_s (x_enc[s] − last) · linear_base[s, t], the map from the weights
//     (tools/train_informer.py fits it by ridge regression on the train split and freezes it).
//   * Only for configs with enc_in == dec_in == c_out (parse_config enforces it).
// Threading: one window batch at a time per object (it keeps scratch and statistics).
#pragma once

#include <vector>

#include "models/backend.hpp"
#include "models/informer_config.hpp"
#include "models/informer_weights.hpp"
#include "models/tensor.hpp"

namespace kinformer::models {

class InstanceNorm {
 public:
  /// The normalised copy of `in`; valid until the next call. Keeps the statistics.
  ForecastInput normalize(const InformerConfig& config, const InformerWeights& weights, const ForecastInput& in);

  /// Maps the model's output [B, pred_len, C] back, in place.
  void denormalize(const InformerConfig& config, const InformerWeights& weights, Tensor& out) const;

 private:
  std::vector<double> shift_, scale_;  // [B, C]
  std::vector<float> base_;            // [B, pred_len, C], the residual kinds only
  Tensor x_enc_, x_dec_;
};

}  // namespace kinformer::models
