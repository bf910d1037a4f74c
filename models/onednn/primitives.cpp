#include "models/onednn/primitives.hpp"

#include <algorithm>
#include <cstring>

namespace kinformer::models::onednn {

PlanBuilder::PlanBuilder(Engine& engine, Plan& plan, int64_t batch, int64_t d_model)
    : engine_(engine), eng_(engine.eng), plan_(plan), b_(batch), d_(d_model) {}

void PlanBuilder::alloc_bf16_stage(int64_t elements) {
  if (!engine_.bf16) return;
  bf16_stage_ = memory({{std::max<int64_t>(elements, 1)}, memory::data_type::bf16, tag::a}, eng_);
  plan_.buffers.push_back(bf16_stage_);
}

memory PlanBuilder::alloc_bf16(int64_t elements) {
  memory m({{std::max<int64_t>(elements, 1)}, memory::data_type::bf16, tag::a}, eng_);
  plan_.buffers.push_back(m);
  return m;
}

memory PlanBuilder::bf16_rows(const memory& base, int64_t n, int64_t width) const {
  return memory({{n, width}, memory::data_type::bf16, tag::ab}, eng_, base.get_data_handle());
}

void PlanBuilder::linear_from_bf16(const memory& src_bf16_rows, const Tensor& w, const Tensor& b,
                                   const memory& dst_rows, bool accumulate) {
  memory bm = weight(b, {1, w.dim(0)}, tag::ab);
  matmul(src_bf16_rows, bf16_weight(w), &bm, dst_rows, accumulate);
}

memory PlanBuilder::to_bf16(const memory& src) {
  memory::desc src_md = src.get_desc();
  memory::desc dst_md(src_md.dims(), memory::data_type::bf16, plain_tag(src_md.dims().size()));
  memory dst(dst_md, eng_, bf16_stage_.get_data_handle());
  dnnl::reorder::primitive_desc pd(eng_, src_md, eng_, dst_md, attr_with({}));
  add(dnnl::reorder(pd), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}}, pd.scratchpad_desc());
  return dst;
}

memory PlanBuilder::bf16_weight(const Tensor& w) {
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

memory PlanBuilder::alloc(int64_t floats) {
  memory m({{std::max<int64_t>(floats, 1)}, memory::data_type::f32, tag::a}, eng_);
  plan_.buffers.push_back(m);
  return m;
}

memory PlanBuilder::view(const memory& base, const dims& d, tag t, int64_t offset) const {
  return memory({d, memory::data_type::f32, t}, eng_, fptr(base) + offset);
}

memory PlanBuilder::weight(const Tensor& t, const dims& d, tag tg) const {
  return memory({d, memory::data_type::f32, tg}, eng_, const_cast<float*>(t.ptr()));
}

void PlanBuilder::add(dnnl::primitive p, std::unordered_map<int, memory> args, const memory::desc& scratchpad) {
  Step s;
  s.primitive = std::move(p);
  s.args = std::move(args);
  s.scratchpad = scratchpad;
  plan_.steps.push_back(std::move(s));
}

void PlanBuilder::loop(std::function<void()> f) {
  Step s;
  s.loop = std::move(f);
  plan_.steps.push_back(std::move(s));
}

dnnl::primitive_attr PlanBuilder::attr_with(const dnnl::post_ops& po) {
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void PlanBuilder::matmul(const memory& src, const memory& weights, const memory* bias, const memory& dst,
                         bool accumulate, std::optional<dnnl::algorithm> activation) {
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

void PlanBuilder::linear(const memory& src_rows, const Tensor& w, const Tensor& b, const memory& dst_rows,
                         bool accumulate, std::optional<dnnl::algorithm> activation) {
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

void PlanBuilder::conv3(const memory& padded, int64_t len, int64_t channels, const Tensor& w, const Tensor& bias,
                        const memory& dst, bool elu, bool low_precision) {
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

void PlanBuilder::layer_norm(const memory& src, const memory& dst, int64_t rows, const NormWeights& w) {
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

void PlanBuilder::softmax_rows(const memory& buf, int64_t rows, int64_t cols) {
  memory::desc md({rows, cols}, memory::data_type::f32, tag::ab);
  dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, md, 1);
  dnnl::softmax_forward::primitive_desc pd(d, attr_with({}), eng_);
  memory m(md, eng_, buf.get_data_handle());
  add(dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, m}, {DNNL_ARG_DST, m}}, pd.scratchpad_desc());
}

void PlanBuilder::max_pool(const memory& src, int64_t len, const memory& dst) {
  memory::desc src_md({b_, d_, len}, memory::data_type::f32, tag::nwc);
  memory::desc dst_md({b_, d_, (len - 1) / 2 + 1}, memory::data_type::f32, tag::nwc);
  dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, src_md, dst_md, {2},
                                {3}, {1}, {1});
  dnnl::pooling_forward::primitive_desc pd(d, attr_with({}), eng_);
  add(dnnl::pooling_forward(pd),
      {{DNNL_ARG_SRC, memory(src_md, eng_, src.get_data_handle())}, {DNNL_ARG_DST, memory(dst_md, eng_, dst.get_data_handle())}},
      pd.scratchpad_desc());
}

void PlanBuilder::circular_pad(const memory& src, int64_t len, int64_t channels, const memory& padded) {
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

void PlanBuilder::copy(const memory& src, const memory& dst, int64_t floats) {
  const float* s = fptr(src);
  float* d = fptr(dst);
  loop([=] { std::memcpy(d, s, static_cast<size_t>(floats) * 4); });
}

void PlanBuilder::record(const char* name, const memory& buf, Shape shape) {
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

}  // namespace kinformer::models::onednn
