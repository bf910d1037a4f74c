// models/reference_backend.hpp
//
// ReferenceBackend: the forward pass of informer-model.md §2 composed from
// reference_layers.hpp — plain fp32 C++, one thread, allocating freely. It is the
// readable statement of the model that the faster backends are checked against.
// Contract and errors: those of Backend (backend.hpp).
#pragma once

#include "models/backend.hpp"

namespace kinformer::models {

class ReferenceBackend final : public Backend {
 public:
  using Backend::Backend;
  std::string_view name() const override { return "reference"; }

 protected:
  void run(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace) override;
};

}  // namespace kinformer::models
