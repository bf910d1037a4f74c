#include "models/reference_backend.hpp"

#include <algorithm>

#include "models/reference_layers.hpp"

namespace kinformer::models {
namespace {

void record(Trace* trace, const std::string& name, const Tensor& t) {
  if (trace) (*trace)[name] = t;
}

}  // namespace

void ReferenceBackend::run(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace) {
  namespace ref = reference;
  const InformerConfig& c = config_;
  const InformerWeights& w = *weights_;
  // Encoder: attention layers interleaved with distilling convs, then LayerNorm (§2 steps 1-5).
  Tensor x = ref::data_embedding(in.x_enc, in.x_mark_enc, w.enc_embedding);
  record(trace, "enc_embedding", x);
  for (size_t i = 0; i < w.encoder_layers.size(); ++i) {
    x = ref::encoder_layer(w.encoder_layers[i], x, c, sampler);
    record(trace, "enc_layer" + std::to_string(i), x);
    if (i < w.distil_layers.size()) {
      x = ref::distil_layer(w.distil_layers[i], x);
      record(trace, "enc_distil" + std::to_string(i), x);
    }
  }
  ref::layer_norm(x, w.encoder_norm);
  record(trace, "enc_out", x);
  // Decoder (steps 6-8), projection of every step, keep the last pred_len (9-10).
  Tensor y = ref::data_embedding(in.x_dec, in.x_mark_dec, w.dec_embedding);
  record(trace, "dec_embedding", y);
  for (size_t i = 0; i < w.decoder_layers.size(); ++i) {
    y = ref::decoder_layer(w.decoder_layers[i], y, x, c, sampler);
    record(trace, "dec_layer" + std::to_string(i), y);
  }
  ref::layer_norm(y, w.decoder_norm);
  record(trace, "dec_out", y);
  Tensor projected = ref::dense(y, w.projection);
  const int64_t b_n = projected.dim(0), l_dec = projected.dim(1), c_out = projected.dim(2), keep = c.pred_len;
  out.resize({b_n, keep, c_out});
  for (int64_t b = 0; b < b_n; ++b)
    std::copy_n(projected.ptr() + (b * l_dec + (l_dec - keep)) * c_out, keep * c_out, out.ptr() + b * keep * c_out);
  record(trace, "output", out);
}

}  // namespace kinformer::models
