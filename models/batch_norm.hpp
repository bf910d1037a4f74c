// models/batch_norm.hpp
//
// The distilling ConvLayer's BatchNorm in eval mode (informer-model.md §3.6), written
// once for the three backends: with running statistics it is an affine map per channel,
//   y = (x − mean)·scale + β,  scale = γ/√(var + ε),  ε = 1e-5 (PyTorch's default),
// which each backend applies in its own way: the reference per element, oneDNN folded
// into the conv's weights and bias (models/onednn/weights.hpp), CUDA in the distil
// kernel (models/cuda/device.hpp uploads the scale).
// Pure C++: no oneDNN or CUDA types, so every backend can include it.
#pragma once

#include <vector>

#include "models/informer_weights.hpp"

namespace kinformer::models {

/// γ/√(var + ε) for each channel of `d`'s BatchNorm.
std::vector<float> batch_norm_scale(const DistilWeights& d);

}  // namespace kinformer::models
