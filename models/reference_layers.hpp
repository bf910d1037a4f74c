// models/reference_layers.hpp
//
// The Informer's layers as plain, readable C++ (fp32, single thread): each function
// is one paragraph of informer-model.md §3 and says which. The reference backend
// composes them; tests call them one by one against the golden files.
//
// Contract
//   * Activations are Tensors [B, L, D] (row-major); weights are the PyTorch-shaped
//     tensors of InformerWeights, used as stored (no preparation step).
//   * Attention cores return the context head-major [B, H, L_Q, d_k]; merge_heads
//     turns it into [B, L_Q, D] with or without `mix` (§3.2).
// Errors: ModelError for inconsistent shapes (a bug in the caller).
// Not here: speed (models/onednn/onednn_backend.hpp).
#pragma once

#include "models/informer_config.hpp"
#include "models/informer_weights.hpp"
#include "models/prob_sparse.hpp"
#include "models/tensor.hpp"

namespace kinformer::models::reference {

/// y = x·Wᵀ + b over the last dimension (PyTorch Linear, or Conv1d with k = 1).
Tensor dense(const Tensor& x, const LinearWeights& w);

/// Conv1d(k=3, padding 1, circular) along time: x [B, L, C], weight [O, C, 3] -> [B, L, O] (§3.1, §3.6).
Tensor circular_conv3(const Tensor& x, const Tensor& weight, const Tensor& bias);

/// LayerNorm over the last dimension, eps 1e-5, biased variance (§3).
void layer_norm(Tensor& x, const NormWeights& w);

void gelu(Tensor& x);  // erf form (§9.9)
void relu(Tensor& x);
void elu(Tensor& x);   // α = 1

/// x += y, element-wise (residual connections).
void add(Tensor& x, const Tensor& y);

/// TokenConv + positional table rows [0, L) + time-feature Linear (§3.1).
Tensor data_embedding(const Tensor& x, const Tensor& x_mark, const EmbeddingWeights& w);

/// Canonical attention (§3.3); q [B, L_Q, D], k/v [B, L_K, D]; causal hides s > l.
Tensor full_attention(const Tensor& q, const Tensor& k, const Tensor& v, int heads, bool causal);

/// ProbSparse attention exactly as §3.4 (masked: decoder self-attention).
Tensor prob_attention(const Tensor& q, const Tensor& k, const Tensor& v, int heads, bool masked, int factor,
                      ProbSparseSampler& sampler);

/// Head-major context [B, H, L, d_k] -> [B, L, H·d_k]; mix reinterprets instead of transposing (§3.2).
Tensor merge_heads(const Tensor& context, bool mix);

/// Projections, inner attention (prob or full), merge, out_projection (§3.2).
Tensor attention_layer(const AttentionWeights& w, const Tensor& xq, const Tensor& xkv, AttentionKind kind, bool masked,
                       bool mix, const InformerConfig& config, ProbSparseSampler& sampler);

/// Post-norm encoder layer (§3.5).
Tensor encoder_layer(const EncoderLayerWeights& w, const Tensor& x, const InformerConfig& config,
                     ProbSparseSampler& sampler);

/// Distilling ConvLayer: circular conv, BatchNorm (running stats), ELU, max-pool 3/2/1 (§3.6).
Tensor distil_layer(const DistilWeights& w, const Tensor& x);

/// Post-norm decoder layer: masked self-attention (mix), cross-attention, FFN (§3.7).
Tensor decoder_layer(const DecoderLayerWeights& w, const Tensor& x, const Tensor& enc_out, const InformerConfig& config,
                     ProbSparseSampler& sampler);

}  // namespace kinformer::models::reference
