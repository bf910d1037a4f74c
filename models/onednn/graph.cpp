#include "models/onednn/graph.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "models/prob_sparse.hpp"

namespace kinformer::models::onednn {
namespace {

// Shared buffers and the layer-level assembly of a plan.
class InformerPlan {
 public:
  InformerPlan(PlanBuilder& pb, const InformerConfig& c, const InformerWeights& w, int64_t batch, int64_t l_enc,
               int64_t l_dec)
      : pb_(pb), c_(c), w_(w), b_(batch), d_(c.d_model), h_(c.n_heads), dk_(c.head_dim()), ff_(c.d_ff) {
    const int64_t l_max = std::max(l_enc, l_dec), width = std::max<int64_t>({d_, c.enc_in, c.dec_in});
    // The largest score matrix any attention call of this shape needs, per (batch, head).
    int64_t scores = 0, n_top_max = 1, sample_max = 1;
    auto note_self = [&](int64_t len) {
      const int64_t u = prob_sample_count(c.factor, static_cast<int>(len));
      scores = std::max(scores, c.attn == AttentionKind::prob ? u * len : len * len);
      n_top_max = std::max(n_top_max, u);
      sample_max = std::max(sample_max, static_cast<int64_t>(prob_sample_count(c.factor, static_cast<int>(len))));
    };
    int64_t len = l_enc;
    for (int i = 0; i < c.e_layers; ++i) {
      note_self(len);
      if (c.distil && i + 1 < c.e_layers) len = (len - 1) / 2 + 1;
    }
    enc_len_ = len;
    note_self(l_dec);
    scores = std::max(scores, l_dec * enc_len_);
    padded_ = pb.alloc(b_ * (l_max + 2) * width);
    x_ = pb.alloc(b_ * l_max * d_);
    x1_ = pb.alloc(b_ * l_max * d_);
    enc_out_ = pb.alloc(b_ * enc_len_ * d_);
    qkv_ = pb.alloc(b_ * l_max * 3 * d_);
    q_ = pb.alloc(b_ * l_dec * d_);
    kv_ = pb.alloc(b_ * enc_len_ * 2 * d_);
    qh_ = pb.alloc(b_ * l_max * d_);
    kh_ = pb.alloc(b_ * l_max * d_);
    vh_ = pb.alloc(b_ * l_max * d_);
    scores_ = pb.alloc(b_ * h_ * scores);
    context_ = pb.alloc(b_ * l_max * d_);
    selected_ = pb.alloc(b_ * h_ * n_top_max * dk_);
    merged_ = pb.alloc(b_ * l_max * d_);
    hidden_ = pb.alloc(pb.bf16() ? 1 : b_ * l_max * ff_);
    if (pb.bf16()) hidden_bf16_ = pb.alloc_bf16(b_ * l_max * ff_);
    pb.alloc_bf16_stage(b_ * (l_max + 2) * std::max<int64_t>(width, c.time_features()));
    Plan& p = pb.plan();
    p.idx.resize(static_cast<size_t>(l_max * sample_max));
    p.top.resize(static_cast<size_t>(b_ * h_ * n_top_max));
    p.m_scratch.resize(static_cast<size_t>(b_ * h_ * l_max));
    p.order.resize(p.m_scratch.size());
  }

  memory rows(const memory& buf, int64_t n, int64_t width) const { return pb_.view(buf, {n, width}, tag::ab); }

  void embedding(const memory& x, const memory& mark, int64_t len, int64_t channels, const EmbeddingWeights& w) {
    pb_.circular_pad(x, len, channels, padded_);
    pb_.conv3(padded_, len, channels, w.token_conv_weight, w.token_conv_bias, x_, false);
    pb_.linear(rows(mark, b_ * len, c_.time_features()), w.time.weight, w.time.bias, rows(x_, b_ * len, d_), true);
    float* out = fptr(x_);
    const float* pe = w.positional.ptr();
    const int64_t b_n = b_, d = d_;
    pb_.loop([=] {
#pragma omp parallel for collapse(2) schedule(static)
      for (int64_t b = 0; b < b_n; ++b)
        for (int64_t t = 0; t < len; ++t) {
          float* o = out + (b * len + t) * d;
          const float* row = pe + t * d;
          for (int64_t i = 0; i < d; ++i) o[i] += row[i];
        }
    });
  }

  // Head-major copy [B, H, L, d_k] of a [B, L, ·] projection block (row stride ld), times `scale`.
  void to_heads(const float* src, int64_t ld, int64_t len, const memory& dst, float scale) {
    float* d = fptr(dst);
    const int64_t b_n = b_, h_n = h_, dk = dk_;
    pb_.loop([=] {
#pragma omp parallel for collapse(2) schedule(static)
      for (int64_t b = 0; b < b_n; ++b)
        for (int64_t h = 0; h < h_n; ++h)
          for (int64_t l = 0; l < len; ++l) {
            const float* s = src + (b * len + l) * ld + h * dk;
            float* o = d + ((b * h_n + h) * len + l) * dk;
            for (int64_t e = 0; e < dk; ++e) o[e] = s[e] * scale;
          }
    });
  }

  // scores [B, H, rows, l_k] -> softmax -> · V [B, H, l_k, d_k] -> out [B, H, rows, d_k].
  void attend(const memory& queries, int64_t n_rows, int64_t l_k, const memory& out, std::function<void()> mask) {
    memory s = pb_.view(scores_, {b_, h_, n_rows, l_k}, tag::abcd);
    pb_.matmul(pb_.view(queries, {b_, h_, n_rows, dk_}, tag::abcd), pb_.view(kh_, {b_, h_, dk_, l_k}, tag::abdc), nullptr, s,
               false);
    if (mask) pb_.loop(std::move(mask));
    pb_.softmax_rows(scores_, b_ * h_ * n_rows, l_k);
    pb_.matmul(s, pb_.view(vh_, {b_, h_, l_k, dk_}, tag::abcd), nullptr, pb_.view(out, {b_, h_, n_rows, dk_}, tag::abcd),
               false);
  }

  // Canonical attention (§3.3) into context_ (head-major).
  void full_core(const float* q, int64_t ld_q, const float* k, const float* v, int64_t ld_kv, int64_t l_q, int64_t l_k,
                 bool causal) {
    const float scale = 1.f / std::sqrt(static_cast<float>(dk_));
    to_heads(q, ld_q, l_q, qh_, scale);
    to_heads(k, ld_kv, l_k, kh_, 1.f);
    to_heads(v, ld_kv, l_k, vh_, 1.f);
    std::function<void()> mask;
    if (causal) {
      float* s = fptr(scores_);
      const int64_t rows = b_ * h_;
      mask = [=] {
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t l = 0; l < l_q; ++l)
            for (int64_t j = l + 1; j < l_k; ++j) s[(r * l_q + l) * l_k + j] = -INFINITY;
      };
    }
    attend(qh_, l_q, l_k, context_, std::move(mask));
  }

  // ProbSparse (§3.4) into context_ (head-major); q, k, v are column blocks of rows `ld` apart.
  void prob_core(const float* q, const float* k, const float* v, int64_t ld, int64_t len, bool masked) {
    Plan* plan = &pb_.plan();
    const int l = static_cast<int>(len), sample_k = prob_sample_count(c_.factor, l), n_top = prob_sample_count(c_.factor, l);
    const int b_n = static_cast<int>(b_), h_n = static_cast<int>(h_), dk = static_cast<int>(dk_), ld_i = static_cast<int>(ld);
    const float scale = 1.f / std::sqrt(static_cast<float>(dk_));
    float* qh = fptr(qh_);
    pb_.loop([=] {
      plan->sampler->sample_keys(l, l, sample_k, plan->idx.data());
      select_queries(*plan->sampler, q, k, ld_i, b_n, h_n, dk, l, l, plan->idx.data(), sample_k, n_top, plan->top.data(),
                     plan->m_scratch.data(), plan->order.data(), true);
      // Only the selected queries are multiplied with every key: gather them, pre-scaled.
      const int32_t* top = plan->top.data();
#pragma omp parallel for collapse(2) schedule(static)
      for (int b = 0; b < b_n; ++b)
        for (int h = 0; h < h_n; ++h)
          for (int r = 0; r < n_top; ++r) {
            const int pos = top[(b * h_n + h) * n_top + r];
            const float* s = q + (static_cast<int64_t>(b) * l + pos) * ld + h * dk;
            float* o = qh + ((static_cast<int64_t>(b) * h_n + h) * n_top + r) * dk;
            for (int e = 0; e < dk; ++e) o[e] = s[e] * scale;
          }
    });
    to_heads(k, ld, len, kh_, 1.f);
    to_heads(v, ld, len, vh_, 1.f);
    std::function<void()> mask;
    if (masked) {
      float* s = fptr(scores_);
      mask = [=] {  // causal by each selected query's own position (§9.10)
        const int32_t* top = plan->top.data();
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < static_cast<int64_t>(b_n) * h_n * n_top; ++r)
          for (int64_t j = top[r] + 1; j < l; ++j) s[r * l + j] = -INFINITY;
      };
    }
    attend(qh_, n_top, len, selected_, std::move(mask));
    float* ctx = fptr(context_);
    const float* sel = fptr(selected_);
    const float* vh = fptr(vh_);
    pb_.loop([=] {
      const int32_t* top = plan->top.data();
#pragma omp parallel for collapse(2) schedule(static)
      for (int b = 0; b < b_n; ++b)
        for (int h = 0; h < h_n; ++h) {
          const int64_t bh = static_cast<int64_t>(b) * h_n + h;
          const float* vb = vh + bh * l * dk;
          float* cb = ctx + bh * l * dk;
          // Initial context: masked -> running sum of V (§9.1); unmasked -> mean of V.
          for (int e = 0; e < dk; ++e) cb[e] = vb[e];
          for (int t = 1; t < l; ++t)
            for (int e = 0; e < dk; ++e) cb[t * dk + e] = cb[(t - 1) * dk + e] + vb[t * dk + e];
          if (!masked)
            for (int t = 0; t < l; ++t)
              for (int e = 0; e < dk; ++e) cb[t * dk + e] = cb[(l - 1) * dk + e] / static_cast<float>(l);
          for (int r = 0; r < n_top; ++r)
            std::memcpy(cb + static_cast<int64_t>(top[bh * n_top + r]) * dk, sel + (bh * n_top + r) * dk,
                        static_cast<size_t>(dk) * 4);
        }
    });
  }

  // context_ [B, H, L, d_k] -> [B·L, D] rows: a reinterpretation with mix, else a transpose.
  memory merged(int64_t len, bool mix) {
    if (mix) return rows(context_, b_ * len, d_);
    const float* ctx = fptr(context_);
    float* out = fptr(merged_);
    const int64_t b_n = b_, h_n = h_, dk = dk_, d = d_;
    pb_.loop([=] {
#pragma omp parallel for collapse(2) schedule(static)
      for (int64_t b = 0; b < b_n; ++b)
        for (int64_t l = 0; l < len; ++l)
          for (int64_t h = 0; h < h_n; ++h)
            std::memcpy(out + (b * len + l) * d + h * dk, ctx + ((b * h_n + h) * len + l) * dk, static_cast<size_t>(dk) * 4);
    });
    return rows(merged_, b_ * len, d_);
  }

  // dst = src + SelfAttention(src), then LayerNorm.
  void self_attention_block(const memory& src, const memory& dst, int64_t len, const AttentionWeights& w,
                            const FusedAttention& fused, bool masked, bool mix, const NormWeights& norm) {
    pb_.linear(rows(src, b_ * len, d_), fused.qkv_weight, fused.qkv_bias, rows(qkv_, b_ * len, 3 * d_), false);
    const float* qkv = fptr(qkv_);
    if (c_.attn == AttentionKind::prob) prob_core(qkv, qkv + d_, qkv + 2 * d_, 3 * d_, len, masked);
    else full_core(qkv, 3 * d_, qkv + d_, qkv + 2 * d_, 3 * d_, len, len, masked);
    memory m = merged(len, mix);
    pb_.copy(src, dst, b_ * len * d_);
    pb_.linear(m, w.out.weight, w.out.bias, rows(dst, b_ * len, d_), true);
    pb_.layer_norm(dst, dst, b_ * len, norm);
  }

  // dst = src + FFN(src), then LayerNorm (§3.5).
  void feed_forward_block(const memory& src, const memory& dst, int64_t len, const LinearWeights& ffn1,
                          const LinearWeights& ffn2, const NormWeights& norm) {
    auto act = c_.activation == Activation::gelu ? dnnl::algorithm::eltwise_gelu_erf : dnnl::algorithm::eltwise_relu;
    if (pb_.bf16()) {
      // The hidden activations feed only the second Linear: written in bf16 at once
      // (GELU still in fp32), so no separate conversion pass over the widest tensor.
      memory hidden = pb_.bf16_rows(hidden_bf16_, b_ * len, ff_);
      pb_.linear(rows(src, b_ * len, d_), ffn1.weight, ffn1.bias, hidden, false, act);
      pb_.copy(src, dst, b_ * len * d_);
      pb_.linear_from_bf16(hidden, ffn2.weight, ffn2.bias, rows(dst, b_ * len, d_), true);
      pb_.layer_norm(dst, dst, b_ * len, norm);
      return;
    }
    pb_.linear(rows(src, b_ * len, d_), ffn1.weight, ffn1.bias, rows(hidden_, b_ * len, ff_), false, act);
    pb_.copy(src, dst, b_ * len * d_);
    pb_.linear(rows(hidden_, b_ * len, ff_), ffn2.weight, ffn2.bias, rows(dst, b_ * len, d_), true);
    pb_.layer_norm(dst, dst, b_ * len, norm);
  }

  void build(const Plan& plan, const RearrangedWeights& rearranged, int64_t l_enc, int64_t l_dec) {
    const auto& enc_fused = rearranged.encoder_attention;
    const auto& dec_self = rearranged.decoder_self;
    const auto& dec_cross = rearranged.decoder_cross;
    const auto& distil = rearranged.distil;
    // Encoder (§2 steps 1-5).
    embedding(plan.x_enc, plan.x_mark_enc, l_enc, c_.enc_in, w_.enc_embedding);
    pb_.record("enc_embedding", x_, {b_, l_enc, d_});
    int64_t len = l_enc;
    for (size_t i = 0; i < w_.encoder_layers.size(); ++i) {
      const auto& layer = w_.encoder_layers[i];
      self_attention_block(x_, x1_, len, layer.attention, enc_fused[i], false, false, layer.norm1);
      feed_forward_block(x1_, x_, len, layer.ffn1, layer.ffn2, layer.norm2);
      pb_.record(("enc_layer" + std::to_string(i)).c_str(), x_, {b_, len, d_});
      if (i < distil.size()) {
        pb_.circular_pad(x_, len, d_, padded_);
        pb_.conv3(padded_, len, d_, distil[i].weight, distil[i].bias, x1_, true, true);
        pb_.max_pool(x1_, len, x_);
        len = (len - 1) / 2 + 1;
        pb_.record(("enc_distil" + std::to_string(i)).c_str(), x_, {b_, len, d_});
      }
    }
    pb_.layer_norm(x_, enc_out_, b_ * len, w_.encoder_norm);
    pb_.record("enc_out", enc_out_, {b_, len, d_});
    // Decoder (steps 6-10).
    embedding(plan.x_dec, plan.x_mark_dec, l_dec, c_.dec_in, w_.dec_embedding);
    pb_.record("dec_embedding", x_, {b_, l_dec, d_});
    for (size_t i = 0; i < w_.decoder_layers.size(); ++i) {
      const auto& layer = w_.decoder_layers[i];
      self_attention_block(x_, x1_, l_dec, layer.self_attention, dec_self[i], true, c_.mix, layer.norm1);
      // Cross-attention: queries from the decoder, keys and values from enc_out.
      pb_.linear(rows(x1_, b_ * l_dec, d_), layer.cross_attention.query.weight, layer.cross_attention.query.bias,
                 rows(q_, b_ * l_dec, d_), false);
      pb_.linear(rows(enc_out_, b_ * len, d_), dec_cross[i].kv_weight, dec_cross[i].kv_bias, rows(kv_, b_ * len, 2 * d_),
                 false);
      full_core(fptr(q_), d_, fptr(kv_), fptr(kv_) + d_, 2 * d_, l_dec, len, false);
      memory m = merged(l_dec, false);
      pb_.copy(x1_, x_, b_ * l_dec * d_);
      pb_.linear(m, layer.cross_attention.out.weight, layer.cross_attention.out.bias, rows(x_, b_ * l_dec, d_), true);
      pb_.layer_norm(x_, x_, b_ * l_dec, layer.norm2);
      feed_forward_block(x_, x1_, l_dec, layer.ffn1, layer.ffn2, layer.norm3);
      pb_.copy(x1_, x_, b_ * l_dec * d_);
      pb_.record(("dec_layer" + std::to_string(i)).c_str(), x_, {b_, l_dec, d_});
    }
    pb_.layer_norm(x_, x1_, b_ * l_dec, w_.decoder_norm);
    pb_.record("dec_out", x1_, {b_, l_dec, d_});
    pb_.linear(rows(x1_, b_ * l_dec, d_), w_.projection.weight, w_.projection.bias, rows(plan.projected, b_ * l_dec, c_.c_out),
               false);
  }

 private:
  PlanBuilder& pb_;
  const InformerConfig& c_;
  const InformerWeights& w_;
  const int64_t b_, d_, h_, dk_, ff_;
  int64_t enc_len_ = 0;
  memory padded_, x_, x1_, enc_out_, qkv_, q_, kv_, qh_, kh_, vh_, scores_, context_, selected_, merged_, hidden_;
  memory hidden_bf16_;  // bf16 only: the FFN's hidden activations
};

}  // namespace

void record_forward_pass(PlanBuilder& pb, const InformerConfig& config, const InformerWeights& weights,
                         const RearrangedWeights& rearranged, int64_t batch, int64_t l_enc, int64_t l_dec) {
  InformerPlan graph(pb, config, weights, batch, l_enc, l_dec);
  graph.build(pb.plan(), rearranged, l_enc, l_dec);
}

}  // namespace kinformer::models::onednn
