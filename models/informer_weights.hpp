// models/informer_weights.hpp
//
// InformerWeights: the parameters of one Informer, grouped by layer, loaded from a
// safetensors file whose names and shapes are exactly the official PyTorch
// state_dict's (informer-model.md §4), so weights saved from the official
// implementation load unchanged.
//
// Contract
//   * Every tensor the config implies must be present with the exact shape; any
//     other tensor in the file is an error. Messages name the tensor and both shapes.
//   * A "module." prefix on every name (nn.DataParallel checkpoints) is stripped.
//   * encoder.conv_layers.*.norm.num_batches_tracked may be present or absent (a
//     training counter, unused at inference).
//   * instance_norm.weight and instance_norm.bias [enc_in] are expected exactly when the
//     config has instance_norm_affine, and instance_norm.linear_base [seq_len, pred_len]
//     exactly when it is linear_residual (kinformer's own names, models/instance_norm.hpp).
//   * Shapes are PyTorch's: Linear weight [out, in]; Conv1d weight [out, in, k].
// Errors: ModelError. Immutable after loading; share as shared_ptr<const ...>.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/informer_config.hpp"
#include "models/tensor.hpp"

namespace kinformer::models {

struct LinearWeights {  // y = x·Wᵀ + b
  Tensor weight;        // [out, in] (Conv1d k=1 weights are stored here as [out, in])
  Tensor bias;          // [out]
};

struct NormWeights {  // LayerNorm γ/β
  Tensor gamma, beta;
};

struct EmbeddingWeights {
  Tensor token_conv_weight;  // [D, C, 3], circular padding 1
  Tensor token_conv_bias;    // [D]
  Tensor positional;         // [5000, D] (the state_dict's pe [1, 5000, D])
  LinearWeights time;        // [D, F_t]
};

struct AttentionWeights {
  LinearWeights query, key, value, out;
};

struct EncoderLayerWeights {
  AttentionWeights attention;
  LinearWeights ffn1, ffn2;  // conv1 [d_ff, D], conv2 [D, d_ff]
  NormWeights norm1, norm2;
};

struct DistilWeights {
  Tensor conv_weight;  // [D, D, 3], circular padding 1
  Tensor conv_bias;    // [D]
  Tensor bn_gamma, bn_beta, bn_mean, bn_var;
};

struct DecoderLayerWeights {
  AttentionWeights self_attention, cross_attention;
  LinearWeights ffn1, ffn2;
  NormWeights norm1, norm2, norm3;
};

struct InformerWeights {
  EmbeddingWeights enc_embedding, dec_embedding;
  std::vector<EncoderLayerWeights> encoder_layers;  // e_layers
  std::vector<DistilWeights> distil_layers;         // e_layers - 1 when distil, else none
  NormWeights encoder_norm;
  std::vector<DecoderLayerWeights> decoder_layers;  // d_layers
  NormWeights decoder_norm;
  LinearWeights projection;  // [c_out, D]
  Tensor instance_norm_weight, instance_norm_bias;  // [enc_in], only with instance_norm_affine
  Tensor instance_norm_linear_base;                 // [seq_len, pred_len], only with linear_residual
};

/// Loads and validates; throws ModelError naming a missing, extra or mis-shaped tensor.
/// F16/BF16/F64 tensors are widened to fp32; absent positional tables are computed.
std::shared_ptr<const InformerWeights> load_weights(const std::string& path, const InformerConfig& config);

/// Fills a [max_len, D] table with the official sinusoidal positional encoding
/// (sin on even columns, cos on odd ones). load_weights uses it for files that leave
/// the `*.position_embedding.pe` buffers out (tools/compact_weights.py writes such files).
void fill_positional_table(Tensor& table);

/// Weights of the right names and shapes with seeded random values (uniform
/// ±1/√fan_in, LayerNorm γ=1 β=0, BatchNorm identity stats, the sinusoid table):
/// for benchmarks and shape tests, where no trained file is needed.
std::shared_ptr<const InformerWeights> random_weights(const InformerConfig& config, uint32_t seed = 1);

/// Number of trainable parameters the config implies (11,330,055 for §1's default).
int64_t parameter_count(const InformerConfig& config);

}  // namespace kinformer::models
