// models/model_error.hpp
//
// ModelError: the one exception type models/ throws for expected failures (bad
// config, bad weights file, bad input tensor, unavailable backend). The message
// names the file, tensor or argument at fault, so callers print it unchanged.
// Callers that must not throw (the inference actor, the CLI) catch it once per call.
//   * BackendUnavailable: the backend asked for was not compiled in, or its device
//     is missing (no GPU, no driver). Maps to Errc::backend_unavailable; tests skip.
//   * BackendError: an engine call failed at run time (CUDA, cuBLAS or cuDNN status,
//     from the KINFORMER_*_CHECK macros of models/cuda/cuda_check.hpp).
#pragma once

#include <stdexcept>
#include <string>

namespace kinformer::models {

class ModelError : public std::runtime_error {
 public:
  explicit ModelError(const std::string& what) : std::runtime_error(what) {}
};

class BackendUnavailable : public ModelError {
 public:
  explicit BackendUnavailable(const std::string& what) : ModelError(what) {}
};

class BackendError : public ModelError {
 public:
  explicit BackendError(const std::string& what) : ModelError(what) {}
};

}  // namespace kinformer::models
