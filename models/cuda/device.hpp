// models/cuda/device.hpp
//
// Device: one CUDA backend's hold on the GPU: the device ordinal, its own stream
// (one stream per backend, so one per inference worker), cuBLAS and cuDNN handles
// bound to that stream, the model's weights uploaded once, and the two library
// calls the forward pass is built from (a row-major matrix product and a row softmax).
//
// Contract
//   * Weights are uploaded in the constructor into one device allocation; weights
//     of the 16-bit products also get an fp16/bf16 copy when the precision asks.
//     Rearranged once: Q|K|V stacked [3D, D]; each k=3 conv split into three taps
//     [O, C]; the distil BatchNorm reduced to its per-channel scale
//     (models/batch_norm.hpp).
//   * Every device or pinned-host allocation goes through allocate_*() and is
//     counted (allocations()): "no allocation per call after warm-up" is testable.
//   * gemm() and softmax() only enqueue (capturable in a CUDA graph).
// Threading: one thread at a time (the owning backend's forecast).
// Errors: BackendError (KINFORMER_*_CHECK), BackendUnavailable for a bad ordinal.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <array>
#include <cstdint>
#include <vector>

#include "models/backend.hpp"
#include "models/cuda/gemm_mapping.hpp"

namespace kinformer::models::cuda {

constexpr size_t no_offset = static_cast<size_t>(-1);

// Offsets (in elements) into the fp32 weight block, and into the 16-bit block for w16.
struct LinearOnDevice {  // y = x·Wᵀ + b, W [out, in]
  size_t w = no_offset, b = no_offset, w16 = no_offset;
  int64_t out = 0, in = 0;
  /// Rows [first, first + count) of W and b: one of the stacked projections.
  LinearOnDevice rows(int64_t first, int64_t count) const;
};
struct NormOnDevice {
  size_t gamma = no_offset, beta = no_offset;
};
struct EmbeddingOnDevice {
  std::array<LinearOnDevice, 3> taps;  // tap j: W[:, :, j] as [D, C]
  size_t conv_bias = no_offset, positional = no_offset;
  LinearOnDevice time;
};
struct AttentionOnDevice {
  LinearOnDevice qkv;  // [3D, D]: query, key, value rows
  LinearOnDevice out;
};
struct EncoderLayerOnDevice {
  AttentionOnDevice attention;
  LinearOnDevice ffn1, ffn2;
  NormOnDevice norm1, norm2;
};
struct DistilOnDevice {
  std::array<LinearOnDevice, 3> taps;  // [D, D] each
  size_t bias = no_offset, bn_mean = no_offset, bn_scale = no_offset, bn_beta = no_offset;
};
struct DecoderLayerOnDevice {
  AttentionOnDevice self_attention, cross_attention;
  LinearOnDevice ffn1, ffn2;
  NormOnDevice norm1, norm2, norm3;
};
struct WeightsOnDevice {
  EmbeddingOnDevice enc_embedding, dec_embedding;
  std::vector<EncoderLayerOnDevice> encoder_layers;
  std::vector<DistilOnDevice> distil_layers;
  NormOnDevice encoder_norm;
  std::vector<DecoderLayerOnDevice> decoder_layers;
  NormOnDevice decoder_norm;
  LinearOnDevice projection;
};

class Device {
 public:
  Device(int ordinal, Precision precision, const InformerWeights& weights);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  cudaStream_t stream() const { return stream_; }
  Precision precision() const { return precision_; }
  bool half() const { return precision_ == Precision::fp16 || precision_ == Precision::bf16; }
  const WeightsOnDevice& weights() const { return layout_; }
  const float* f(size_t offset) const { return weights_ + offset; }
  const void* w16(size_t offset) const;

  /// Makes this backend's device current on the calling thread.
  void make_current() const;

  /// Per batch item: C[m, n] = alpha · A[m, k] · op(B) + beta · C, with B stored [k, n]
  /// (b_transposed false) or [n, k] (true). sixteen_bit: A and B hold fp16/bf16 (per
  /// the precision) and the product runs on tensor cores with fp32 accumulation;
  /// otherwise fp32 operands (TF32 only when the precision is tf32).
  void gemm(bool sixteen_bit, bool b_transposed, int64_t m, int64_t n, int64_t k, float alpha, Operand a,
            Operand b, float beta, float* c, int64_t ldc, int64_t stride_c, int64_t batch);

  /// out[r, :] = softmax(in[r, :]) over `cols` (cuDNN, accurate mode; −inf entries give 0).
  void softmax(const float* in, float* out, int64_t rows, int64_t cols);

  void* allocate_device(size_t bytes);
  void* allocate_pinned(size_t bytes);
  void free_device(void* p) noexcept;
  void free_pinned(void* p) noexcept;
  /// cudaMalloc + cudaHostAlloc calls made so far (the constructor's included).
  int64_t allocations() const { return allocations_; }

 private:
  void upload(const InformerWeights& weights);
  void release() noexcept;

  int ordinal_;
  Precision precision_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  cudnnTensorDescriptor_t softmax_desc_ = nullptr;
  void* blas_workspace_ = nullptr;
  float* weights_ = nullptr;   // every fp32 weight, one allocation
  void* weights16_ = nullptr;  // 16-bit copies of the weight-product operands (half() only)
  WeightsOnDevice layout_;
  int64_t allocations_ = 0;
};

}  // namespace kinformer::models::cuda
