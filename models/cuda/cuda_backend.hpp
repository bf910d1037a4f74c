// models/cuda/cuda_backend.hpp
//
// CudaBackend: the Informer forward pass on one NVIDIA GPU (sm_90, Hopper): cuBLAS
// strided-batched products for every Linear, the k=3 convolutions (three shifted
// products over a circularly padded buffer) and the attention products; cuDNN's
// softmax; own kernels for the rest (models/cuda/kernels.hpp). Numerics follow the
// oneDNN backend and the reference: the same sampler protocol (key samples and
// forced queries asked on the host, in forward order), fp32 with TF32 off by default.
//
// Contract (beyond Backend's)
//   * Weights are uploaded once, at construction; the backend owns one stream.
//   * One ForwardPlan per input shape (B, L_enc, L_dec), built on the first call
//     with that shape; later calls allocate nothing (allocations() stays put).
//   * With options.cuda_graphs (default), the first call of a shape runs eagerly and
//     then captures the pass as a CUDA graph; later calls replay it. A failed capture
//     is not an error: that plan runs eagerly and graph_failure() says why.
//     A call with a trace always runs eagerly.
//   * options.precision: fp32 (default, within 1e-4 of the reference), tf32, or
//     fp16/bf16 for the weight products (16-bit operands, fp32 accumulation and
//     activations; the attention products and the embedding stay fp32).
// Threading: one forecast at a time (as every Backend). Errors: BackendUnavailable
// from the constructor when the device is missing; BackendError for a failed CUDA,
// cuBLAS or cuDNN call (the plan of that shape is dropped; a sticky CUDA error
// leaves the backend unusable, as it leaves the CUDA context).
// Why cuBLAS and not cuDNN for the two k=3 convolutions: cuDNN has no circular
// padding (a pad kernel is needed either way), its legacy convolution API is
// deprecated in cuDNN 9 and its frontend is not installed here; once padded, a k=3
// convolution over time is exactly three products of shifted row blocks
// (gemm_mapping.hpp), under the same math-mode control (TF32 off) as every other
// product. BatchNorm, ELU and max-pool then run as one small kernel.
// Why own kernels for ProbSparse: it is not SDPA (sampled scores, a per-(batch, head)
// top-u, scatter into a mean/cumsum context), so cuDNN's fused attention does not fit.
// CUDA headers stay in the .cpp files: this header is plain C++.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "models/backend.hpp"

namespace kinformer::models {
namespace cuda {
class Device;
class ForwardPlan;
/// cuda_device_available() of backend.hpp.
bool device_available(std::string* why);
}  // namespace cuda

class CudaBackend final : public Backend {
 public:
  CudaBackend(InformerConfig config, std::shared_ptr<const InformerWeights> weights,
              BackendOptions options = {});
  ~CudaBackend() override;
  std::string_view name() const override { return "cuda"; }

  const BackendOptions& options() const { return options_; }
  /// Cached plans (one per distinct input shape) and how many of them replay a graph.
  size_t plan_count() const { return plans_.size(); }
  size_t graph_count() const;
  /// Device and pinned-host allocations made so far (weights, workspace, plans).
  int64_t allocations() const;
  /// Why the last graph capture failed; empty when none failed.
  const std::string& graph_failure() const { return graph_failure_; }

 protected:
  void run(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace) override;

 private:
  BackendOptions options_;
  std::unique_ptr<cuda::Device> device_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::unique_ptr<cuda::ForwardPlan>> plans_;
  std::string graph_failure_;
};

}  // namespace kinformer::models
