// fuzz/fuzz_npy.cpp: read_npy() and read_npy_indices() on an arbitrary file. Every input
// must give an array or a ModelError.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_file.hpp"
#include "models/model_error.hpp"
#include "models/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static kinformer::fuzz::FuzzFile file(".npy");
  file.write(data, size);
  try {
    (void)kinformer::models::read_npy(file.path());
  } catch (const kinformer::models::ModelError&) {
  }
  try {
    (void)kinformer::models::read_npy_indices(file.path());
  } catch (const kinformer::models::ModelError&) {
  }
  return 0;
}
