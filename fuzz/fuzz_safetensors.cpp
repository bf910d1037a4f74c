// fuzz/fuzz_safetensors.cpp: read_safetensors() on an arbitrary file. Every input must
// give tensors whose sizes agree with their shapes, or a ModelError.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_file.hpp"
#include "models/model_error.hpp"
#include "models/safetensors.hpp"
#include "models/tensor.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static kinformer::fuzz::FuzzFile file(".safetensors");
  file.write(data, size);
  try {
    auto tensors = kinformer::models::read_safetensors(file.path());
    for (const auto& [name, tensor] : tensors) {
      auto count = static_cast<std::size_t>(kinformer::models::element_count(tensor.shape));
      bool is_float = tensor.integers.empty() && tensor.values.data.size() == count;
      bool is_integer = tensor.values.data.empty() && tensor.integers.size() == count;
      if (!is_float && !is_integer && count != 0) __builtin_trap();  // sizes agree with the shape
    }
  } catch (const kinformer::models::ModelError&) {
  }
  return 0;
}
