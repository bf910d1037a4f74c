#include "models/tensor.hpp"

#include <cstdint>

namespace kinformer::models {

int64_t element_count(const Shape& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

bool checked_byte_size(const Shape& shape, std::uint64_t item, std::uint64_t& bytes) {
  constexpr std::uint64_t limit = static_cast<std::uint64_t>(INT64_MAX);
  if (item == 0) return false;
  std::uint64_t n = 1;
  for (auto d : shape) {
    if (d < 0) return false;
    auto dim = static_cast<std::uint64_t>(d);
    if (dim != 0 && n > limit / dim) return false;
    n *= dim;
  }
  if (n > limit / item) return false;
  bytes = n * item;
  return true;
}

std::string to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Tensor::Tensor(Shape s, float fill) : shape(std::move(s)), data(static_cast<size_t>(element_count(shape)), fill) {}

void Tensor::resize(const Shape& s) {
  shape = s;
  data.resize(static_cast<size_t>(element_count(shape)));
}

}  // namespace kinformer::models
