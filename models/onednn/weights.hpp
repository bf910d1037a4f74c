// models/onednn/weights.hpp
//
// RearrangedWeights: the model's weights in the shapes the oneDNN plans want, made
// once per backend (internal to models/onednn/).
//
// Contract
//   * Each attention's Q/K/V projections are stacked [3D, D] (and K/V [2D, D] for
//     cross-attention), so one matmul computes them.
//   * Each distil conv has its eval-mode BatchNorm (models/batch_norm.hpp) folded into
//     its weight and bias: conv(x)·scale + (b − mean)·scale + β.
//   * Never changes after construction: plans and the bf16 copies key on its addresses.
// Pure C++: no oneDNN types.
#pragma once

#include <vector>

#include "models/informer_weights.hpp"
#include "models/tensor.hpp"

namespace kinformer::models::onednn {

struct FusedAttention {
  Tensor qkv_weight, qkv_bias;  // [3D, D], [3D]: query, key, value rows
  Tensor kv_weight, kv_bias;    // [2D, D], [2D]: key, value rows (cross-attention)
};

struct FoldedConv {
  Tensor weight, bias;  // [D, D, 3], [D]: the distil conv with its BatchNorm folded in
};

struct RearrangedWeights {
  std::vector<FusedAttention> encoder_attention, decoder_self, decoder_cross;  // one per layer
  std::vector<FoldedConv> distil;                                              // one per distil layer
};

RearrangedWeights rearrange(const InformerWeights& w);

}  // namespace kinformer::models::onednn
