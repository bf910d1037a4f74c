#include "models/cuda/cuda_backend.hpp"

#include <cstring>

#include "models/cuda/device.hpp"
#include "models/cuda/forward_plan.hpp"
#include "models/model_error.hpp"

namespace kinformer::models {

CudaBackend::CudaBackend(InformerConfig config, std::shared_ptr<const InformerWeights> weights,
                         BackendOptions options)
    : Backend(std::move(config), std::move(weights)), options_(options) {
  std::string why;
  if (!cuda::device_available(&why)) throw BackendUnavailable("backend 'cuda' is not available: " + why);
  device_ = std::make_unique<cuda::Device>(options_.cuda_device, options_.precision, *weights_);
}

CudaBackend::~CudaBackend() {
  plans_.clear();  // before the device: plans free into it
  device_.reset();
}

size_t CudaBackend::graph_count() const {
  size_t n = 0;
  for (const auto& [shape, plan] : plans_) n += plan->has_graph() ? 1 : 0;
  return n;
}

int64_t CudaBackend::allocations() const { return device_->allocations(); }

void CudaBackend::run(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace) {
  const int64_t b_n = in.x_enc.dim(0), l_enc = in.x_enc.dim(1), l_dec = in.x_dec.dim(1);
  const auto key = std::make_tuple(b_n, l_enc, l_dec);
  device_->make_current();
  auto it = plans_.find(key);
  const bool new_plan = it == plans_.end();
  try {
    if (new_plan)
      it = plans_.emplace(key, std::make_unique<cuda::ForwardPlan>(*device_, config_, b_n, l_enc, l_dec))
               .first;
    cuda::ForwardPlan& plan = *it->second;
    plan.stage(in, sampler);
    if (plan.has_graph() && !trace) {
      plan.replay();
    } else {
      plan.run_eager(trace);
      // Capture after the first (eager) run of a shape: libraries and kernels are loaded
      // by then, and this call's answer does not wait for the capture.
      if (new_plan && options_.cuda_graphs) {
        std::string why;
        if (!plan.capture(&why)) graph_failure_ = why;
      }
    }
    const int64_t c_out = config_.c_out, keep = config_.pred_len;
    out.resize({b_n, keep, c_out});
    const float* projected = plan.projected();
    for (int64_t b = 0; b < b_n; ++b)
      std::memcpy(out.ptr() + b * keep * c_out, projected + (b * l_dec + (l_dec - keep)) * c_out,
                  static_cast<size_t>(keep * c_out) * sizeof(float));
    if (trace) (*trace)["output"] = out;
  } catch (const BackendError&) {
    plans_.erase(key);
    throw;
  }
}

}  // namespace kinformer::models
