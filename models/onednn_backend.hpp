// models/onednn_backend.hpp  (placeholder, replaced by the oneDNN implementation)
#pragma once

#include "models/backend.hpp"

namespace kinformer::models {

class OneDnnBackend final : public Backend {
 public:
  OneDnnBackend(InformerConfig config, std::shared_ptr<const InformerWeights> weights);
  std::string_view name() const override { return "onednn"; }

 protected:
  void run(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace) override;
};

}  // namespace kinformer::models
