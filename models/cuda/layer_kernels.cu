// Layer kernels of the CUDA backend (models/cuda/kernels.hpp has the contracts).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "models/cuda/kernels.hpp"
#include "models/cuda/launch.cuh"

namespace kinformer::models::cuda {
namespace {

using detail::blocks_for;
using detail::threads_per_block;

__global__ void circular_pad_kernel(const float* x, float* padded, int64_t batch, int64_t len,
                                    int64_t channels) {
  const int64_t n = batch * (len + 2) * channels;
  KINFORMER_GRID_LOOP(i, n) {
    const int64_t c = i % channels, t = i / channels % (len + 2), b = i / channels / (len + 2);
    const int64_t src_t = (t - 1 + len) % len;  // t = 0 -> L−1, t = L+1 -> 0
    padded[i] = x[(b * len + src_t) * channels + c];
  }
}

__global__ void add_embedding_terms_kernel(float* out, const float* conv_bias, const float* time_bias,
                                           const float* pe, int64_t batch, int64_t len, int64_t d) {
  KINFORMER_GRID_LOOP(i, batch * len * d) {
    const int64_t c = i % d, t = i / d % len;
    out[i] += conv_bias[c] + time_bias[c] + pe[t * d + c];
  }
}

__global__ void bias_activation_kernel(float* x, const float* bias, int64_t rows, int64_t cols,
                                       Activation act) {
  KINFORMER_GRID_LOOP(i, rows * cols) {
    float v = x[i] + bias[i % cols];
    if (act == Activation::gelu)
      v = 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    else if (act == Activation::relu)
      v = fmaxf(v, 0.f);
    x[i] = v;
  }
}

// One warp per row. Each lane only ever touches its own columns, so out may alias
// residual or y (every element is read before the same lane overwrites it).
__global__ void add_layer_norm_kernel(float* out, const float* residual, const float* y, const float* bias,
                                      const float* gamma, const float* beta, int64_t rows, int64_t d) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (row >= rows) return;  // the whole warp leaves together: the shuffles below stay full-warp
  float* o = out + row * d;
  const float* r = residual + row * d;
  const float* yr = y ? y + row * d : nullptr;
  float sum = 0.f;
  for (int64_t i = lane; i < d; i += 32) {
    float v = r[i];
    if (yr) v += yr[i];
    if (bias) v += bias[i];
    o[i] = v;
    sum += v;
  }
  const float mean = detail::warp_sum(sum) / static_cast<float>(d);
  float var = 0.f;
  for (int64_t i = lane; i < d; i += 32) var += (o[i] - mean) * (o[i] - mean);
  const float inv = 1.f / sqrtf(detail::warp_sum(var) / static_cast<float>(d) + 1e-5f);
  for (int64_t i = lane; i < d; i += 32) o[i] = (o[i] - mean) * inv * gamma[i] + beta[i];
}

__global__ void distil_tail_kernel(const float* y, float* out, const float* bias, const float* mean,
                                   const float* scale, const float* beta, int64_t batch, int64_t len,
                                   int64_t d) {
  const int64_t out_len = (len - 1) / 2 + 1;
  KINFORMER_GRID_LOOP(i, batch * out_len * d) {
    const int64_t c = i % d, t = i / d % out_len, b = i / d / out_len;
    float best = -INFINITY;  // the pool's padding never wins (§3.6)
    const int64_t first = 2 * t - 1 < 0 ? 0 : 2 * t - 1, last = 2 * t + 1 > len - 1 ? len - 1 : 2 * t + 1;
    for (int64_t p = first; p <= last; ++p) {
      float v = (y[(b * len + p) * d + c] + bias[c] - mean[c]) * scale[c] + beta[c];
      v = v > 0.f ? v : expm1f(v);  // ELU, α = 1
      best = fmaxf(best, v);
    }
    out[i] = best;
  }
}

__global__ void split_heads_kernel(const float* src, int64_t ld, int64_t col0, const float* bias, float* dst,
                                   int64_t batch, int64_t heads, int64_t len, int64_t dk) {
  KINFORMER_GRID_LOOP(i, batch * heads * len * dk) {
    const int64_t e = i % dk, l = i / dk % len, h = i / dk / len % heads, b = i / dk / len / heads;
    dst[i] = src[(b * len + l) * ld + col0 + h * dk + e] + bias[h * dk + e];
  }
}

__global__ void merge_heads_kernel(const float* ctx, float* out, int64_t batch, int64_t heads, int64_t len,
                                   int64_t dk) {
  KINFORMER_GRID_LOOP(i, batch * len * heads * dk) {
    const int64_t e = i % dk, h = i / dk % heads, l = i / dk / heads % len, b = i / dk / heads / len;
    out[i] = ctx[((b * heads + h) * len + l) * dk + e];
  }
}

__global__ void causal_mask_kernel(float* scores, int64_t rows, int64_t l_q, int64_t l_k,
                                   const int32_t* top) {
  KINFORMER_GRID_LOOP(i, rows * l_k) {
    const int64_t j = i % l_k, r = i / l_k;
    const int64_t q = top ? top[r] : r % l_q;
    if (j > q) scores[i] = -INFINITY;
  }
}

__global__ void to_fp16_kernel(const float* src, __half* dst, int64_t n) {
  KINFORMER_GRID_LOOP(i, n) dst[i] = __float2half_rn(src[i]);
}

__global__ void to_bf16_kernel(const float* src, __nv_bfloat16* dst, int64_t n) {
  KINFORMER_GRID_LOOP(i, n) dst[i] = __float2bfloat16_rn(src[i]);
}

}  // namespace

cudaError_t circular_pad(const float* x, float* padded, int64_t batch, int64_t len, int64_t channels,
                         cudaStream_t stream) {
  circular_pad_kernel<<<blocks_for(batch * (len + 2) * channels), threads_per_block, 0, stream>>>(
      x, padded, batch, len, channels);
  return cudaGetLastError();
}

cudaError_t add_embedding_terms(float* out, const float* conv_bias, const float* time_bias, const float* pe,
                                int64_t batch, int64_t len, int64_t d, cudaStream_t stream) {
  add_embedding_terms_kernel<<<blocks_for(batch * len * d), threads_per_block, 0, stream>>>(
      out, conv_bias, time_bias, pe, batch, len, d);
  return cudaGetLastError();
}

cudaError_t bias_activation(float* x, const float* bias, int64_t rows, int64_t cols, Activation act,
                            cudaStream_t stream) {
  bias_activation_kernel<<<blocks_for(rows * cols), threads_per_block, 0, stream>>>(x, bias, rows, cols, act);
  return cudaGetLastError();
}

cudaError_t add_layer_norm(float* out, const float* residual, const float* y, const float* bias,
                           const float* gamma, const float* beta, int64_t rows, int64_t d,
                           cudaStream_t stream) {
  constexpr int rows_per_block = threads_per_block / 32;
  const auto blocks = static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block);
  add_layer_norm_kernel<<<blocks, threads_per_block, 0, stream>>>(out, residual, y, bias, gamma, beta, rows,
                                                                  d);
  return cudaGetLastError();
}

cudaError_t distil_tail(const float* y, float* out, const float* bias, const float* mean, const float* scale,
                        const float* beta, int64_t batch, int64_t len, int64_t d, cudaStream_t stream) {
  distil_tail_kernel<<<blocks_for(batch * ((len - 1) / 2 + 1) * d), threads_per_block, 0, stream>>>(
      y, out, bias, mean, scale, beta, batch, len, d);
  return cudaGetLastError();
}

cudaError_t split_heads(const float* src, int64_t ld, int64_t col0, const float* bias, float* dst,
                        int64_t batch, int64_t heads, int64_t len, int64_t dk, cudaStream_t stream) {
  split_heads_kernel<<<blocks_for(batch * heads * len * dk), threads_per_block, 0, stream>>>(
      src, ld, col0, bias, dst, batch, heads, len, dk);
  return cudaGetLastError();
}

cudaError_t merge_heads(const float* ctx, float* out, int64_t batch, int64_t heads, int64_t len, int64_t dk,
                        cudaStream_t stream) {
  merge_heads_kernel<<<blocks_for(batch * heads * len * dk), threads_per_block, 0, stream>>>(ctx, out, batch,
                                                                                             heads, len, dk);
  return cudaGetLastError();
}

cudaError_t causal_mask(float* scores, int64_t rows, int64_t l_q, int64_t l_k, const int32_t* top,
                        cudaStream_t stream) {
  causal_mask_kernel<<<blocks_for(rows * l_k), threads_per_block, 0, stream>>>(scores, rows, l_q, l_k, top);
  return cudaGetLastError();
}

cudaError_t to_16bit(const float* src, void* dst, int64_t n, bool bf16, cudaStream_t stream) {
  if (bf16)
    to_bf16_kernel<<<blocks_for(n), threads_per_block, 0, stream>>>(src, static_cast<__nv_bfloat16*>(dst), n);
  else
    to_fp16_kernel<<<blocks_for(n), threads_per_block, 0, stream>>>(src, static_cast<__half*>(dst), n);
  return cudaGetLastError();
}

}  // namespace kinformer::models::cuda
