#include "models/tensor.hpp"

namespace kinformer::models {

int64_t element_count(const Shape& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
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
