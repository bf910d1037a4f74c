#include "models/instance_norm.hpp"

#include <cmath>

#include "models/naive_forecast.hpp"

namespace kinformer::models {
namespace {

constexpr double variance_epsilon = 1e-5;     // RevIN's eps, inside the square root
constexpr double affine_epsilon = 1e-5 * 1e-5;  // RevIN's eps², keeps a zero weight finite

// out[t, ch] = last + Σ_s (enc[s, ch] − last) · map[s, t], with last = enc[l_enc − 1, ch]:
// shifting the window shifts the forecast, whatever the map.
void linear_forecast(const Tensor& map, const float* enc, int64_t l_enc, int64_t channels, int64_t pred_len,
                     float* out) {
  for (int64_t ch = 0; ch < channels; ++ch) {
    const double last = enc[(l_enc - 1) * channels + ch];
    for (int64_t t = 0; t < pred_len; ++t) {
      double sum = last;
      for (int64_t s = 0; s < l_enc; ++s)
        sum += (enc[s * channels + ch] - last) * map.data[static_cast<size_t>(s * pred_len + t)];
      out[t * channels + ch] = static_cast<float>(sum);
    }
  }
}

}  // namespace

ForecastInput InstanceNorm::normalize(const InformerConfig& c, const InformerWeights& w, const ForecastInput& in) {
  const int64_t batch = in.x_enc.dim(0), l_enc = in.x_enc.dim(1), channels = in.x_enc.dim(2);
  const int64_t l_dec = in.x_dec.dim(1), label_rows = l_dec - c.pred_len;
  shift_.assign(static_cast<size_t>(batch * channels), 0.0);
  scale_.assign(static_cast<size_t>(batch * channels), 1.0);
  x_enc_.resize(in.x_enc.shape);
  x_dec_.resize(in.x_dec.shape);
  const bool affine = c.instance_norm_affine;
  const bool residual =
      c.instance_norm == InstanceNormKind::naive_residual || c.instance_norm == InstanceNormKind::linear_residual;
  base_.assign(residual ? static_cast<size_t>(batch * c.pred_len * channels) : 0, 0.f);
  for (int64_t b = 0; b < batch; ++b) {
    const float* enc = in.x_enc.ptr() + b * l_enc * channels;
    for (int64_t ch = 0; ch < channels; ++ch) {
      const auto at = static_cast<size_t>(b * channels + ch);
      if (c.instance_norm == InstanceNormKind::last_value) {
        shift_[at] = enc[(l_enc - 1) * channels + ch];
      } else {
        double sum = 0, squares = 0;
        for (int64_t t = 0; t < l_enc; ++t) sum += enc[t * channels + ch];
        const double mean = sum / static_cast<double>(l_enc);
        for (int64_t t = 0; t < l_enc; ++t) {
          const double d = enc[t * channels + ch] - mean;
          squares += d * d;
        }
        shift_[at] = mean;
        scale_[at] = std::sqrt(squares / static_cast<double>(l_enc) + variance_epsilon);
      }
    }
    if (c.instance_norm == InstanceNormKind::naive_residual)
      naive_forecast(c.naive_base, enc, static_cast<int>(l_enc), static_cast<int>(channels), c.pred_len,
                     steps_per_day(c.freq), base_.data() + b * c.pred_len * channels);
    if (c.instance_norm == InstanceNormKind::linear_residual)
      linear_forecast(w.instance_norm_linear_base, enc, l_enc, channels, c.pred_len,
                      base_.data() + b * c.pred_len * channels);
    auto normalize_rows = [&](const float* src, float* dst, int64_t rows) {
      for (int64_t t = 0; t < rows; ++t)
        for (int64_t ch = 0; ch < channels; ++ch) {
          const auto at = static_cast<size_t>(b * channels + ch);
          double v = (src[t * channels + ch] - shift_[at]) / scale_[at];
          if (affine) v = v * w.instance_norm_weight.data[static_cast<size_t>(ch)] + w.instance_norm_bias.data[static_cast<size_t>(ch)];
          dst[t * channels + ch] = static_cast<float>(v);
        }
    };
    normalize_rows(enc, x_enc_.ptr() + b * l_enc * channels, l_enc);
    float* dec = x_dec_.ptr() + b * l_dec * channels;
    normalize_rows(in.x_dec.ptr() + b * l_dec * channels, dec, label_rows);
    std::fill(dec + label_rows * channels, dec + l_dec * channels, 0.f);
  }
  return {x_enc_, in.x_mark_enc, x_dec_, in.x_mark_dec};
}

void InstanceNorm::denormalize(const InformerConfig& c, const InformerWeights& w, Tensor& out) const {
  const int64_t batch = out.dim(0), rows = out.dim(1), channels = out.dim(2);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < rows; ++t)
      for (int64_t ch = 0; ch < channels; ++ch) {
        const auto at = static_cast<size_t>(b * channels + ch);
        float& y = out.data[static_cast<size_t>((b * rows + t) * channels + ch)];
        double v = y;
        if (c.instance_norm_affine)
          v = (v - w.instance_norm_bias.data[static_cast<size_t>(ch)]) /
              (w.instance_norm_weight.data[static_cast<size_t>(ch)] + affine_epsilon);
        const double base = base_.empty() ? shift_[at] : base_[static_cast<size_t>((b * rows + t) * channels + ch)];
        y = static_cast<float>(v * scale_[at] + base);
      }
}

}  // namespace kinformer::models
