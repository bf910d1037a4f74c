// ProbSparse kernels of the CUDA backend (informer-model.md §3.4; contracts in
// models/cuda/kernels.hpp). The matrix products of steps 6 and 9 are cuBLAS calls
// and the softmax is cuDNN's (cuda_forward.cpp).
#include "models/cuda/kernels.hpp"
#include "models/cuda/launch.cuh"

namespace kinformer::models::cuda {
namespace {

using detail::blocks_for;
using detail::threads_per_block;

// One warp per (p, i): lanes split the d_k products, every lane ends with the same sums.
__global__ void sparsity_measure_kernel(const float* qh, const float* kh, const int32_t* idx, int sample_k,
                                        float* m, int64_t bh, int l_q, int l_k, int dk) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;  // p·l_q + i
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (row >= bh * l_q) return;  // whole warps leave together
  const int64_t p = row / l_q, i = row % l_q;
  const float* q = qh + row * dk;
  float max_score = -INFINITY, sum = 0.f;
  for (int j = 0; j < sample_k; ++j) {
    const float* k = kh + (p * l_k + idx[i * sample_k + j]) * dk;
    float part = 0.f;
    for (int e = lane; e < dk; e += 32) part += q[e] * k[e];
    const float dot = detail::warp_sum(part);
    max_score = fmaxf(max_score, dot);
    sum += dot;
  }
  if (lane == 0) m[row] = max_score - sum / static_cast<float>(l_k);  // divisor L_K (§9.2)
}

// One block per (b, h). rank(i) = #{j : m[j] > m[i] or (m[j] == m[i] and j < i)} is a
// permutation of 0..l_q−1 (a strict total order; NaN counts as −inf so it stays one),
// so top[rank] = i for rank < n_top fills every slot exactly once. O(l_q²) per (b, h):
// 0.5 M comparisons at L = 720, simple and deterministic.
__global__ void select_top_kernel(const float* m, int l_q, int n_top, const int32_t* forced_flag,
                                  const int32_t* forced, int32_t* top) {
  extern __shared__ float key[];
  const int64_t p = blockIdx.x;
  int32_t* out = top + p * n_top;
  if (*forced_flag) {
    for (int r = static_cast<int>(threadIdx.x); r < n_top; r += blockDim.x) out[r] = forced[p * n_top + r];
    return;
  }
  for (int i = static_cast<int>(threadIdx.x); i < l_q; i += blockDim.x) {
    const float v = m[p * l_q + i];
    key[i] = isnan(v) ? -INFINITY : v;
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < l_q; i += blockDim.x) {
    const float v = key[i];
    int rank = 0;
    for (int j = 0; j < l_q; ++j) rank += (key[j] > v || (key[j] == v && j < i)) ? 1 : 0;
    if (rank < n_top) out[rank] = i;
  }
}

__global__ void gather_rows_kernel(const float* src, const int32_t* top, float* rows, int64_t bh, int l_q,
                                   int n_top, int dk) {
  KINFORMER_GRID_LOOP(i, bh * n_top * dk) {
    const int64_t e = i % dk, r = i / dk;  // r = p·n_top + row
    const int64_t p = r / n_top;
    rows[i] = src[(p * l_q + top[r]) * dk + e];
  }
}

// One thread per (p, e), walking the positions in order: the same additions in the
// same order as the reference, so the initial context matches it exactly.
__global__ void initial_context_kernel(const float* vh, float* ctx, int64_t bh, int len, int dk,
                                       bool cumulative) {
  KINFORMER_GRID_LOOP(i, bh * dk) {
    const int64_t e = i % dk, p = i / dk;
    const float* v = vh + p * len * dk + e;
    float* c = ctx + p * len * dk + e;
    float acc = 0.f;
    for (int s = 0; s < len; ++s) {
      acc += v[static_cast<int64_t>(s) * dk];
      if (cumulative) c[static_cast<int64_t>(s) * dk] = acc;  // a running sum, not a mean (§9.1)
    }
    if (!cumulative) {
      const float mean = acc / static_cast<float>(len);
      for (int s = 0; s < len; ++s) c[static_cast<int64_t>(s) * dk] = mean;
    }
  }
}

__global__ void scatter_rows_kernel(const float* rows, const int32_t* top, float* ctx, int64_t bh, int l_q,
                                    int n_top, int dk) {
  KINFORMER_GRID_LOOP(i, bh * n_top * dk) {
    const int64_t e = i % dk, r = i / dk;
    const int64_t p = r / n_top;
    ctx[(p * l_q + top[r]) * dk + e] = rows[i];
  }
}

}  // namespace

cudaError_t sparsity_measure(const float* qh, const float* kh, const int32_t* idx, int sample_k, float* m,
                             int64_t bh, int l_q, int l_k, int dk, cudaStream_t stream) {
  constexpr int warps_per_block = threads_per_block / 32;
  const auto blocks = static_cast<unsigned>((bh * l_q + warps_per_block - 1) / warps_per_block);
  sparsity_measure_kernel<<<blocks, threads_per_block, 0, stream>>>(qh, kh, idx, sample_k, m, bh, l_q, l_k,
                                                                    dk);
  return cudaGetLastError();
}

cudaError_t select_top(const float* m, int64_t bh, int l_q, int n_top, const int32_t* forced_flag,
                       const int32_t* forced, int32_t* top, cudaStream_t stream) {
  // l_q ≤ 5000 (the positional table): at most 20 KB of shared memory per block.
  select_top_kernel<<<static_cast<unsigned>(bh), threads_per_block, static_cast<size_t>(l_q) * sizeof(float),
                      stream>>>(m, l_q, n_top, forced_flag, forced, top);
  return cudaGetLastError();
}

cudaError_t gather_rows(const float* src, const int32_t* top, float* rows, int64_t bh, int l_q, int n_top,
                        int dk, cudaStream_t stream) {
  gather_rows_kernel<<<blocks_for(bh * n_top * dk), threads_per_block, 0, stream>>>(src, top, rows, bh, l_q,
                                                                                    n_top, dk);
  return cudaGetLastError();
}

cudaError_t initial_context(const float* vh, float* ctx, int64_t bh, int len, int dk, bool cumulative,
                            cudaStream_t stream) {
  initial_context_kernel<<<blocks_for(bh * dk), threads_per_block, 0, stream>>>(vh, ctx, bh, len, dk,
                                                                                cumulative);
  return cudaGetLastError();
}

cudaError_t scatter_rows(const float* rows, const int32_t* top, float* ctx, int64_t bh, int l_q, int n_top,
                         int dk, cudaStream_t stream) {
  scatter_rows_kernel<<<blocks_for(bh * n_top * dk), threads_per_block, 0, stream>>>(rows, top, ctx, bh, l_q,
                                                                                     n_top, dk);
  return cudaGetLastError();
}

}  // namespace kinformer::models::cuda
