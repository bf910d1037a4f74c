#include "models/cuda/forward_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "models/cuda/cuda_check.hpp"
#include "models/cuda/kernels.hpp"
#include "models/model_error.hpp"

namespace kinformer::models::cuda {
namespace {

constexpr size_t alignment = 256;

// Hands out aligned byte offsets; the total is allocated once afterwards.
class Layout {
 public:
  size_t place(size_t bytes) {
    const size_t at = (total_ + alignment - 1) / alignment * alignment;
    total_ = at + bytes;
    return at;
  }
  size_t total() const { return total_; }

 private:
  size_t total_ = 0;
};

size_t floats(int64_t n) { return static_cast<size_t>(n) * sizeof(float); }
size_t ints(int64_t n) { return static_cast<size_t>(n) * sizeof(int32_t); }

void check_indices(const int32_t* v, int64_t n, int64_t limit, const char* what, size_t call) {
  for (int64_t i = 0; i < n; ++i)
    if (v[i] < 0 || v[i] >= limit)
      throw ModelError("cuda backend: the sampler's " + std::string(what) + " for ProbSparse call " +
                       std::to_string(call) + " has " + std::to_string(v[i]) + ", outside [0, " +
                       std::to_string(limit) + ")");
}

}  // namespace

ForwardPlan::ForwardPlan(Device& device, const InformerConfig& config, int64_t batch, int64_t l_enc,
                         int64_t l_dec)
    : dev_(device),
      c_(config),
      b_(batch),
      l_enc_(l_enc),
      l_dec_(l_dec),
      d_(config.d_model),
      h_(config.n_heads),
      dk_(config.head_dim()),
      ff_(config.d_ff),
      calls_(prob_sparse_calls(config, static_cast<int>(l_enc), static_cast<int>(l_dec))) {
  const int64_t ft = config.time_features(), bh = b_ * h_;
  // Pinned inputs: the four tensors, then per ProbSparse call its key sample, one
  // forced-queries flag per call, and per call the forced queries.
  Layout in;
  x_enc_at_ = in.place(floats(b_ * l_enc * config.enc_in));
  x_mark_enc_at_ = in.place(floats(b_ * l_enc * ft));
  x_dec_at_ = in.place(floats(b_ * l_dec * config.dec_in));
  x_mark_dec_at_ = in.place(floats(b_ * l_dec * ft));
  for (const auto& call : calls_) idx_at_.push_back(in.place(ints(int64_t{call.l_q} * call.sample_k)));
  flags_at_ = in.place(ints(std::max<int64_t>(1, static_cast<int64_t>(calls_.size()))));
  for (const auto& call : calls_) forced_at_.push_back(in.place(ints(bh * call.n_top)));
  in_bytes_ = in.total();

  // Sizes over every attention call of this shape.
  int64_t len = l_enc, scores = 0, n_top_max = 1;
  auto self_call = [&](int64_t l, size_t index) {
    if (index < calls_.size()) {
      scores = std::max(scores, bh * calls_[index].n_top * l);
      n_top_max = std::max<int64_t>(n_top_max, calls_[index].n_top);
    } else {
      scores = std::max(scores, bh * l * l);
    }
  };
  size_t index = 0;
  const bool prob = config.attn == AttentionKind::prob;
  for (int i = 0; i < config.e_layers; ++i) {
    self_call(len, prob ? index++ : calls_.size());
    if (config.distil && i + 1 < config.e_layers) len = (len - 1) / 2 + 1;
  }
  for (int i = 0; i < config.d_layers; ++i) self_call(l_dec, prob ? index++ : calls_.size());
  scores = std::max(scores, bh * l_dec * len);  // cross-attention to the encoder output
  const int64_t l_max = std::max(l_enc, l_dec), width = std::max<int64_t>({d_, config.enc_in, config.dec_in});
  const int64_t rows = b_ * l_max;

  Layout dev;
  const size_t in_at = dev.place(in_bytes_), padded_at = dev.place(floats(b_ * (l_max + 2) * width)),
               x_at = dev.place(floats(rows * d_)), x1_at = dev.place(floats(rows * d_)),
               y_at = dev.place(floats(rows * d_)), enc_out_at = dev.place(floats(b_ * l_enc * d_)),
               qkv_at = dev.place(floats(rows * 3 * d_)), kv_at = dev.place(floats(b_ * l_enc * 2 * d_)),
               qh_at = dev.place(floats(rows * d_)), kh_at = dev.place(floats(rows * d_)),
               vh_at = dev.place(floats(rows * d_)), context_at = dev.place(floats(rows * d_)),
               merged_at = dev.place(floats(rows * d_)), hidden_at = dev.place(floats(rows * ff_)),
               scores_at = dev.place(floats(scores)), probs_at = dev.place(floats(scores)),
               qsel_at = dev.place(floats(bh * n_top_max * dk_)),
               sel_at = dev.place(floats(bh * n_top_max * dk_)), m_at = dev.place(floats(bh * l_max)),
               top_at = dev.place(ints(bh * n_top_max)),
               projected_at = dev.place(floats(b_ * l_dec * config.c_out)),
               half_at =
                   dev.place(dev_.half() ? static_cast<size_t>(b_ * (l_max + 2) * std::max(d_, ff_)) * 2 : 0);
  out_bytes_ = floats(b_ * l_dec * config.c_out);

  block_ = dev_.allocate_device(dev.total());
  try {
    host_in_ = static_cast<char*>(dev_.allocate_pinned(in_bytes_));
    host_out_ = static_cast<float*>(dev_.allocate_pinned(out_bytes_));
  } catch (...) {
    dev_.free_pinned(host_in_);
    dev_.free_device(block_);
    throw;
  }
  char* base = static_cast<char*>(block_);
  auto at = [base](size_t offset) { return reinterpret_cast<float*>(base + offset); };
  in_ = base + in_at;
  padded_ = at(padded_at);
  x_ = at(x_at);
  x1_ = at(x1_at);
  y_ = at(y_at);
  enc_out_ = at(enc_out_at);
  qkv_ = at(qkv_at);
  kv_ = at(kv_at);
  qh_ = at(qh_at);
  kh_ = at(kh_at);
  vh_ = at(vh_at);
  context_ = at(context_at);
  merged_ = at(merged_at);
  hidden_ = at(hidden_at);
  scores_ = at(scores_at);
  probs_ = at(probs_at);
  qsel_ = at(qsel_at);
  sel_ = at(sel_at);
  m_ = at(m_at);
  top_ = reinterpret_cast<int32_t*>(base + top_at);
  projected_ = at(projected_at);
  half_ = base + half_at;
}

ForwardPlan::~ForwardPlan() {
  if (graph_) (void)cudaGraphExecDestroy(graph_);
  dev_.free_pinned(host_out_);
  dev_.free_pinned(host_in_);
  dev_.free_device(block_);
}

void ForwardPlan::stage(const ForecastInput& in, ProbSparseSampler& sampler) {
  std::memcpy(host_in_ + x_enc_at_, in.x_enc.ptr(), floats(in.x_enc.size()));
  std::memcpy(host_in_ + x_mark_enc_at_, in.x_mark_enc.ptr(), floats(in.x_mark_enc.size()));
  std::memcpy(host_in_ + x_dec_at_, in.x_dec.ptr(), floats(in.x_dec.size()));
  std::memcpy(host_in_ + x_mark_dec_at_, in.x_mark_dec.ptr(), floats(in.x_mark_dec.size()));
  auto* flags = reinterpret_cast<int32_t*>(host_in_ + flags_at_);
  for (size_t i = 0; i < calls_.size(); ++i) {
    const ProbSparseCall& call = calls_[i];
    auto* idx = reinterpret_cast<int32_t*>(host_in_ + idx_at_[i]);
    sampler.sample_keys(call.l_q, call.l_k, call.sample_k, idx);
    check_indices(idx, int64_t{call.l_q} * call.sample_k, call.l_k, "key sample", i);
    auto* forced = reinterpret_cast<int32_t*>(host_in_ + forced_at_[i]);
    const int batch = static_cast<int>(b_), heads = static_cast<int>(h_);
    flags[i] = sampler.forced_queries(batch, heads, call.n_top, forced) ? 1 : 0;
    if (flags[i]) check_indices(forced, b_ * h_ * call.n_top, call.l_q, "forced queries", i);
  }
}

void ForwardPlan::run_eager(Trace* trace) {
  trace_ = trace;
  try {
    enqueue();
  } catch (...) {
    trace_ = nullptr;
    throw;
  }
  trace_ = nullptr;
  KINFORMER_CUDA_CHECK(cudaStreamSynchronize(dev_.stream()));
}

bool ForwardPlan::capture(std::string* why) {
  cudaStream_t stream = dev_.stream();
  KINFORMER_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    enqueue();
  } catch (const std::exception& e) {
    (void)cudaStreamEndCapture(stream, &graph);
    if (graph) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    *why = std::string("capture failed: ") + e.what();
    return false;
  }
  cudaError_t status = cudaStreamEndCapture(stream, &graph);
  if (status == cudaSuccess) status = cudaGraphInstantiate(&graph_, graph, 0);
  if (graph) (void)cudaGraphDestroy(graph);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    graph_ = nullptr;
    *why = std::string("capture failed: ") + cudaGetErrorString(status);
    return false;
  }
  return true;
}

void ForwardPlan::replay() {
  KINFORMER_CUDA_CHECK(cudaGraphLaunch(graph_, dev_.stream()));
  KINFORMER_CUDA_CHECK(cudaStreamSynchronize(dev_.stream()));
}

void ForwardPlan::record(const char* name, const float* buffer, Shape shape) {
  if (!trace_) return;
  KINFORMER_CUDA_CHECK(cudaStreamSynchronize(dev_.stream()));
  Tensor t(std::move(shape));
  KINFORMER_CUDA_CHECK(cudaMemcpy(t.ptr(), buffer, floats(t.size()), cudaMemcpyDeviceToHost));
  (*trace_)[name] = std::move(t);
}

void ForwardPlan::linear(const float* x, int64_t rows, const LinearOnDevice& l, float* y, float beta) {
  if (dev_.half() && l.w16 != no_offset) {
    KINFORMER_CUDA_CHECK(to_16bit(x, half_, rows * l.in, dev_.precision() == Precision::bf16, dev_.stream()));
    dev_.gemm(true, true, rows, l.out, l.in, 1.f, {half_, l.in}, {dev_.w16(l.w16), l.in}, beta, y, l.out, 0,
              1);
  } else {
    dev_.gemm(false, true, rows, l.out, l.in, 1.f, {x, l.in}, {dev_.f(l.w), l.in}, beta, y, l.out, 0, 1);
  }
}

// y[b, t] = Σ_j padded[b, t + j] · tap_jᵀ: three strided-batched products over the
// batch whose A operands are the padded rows shifted by j (no im2col copy).
void ForwardPlan::conv3(const float* padded, int64_t len, int64_t channels,
                        const std::array<LinearOnDevice, 3>& taps, float* y) {
  const int64_t out = taps[0].out, stride = (len + 2) * channels;
  const bool sixteen_bit = dev_.half() && taps[0].w16 != no_offset;
  if (sixteen_bit)
    KINFORMER_CUDA_CHECK(
        to_16bit(padded, half_, b_ * stride, dev_.precision() == Precision::bf16, dev_.stream()));
  for (int64_t j = 0; j < 3; ++j) {
    const auto& tap = taps[static_cast<size_t>(j)];
    const void* a = sixteen_bit ? static_cast<const void*>(static_cast<const char*>(half_) + 2 * j * channels)
                                : static_cast<const void*>(padded + j * channels);
    const void* w = sixteen_bit ? dev_.w16(tap.w16) : static_cast<const void*>(dev_.f(tap.w));
    dev_.gemm(sixteen_bit, true, len, out, channels, 1.f, {a, channels, stride}, {w, channels, 0},
              j == 0 ? 0.f : 1.f, y, out, len * out, b_);
  }
}

void ForwardPlan::embedding(const float* x, const float* mark, int64_t len, int64_t channels,
                            const EmbeddingOnDevice& e, float* out) {
  KINFORMER_CUDA_CHECK(circular_pad(x, padded_, b_, len, channels, dev_.stream()));
  conv3(padded_, len, channels, e.taps, out);
  linear(mark, b_ * len, e.time, out, 1.f);  // accumulate the time-feature product
  KINFORMER_CUDA_CHECK(add_embedding_terms(out, dev_.f(e.conv_bias), dev_.f(e.time.b), dev_.f(e.positional),
                                           b_, len, d_, dev_.stream()));
}

void ForwardPlan::distil(float* x, int64_t len, const DistilOnDevice& d) {
  KINFORMER_CUDA_CHECK(circular_pad(x, padded_, b_, len, d_, dev_.stream()));
  conv3(padded_, len, d_, d.taps, y_);
  KINFORMER_CUDA_CHECK(distil_tail(y_, x, dev_.f(d.bias), dev_.f(d.bn_mean), dev_.f(d.bn_scale),
                                   dev_.f(d.bn_beta), b_, len, d_, dev_.stream()));
}

void ForwardPlan::add_norm(float* out, const float* residual, const float* y, size_t bias,
                           const NormOnDevice& norm, int64_t rows) {
  KINFORMER_CUDA_CHECK(add_layer_norm(out, residual, y, bias == no_offset ? nullptr : dev_.f(bias),
                                      dev_.f(norm.gamma), dev_.f(norm.beta), rows, d_, dev_.stream()));
}

void ForwardPlan::self_attention_block(const float* src, float* dst, int64_t len, const AttentionOnDevice& a,
                                       bool masked, bool mix, const NormOnDevice& norm, size_t& call) {
  linear(src, b_ * len, a.qkv, qkv_);
  const float* bias = dev_.f(a.qkv.b);
  KINFORMER_CUDA_CHECK(split_heads(qkv_, 3 * d_, 0, bias, qh_, b_, h_, len, dk_, dev_.stream()));
  KINFORMER_CUDA_CHECK(split_heads(qkv_, 3 * d_, d_, bias + d_, kh_, b_, h_, len, dk_, dev_.stream()));
  KINFORMER_CUDA_CHECK(
      split_heads(qkv_, 3 * d_, 2 * d_, bias + 2 * d_, vh_, b_, h_, len, dk_, dev_.stream()));
  if (c_.attn == AttentionKind::prob)
    prob_core(len, masked, call++);
  else
    full_core(len, len, masked);
  const float* merged = context_;  // mix: the head-major buffer read as [B, L, D] (§3.2)
  if (!mix) {
    KINFORMER_CUDA_CHECK(merge_heads(context_, merged_, b_, h_, len, dk_, dev_.stream()));
    merged = merged_;
  }
  linear(merged, b_ * len, a.out, y_);
  add_norm(dst, src, y_, a.out.b, norm, b_ * len);
}

void ForwardPlan::cross_attention_block(const float* src, const float* enc_out, int64_t enc_len, float* dst,
                                        const AttentionOnDevice& a, const NormOnDevice& norm) {
  const LinearOnDevice q = a.qkv.rows(0, d_), kv = a.qkv.rows(d_, 2 * d_);
  linear(src, b_ * l_dec_, q, qkv_);
  linear(enc_out, b_ * enc_len, kv, kv_);
  KINFORMER_CUDA_CHECK(split_heads(qkv_, d_, 0, dev_.f(q.b), qh_, b_, h_, l_dec_, dk_, dev_.stream()));
  KINFORMER_CUDA_CHECK(split_heads(kv_, 2 * d_, 0, dev_.f(kv.b), kh_, b_, h_, enc_len, dk_, dev_.stream()));
  KINFORMER_CUDA_CHECK(
      split_heads(kv_, 2 * d_, d_, dev_.f(kv.b) + d_, vh_, b_, h_, enc_len, dk_, dev_.stream()));
  full_core(l_dec_, enc_len, false);
  KINFORMER_CUDA_CHECK(merge_heads(context_, merged_, b_, h_, l_dec_, dk_, dev_.stream()));
  linear(merged_, b_ * l_dec_, a.out, y_);
  add_norm(dst, src, y_, a.out.b, norm, b_ * l_dec_);
}

void ForwardPlan::feed_forward_block(const float* src, float* dst, int64_t len, const LinearOnDevice& ffn1,
                                     const LinearOnDevice& ffn2, const NormOnDevice& norm) {
  linear(src, b_ * len, ffn1, hidden_);
  const auto act = c_.activation == models::Activation::gelu ? Activation::gelu : Activation::relu;
  KINFORMER_CUDA_CHECK(bias_activation(hidden_, dev_.f(ffn1.b), b_ * len, ff_, act, dev_.stream()));
  linear(hidden_, b_ * len, ffn2, y_);
  add_norm(dst, src, y_, ffn2.b, norm, b_ * len);
}

// ProbSparse (§3.4) on qh_/kh_/vh_ into context_ (head-major).
void ForwardPlan::prob_core(int64_t len, bool masked, size_t index) {
  const ProbSparseCall& call = calls_[index];
  const int64_t bh = b_ * h_, u = call.n_top;
  const int l = static_cast<int>(len), dk = static_cast<int>(dk_);
  const float scale = 1.f / std::sqrt(static_cast<float>(dk_));
  cudaStream_t s = dev_.stream();
  const auto* idx = reinterpret_cast<const int32_t*>(in_ + idx_at_[index]);
  const auto* flag = reinterpret_cast<const int32_t*>(in_ + flags_at_) + index;
  const auto* forced = reinterpret_cast<const int32_t*>(in_ + forced_at_[index]);
  KINFORMER_CUDA_CHECK(sparsity_measure(qh_, kh_, idx, call.sample_k, m_, bh, l, l, dk, s));
  KINFORMER_CUDA_CHECK(select_top(m_, bh, l, call.n_top, flag, forced, top_, s));
  KINFORMER_CUDA_CHECK(gather_rows(qh_, top_, qsel_, bh, l, call.n_top, dk, s));
  dev_.gemm(false, true, u, len, dk_, scale, {qsel_, dk_, u * dk_}, {kh_, dk_, len * dk_}, 0.f, scores_, len,
            u * len, bh);
  if (masked) KINFORMER_CUDA_CHECK(causal_mask(scores_, bh * u, u, len, top_, s));
  dev_.softmax(scores_, probs_, bh * u, len);
  dev_.gemm(false, false, u, dk_, len, 1.f, {probs_, len, u * len}, {vh_, dk_, len * dk_}, 0.f, sel_, dk_,
            u * dk_, bh);
  KINFORMER_CUDA_CHECK(initial_context(vh_, context_, bh, l, dk, masked, s));
  KINFORMER_CUDA_CHECK(scatter_rows(sel_, top_, context_, bh, l, call.n_top, dk, s));
}

// Canonical attention (§3.3) on qh_/kh_/vh_ into context_ (head-major).
void ForwardPlan::full_core(int64_t l_q, int64_t l_k, bool causal) {
  const int64_t bh = b_ * h_;
  const float scale = 1.f / std::sqrt(static_cast<float>(dk_));
  dev_.gemm(false, true, l_q, l_k, dk_, scale, {qh_, dk_, l_q * dk_}, {kh_, dk_, l_k * dk_}, 0.f, scores_,
            l_k, l_q * l_k, bh);
  if (causal) KINFORMER_CUDA_CHECK(causal_mask(scores_, bh * l_q, l_q, l_k, nullptr, dev_.stream()));
  dev_.softmax(scores_, probs_, bh * l_q, l_k);
  dev_.gemm(false, false, l_q, dk_, l_k, 1.f, {probs_, l_k, l_q * l_k}, {vh_, dk_, l_k * dk_}, 0.f, context_,
            dk_, l_q * dk_, bh);
}

void ForwardPlan::enqueue() {
  const WeightsOnDevice& w = dev_.weights();
  cudaStream_t s = dev_.stream();
  KINFORMER_CUDA_CHECK(cudaMemcpyAsync(in_, host_in_, in_bytes_, cudaMemcpyHostToDevice, s));
  auto input = [this](size_t at) { return reinterpret_cast<const float*>(in_ + at); };
  // Encoder (§2 steps 1-5): attention layers interleaved with distilling, then LayerNorm.
  float *cur = x_, *tmp = x1_;
  embedding(input(x_enc_at_), input(x_mark_enc_at_), l_enc_, c_.enc_in, w.enc_embedding, cur);
  record("enc_embedding", cur, {b_, l_enc_, d_});
  int64_t len = l_enc_;
  size_t call = 0;
  for (size_t i = 0; i < w.encoder_layers.size(); ++i) {
    const auto& layer = w.encoder_layers[i];
    self_attention_block(cur, tmp, len, layer.attention, false, false, layer.norm1, call);
    feed_forward_block(tmp, cur, len, layer.ffn1, layer.ffn2, layer.norm2);
    record(("enc_layer" + std::to_string(i)).c_str(), cur, {b_, len, d_});
    if (i < w.distil_layers.size()) {
      distil(cur, len, w.distil_layers[i]);
      len = (len - 1) / 2 + 1;
      record(("enc_distil" + std::to_string(i)).c_str(), cur, {b_, len, d_});
    }
  }
  add_norm(enc_out_, cur, nullptr, no_offset, w.encoder_norm, b_ * len);
  record("enc_out", enc_out_, {b_, len, d_});
  // Decoder (steps 6-8): masked self-attention (mix), cross-attention, FFN; then LayerNorm.
  embedding(input(x_dec_at_), input(x_mark_dec_at_), l_dec_, c_.dec_in, w.dec_embedding, cur);
  record("dec_embedding", cur, {b_, l_dec_, d_});
  for (size_t i = 0; i < w.decoder_layers.size(); ++i) {
    const auto& layer = w.decoder_layers[i];
    self_attention_block(cur, tmp, l_dec_, layer.self_attention, true, c_.mix, layer.norm1, call);
    cross_attention_block(tmp, enc_out_, len, cur, layer.cross_attention, layer.norm2);
    feed_forward_block(cur, tmp, l_dec_, layer.ffn1, layer.ffn2, layer.norm3);
    std::swap(cur, tmp);
    record(("dec_layer" + std::to_string(i)).c_str(), cur, {b_, l_dec_, d_});
  }
  add_norm(tmp, cur, nullptr, no_offset, w.decoder_norm, b_ * l_dec_);
  record("dec_out", tmp, {b_, l_dec_, d_});
  // Projection of every step (9); the host keeps the last pred_len (10).
  linear(tmp, b_ * l_dec_, w.projection, projected_);
  KINFORMER_CUDA_CHECK(
      bias_activation(projected_, dev_.f(w.projection.b), b_ * l_dec_, c_.c_out, Activation::none, s));
  KINFORMER_CUDA_CHECK(cudaMemcpyAsync(host_out_, projected_, out_bytes_, cudaMemcpyDeviceToHost, s));
}

}  // namespace kinformer::models::cuda
