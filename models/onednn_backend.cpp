#include "models/onednn_backend.hpp"

#include "models/model_error.hpp"

namespace kinformer::models {

OneDnnBackend::OneDnnBackend(InformerConfig config, std::shared_ptr<const InformerWeights> weights)
    : Backend(std::move(config), std::move(weights)) {
  throw ModelError("backend 'onednn' is not implemented yet");
}

void OneDnnBackend::run(const ForecastInput&, Tensor&, ProbSparseSampler&, Trace*) {}

}  // namespace kinformer::models
