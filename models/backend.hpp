// models/backend.hpp
//
// Backend: one engine that runs the Informer forward pass (informer-model.md §2)
// in eval mode. All backends take the same inputs, give the same output and are
// chosen at run time by name: "reference" (plain C++), "onednn", "cuda".
//
// Contract
//   * forecast(): inputs exactly the official forward signature, float32:
//     x_enc [B, L_enc, enc_in], x_mark_enc [B, L_enc, F_t],
//     x_dec [B, L_dec, dec_in], x_mark_dec [B, L_dec, F_t]; L_enc and L_dec are free
//     (≤ 5000, L_dec > pred_len); output [B, pred_len, c_out].
//   * Bad shapes or non-finite input values throw ModelError naming the tensor
//     (and the first bad element) before any work is done.
//   * Without an explicit sampler the backend's own SeededSampler is used, so a
//     given input always gives the same output.
//   * `trace`, when given, receives every §2 intermediate under the names of
//     tools/reference/make_goldens.py (enc_embedding, enc_layer<i>, enc_distil<i>,
//     enc_out, dec_embedding, dec_layer<i>, dec_out, output).
//   * Precision: fp32 everywhere by default. BackendOptions::precision bf16 is
//     opt-in and only the onednn backend implements it (weights converted to bf16
//     once, matmuls in bf16 with fp32 accumulation; normalisation, softmax and
//     ProbSparse selection stay fp32); other backends reject it.
// Threading: one forecast at a time per Backend object (backends keep scratch).
// Errors: ModelError; make_backend throws ModelError "... not available in this
// build" for a backend that was not compiled in (never falls back to another);
// preferred_backend() is the one place that picks a backend when the caller
// does not name one.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "models/informer_config.hpp"
#include "models/informer_weights.hpp"
#include "models/prob_sparse.hpp"
#include "models/tensor.hpp"

namespace kinformer::models {

struct ForecastInput {
  const Tensor& x_enc;
  const Tensor& x_mark_enc;
  const Tensor& x_dec;
  const Tensor& x_mark_dec;
};

using Trace = std::map<std::string, Tensor>;

enum class Precision { fp32, bf16 };

/// "fp32" or "bf16".
std::string_view to_string(Precision precision);

/// Parses "fp32" or "bf16"; ModelError otherwise.
Precision parse_precision(std::string_view text);

/// How make_backend builds a backend. All optional.
struct BackendOptions {
  Precision precision = Precision::fp32;  // bf16: onednn only, opt-in (accuracy cost, see README)
};

class Backend {
 public:
  Backend(InformerConfig config, std::shared_ptr<const InformerWeights> weights);
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  virtual std::string_view name() const = 0;

  /// Runs the model; `out` is resized to [B, pred_len, c_out] (reusing its capacity).
  void forecast(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace = nullptr);
  void forecast(const ForecastInput& in, Tensor& out) { forecast(in, out, default_sampler_); }

  const InformerConfig& config() const { return config_; }

 protected:
  /// Called after validation, with sampler.begin_forward() already done.
  virtual void run(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace) = 0;

  InformerConfig config_;
  std::shared_ptr<const InformerWeights> weights_;

 private:
  SeededSampler default_sampler_;
};

/// Throws ModelError when a shape or a value of `in` is not what `config` accepts.
void validate_input(const InformerConfig& config, const ForecastInput& in);

/// "reference", "onednn" or "cuda"; ModelError for an unknown or unavailable one,
/// or for a precision the backend does not implement.
std::unique_ptr<Backend> make_backend(std::string_view name, const InformerConfig& config,
                                      std::shared_ptr<const InformerWeights> weights, BackendOptions options = {});

/// The names make_backend accepts in this build. "cuda" is listed only when the
/// CUDA backend was compiled in and a device is present.
std::vector<std::string> available_backends();

/// The backend to use when the caller does not name one: "cuda" when
/// available_backends() lists it, else "onednn". `why`, when given, receives a
/// one-line reason for the choice (for the caller's log).
std::string preferred_backend(std::string* why = nullptr);

}  // namespace kinformer::models
