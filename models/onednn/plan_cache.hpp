// models/onednn/plan_cache.hpp
//
// PlanCache: one oneDNN backend's execution plans, one per input shape (B, L_enc,
// L_dec), with the Engine and the rearranged weights they run on (internal to
// models/onednn/; OneDnnBackend owns one).
//
// Contract
//   * run() builds the shape's plan on its first call (inputs, the forward pass of
//     models/onednn/graph.hpp, one user scratchpad as large as the largest primitive
//     needs) and reuses it afterwards: a later run allocates nothing.
//   * A plan whose build or run failed is dropped, so the next call rebuilds it.
//   * out is resized to [B, pred_len, c_out]: the projection's last pred_len rows.
// Threading: one thread at a time; the caller sets the OpenMP thread count, and must
// run a shape with the count it was built with (its primitives split work for it).
// Errors: ModelError (wrapping dnnl::error).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <tuple>

#include "models/backend.hpp"
#include "models/onednn/primitives.hpp"
#include "models/onednn/weights.hpp"

namespace kinformer::models::onednn {

class PlanCache {
 public:
  /// `config` and `weights` must outlive the cache (the owning backend holds both).
  PlanCache(const InformerConfig& config, const InformerWeights& weights, bool bf16);

  void run(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace);

  /// Number of cached plans.
  size_t size() const { return plans_.size(); }

 private:
  using ShapeKey = std::tuple<int64_t, int64_t, int64_t>;  // (B, L_enc, L_dec)

  std::unique_ptr<Plan> build(const ForecastInput& in);
  void execute(Plan& plan);

  const InformerConfig& config_;
  const InformerWeights& weights_;
  Engine engine_;
  RearrangedWeights rearranged_;
  std::map<ShapeKey, std::unique_ptr<Plan>> plans_;
};

}  // namespace kinformer::models::onednn
