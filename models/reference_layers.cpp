#include "models/reference_layers.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/batch_norm.hpp"
#include "models/model_error.hpp"

namespace kinformer::models::reference {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw ModelError(std::string("reference backend: ") + what);
}

// Row r of a [B, L, D] tensor viewed as [B·L, D].
float* row(Tensor& t, int64_t r) { return t.ptr() + r * t.shape.back(); }
const float* row(const Tensor& t, int64_t r) { return t.ptr() + r * t.shape.back(); }

// Softmax of s[0..n) in place; -inf entries get 0.
void softmax(float* s, int64_t n) {
  float max_s = -INFINITY;
  for (int64_t i = 0; i < n; ++i) max_s = std::max(max_s, s[i]);
  float sum = 0.f;
  for (int64_t i = 0; i < n; ++i) sum += (s[i] = std::exp(s[i] - max_s));
  for (int64_t i = 0; i < n; ++i) s[i] /= sum;
}

float dot(const float* a, const float* b, int64_t n) {
  float s = 0.f;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

Tensor dense(const Tensor& x, const LinearWeights& w) {
  const int64_t out = w.weight.dim(0), in = w.weight.dim(1);
  require(x.shape.back() == in, "dense: input width differs from the weight");
  // Wᵀ [in, out] makes the inner loop contiguous (and vectorisable) over outputs.
  std::vector<float> wt(static_cast<size_t>(in * out));
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) wt[static_cast<size_t>(i * out + o)] = w.weight.data[static_cast<size_t>(o * in + i)];
  Shape shape = x.shape;
  shape.back() = out;
  Tensor y(shape);
  const int64_t rows = x.size() / in;
  for (int64_t r = 0; r < rows; ++r) {
    float* yr = row(y, r);
    std::copy(w.bias.data.begin(), w.bias.data.end(), yr);
    const float* xr = row(x, r);
    for (int64_t i = 0; i < in; ++i) {
      const float xi = xr[i];
      const float* wi = wt.data() + i * out;
      for (int64_t o = 0; o < out; ++o) yr[o] += xi * wi[o];
    }
  }
  return y;
}

Tensor circular_conv3(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const int64_t b_n = x.dim(0), len = x.dim(1), c = x.dim(2), o_n = weight.dim(0);
  require(weight.dim(1) == c && weight.dim(2) == 3, "circular_conv3: weight shape");
  // y[t, o] = bias[o] + Σ_j Σ_i W[o, i, j] · x[(t + j − 1) mod L, i]: a cross-correlation whose
  // padded sequence is [x[L−1], x[0..L−1], x[0]] (§3.1).
  std::vector<float> wt(static_cast<size_t>(3 * c * o_n));  // [(j, i), o]
  for (int64_t o = 0; o < o_n; ++o)
    for (int64_t i = 0; i < c; ++i)
      for (int64_t j = 0; j < 3; ++j) wt[static_cast<size_t>((j * c + i) * o_n + o)] = weight.data[static_cast<size_t>((o * c + i) * 3 + j)];
  Tensor y({b_n, len, o_n});
  for (int64_t b = 0; b < b_n; ++b)
    for (int64_t t = 0; t < len; ++t) {
      float* yr = row(y, b * len + t);
      std::copy(bias.data.begin(), bias.data.end(), yr);
      for (int64_t j = 0; j < 3; ++j) {
        const float* xr = row(x, b * len + (t + j - 1 + len) % len);
        for (int64_t i = 0; i < c; ++i) {
          const float xi = xr[i];
          const float* wi = wt.data() + (j * c + i) * o_n;
          for (int64_t o = 0; o < o_n; ++o) yr[o] += xi * wi[o];
        }
      }
    }
  return y;
}

void layer_norm(Tensor& x, const NormWeights& w) {
  const int64_t d = x.shape.back(), rows = x.size() / d;
  for (int64_t r = 0; r < rows; ++r) {
    float* xr = row(x, r);
    float mean = 0.f, var = 0.f;
    for (int64_t i = 0; i < d; ++i) mean += xr[i];
    mean /= static_cast<float>(d);
    for (int64_t i = 0; i < d; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    const float inv = 1.f / std::sqrt(var / static_cast<float>(d) + 1e-5f);
    for (int64_t i = 0; i < d; ++i) xr[i] = (xr[i] - mean) * inv * w.gamma.data[static_cast<size_t>(i)] + w.beta.data[static_cast<size_t>(i)];
  }
}

void gelu(Tensor& x) {
  for (auto& v : x.data) v = 0.5f * v * (1.f + std::erf(v * static_cast<float>(M_SQRT1_2)));
}

void relu(Tensor& x) {
  for (auto& v : x.data) v = std::max(v, 0.f);
}

void elu(Tensor& x) {
  for (auto& v : x.data) v = v > 0.f ? v : std::expm1(v);
}

void add(Tensor& x, const Tensor& y) {
  require(x.shape == y.shape, "add: shapes differ");
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] += y.data[i];
}

Tensor data_embedding(const Tensor& x, const Tensor& x_mark, const EmbeddingWeights& w) {
  Tensor out = circular_conv3(x, w.token_conv_weight, w.token_conv_bias);
  add(out, dense(x_mark, w.time));
  const int64_t len = x.dim(1), d = out.dim(2);
  for (int64_t b = 0; b < x.dim(0); ++b)
    for (int64_t t = 0; t < len; ++t) {
      float* o = row(out, b * len + t);
      const float* pe = w.positional.ptr() + t * d;  // the stored fp32 table (§3.1, §9.11)
      for (int64_t i = 0; i < d; ++i) o[i] += pe[i];
    }
  return out;
}

Tensor full_attention(const Tensor& q, const Tensor& k, const Tensor& v, int heads, bool causal) {
  const int64_t b_n = q.dim(0), l_q = q.dim(1), l_k = k.dim(1), dk = q.dim(2) / heads;
  const float scale = 1.f / std::sqrt(static_cast<float>(dk));
  Tensor context({b_n, heads, l_q, dk});
  std::vector<float> scores(static_cast<size_t>(l_k));
  for (int64_t b = 0; b < b_n; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t l = 0; l < l_q; ++l) {
        const float* ql = row(q, b * l_q + l) + h * dk;
        for (int64_t s = 0; s < l_k; ++s)
          scores[static_cast<size_t>(s)] = causal && s > l ? -INFINITY : scale * dot(ql, row(k, b * l_k + s) + h * dk, dk);
        softmax(scores.data(), l_k);
        float* c = context.ptr() + ((b * heads + h) * l_q + l) * dk;
        for (int64_t s = 0; s < l_k; ++s)
          for (int64_t e = 0; e < dk; ++e) c[e] += scores[static_cast<size_t>(s)] * row(v, b * l_k + s)[h * dk + e];
      }
  return context;
}

Tensor prob_attention(const Tensor& q, const Tensor& k, const Tensor& v, int heads, bool masked, int factor,
                      ProbSparseSampler& sampler) {
  const int b_n = static_cast<int>(q.dim(0)), l_q = static_cast<int>(q.dim(1)), l_k = static_cast<int>(k.dim(1));
  const int d = static_cast<int>(q.dim(2)), dk = d / heads;
  require(!masked || l_q == l_k, "masked ProbSparse attention needs L_Q == L_K");
  // Steps 1-5: counts, one shared key sample, sparsity measure, top-u per (batch, head).
  const int sample_k = prob_sample_count(factor, l_k), n_top = prob_sample_count(factor, l_q);
  std::vector<int32_t> idx(static_cast<size_t>(l_q) * sample_k), top(static_cast<size_t>(b_n) * heads * n_top);
  sampler.sample_keys(l_q, l_k, sample_k, idx.data());
  std::vector<float> m_scratch(static_cast<size_t>(b_n) * heads * l_q);
  std::vector<int32_t> order_scratch(m_scratch.size());
  select_queries(sampler, q.ptr(), k.ptr(), d, b_n, heads, dk, l_q, l_k, idx.data(), sample_k, n_top, top.data(),
                 m_scratch.data(), order_scratch.data(), false);
  const float scale = 1.f / std::sqrt(static_cast<float>(dk));
  Tensor context({b_n, heads, l_q, dk});
  std::vector<float> scores(static_cast<size_t>(l_k));
  for (int b = 0; b < b_n; ++b)
    for (int h = 0; h < heads; ++h) {
      float* ctx = context.ptr() + (static_cast<int64_t>(b) * heads + h) * l_q * dk;
      // Step 7: the initial context. Masked: the running *sum* of V (§9.1); unmasked: the mean of V.
      std::vector<float> acc(static_cast<size_t>(dk), 0.f);
      for (int s = 0; s < l_k; ++s) {
        const float* vs = row(v, static_cast<int64_t>(b) * l_k + s) + h * dk;
        for (int e = 0; e < dk; ++e) acc[static_cast<size_t>(e)] += vs[e];
        if (masked) std::copy(acc.begin(), acc.end(), ctx + static_cast<int64_t>(s) * dk);
      }
      if (!masked)
        for (int l = 0; l < l_q; ++l)
          for (int e = 0; e < dk; ++e) ctx[static_cast<int64_t>(l) * dk + e] = acc[static_cast<size_t>(e)] / static_cast<float>(l_k);
      // Steps 6, 8, 9: selected queries attend to every key (causally by their own position when masked).
      for (int r = 0; r < n_top; ++r) {
        const int pos = top[(static_cast<size_t>(b) * heads + h) * n_top + r];
        const float* qp = row(q, static_cast<int64_t>(b) * l_q + pos) + h * dk;
        for (int s = 0; s < l_k; ++s)
          scores[static_cast<size_t>(s)] = masked && s > pos ? -INFINITY : scale * dot(qp, row(k, static_cast<int64_t>(b) * l_k + s) + h * dk, dk);
        softmax(scores.data(), l_k);
        float* c = ctx + static_cast<int64_t>(pos) * dk;
        std::fill(c, c + dk, 0.f);
        for (int s = 0; s < l_k; ++s) {
          const float* vs = row(v, static_cast<int64_t>(b) * l_k + s) + h * dk;
          for (int e = 0; e < dk; ++e) c[e] += scores[static_cast<size_t>(s)] * vs[e];
        }
      }
    }
  return context;
}

Tensor merge_heads(const Tensor& context, bool mix) {
  const int64_t b_n = context.dim(0), heads = context.dim(1), len = context.dim(2), dk = context.dim(3);
  Tensor out({b_n, len, heads * dk});
  if (mix) {  // the head-major buffer read back as L rows of H·d_k: a reinterpretation
    out.data = context.data;
    return out;
  }
  for (int64_t b = 0; b < b_n; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t l = 0; l < len; ++l)
        std::copy_n(context.ptr() + ((b * heads + h) * len + l) * dk, dk, row(out, b * len + l) + h * dk);
  return out;
}

Tensor attention_layer(const AttentionWeights& w, const Tensor& xq, const Tensor& xkv, AttentionKind kind, bool masked,
                       bool mix, const InformerConfig& config, ProbSparseSampler& sampler) {
  Tensor q = dense(xq, w.query), k = dense(xkv, w.key), v = dense(xkv, w.value);
  Tensor context = kind == AttentionKind::prob ? prob_attention(q, k, v, config.n_heads, masked, config.factor, sampler)
                                               : full_attention(q, k, v, config.n_heads, masked);
  return dense(merge_heads(context, mix), w.out);
}

namespace {

Tensor feed_forward(const LinearWeights& ffn1, const LinearWeights& ffn2, const Tensor& x, const InformerConfig& config) {
  Tensor hidden = dense(x, ffn1);
  if (config.activation == Activation::gelu) gelu(hidden);
  else relu(hidden);
  return dense(hidden, ffn2);
}

}  // namespace

Tensor encoder_layer(const EncoderLayerWeights& w, const Tensor& x, const InformerConfig& config,
                     ProbSparseSampler& sampler) {
  Tensor x1 = x;
  add(x1, attention_layer(w.attention, x, x, config.attn, false, false, config, sampler));
  layer_norm(x1, w.norm1);
  Tensor out = feed_forward(w.ffn1, w.ffn2, x1, config);
  add(out, x1);
  layer_norm(out, w.norm2);
  return out;
}

Tensor distil_layer(const DistilWeights& w, const Tensor& x) {
  Tensor y = circular_conv3(x, w.conv_weight, w.conv_bias);
  const int64_t b_n = y.dim(0), len = y.dim(1), d = y.dim(2);
  const std::vector<float> scale = batch_norm_scale(w);
  for (int64_t r = 0; r < b_n * len; ++r) {
    float* yr = row(y, r);
    for (int64_t i = 0; i < d; ++i) {
      const auto c = static_cast<size_t>(i);
      yr[i] = (yr[i] - w.bn_mean.data[c]) * scale[c] + w.bn_beta.data[c];
    }
  }
  elu(y);
  // MaxPool1d(3, stride 2, padding 1): window t covers 2t−1 .. 2t+1; padding never wins.
  const int64_t out_len = (len - 1) / 2 + 1;
  Tensor out({b_n, out_len, d}, -INFINITY);
  for (int64_t b = 0; b < b_n; ++b)
    for (int64_t t = 0; t < out_len; ++t)
      for (int64_t p = std::max<int64_t>(2 * t - 1, 0); p <= std::min(2 * t + 1, len - 1); ++p) {
        float* o = row(out, b * out_len + t);
        const float* in = row(y, b * len + p);
        for (int64_t i = 0; i < d; ++i) o[i] = std::max(o[i], in[i]);
      }
  return out;
}

Tensor decoder_layer(const DecoderLayerWeights& w, const Tensor& x, const Tensor& enc_out, const InformerConfig& config,
                     ProbSparseSampler& sampler) {
  Tensor x1 = x;
  add(x1, attention_layer(w.self_attention, x, x, config.attn, true, config.mix, config, sampler));
  layer_norm(x1, w.norm1);
  Tensor x2 = x1;
  add(x2, attention_layer(w.cross_attention, x1, enc_out, AttentionKind::full, false, false, config, sampler));
  layer_norm(x2, w.norm2);
  Tensor out = feed_forward(w.ffn1, w.ffn2, x2, config);
  add(out, x2);
  layer_norm(out, w.norm3);
  return out;
}

}  // namespace kinformer::models::reference
