#include "models/backend.hpp"

#include <algorithm>
#include <cmath>

#include "models/model_error.hpp"
#include "models/onednn_backend.hpp"
#include "models/reference_backend.hpp"

namespace kinformer::models {
namespace {

void check_tensor(const char* name, const Tensor& t, int64_t batch, int64_t length, int64_t channels,
                  const char* channel_name) {
  auto expect = [&](const std::string& why) {
    throw ModelError(std::string("input ") + name + ": shape " + to_string(t.shape) + " " + why);
  };
  if (t.shape.size() != 3) expect("is not [B, L, C]");
  if (batch >= 0 && t.shape[0] != batch) expect("has a different batch size than x_enc (" + std::to_string(batch) + ")");
  if (length >= 0 && t.shape[1] != length) expect("must have length " + std::to_string(length));
  if (t.shape[2] != channels) expect("needs " + std::to_string(channels) + " channels (" + channel_name + ")");
  if (t.shape[0] < 1 || t.shape[1] < 1) expect("is empty");
  if (t.shape[1] > 5000) expect("is longer than the positional table (5000)");
  if (static_cast<int64_t>(t.data.size()) != element_count(t.shape)) expect("does not match its data size");
  for (size_t i = 0; i < t.data.size(); ++i)
    if (!std::isfinite(t.data[i])) {
      auto c = static_cast<int64_t>(i) % t.shape[2], l = static_cast<int64_t>(i) / t.shape[2] % t.shape[1],
           b = static_cast<int64_t>(i) / t.shape[2] / t.shape[1];
      throw ModelError(std::string("input ") + name + " has a non-finite value (" + std::to_string(t.data[i]) + ") at [" +
                       std::to_string(b) + ", " + std::to_string(l) + ", " + std::to_string(c) + "]");
    }
}

}  // namespace

Backend::Backend(InformerConfig config, std::shared_ptr<const InformerWeights> weights)
    : config_(std::move(config)), weights_(std::move(weights)) {
  if (!weights_) throw ModelError("backend: no weights");
}

void Backend::forecast(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace) {
  validate_input(config_, in);
  sampler.begin_forward();
  run(in, out, sampler, trace);
}

void validate_input(const InformerConfig& c, const ForecastInput& in) {
  check_tensor("x_enc", in.x_enc, -1, -1, c.enc_in, "enc_in");
  const int64_t b = in.x_enc.shape[0], l_enc = in.x_enc.shape[1];
  check_tensor("x_mark_enc", in.x_mark_enc, b, l_enc, c.time_features(), "time features of the freq");
  check_tensor("x_dec", in.x_dec, b, -1, c.dec_in, "dec_in");
  check_tensor("x_mark_dec", in.x_mark_dec, b, in.x_dec.shape[1], c.time_features(), "time features of the freq");
  if (in.x_dec.shape[1] < c.pred_len)
    throw ModelError("input x_dec: length " + std::to_string(in.x_dec.shape[1]) + " is shorter than pred_len " +
                     std::to_string(c.pred_len));
}

std::string_view to_string(Precision precision) { return precision == Precision::bf16 ? "bf16" : "fp32"; }

Precision parse_precision(std::string_view text) {
  if (text == "fp32") return Precision::fp32;
  if (text == "bf16") return Precision::bf16;
  throw ModelError("unknown precision '" + std::string(text) + "' (fp32 or bf16)");
}

std::unique_ptr<Backend> make_backend(std::string_view name, const InformerConfig& config,
                                      std::shared_ptr<const InformerWeights> weights, BackendOptions options) {
  if (name == "onednn") return std::make_unique<OneDnnBackend>(config, std::move(weights), options.precision);
  if (options.precision != Precision::fp32 && (name == "reference" || name == "cuda"))
    throw ModelError("precision " + std::string(to_string(options.precision)) + " is not implemented by the '" +
                     std::string(name) + "' backend (only onednn has bf16)");
  if (name == "reference") return std::make_unique<ReferenceBackend>(config, std::move(weights));
  if (name == "cuda")
    throw ModelError("backend 'cuda' is not available in this build (no CUDA backend is implemented yet; use reference or onednn)");
  throw ModelError("unknown backend '" + std::string(name) + "' (available: reference, onednn)");
}

std::vector<std::string> available_backends() { return {"reference", "onednn"}; }

std::string preferred_backend(std::string* why) {
  auto names = available_backends();
  if (std::find(names.begin(), names.end(), "cuda") != names.end()) {
    if (why) *why = "cuda (built in and a device is present)";
    return "cuda";
  }
  if (why) *why = "onednn (no CUDA backend in this build or no device)";
  return "onednn";
}

}  // namespace kinformer::models
