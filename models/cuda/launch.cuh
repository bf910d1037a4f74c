// models/cuda/launch.cuh
//
// What the .cu files share: the grid size of an elementwise launch and a warp sum.
// Device code only; not included from host .cpp files.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kinformer::models::cuda::detail {

constexpr int threads_per_block = 256;

// Enough blocks for one thread per element; kernels also loop (grid-stride), so
// capping the grid at 65535·32 blocks never loses elements.
inline unsigned blocks_for(int64_t n) {
  const int64_t blocks = (n + threads_per_block - 1) / threads_per_block;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535LL * 32 ? 65535LL * 32 : blocks));
}

__device__ inline float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

}  // namespace kinformer::models::cuda::detail

// for (int64_t i = <global thread index>; i < n; i += <grid size>)
#define KINFORMER_GRID_LOOP(i, n)                                                        \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
