// models/tensor.hpp
//
// Tensor: a dense row-major float32 array with a shape, the unit models/ passes
// around (inputs, outputs, weights, intermediates).
//
// Contract
//   * data.size() == element count of shape, always (reshape/resize keep it so).
//   * resize() reuses capacity: after warm-up it allocates nothing.
// Not here: file formats (npy.hpp, safetensors.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kinformer::models {

using Shape = std::vector<int64_t>;

/// Product of the dimensions (1 for a scalar shape).
int64_t element_count(const Shape& shape);

/// The bytes of an array of `shape` with `item`-byte elements, for shapes read from
/// files: 0 when a dimension is negative or the element count or byte size would
/// overflow int64 (the caller reports the shape), so a hostile header cannot make
/// element_count() overflow or a loader allocate a wrapped-around size.
bool checked_byte_size(const Shape& shape, std::uint64_t item, std::uint64_t& bytes);

/// "[2, 96, 7]".
std::string to_string(const Shape& shape);

struct Tensor {
  Shape shape;
  std::vector<float> data;

  Tensor() = default;
  explicit Tensor(Shape s, float fill = 0.f);

  /// Sets the shape; keeps the old capacity when it is large enough.
  void resize(const Shape& s);
  int64_t dim(int i) const { return shape.at(static_cast<size_t>(i)); }
  int64_t size() const { return static_cast<int64_t>(data.size()); }
  float* ptr() { return data.data(); }
  const float* ptr() const { return data.data(); }
};

}  // namespace kinformer::models
