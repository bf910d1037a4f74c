// tests/support/failing_backend.hpp
//
// FailingBackend: a models::Backend whose every forward pass throws ModelError
// ("injected failure"), after the usual input validation, for tests of what
// callers do when a model call fails.
#pragma once

#include <string_view>

#include "models/backend.hpp"
#include "models/model_error.hpp"

namespace kinformer::testing {

class FailingBackend final : public models::Backend {
 public:
  using models::Backend::Backend;
  std::string_view name() const override { return "failing"; }

 protected:
  void run(const models::ForecastInput&, models::Tensor&, models::ProbSparseSampler&,
           models::Trace*) override {
    throw models::ModelError("injected failure");
  }
};

}  // namespace kinformer::testing
