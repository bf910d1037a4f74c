// tests/models/golden_support.hpp
//
// Access to the golden files of tools/reference/make_goldens.py for the models
// tests: finds (or generates, once per process) the golden folder, loads a case's
// tensors and builds a ReplaySampler from its captured ProbSparse indices.
// Errors: a Catch2 FAIL that says how to get the files (python3-torch) when they
// are missing and cannot be generated.
#pragma once

#include <string>

#include "models/backend.hpp"
#include "models/informer_config.hpp"
#include "models/prob_sparse.hpp"
#include "models/tensor.hpp"

namespace kinformer::testing {

/// The folder holding MANIFEST and weights.safetensors.
std::string golden_dir();

/// weights.safetensors of the golden set.
std::string golden_weights();

/// The case's own <case>/weights.safetensors when it has one (cases with extra tensors,
/// such as instance_norm's affine), else golden_weights().
std::string golden_weights(const std::string& case_name);

models::InformerConfig golden_config(const std::string& case_name);

/// <case>/<name>.npy as a float tensor.
models::Tensor golden_tensor(const std::string& case_name, const std::string& name);

/// The captured idx<k> (and top<k> when with_top) for calls [first, first + count).
models::ReplaySampler golden_sampler(const std::string& case_name, int first, int count, bool with_top);

/// max |a − b| / max(max |b|, 1e-3): the error relative to the reference's scale.
/// FAILs on a shape mismatch.
double scaled_error(const models::Tensor& a, const models::Tensor& b);

}  // namespace kinformer::testing

/// Ends a [gpu] test early, as a skip that says why, when this build or machine
/// cannot run the cuda backend (no CUDA build, no device, no driver). The WARN line
/// starts with "skipped:", which ctest reports as a skip (SKIP_REGULAR_EXPRESSION in
/// tests/models/CMakeLists.txt).
#define KINFORMER_REQUIRE_CUDA_DEVICE()                               \
  do {                                                                \
    std::string why_unavailable;                                      \
    if (!kinformer::models::cuda_device_available(&why_unavailable)) { \
      WARN("skipped: the cuda backend cannot run here: " << why_unavailable); \
      return;                                                         \
    }                                                                 \
  } while (false)
