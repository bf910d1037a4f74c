// models/cuda/kernels.hpp
//
// The CUDA backend's own kernels (informer-model.md §3), as plain C++ launchers
// that host code compiled by g++ can call. Everything cuBLAS (matrix products) and
// cuDNN (softmax) do not cover: padding, bias/activation epilogues, LayerNorm,
// the distilling tail, head (un)splitting, masks, and the ProbSparse steps.
//
// Contract
//   * Row-major like the reference: activations [B, L, D]; head-major [B, H, L, d_k]
//     ("bh" = B·H rows of [L, d_k]).
//   * Each launcher enqueues on `stream` (never synchronises, never allocates, so
//     it can be captured in a CUDA graph) and returns the launch status.
//   * Kernels are deliberately simple (one thread per output element, one warp
//     per row for reductions): correctness over cleverness; cuBLAS holds the FLOPs.
// Not here: matrix products, softmax (cuda_forward.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kinformer::models::cuda {

enum class Activation { none, gelu, relu };  // gelu: the erf form (§9.9)

/// padded [B, L+2, C] = [x[L−1], x[0..L−1], x[0]] per batch element (circular pad 1, §3.1).
cudaError_t circular_pad(const float* x, float* padded, int64_t batch, int64_t len, int64_t channels,
                         cudaStream_t stream);

/// out[b, t, i] += conv_bias[i] + time_bias[i] + pe[t, i]: the embedding's additive terms (§3.1).
cudaError_t add_embedding_terms(float* out, const float* conv_bias, const float* time_bias, const float* pe,
                                int64_t batch, int64_t len, int64_t d, cudaStream_t stream);

/// x[r, c] = act(x[r, c] + bias[c]) for rows × cols.
cudaError_t bias_activation(float* x, const float* bias, int64_t rows, int64_t cols, Activation act,
                            cudaStream_t stream);

/// out[r] = LayerNorm(residual[r] + y[r] + bias) · γ + β (eps 1e-5, biased variance).
/// y and bias may be null; out may alias residual or y.
cudaError_t add_layer_norm(float* out, const float* residual, const float* y, const float* bias,
                           const float* gamma, const float* beta, int64_t rows, int64_t d,
                           cudaStream_t stream);

/// Distilling tail (§3.6): y [B, L, D] is the conv without bias; out [B, ⌊(L−1)/2⌋+1, D] =
/// maxpool(3, 2, 1)(ELU((y + bias − mean)·scale + β)), scale = γ/√(var + 1e-5).
cudaError_t distil_tail(const float* y, float* out, const float* bias, const float* mean, const float* scale,
                        const float* beta, int64_t batch, int64_t len, int64_t d, cudaStream_t stream);

/// dst [B, H, L, dk] = src[b, l, col0 + h·dk + e] + bias[h·dk + e]; src rows are `ld` floats apart.
cudaError_t split_heads(const float* src, int64_t ld, int64_t col0, const float* bias, float* dst,
                        int64_t batch, int64_t heads, int64_t len, int64_t dk, cudaStream_t stream);

/// out [B, L, H·dk] from head-major ctx [B, H, L, dk] (the transpose back, mix=False; §3.2).
cudaError_t merge_heads(const float* ctx, float* out, int64_t batch, int64_t heads, int64_t len, int64_t dk,
                        cudaStream_t stream);

/// scores [rows, l_k]: entries j > q(r) become −inf, q(r) = top[r] (ProbSparse: the
/// selected query's own position, §9.10) or r mod l_q when top is null (causal full attention).
cudaError_t causal_mask(float* scores, int64_t rows, int64_t l_q, int64_t l_k, const int32_t* top,
                        cudaStream_t stream);

/// dst[i] = (fp16 or bf16) src[i]: the operands of the 16-bit matrix products.
cudaError_t to_16bit(const float* src, void* dst, int64_t n, bool bf16, cudaStream_t stream);

// -- ProbSparse (§3.4), head-major q/k/v ------------------------------------------------

/// m[p, i] = max_j S − (Σ_j S)/l_k with S = qh[p, i]·kh[p, idx[i, j]] (unscaled; steps 3-4, §9.2).
cudaError_t sparsity_measure(const float* qh, const float* kh, const int32_t* idx, int sample_k, float* m,
                             int64_t bh, int l_q, int l_k, int dk, cudaStream_t stream);

/// top[p, 0..n_top): the positions of the n_top largest m[p, ·] (larger first, equal
/// values to the lower position: the reference's order); when *forced_flag != 0 the
/// rows of `forced` [bh, n_top] are copied instead (a sampler's forced queries).
cudaError_t select_top(const float* m, int64_t bh, int l_q, int n_top, const int32_t* forced_flag,
                       const int32_t* forced, int32_t* top, cudaStream_t stream);

/// rows[p, r] = src[p, top[p, r]] (dk floats each).
cudaError_t gather_rows(const float* src, const int32_t* top, float* rows, int64_t bh, int l_q, int n_top,
                        int dk, cudaStream_t stream);

/// ctx[p, l] = cumulative ? Σ_{s≤l} v[p, s] : mean_s v[p, s] (step 7, §9.1).
cudaError_t initial_context(const float* vh, float* ctx, int64_t bh, int len, int dk, bool cumulative,
                            cudaStream_t stream);

/// ctx[p, top[p, r]] = rows[p, r] (step 9).
cudaError_t scatter_rows(const float* rows, const int32_t* top, float* ctx, int64_t bh, int l_q, int n_top,
                         int dk, cudaStream_t stream);

}  // namespace kinformer::models::cuda
