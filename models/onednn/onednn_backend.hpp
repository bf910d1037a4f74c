// models/onednn/onednn_backend.hpp
//
// OneDnnBackend: the Informer forward pass on oneDNN 2.6 CPU primitives
// (deps-notes.md §4): matmul for every Linear and the attention products (bias,
// GELU and residual add fused as post-ops), convolution for the token and the
// distilling convs (BatchNorm folded into the distil conv, ELU as a post-op),
// max pooling, softmax, layer normalisation. What oneDNN has no primitive for —
// ProbSparse's sampled sparsity measure and top-u selection, gathers, the
// cumulative-sum context — runs in OpenMP loops around the primitives.
//
// Contract (beyond Backend's)
//   * One execution plan per input shape (B, L_enc, L_dec): primitives and every
//     buffer are created on the first call with that shape and reused; later
//     calls allocate nothing (user-managed oneDNN scratchpad, no tracing).
//   * Threads: oneDNN's OpenMP runtime; set OMP_NUM_THREADS deliberately, and run
//     the process with OMP_WAIT_POLICY=PASSIVE next to other work (models/openmp_env.hpp).
//     A batch of at most serial_max_batch windows is planned and run with one
//     OpenMP thread (the caller's; its thread count is restored afterwards): with
//     PASSIVE each of the pass's parallel regions (primitives and our loops) wakes
//     the sleeping threads and waits for them at its barrier, which costs a small
//     batch more than the parallelism saves (etth1_s_24 at batch 1, 5 ms apart, on
//     a loaded 2-core box: median 0.5-0.6 ms on one thread, 1.0-1.1 ms on two,
//     with a multi-ms tail when the second thread waits for a core).
//   * Precision bf16 (opt-in): every Linear and the distilling conv take bf16
//     weights (converted once: linears per backend, the conv per plan, as its fp32
//     weights are reordered per plan) and bf16 copies of their inputs, and
//     accumulate into fp32 outputs; embeddings' token conv, attention score and
//     context products, softmax, LayerNorm, ProbSparse selection and every
//     residual stay fp32. oneDNN picks AMX / AVX512_BF16 kernels where the CPU has
//     them and emulates (slowly) where it does not.
// Where: the weights rearranged once (models/onednn/weights.hpp), the primitive
// wrappers (primitives.hpp), the forward pass as plan steps (graph.hpp), the plans
// per shape (plan_cache.hpp). Heavy headers (dnnl.hpp) stay out of this one.
#pragma once

#include <memory>

#include "models/backend.hpp"

namespace kinformer::models {
namespace onednn {
class PlanCache;
}  // namespace onednn

class OneDnnBackend final : public Backend {
 public:
  OneDnnBackend(InformerConfig config, std::shared_ptr<const InformerWeights> weights,
                Precision precision = Precision::fp32, int64_t serial_max_batch = 0);
  ~OneDnnBackend() override;
  std::string_view name() const override { return "onednn"; }
  Precision precision() const { return precision_; }

  /// OpenMP threads a batch of `batch` windows runs on: 1 up to serial_max_batch,
  /// else the calling thread's omp_get_max_threads().
  int threads_for(int64_t batch) const;

  /// Number of cached execution plans (one per distinct input shape).
  size_t plan_count() const;

 protected:
  void run(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace) override;

 private:
  Precision precision_;
  int64_t serial_max_batch_;
  std::unique_ptr<onednn::PlanCache> plans_;
};

}  // namespace kinformer::models
