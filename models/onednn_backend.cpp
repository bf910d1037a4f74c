#include "models/onednn_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>
#include <optional>
#include <unordered_map>

#include "models/model_error.hpp"

namespace kinformer::models {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dims = memory::dims;

float* fptr(const memory& m) { return static_cast<float*>(m.get_data_handle()); }

// Sets the calling thread's OpenMP thread count for one forecast and restores it
// (the count is per thread: other threads' forecasts are not affected).
class ThreadCountScope {
 public:
  explicit ThreadCountScope(int threads) : saved_(omp_get_max_threads()) {
    if (threads != saved_) omp_set_num_threads(threads);
  }
  ~ThreadCountScope() {
    if (omp_get_max_threads() != saved_) omp_set_num_threads(saved_);
  }
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int saved_;
};

// One step of an execution plan: a oneDNN primitive with its arguments, or one of
// our loops (which runs after the stream has drained).
struct Step {
  std::optional<dnnl::primitive> primitive;
  std::unordered_map<int, memory> args;  // owns the memory objects
  std::vector<dnnl_exec_arg_t> c_args;   // the same, for the C API: execute() without a per-call vector
  memory::desc scratchpad;
  std::function<void()> loop;
};

// Weights rearranged once per backend: stacked Q/K/V (and K/V) projections so one
// matmul computes them, and the distil conv with its BatchNorm folded in.
struct FusedAttention {
  Tensor qkv_weight, qkv_bias;  // [3D, D], [3D]: query, key, value rows
  Tensor kv_weight, kv_bias;    // [2D, D], [2D]: key, value rows (cross-attention)
};

Tensor stack_rows(std::initializer_list<const Tensor*> parts) {
  Tensor out;
  Shape shape = parts.begin()[0]->shape;
  shape[0] = 0;
  for (const Tensor* p : parts) {
    shape[0] += p->shape[0];
    out.data.insert(out.data.end(), p->data.begin(), p->data.end());
  }
  out.shape = shape;
  return out;
}

FusedAttention fuse(const AttentionWeights& a) {
  return {stack_rows({&a.query.weight, &a.key.weight, &a.value.weight}), stack_rows({&a.query.bias, &a.key.bias, &a.value.bias}),
          stack_rows({&a.key.weight, &a.value.weight}), stack_rows({&a.key.bias, &a.value.bias})};
}

// conv(x)·γ/√(var+ε) + (b − mean)·γ/√(var+ε) + β: BatchNorm in eval mode is affine per channel.
std::pair<Tensor, Tensor> fold_batch_norm(const DistilWeights& d) {
  Tensor w = d.conv_weight, b = d.conv_bias;
  const int64_t out = w.dim(0), per_out = w.size() / out;
  for (int64_t o = 0; o < out; ++o) {
    const auto c = static_cast<size_t>(o);
    const float k = d.bn_gamma.data[c] / std::sqrt(d.bn_var.data[c] + 1e-5f);
    for (int64_t i = 0; i < per_out; ++i) w.data[static_cast<size_t>(o * per_out + i)] *= k;
    b.data[c] = (b.data[c] - d.bn_mean.data[c]) * k + d.bn_beta.data[c];
  }
  return {std::move(w), std::move(b)};
}

}  // namespace

struct OneDnnBackend::Engine {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  std::vector<FusedAttention> encoder_attention, decoder_self, decoder_cross;
  std::vector<std::pair<Tensor, Tensor>> distil;  // folded conv weight, bias
  bool bf16 = false;
  // bf16 copies of the Linear weights ([in, out], "ba"), made on first use and kept
  // for the backend's life; keyed by the fp32 tensor's data (stable: weights_ and
  // the fused tensors above never change).
  std::unordered_map<const float*, memory> bf16_weights;
};

struct OneDnnBackend::Plan {
  std::vector<memory> buffers;  // every allocation of the plan, kept alive here
  std::vector<int32_t> idx, top, order;
  std::vector<float> m_scratch;
  std::vector<Step> steps;
  memory x_enc, x_mark_enc, x_dec, x_mark_dec, projected;
  int64_t out_len = 0;
  ProbSparseSampler* sampler = nullptr;  // valid during run() only
  Trace* trace = nullptr;                // ditto
};

namespace {

// Builds a Plan for one input shape: allocates buffers, creates primitives, and
// records the steps in execution order.
class PlanBuilder {
 public:
  using Plan = OneDnnBackend::Plan;

  PlanBuilder(OneDnnBackend::Engine& engine, const InformerConfig& c, Plan& plan, int64_t batch)
      : engine_(engine), eng_(engine.eng), c_(c), plan_(plan), b_(batch), d_(c.d_model), h_(c.n_heads),
        dk_(c.head_dim()) {}

  // bf16: one staging buffer for the bf16 copy of every low-precision input (steps
  // run in order, so one buffer as large as the largest input serves them all).
  void alloc_bf16_stage(int64_t elements) {
    if (!engine_.bf16) return;
    bf16_stage_ = memory({{std::max<int64_t>(elements, 1)}, memory::data_type::bf16, tag::a}, eng_);
    plan_.buffers.push_back(bf16_stage_);
  }

  bool bf16() const { return engine_.bf16; }

  // A bf16 buffer of its own (not the stage), for activations kept in bf16.
  memory alloc_bf16(int64_t elements) {
    memory m({{std::max<int64_t>(elements, 1)}, memory::data_type::bf16, tag::a}, eng_);
    plan_.buffers.push_back(m);
    return m;
  }

  memory bf16_rows(const memory& base, int64_t n, int64_t width) const {
    return memory({{n, width}, memory::data_type::bf16, tag::ab}, eng_, base.get_data_handle());
  }

  // A Linear whose input is already bf16 (the output of another bf16 Linear).
  void linear_from_bf16(const memory& src_bf16_rows, const Tensor& w, const Tensor& b, const memory& dst_rows,
                        bool accumulate) {
    memory bm = weight(b, {1, w.dim(0)}, tag::ab);
    matmul(src_bf16_rows, bf16_weight(w), &bm, dst_rows, accumulate);
  }

  // A reorder step writing a bf16 copy of `src` (same dims and layout) into the stage.
  memory to_bf16(const memory& src) {
    memory::desc src_md = src.get_desc();
    memory::desc dst_md(src_md.dims(), memory::data_type::bf16, plain_tag(src_md.dims().size()));
    memory dst(dst_md, eng_, bf16_stage_.get_data_handle());
    dnnl::reorder::primitive_desc pd(eng_, src_md, eng_, dst_md, attr_with({}));
    add(dnnl::reorder(pd), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}}, pd.scratchpad_desc());
    return dst;
  }

  static tag plain_tag(size_t rank) { return rank == 2 ? tag::ab : rank == 3 ? tag::abc : tag::abcd; }

  // The bf16 copy of a Linear weight as a [in, out] matrix, converted on first use.
  memory bf16_weight(const Tensor& w) {
    auto it = engine_.bf16_weights.find(w.ptr());
    if (it != engine_.bf16_weights.end()) return it->second;
    const int64_t out = w.dim(0), in = w.dim(1);
    memory plain = weight(w, {in, out}, tag::ba);
    memory converted({{in, out}, memory::data_type::bf16, tag::ba}, eng_);
    dnnl::stream s(eng_);
    dnnl::reorder(plain, converted).execute(s, plain, converted);
    s.wait();
    return engine_.bf16_weights.emplace(w.ptr(), converted).first->second;
  }

  memory alloc(int64_t floats) {
    memory m({{std::max<int64_t>(floats, 1)}, memory::data_type::f32, tag::a}, eng_);
    plan_.buffers.push_back(m);
    return m;
  }

  memory view(const memory& base, const dims& d, tag t, int64_t offset = 0) const {
    return memory({d, memory::data_type::f32, t}, eng_, fptr(base) + offset);
  }

  // oneDNN only reads weights; the const_cast lets a memory object wrap them in place.
  memory weight(const Tensor& t, const dims& d, tag tg) const {
    return memory({d, memory::data_type::f32, tg}, eng_, const_cast<float*>(t.ptr()));
  }

  void add(dnnl::primitive p, std::unordered_map<int, memory> args, const memory::desc& scratchpad) {
    Step s;
    s.primitive = std::move(p);
    s.args = std::move(args);
    s.scratchpad = scratchpad;
    plan_.steps.push_back(std::move(s));
  }

  void loop(std::function<void()> f) {
    Step s;
    s.loop = std::move(f);
    plan_.steps.push_back(std::move(s));
  }

  static dnnl::primitive_attr attr_with(const dnnl::post_ops& po) {
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
  }

  // dst (+)= src · weights (+ bias), then the optional activation.
  void matmul(const memory& src, const memory& weights, const memory* bias, const memory& dst, bool accumulate,
              std::optional<dnnl::algorithm> activation = std::nullopt) {
    dnnl::post_ops po;
    if (accumulate) po.append_sum(1.f);
    if (activation) po.append_eltwise(1.f, *activation, 0.f, 0.f);
    auto d = bias ? dnnl::matmul::desc(src.get_desc(), weights.get_desc(), bias->get_desc(), dst.get_desc())
                  : dnnl::matmul::desc(src.get_desc(), weights.get_desc(), dst.get_desc());
    dnnl::matmul::primitive_desc pd(d, attr_with(po), eng_);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (bias) args[DNNL_ARG_BIAS] = *bias;
    add(dnnl::matmul(pd), std::move(args), pd.scratchpad_desc());
  }

  // Linear over rows: dst [rows, out] (+)= src [rows, in] · Wᵀ + b, W stored [out, in] as PyTorch does.
  // With bf16: src and W in bf16, bias, accumulation, post-ops and dst in fp32.
  void linear(const memory& src_rows, const Tensor& w, const Tensor& b, const memory& dst_rows, bool accumulate,
              std::optional<dnnl::algorithm> activation = std::nullopt) {
    const int64_t out = w.dim(0), in = w.dim(1);
    memory bm = weight(b, {1, out}, tag::ab);
    if (engine_.bf16) {
      memory wm = bf16_weight(w);
      matmul(to_bf16(src_rows), wm, &bm, dst_rows, accumulate, activation);
      return;
    }
    memory wm = weight(w, {in, out}, tag::ba);
    matmul(src_rows, wm, &bm, dst_rows, accumulate, activation);
  }

  // Conv1d k=3 over an already circularly padded [B, L+2, C] buffer into dst [B, L, O] (nwc).
  // `low_precision`: with bf16, src and weights in bf16 (fp32 bias, accumulation, dst).
  void conv3(const memory& padded, int64_t len, int64_t channels, const Tensor& w, const Tensor& bias, const memory& dst,
             bool elu, bool low_precision = false) {
    const int64_t out = w.dim(0);
    const bool bf16 = low_precision && engine_.bf16;
    const auto dt = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    memory::desc src_f32({b_, channels, len + 2}, memory::data_type::f32, tag::nwc);
    memory::desc src_md({b_, channels, len + 2}, dt, tag::nwc);
    memory::desc dst_md({b_, out, len}, memory::data_type::f32, tag::nwc);
    memory::desc any_w({out, channels, 3}, dt, tag::any);
    memory src(src_f32, eng_, padded.get_data_handle());
    if (bf16) {
      memory staged(src_md, eng_, bf16_stage_.get_data_handle());
      dnnl::reorder::primitive_desc rpd(eng_, src_f32, eng_, src_md, attr_with({}));
      add(dnnl::reorder(rpd), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, staged}}, rpd.scratchpad_desc());
      src = staged;
    }
    memory::desc bias_md({out}, memory::data_type::f32, tag::a);
    dnnl::post_ops po;
    if (elu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_elu, 1.f, 0.f);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
                                      any_w, bias_md, dst_md, {1}, {0}, {0});
    dnnl::convolution_forward::primitive_desc pd(d, attr_with(po), eng_);
    // Weights into the layout the chosen kernel wants, once per plan.
    memory plain = weight(w, {out, channels, 3}, tag::oiw);
    memory wm(pd.weights_desc(), eng_);
    plan_.buffers.push_back(wm);
    dnnl::stream s(eng_);
    dnnl::reorder(plain, wm).execute(s, plain, wm);
    s.wait();
    add(dnnl::convolution_forward(pd),
        {{DNNL_ARG_SRC, src},
         {DNNL_ARG_WEIGHTS, wm},
         {DNNL_ARG_BIAS, weight(bias, {out}, tag::a)},
         {DNNL_ARG_DST, memory(dst_md, eng_, dst.get_data_handle())}},
        pd.scratchpad_desc());
  }

  void layer_norm(const memory& src, const memory& dst, int64_t rows, const NormWeights& w) {
    memory::desc md({rows, d_}, memory::data_type::f32, tag::ab);
    dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, md, 1e-5f,
                                              dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift);
    dnnl::layer_normalization_forward::primitive_desc pd(d, attr_with({}), eng_);
    add(dnnl::layer_normalization_forward(pd),
        {{DNNL_ARG_SRC, memory(md, eng_, src.get_data_handle())},
         {DNNL_ARG_DST, memory(md, eng_, dst.get_data_handle())},
         {DNNL_ARG_SCALE, weight(w.gamma, {d_}, tag::a)},
         {DNNL_ARG_SHIFT, weight(w.beta, {d_}, tag::a)}},
        pd.scratchpad_desc());
  }

  void softmax_rows(const memory& buf, int64_t rows, int64_t cols) {
    memory::desc md({rows, cols}, memory::data_type::f32, tag::ab);
    dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, md, 1);
    dnnl::softmax_forward::primitive_desc pd(d, attr_with({}), eng_);
    memory m(md, eng_, buf.get_data_handle());
    add(dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, m}, {DNNL_ARG_DST, m}}, pd.scratchpad_desc());
  }

  void max_pool(const memory& src, int64_t len, const memory& dst) {
    memory::desc src_md({b_, d_, len}, memory::data_type::f32, tag::nwc);
    memory::desc dst_md({b_, d_, (len - 1) / 2 + 1}, memory::data_type::f32, tag::nwc);
    dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, src_md, dst_md, {2},
                                  {3}, {1}, {1});
    dnnl::pooling_forward::primitive_desc pd(d, attr_with({}), eng_);
    add(dnnl::pooling_forward(pd),
        {{DNNL_ARG_SRC, memory(src_md, eng_, src.get_data_handle())}, {DNNL_ARG_DST, memory(dst_md, eng_, dst.get_data_handle())}},
        pd.scratchpad_desc());
  }

  // Circular padding by one step at each end: [x[L−1], x[0..L−1], x[0]] per batch element.
  void circular_pad(const memory& src, int64_t len, int64_t channels, const memory& padded) {
    const float* s = fptr(src);
    float* p = fptr(padded);
    const int64_t b_n = b_;
    loop([=] {
#pragma omp parallel for schedule(static)
      for (int64_t b = 0; b < b_n; ++b) {
        const float* sb = s + b * len * channels;
        float* pb = p + b * (len + 2) * channels;
        std::memcpy(pb, sb + (len - 1) * channels, static_cast<size_t>(channels) * 4);
        std::memcpy(pb + channels, sb, static_cast<size_t>(len * channels) * 4);
        std::memcpy(pb + (len + 1) * channels, sb, static_cast<size_t>(channels) * 4);
      }
    });
  }

  void copy(const memory& src, const memory& dst, int64_t floats) {
    const float* s = fptr(src);
    float* d = fptr(dst);
    loop([=] { std::memcpy(d, s, static_cast<size_t>(floats) * 4); });
  }

  void record(const char* name, const memory& buf, Shape shape) {
    Plan* plan = &plan_;
    const float* s = fptr(buf);
    std::string key = name;
    loop([=] {
      if (!plan->trace) return;
      Tensor t(shape);
      std::memcpy(t.ptr(), s, static_cast<size_t>(t.size()) * 4);
      (*plan->trace)[key] = std::move(t);
    });
  }

  OneDnnBackend::Engine& engine_;
  const dnnl::engine& eng_;
  const InformerConfig& c_;
  Plan& plan_;
  const int64_t b_, d_, h_, dk_;
  memory bf16_stage_;  // bf16 only: see alloc_bf16_stage()
};

}  // namespace

OneDnnBackend::OneDnnBackend(InformerConfig config, std::shared_ptr<const InformerWeights> weights,
                             Precision precision, int64_t serial_max_batch)
    : Backend(std::move(config), std::move(weights)),
      precision_(precision),
      serial_max_batch_(serial_max_batch),
      engine_(std::make_unique<Engine>()) {
  engine_->bf16 = precision == Precision::bf16;
  for (const auto& l : weights_->encoder_layers) engine_->encoder_attention.push_back(fuse(l.attention));
  for (const auto& l : weights_->decoder_layers) {
    engine_->decoder_self.push_back(fuse(l.self_attention));
    engine_->decoder_cross.push_back(fuse(l.cross_attention));
  }
  for (const auto& d : weights_->distil_layers) engine_->distil.push_back(fold_batch_norm(d));
}

OneDnnBackend::~OneDnnBackend() = default;

int OneDnnBackend::threads_for(int64_t batch) const {
  return batch <= serial_max_batch_ ? 1 : omp_get_max_threads();
}

namespace {

// Shared buffers and the layer-level assembly of a plan.
class InformerPlan {
 public:
  using Plan = OneDnnBackend::Plan;

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
    Plan& p = pb.plan_;
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
    Plan* plan = &pb_.plan_;
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

  void build(const Plan& plan, const std::vector<FusedAttention>& enc_fused, const std::vector<FusedAttention>& dec_self,
             const std::vector<FusedAttention>& dec_cross, const std::vector<std::pair<Tensor, Tensor>>& distil,
             int64_t l_enc, int64_t l_dec) {
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
        pb_.conv3(padded_, len, d_, distil[i].first, distil[i].second, x1_, true, true);
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

void OneDnnBackend::run(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace) {
  const int64_t b_n = in.x_enc.dim(0), l_enc = in.x_enc.dim(1), l_dec = in.x_dec.dim(1);
  auto key = std::make_tuple(b_n, l_enc, l_dec);
  auto it = plans_.find(key);
  // A plan is built and run with the same thread count: its primitives split their work for it.
  const ThreadCountScope threads(threads_for(b_n));
  try {
    if (it == plans_.end()) {
      auto plan = std::make_unique<Plan>();
      PlanBuilder pb(*engine_, config_, *plan, b_n);
      plan->x_enc = pb.alloc(in.x_enc.size());
      plan->x_mark_enc = pb.alloc(in.x_mark_enc.size());
      plan->x_dec = pb.alloc(in.x_dec.size());
      plan->x_mark_dec = pb.alloc(in.x_mark_dec.size());
      plan->projected = pb.alloc(b_n * l_dec * config_.c_out);
      InformerPlan ip(pb, config_, *weights_, b_n, l_enc, l_dec);
      ip.build(*plan, engine_->encoder_attention, engine_->decoder_self, engine_->decoder_cross, engine_->distil, l_enc,
               l_dec);
      // One user scratchpad, as large as the largest primitive needs, shared by all (steps run in order).
      size_t scratch = 1;
      for (const auto& s : plan->steps)
        if (s.primitive) scratch = std::max(scratch, s.scratchpad.get_size());
      memory pad({{static_cast<int64_t>(scratch)}, memory::data_type::u8, tag::a}, engine_->eng);
      plan->buffers.push_back(pad);
      for (auto& s : plan->steps) {
        if (!s.primitive) continue;
        s.args[DNNL_ARG_SCRATCHPAD] = memory(s.scratchpad, engine_->eng, pad.get_data_handle());
        for (const auto& [arg, mem] : s.args) s.c_args.push_back({arg, mem.get()});
      }
      it = plans_.emplace(key, std::move(plan)).first;
    }
    Plan& plan = *it->second;
    std::memcpy(fptr(plan.x_enc), in.x_enc.ptr(), static_cast<size_t>(in.x_enc.size()) * 4);
    std::memcpy(fptr(plan.x_mark_enc), in.x_mark_enc.ptr(), static_cast<size_t>(in.x_mark_enc.size()) * 4);
    std::memcpy(fptr(plan.x_dec), in.x_dec.ptr(), static_cast<size_t>(in.x_dec.size()) * 4);
    std::memcpy(fptr(plan.x_mark_dec), in.x_mark_dec.ptr(), static_cast<size_t>(in.x_mark_dec.size()) * 4);
    plan.sampler = &sampler;
    plan.trace = trace;
    for (auto& s : plan.steps) {
      if (s.primitive) {
        dnnl::error::wrap_c_api(dnnl_primitive_execute(s.primitive->get(), engine_->strm.get(),
                                                       static_cast<int>(s.c_args.size()), s.c_args.data()),
                                "could not execute a primitive");
      } else {
        engine_->strm.wait();
        s.loop();
      }
    }
    engine_->strm.wait();
    plan.sampler = nullptr;
    plan.trace = nullptr;
    const int64_t c_out = config_.c_out, keep = config_.pred_len;
    out.resize({b_n, keep, c_out});
    const float* proj = fptr(plan.projected);
    for (int64_t b = 0; b < b_n; ++b)
      std::memcpy(out.ptr() + b * keep * c_out, proj + (b * l_dec + (l_dec - keep)) * c_out,
                  static_cast<size_t>(keep * c_out) * 4);
    if (trace) (*trace)["output"] = out;
  } catch (const dnnl::error& e) {
    plans_.erase(key);
    throw ModelError(std::string("onednn backend: ") + e.what());
  }
}

}  // namespace kinformer::models
