#include "models/backend.hpp"

#include <cmath>

#include "models/instance_norm.hpp"
#include "models/model_error.hpp"
#include "models/reference_backend.hpp"
#ifdef KINFORMER_HAVE_ONEDNN
#include "models/onednn/onednn_backend.hpp"
#endif
#ifdef KINFORMER_HAVE_CUDA
#include "models/cuda/cuda_backend.hpp"
#endif

namespace kinformer::models {
namespace {

void check_tensor(const char* name, const Tensor& t, int64_t batch, int64_t length, int64_t channels,
                  const char* channel_name) {
  auto expect = [&](const std::string& why) {
    throw ModelError(std::string("input ") + name + ": shape " + to_string(t.shape) + " " + why);
  };
  if (t.shape.size() != 3) expect("is not [B, L, C]");
  if (batch >= 0 && t.shape[0] != batch)
    expect("has a different batch size than x_enc (" + std::to_string(batch) + ")");
  if (length >= 0 && t.shape[1] != length) expect("must have length " + std::to_string(length));
  if (t.shape[2] != channels)
    expect("needs " + std::to_string(channels) + " channels (" + channel_name + ")");
  if (t.shape[0] < 1 || t.shape[1] < 1) expect("is empty");
  if (t.shape[1] > 5000) expect("is longer than the positional table (5000)");
  if (static_cast<int64_t>(t.data.size()) != element_count(t.shape)) expect("does not match its data size");
  for (size_t i = 0; i < t.data.size(); ++i)
    if (!std::isfinite(t.data[i])) {
      auto c = static_cast<int64_t>(i) % t.shape[2], l = static_cast<int64_t>(i) / t.shape[2] % t.shape[1],
           b = static_cast<int64_t>(i) / t.shape[2] / t.shape[1];
      throw ModelError(std::string("input ") + name + " has a non-finite value (" +
                       std::to_string(t.data[i]) + ") at [" + std::to_string(b) + ", " + std::to_string(l) +
                       ", " + std::to_string(c) + "]");
    }
}

}  // namespace

Backend::Backend(InformerConfig config, std::shared_ptr<const InformerWeights> weights)
    : config_(std::move(config)), weights_(std::move(weights)) {
  if (!weights_) throw ModelError("backend: no weights");
  if (config_.instance_norm != InstanceNormKind::none) instance_norm_ = std::make_unique<InstanceNorm>();
}

Backend::~Backend() = default;

void Backend::forecast(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace) {
  validate_input(config_, in);
  sampler.begin_forward();
  if (!instance_norm_) {
    run(in, out, sampler, trace);
    return;
  }
  run(instance_norm_->normalize(config_, *weights_, in), out, sampler, trace);
  instance_norm_->denormalize(config_, *weights_, out);
  if (trace) (*trace)["output"] = out;
}

void validate_input(const InformerConfig& c, const ForecastInput& in) {
  // A linear_residual model's linear map is [seq_len, pred_len]: its windows have one length.
  const int64_t enc_length = c.instance_norm == InstanceNormKind::linear_residual ? c.seq_len : -1;
  check_tensor("x_enc", in.x_enc, -1, enc_length, c.enc_in, "enc_in");
  const int64_t b = in.x_enc.shape[0], l_enc = in.x_enc.shape[1];
  check_tensor("x_mark_enc", in.x_mark_enc, b, l_enc, c.time_features(), "time features of the freq");
  check_tensor("x_dec", in.x_dec, b, -1, c.dec_in, "dec_in");
  check_tensor("x_mark_dec", in.x_mark_dec, b, in.x_dec.shape[1], c.time_features(),
               "time features of the freq");
  if (in.x_dec.shape[1] < c.pred_len)
    throw ModelError("input x_dec: length " + std::to_string(in.x_dec.shape[1]) +
                     " is shorter than pred_len " + std::to_string(c.pred_len));
}

std::string_view to_string(Precision precision) {
  switch (precision) {
    case Precision::fp32:
      return "fp32";
    case Precision::tf32:
      return "tf32";
    case Precision::fp16:
      return "fp16";
    case Precision::bf16:
      return "bf16";
  }
  return "?";
}

Precision parse_precision(std::string_view text) {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16})
    if (text == to_string(p)) return p;
  throw ModelError("unknown precision '" + std::string(text) + "' (fp32, tf32, fp16 or bf16)");
}

std::unique_ptr<Backend> make_backend(std::string_view requested, const InformerConfig& config,
                                      std::shared_ptr<const InformerWeights> weights,
                                      BackendOptions options) {
  const std::string name = requested == "auto" ? preferred_backend() : std::string(requested);
  const bool onednn_precision = options.precision == Precision::fp32 || options.precision == Precision::bf16;
  if ((name == "reference" && options.precision != Precision::fp32) || (name == "onednn" && !onednn_precision))
    throw ModelError("precision " + std::string(to_string(options.precision)) + " is not implemented by the '" +
                     name + "' backend (onednn has fp32 and bf16, cuda tf32, fp16 and bf16 too)");
  if (name == "reference") return std::make_unique<ReferenceBackend>(config, std::move(weights));
  if (name == "onednn") {
#ifdef KINFORMER_HAVE_ONEDNN
    return std::make_unique<OneDnnBackend>(config, std::move(weights), options.precision,
                                           options.serial_max_batch);
#else
    throw BackendUnavailable(
        "backend 'onednn' is not available: this build has no oneDNN (KINFORMER_MODELS_ONLY)");
#endif
  }
  if (name == "cuda") {
    std::string why;
    if (!cuda_device_available(&why)) throw BackendUnavailable("backend 'cuda' is not available: " + why);
#ifdef KINFORMER_HAVE_CUDA
    return std::make_unique<CudaBackend>(config, std::move(weights), options);
#endif
  }
  throw ModelError("unknown backend '" + name + "' (reference, onednn, cuda or auto)");
}

std::vector<std::string> available_backends() {
  std::vector<std::string> names{"reference"};
#ifdef KINFORMER_HAVE_ONEDNN
  names.push_back("onednn");
#endif
  if (cuda_device_available()) names.push_back("cuda");
  return names;
}

bool cuda_device_available(std::string* why) {
#ifdef KINFORMER_HAVE_CUDA
  return cuda::device_available(why);
#else
  if (why)
    *why =
        "this build has no CUDA backend (configure with -DKINFORMER_CUDA=ON where nvcc, cuDNN and cuBLAS are "
        "installed)";
  return false;
#endif
}

std::string preferred_backend(std::string* why) {
  std::string reason;
  if (cuda_device_available(&reason)) {
    if (why) *why = "cuda (built in and a device is present)";
    return "cuda";
  }
#ifdef KINFORMER_HAVE_ONEDNN
  const std::string fallback = "onednn";
#else
  const std::string fallback = "reference";  // a KINFORMER_MODELS_ONLY build without oneDNN
#endif
  if (why) *why = fallback + " (cuda: " + reason + ")";
  return fallback;
}

}  // namespace kinformer::models
