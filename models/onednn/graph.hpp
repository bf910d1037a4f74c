// models/onednn/graph.hpp
//
// The Informer forward pass (informer-model.md §2) as a sequence of plan steps for
// one input shape (internal to models/onednn/): embeddings, encoder layers with
// their distilling convs, decoder layers, projection. The layer-level assembly lives
// here; each step's primitive is a PlanBuilder call (models/onednn/primitives.hpp).
//
// Contract
//   * record_forward_pass() allocates every activation buffer of the shape once,
//     sized for the largest layer, and records the steps into pb.plan(); the plan's
//     x_enc, x_mark_enc, x_dec, x_mark_dec and projected buffers must exist already.
//   * Buffers are shared between layers: steps run strictly in order.
//   * ProbSparse selection and the causal masks are loops that read the plan's
//     sampler at run time, so one plan serves every seed.
//   * With a trace, record() steps copy each layer's output into it (the golden
//     tests compare them with the official model's).
// Errors: dnnl::error from primitive creation.
#pragma once

#include <cstdint>

#include "models/informer_config.hpp"
#include "models/informer_weights.hpp"
#include "models/onednn/primitives.hpp"
#include "models/onednn/weights.hpp"

namespace kinformer::models::onednn {

void record_forward_pass(PlanBuilder& pb, const InformerConfig& config, const InformerWeights& weights,
                         const RearrangedWeights& rearranged, int64_t batch, int64_t l_enc, int64_t l_dec);

}  // namespace kinformer::models::onednn
