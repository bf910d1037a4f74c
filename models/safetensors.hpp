// models/safetensors.hpp
//
// Reading a .safetensors file: u64 little-endian header size, a JSON header
// {name: {dtype, shape, data_offsets:[begin,end)}, "__metadata__": {...}}, then the
// raw little-endian tensor bytes.
//
// Contract
//   * Every tensor's byte range is checked against the file and against
//     shape × dtype size before anything is returned; a truncated file is an error
//     naming the first tensor that does not fit.
//   * Float tensors (F32, F64, F16, BF16) are returned as float32; I64/I32 as int64.
// Errors: ModelError naming the file (and tensor). Not here: which names the model
// needs (informer_weights.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/tensor.hpp"

namespace kinformer::models {

struct SafeTensor {
  std::string dtype;  // as written in the file: "F32", "I64", ...
  Tensor values;      // float tensors (empty data for integer dtypes)
  std::vector<int64_t> integers;  // integer tensors
  Shape shape;
};

/// All tensors of a file by name (the "__metadata__" entry is skipped).
std::map<std::string, SafeTensor> read_safetensors(const std::string& path);

}  // namespace kinformer::models
