// tests/support/forecast_windows.hpp
//
// Builders for inference tests: a small Informer config (fast on any backend) and
// seeded random forecast windows as actors::ForecastRequest, plus stacking
// windows into the tensors of one direct backend call.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "actors/inference_messages.hpp"
#include "models/informer_config.hpp"
#include "models/tensor.hpp"

namespace kinformer::testing {

/// d_model 32, 2 heads, d_ff 64, 2+1 layers, seq 40 / label 20 / pred 10, 3 channels.
inline models::InformerConfig small_informer() {
  models::InformerConfig c;
  c.enc_in = c.dec_in = c.c_out = 3;
  c.d_model = 32;
  c.n_heads = 2;
  c.d_ff = 64;
  c.seq_len = 40;
  c.label_len = 20;
  c.pred_len = 10;
  return c;
}

/// One window of `config`'s channels with the given lengths, values from `seed`.
inline actors::ForecastRequest window(const std::string& model, const models::InformerConfig& c,
                                      uint32_t seed, int32_t seq_len = -1, int32_t label_len = -1) {
  if (seq_len < 0) seq_len = c.seq_len;
  if (label_len < 0) label_len = c.label_len;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-2.f, 2.f), mark(-.5f, .5f);
  auto fill = [&](int32_t rows, int32_t channels, std::uniform_real_distribution<float>& d) {
    std::vector<float> v(static_cast<std::size_t>(rows) * static_cast<std::size_t>(channels));
    for (auto& x : v) x = d(rng);
    return v;
  };
  actors::ForecastRequest r;
  r.model = model;
  r.seq_len = seq_len;
  r.dec_len = label_len + c.pred_len;
  r.x_enc = fill(seq_len, c.enc_in, value);
  r.x_mark_enc = fill(seq_len, c.time_features(), mark);
  r.x_dec = fill(r.dec_len, c.dec_in, value);
  r.x_mark_dec = fill(r.dec_len, c.time_features(), mark);
  return r;
}

/// The four inputs of one backend call over `windows` (all of one shape).
struct StackedWindows {
  models::Tensor x_enc, x_mark_enc, x_dec, x_mark_dec;
};

inline StackedWindows stack(const std::vector<actors::ForecastRequest>& windows,
                            const models::InformerConfig& c) {
  StackedWindows s;
  const auto b = static_cast<int64_t>(windows.size());
  const int64_t seq = windows.front().seq_len, dec = windows.front().dec_len;
  s.x_enc = models::Tensor({b, seq, c.enc_in});
  s.x_mark_enc = models::Tensor({b, seq, c.time_features()});
  s.x_dec = models::Tensor({b, dec, c.dec_in});
  s.x_mark_dec = models::Tensor({b, dec, c.time_features()});
  s.x_enc.data.clear();
  s.x_mark_enc.data.clear();
  s.x_dec.data.clear();
  s.x_mark_dec.data.clear();
  for (const auto& w : windows) {
    s.x_enc.data.insert(s.x_enc.data.end(), w.x_enc.begin(), w.x_enc.end());
    s.x_mark_enc.data.insert(s.x_mark_enc.data.end(), w.x_mark_enc.begin(), w.x_mark_enc.end());
    s.x_dec.data.insert(s.x_dec.data.end(), w.x_dec.begin(), w.x_dec.end());
    s.x_mark_dec.data.insert(s.x_mark_dec.data.end(), w.x_mark_dec.begin(), w.x_mark_dec.end());
  }
  return s;
}

}  // namespace kinformer::testing
