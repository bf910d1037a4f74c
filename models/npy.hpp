// models/npy.hpp
//
// Reading and writing NumPy .npy files (format versions 1.0-3.0), the exchange
// format of the CLI and the golden tests.
//
// Contract
//   * read_npy: little-endian '<f4' or '<f8' (converted to float32), C order only.
//   * read_npy_indices: '<i8', '<i4' (or their unsigned forms), C order only.
//   * write_npy: version 1.0, '<f4', C order — what numpy.load reads unchanged.
// Errors: ModelError naming the file and the problem (missing, truncated,
// unsupported dtype, Fortran order). Never returns a partial array.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/tensor.hpp"

namespace kinformer::models {

struct IndexArray {
  Shape shape;
  std::vector<int64_t> data;
};

Tensor read_npy(const std::string& path);
IndexArray read_npy_indices(const std::string& path);
void write_npy(const std::string& path, const Tensor& tensor);

}  // namespace kinformer::models
