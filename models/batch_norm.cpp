#include "models/batch_norm.hpp"

#include <cmath>

namespace kinformer::models {

std::vector<float> batch_norm_scale(const DistilWeights& d) {
  constexpr float epsilon = 1e-5f;  // nn.BatchNorm1d's default, which the official model keeps
  std::vector<float> scale(d.bn_gamma.data.size());
  for (size_t c = 0; c < scale.size(); ++c) scale[c] = d.bn_gamma.data[c] / std::sqrt(d.bn_var.data[c] + epsilon);
  return scale;
}

}  // namespace kinformer::models
