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
//   * A config with instance_norm runs the network on the normalised window and maps the
//     output back (models/instance_norm.hpp), the same for every backend; the trace's
//     intermediates are those of the normalised window, its "output" the mapped-back one.
//   * `trace`, when given, receives every §2 intermediate under the names of
//     tools/reference/make_goldens.py (enc_embedding, enc_layer<i>, enc_distil<i>,
//     enc_out, dec_embedding, dec_layer<i>, dec_out, output).
// Threading: one forecast at a time per Backend object (backends keep scratch).
// Errors: ModelError; make_backend throws BackendUnavailable ("... not available in
// this build", or "... no usable CUDA device: <why>") for a backend that was not
// compiled in or has no device (never falls back to another). Only the name "auto"
// chooses: cuda when cuda_device_available(), else onednn (preferred_backend).
// oneDNN is compiled in except in KINFORMER_MODELS_ONLY builds that lack it.
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

class InstanceNorm;  // models/instance_norm.hpp

class Backend {
 public:
  Backend(InformerConfig config, std::shared_ptr<const InformerWeights> weights);
  virtual ~Backend();
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
  std::unique_ptr<InstanceNorm> instance_norm_;  // only for configs with instance_norm
};

/// Throws ModelError when a shape or a value of `in` is not what `config` accepts.
void validate_input(const InformerConfig& config, const ForecastInput& in);

/// Arithmetic of the matrix products (informer-model.md §9.13). The cuda backend
/// implements all four, onednn fp32 and bf16 (opt-in: weights converted to bf16 once,
/// bf16 products with fp32 accumulation; normalisation, softmax and ProbSparse
/// selection stay fp32), reference fp32 only; each rejects what it does not implement.
enum class Precision {
  fp32,  // strict fp32 (TF32 off): the default, within 1e-4 of the reference
  tf32,  // cuda: fp32 operands rounded to TF32 on tensor cores
  fp16,  // cuda: weight products with fp16 operands on tensor cores, fp32 accumulation and activations
  bf16,  // cuda: the same with bf16 operands; onednn: Linears and the distil conv in bf16 (AMX/AVX512_BF16)
};

/// "fp32", "tf32", "fp16", "bf16".
std::string_view to_string(Precision precision);

/// Parses what to_string gives; ModelError otherwise.
Precision parse_precision(std::string_view text);

/// How make_backend builds a backend. All optional.
struct BackendOptions {
  Precision precision = Precision::fp32;
  bool cuda_graphs = true;  // cuda: capture each shape's forward pass once and replay it (launch overhead)
  int cuda_device = 0;      // cuda: device ordinal; one backend = one stream on it
  // onednn: batches of at most this many windows run on the calling thread alone
  // (OneDnnBackend::threads_for); 0: every batch on all OpenMP threads.
  int64_t serial_max_batch = 0;
};

/// "reference", "onednn", "cuda", or "auto" (= preferred_backend()); ModelError for an
/// unknown name or a precision the backend does not implement, BackendUnavailable for
/// a backend that is not built or has no device here.
std::unique_ptr<Backend> make_backend(std::string_view name, const InformerConfig& config,
                                      std::shared_ptr<const InformerWeights> weights,
                                      BackendOptions options = {});

/// The names make_backend can build here: "cuda" only when it was compiled in and
/// cuda_device_available().
std::vector<std::string> available_backends();

/// True when this build has the CUDA backend and a device it can run on (sm_90 or
/// newer, a working driver). Never throws and prints nothing; *why (when not null)
/// gets the reason on false. Probes once per process.
bool cuda_device_available(std::string* why = nullptr);

/// The backend to use when the caller does not name one: "cuda" when
/// cuda_device_available(), else "onednn" ("reference" in a build without oneDNN).
/// `why`, when given, receives a one-line reason for the choice (for the caller's log).
std::string preferred_backend(std::string* why = nullptr);

}  // namespace kinformer::models
