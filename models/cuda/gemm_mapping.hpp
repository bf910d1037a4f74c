// models/cuda/gemm_mapping.hpp
//
// How the CUDA backend's row-major products become cuBLAS's column-major strided-
// batched GEMM calls, and how a k=3 convolution weight becomes three product taps.
// Plain C++ (no CUDA headers), so that this, the part of the backend easiest to get
// subtly wrong, is unit-tested on machines without a GPU against a CPU emulation of
// the cuBLAS call (tests/models/cuda_gemm_mapping_test.cpp).
//
// Contract
//   * to_column_major(): per batch item p, C[m, n] = A[m, k] · op(B) with every
//     matrix row-major (element (r, c) of item p at ptr + p·stride + r·ld + c) and B
//     stored [k, n] (b_transposed false) or [n, k] (true). The result is the argument
//     list of cublasGemmStridedBatchedEx computing the column-major Cᵀ = op(B)ᵀ·Aᵀ,
//     where the row-major buffers of B and A already are those transposes.
//   * conv_tap(w, j): tap j [O, C] of a Conv1d weight [O, C, 3] (W[:, :, j]); with a
//     circularly padded input P [L+2, C], y[t] = Σ_j P[t + j] · tap_jᵀ + bias.
#pragma once

#include <cstdint>
#include <vector>

#include "models/tensor.hpp"

namespace kinformer::models::cuda {

/// A row-major matrix operand: element (r, c) of batch item i at ptr + i·stride + r·ld + c.
struct Operand {
  const void* ptr;
  int64_t ld;
  int64_t stride = 0;
};

/// The arguments of cublasGemmStridedBatchedEx in its order (alpha, beta, types aside).
struct ColumnMajorGemm {
  bool transpose_a = false, transpose_b = false;
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int lda = 0;
  long long stride_a = 0;
  const void* b = nullptr;
  int ldb = 0;
  long long stride_b = 0;
  int ldc = 0;
  long long stride_c = 0;
  int batch = 0;
};

inline ColumnMajorGemm to_column_major(bool b_transposed, int64_t m, int64_t n, int64_t k, Operand a,
                                       Operand b, int64_t ldc, int64_t stride_c, int64_t batch) {
  ColumnMajorGemm g;
  g.transpose_a = b_transposed;  // cuBLAS's first operand is our B
  g.transpose_b = false;
  g.m = static_cast<int>(n);
  g.n = static_cast<int>(m);
  g.k = static_cast<int>(k);
  g.a = b.ptr;
  g.lda = static_cast<int>(b.ld);
  g.stride_a = b.stride;
  g.b = a.ptr;
  g.ldb = static_cast<int>(a.ld);
  g.stride_b = a.stride;
  g.ldc = static_cast<int>(ldc);
  g.stride_c = stride_c;
  g.batch = static_cast<int>(batch);
  return g;
}

inline std::vector<float> conv_tap(const Tensor& w, int64_t j) {
  const int64_t out = w.dim(0), in = w.dim(1);
  std::vector<float> tap(static_cast<size_t>(out * in));
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i)
      tap[static_cast<size_t>(o * in + i)] = w.data[static_cast<size_t>((o * in + i) * 3 + j)];
  return tap;
}

}  // namespace kinformer::models::cuda
