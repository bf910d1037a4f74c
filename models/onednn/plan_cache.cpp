#include "models/onednn/plan_cache.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "models/model_error.hpp"
#include "models/onednn/graph.hpp"

namespace kinformer::models::onednn {

PlanCache::PlanCache(const InformerConfig& config, const InformerWeights& weights, bool bf16)
    : config_(config), weights_(weights), rearranged_(rearrange(weights)) {
  engine_.bf16 = bf16;
}

std::unique_ptr<Plan> PlanCache::build(const ForecastInput& in) {
  const int64_t b_n = in.x_enc.dim(0), l_enc = in.x_enc.dim(1), l_dec = in.x_dec.dim(1);
  auto plan = std::make_unique<Plan>();
  PlanBuilder pb(engine_, *plan, b_n, config_.d_model);
  plan->x_enc = pb.alloc(in.x_enc.size());
  plan->x_mark_enc = pb.alloc(in.x_mark_enc.size());
  plan->x_dec = pb.alloc(in.x_dec.size());
  plan->x_mark_dec = pb.alloc(in.x_mark_dec.size());
  plan->projected = pb.alloc(b_n * l_dec * config_.c_out);
  record_forward_pass(pb, config_, weights_, rearranged_, b_n, l_enc, l_dec);
  // One user scratchpad, as large as the largest primitive needs, shared by all (steps run in order).
  size_t scratch = 1;
  for (const auto& s : plan->steps)
    if (s.primitive) scratch = std::max(scratch, s.scratchpad.get_size());
  memory pad({{static_cast<int64_t>(scratch)}, memory::data_type::u8, tag::a}, engine_.eng);
  plan->buffers.push_back(pad);
  for (auto& s : plan->steps) {
    if (!s.primitive) continue;
    s.args[DNNL_ARG_SCRATCHPAD] = memory(s.scratchpad, engine_.eng, pad.get_data_handle());
    for (const auto& [arg, mem] : s.args) s.c_args.push_back({arg, mem.get()});
  }
  return plan;
}

void PlanCache::execute(Plan& plan) {
  for (auto& s : plan.steps) {
    if (s.primitive) {
      dnnl::error::wrap_c_api(dnnl_primitive_execute(s.primitive->get(), engine_.strm.get(),
                                                     static_cast<int>(s.c_args.size()), s.c_args.data()),
                              "could not execute a primitive");
    } else {
      engine_.strm.wait();
      s.loop();
    }
  }
  engine_.strm.wait();
}

void PlanCache::run(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace) {
  const int64_t b_n = in.x_enc.dim(0), l_enc = in.x_enc.dim(1), l_dec = in.x_dec.dim(1);
  const ShapeKey key{b_n, l_enc, l_dec};
  try {
    auto it = plans_.find(key);
    if (it == plans_.end()) it = plans_.emplace(key, build(in)).first;
    Plan& plan = *it->second;
    std::memcpy(fptr(plan.x_enc), in.x_enc.ptr(), static_cast<size_t>(in.x_enc.size()) * 4);
    std::memcpy(fptr(plan.x_mark_enc), in.x_mark_enc.ptr(), static_cast<size_t>(in.x_mark_enc.size()) * 4);
    std::memcpy(fptr(plan.x_dec), in.x_dec.ptr(), static_cast<size_t>(in.x_dec.size()) * 4);
    std::memcpy(fptr(plan.x_mark_dec), in.x_mark_dec.ptr(), static_cast<size_t>(in.x_mark_dec.size()) * 4);
    plan.sampler = &sampler;
    plan.trace = trace;
    execute(plan);
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

}  // namespace kinformer::models::onednn
