// models/informer_config.hpp
//
// InformerConfig: every hyper-parameter of the Informer (informer-model.md §1),
// loaded from JSON whose keys are the official main_informer.py argument names
// (enc_in, dec_in, c_out, seq_len, label_len, pred_len, factor, d_model, n_heads,
// e_layers, d_layers, d_ff, dropout, attn, embed, freq, activation, distil, mix), plus
// kinformer's own instance_norm ("none" | "mean_std" | "last_value" | "naive_residual" |
// "linear_residual"),
// instance_norm_affine and naive_base (issue 28; models/instance_norm.hpp).
//
// Contract
//   * Missing keys keep the §1 defaults (the CLI defaults, not the constructor's).
//   * Unknown keys are ignored and reported through `warnings`.
//   * freq keeps only its last character, as main_informer.py does ("15min" -> 'n',
//     which is rejected; use "t").
//   * Only embed "timeF" is implemented; other embeds are rejected with ModelError.
//   * instance_norm other than "none" needs enc_in == dec_in == c_out; to_json writes
//     the instance_norm keys only when it is not "none", so official configs
//     round-trip unchanged.
//   * naive_base ("last_value" | "last_day" | "last_day_mean", default last_value) names
//     the naive forecast a "naive_residual" model corrects; it is refused with any other
//     instance_norm, where it would mean nothing.
//   * "linear_residual" corrects a linear forecast whose map is in the weights
//     (instance_norm.linear_base [seq_len, pred_len]), so its windows must be seq_len long.
// Errors: ModelError naming the key and the bad value. No nlohmann in this header.
#pragma once

#include <string>
#include <vector>

#include "models/naive_forecast.hpp"

namespace kinformer::models {

enum class AttentionKind { prob, full };
enum class Activation { gelu, relu };
enum class InstanceNormKind { none, mean_std, last_value, naive_residual, linear_residual };

struct InformerConfig {
  int enc_in = 7;
  int dec_in = 7;
  int c_out = 7;
  int seq_len = 96;    // only used to check inputs; the network accepts any length (but linear_residual)
  int label_len = 48;  // ditto
  int pred_len = 24;   // the output keeps the last pred_len decoder steps
  int factor = 5;      // ProbSparse c (§3.4)
  int d_model = 512;
  int n_heads = 8;
  int e_layers = 2;
  int d_layers = 1;
  int d_ff = 2048;
  double dropout = 0.05;  // identity at inference; kept for round trips
  AttentionKind attn = AttentionKind::prob;
  std::string embed = "timeF";
  char freq = 'h';
  Activation activation = Activation::gelu;
  bool distil = true;
  bool mix = true;
  InstanceNormKind instance_norm = InstanceNormKind::none;  // per-window normalisation around the network
  bool instance_norm_affine = false;                        // with a learned per-channel weight and bias
  NaiveKind naive_base = NaiveKind::last_value;             // what a naive_residual model corrects

  /// F_t of §3.1 (h: 4, t: 5, ...).
  int time_features() const;
  int dec_len() const { return label_len + pred_len; }
  int head_dim() const { return d_model / n_heads; }
};

/// Parses JSON text; unknown keys are appended to *warnings when it is not null.
InformerConfig parse_config(const std::string& json_text, std::vector<std::string>* warnings = nullptr);

/// Reads and parses a JSON file.
InformerConfig load_config(const std::string& path, std::vector<std::string>* warnings = nullptr);

/// The config as JSON with the official argument names.
std::string to_json(const InformerConfig& config);

}  // namespace kinformer::models
