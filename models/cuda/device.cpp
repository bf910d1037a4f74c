#include "models/cuda/device.hpp"

#include <string>
#include <tuple>
#include <utility>

#include "models/batch_norm.hpp"
#include "models/cuda/cuda_backend.hpp"
#include "models/cuda/cuda_check.hpp"
#include "models/cuda/kernels.hpp"
#include "models/model_error.hpp"

namespace kinformer::models::cuda {

void throw_backend_error(const char* library, const char* call, const char* message, const char* file,
                         int line) {
  throw BackendError(std::string("cuda backend: ") + library + " call " + call + " failed: " + message +
                     " (" + file + ":" + std::to_string(line) + ")");
}

namespace {

constexpr size_t blas_workspace_bytes = 32u << 20;  // cuBLAS's recommendation for Hopper; set explicitly so
                                                    // graph capture never makes cuBLAS allocate
constexpr size_t align_elements = 64;               // 256-byte aligned weight offsets

size_t aligned(size_t n) { return (n + align_elements - 1) / align_elements * align_elements; }

// Lays the weights out in one host block (later one upload) and notes which matrices
// also need a 16-bit copy.
class Packer {
 public:
  explicit Packer(bool sixteen_bit) : sixteen_bit_(sixteen_bit) {}

  size_t add(const float* p, size_t n) {
    const size_t offset = aligned(data_.size());
    data_.resize(offset);
    data_.insert(data_.end(), p, p + n);
    return offset;
  }
  size_t add(const Tensor& t) { return add(t.ptr(), static_cast<size_t>(t.size())); }
  size_t add(const std::vector<float>& v) { return add(v.data(), v.size()); }

  // A weight matrix [out, in] (+ bias); products over `in` % 8 == 0 get a 16-bit copy
  // (the tiny embedding products, in = C or F_t, stay fp32).
  LinearOnDevice matrix(const float* w, int64_t out, int64_t in, const float* bias) {
    LinearOnDevice l;
    l.out = out;
    l.in = in;
    l.w = add(w, static_cast<size_t>(out * in));
    if (bias) l.b = add(bias, static_cast<size_t>(out));
    if (sixteen_bit_ && in % 8 == 0) {
      l.w16 = aligned(halves_);
      halves_ = l.w16 + static_cast<size_t>(out * in);
      jobs_.emplace_back(l.w, l.w16, static_cast<size_t>(out * in));
    }
    return l;
  }
  LinearOnDevice linear(const LinearWeights& lw) {
    return matrix(lw.weight.ptr(), lw.weight.dim(0), lw.weight.dim(1), lw.bias.ptr());
  }
  NormOnDevice norm(const NormWeights& n) { return {add(n.gamma), add(n.beta)}; }

  // Q|K|V stacked, so one product computes all three (cross-attention uses its rows).
  AttentionOnDevice attention(const AttentionWeights& a) {
    std::vector<float> w, b;
    for (const LinearWeights* p : {&a.query, &a.key, &a.value}) {
      w.insert(w.end(), p->weight.data.begin(), p->weight.data.end());
      b.insert(b.end(), p->bias.data.begin(), p->bias.data.end());
    }
    const int64_t d = a.query.weight.dim(1);
    return {matrix(w.data(), 3 * a.query.weight.dim(0), d, b.data()), linear(a.out)};
  }

  // Conv1d weight [O, C, 3] -> three taps [O, C] (tap j multiplies padded row t + j).
  std::array<LinearOnDevice, 3> taps(const Tensor& w) {
    std::array<LinearOnDevice, 3> taps;
    for (int64_t j = 0; j < 3; ++j)
      taps[static_cast<size_t>(j)] = matrix(conv_tap(w, j).data(), w.dim(0), w.dim(1), nullptr);
    return taps;
  }

  EmbeddingOnDevice embedding(const EmbeddingWeights& e) {
    EmbeddingOnDevice out;
    out.taps = taps(e.token_conv_weight);
    out.conv_bias = add(e.token_conv_bias);
    out.positional = add(e.positional);
    out.time = linear(e.time);
    return out;
  }

  DistilOnDevice distil(const DistilWeights& d) {
    DistilOnDevice out;
    out.taps = taps(d.conv_weight);
    out.bias = add(d.conv_bias);
    out.bn_mean = add(d.bn_mean);
    out.bn_scale = add(batch_norm_scale(d));
    out.bn_beta = add(d.bn_beta);
    return out;
  }

  const std::vector<float>& data() const { return data_; }
  size_t halves() const { return halves_; }
  // (fp32 offset, 16-bit offset, count)
  const std::vector<std::tuple<size_t, size_t, size_t>>& jobs() const { return jobs_; }

 private:
  bool sixteen_bit_;
  std::vector<float> data_;
  size_t halves_ = 0;
  std::vector<std::tuple<size_t, size_t, size_t>> jobs_;
};

}  // namespace

LinearOnDevice LinearOnDevice::rows(int64_t first, int64_t count) const {
  LinearOnDevice r = *this;
  r.out = count;
  r.w = w + static_cast<size_t>(first * in);
  if (b != no_offset) r.b = b + static_cast<size_t>(first);
  if (w16 != no_offset) r.w16 = w16 + static_cast<size_t>(first * in);
  return r;
}

Device::Device(int ordinal, Precision precision, const InformerWeights& weights)
    : ordinal_(ordinal), precision_(precision) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || ordinal < 0 || ordinal >= count) {
    (void)cudaGetLastError();
    throw BackendUnavailable("cuda backend: device " + std::to_string(ordinal) + " does not exist (" +
                             std::to_string(count) + " CUDA devices)");
  }
  try {
    make_current();
    KINFORMER_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    KINFORMER_CUBLAS_CHECK(cublasCreate(&blas_));
    KINFORMER_CUBLAS_CHECK(cublasSetStream(blas_, stream_));
    // Default math: no TF32 unless asked through the compute type (informer-model.md §9.13).
    KINFORMER_CUBLAS_CHECK(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH));
    blas_workspace_ = allocate_device(blas_workspace_bytes);
    KINFORMER_CUBLAS_CHECK(cublasSetWorkspace(blas_, blas_workspace_, blas_workspace_bytes));
    KINFORMER_CUDNN_CHECK(cudnnCreate(&dnn_));
    KINFORMER_CUDNN_CHECK(cudnnSetStream(dnn_, stream_));
    KINFORMER_CUDNN_CHECK(cudnnCreateTensorDescriptor(&softmax_desc_));
    upload(weights);
  } catch (...) {
    release();  // no destructor runs for a throwing constructor
    throw;
  }
}

Device::~Device() { release(); }

void Device::release() noexcept {
  // Teardown must not throw: statuses are ignored (the process may be exiting on a dead context).
  if (stream_) (void)cudaStreamSynchronize(stream_);
  if (softmax_desc_) cudnnDestroyTensorDescriptor(softmax_desc_);
  if (dnn_) cudnnDestroy(dnn_);
  if (blas_) cublasDestroy(blas_);
  free_device(blas_workspace_);
  free_device(weights_);
  free_device(weights16_);
  if (stream_) (void)cudaStreamDestroy(stream_);
  softmax_desc_ = nullptr;
  dnn_ = nullptr;
  blas_ = nullptr;
  blas_workspace_ = nullptr;
  weights16_ = nullptr;
  weights_ = nullptr;
  stream_ = nullptr;
}

void Device::make_current() const { KINFORMER_CUDA_CHECK(cudaSetDevice(ordinal_)); }

const void* Device::w16(size_t offset) const {
  const size_t bytes = offset * 2;  // fp16 and bf16 are both 2 bytes
  return static_cast<const char*>(weights16_) + bytes;
}

void Device::upload(const InformerWeights& w) {
  Packer pack(half());
  layout_.enc_embedding = pack.embedding(w.enc_embedding);
  layout_.dec_embedding = pack.embedding(w.dec_embedding);
  for (const auto& l : w.encoder_layers)
    layout_.encoder_layers.push_back({pack.attention(l.attention), pack.linear(l.ffn1), pack.linear(l.ffn2),
                                      pack.norm(l.norm1), pack.norm(l.norm2)});
  for (const auto& d : w.distil_layers) layout_.distil_layers.push_back(pack.distil(d));
  layout_.encoder_norm = pack.norm(w.encoder_norm);
  for (const auto& l : w.decoder_layers)
    layout_.decoder_layers.push_back({pack.attention(l.self_attention), pack.attention(l.cross_attention),
                                      pack.linear(l.ffn1), pack.linear(l.ffn2), pack.norm(l.norm1),
                                      pack.norm(l.norm2), pack.norm(l.norm3)});
  layout_.decoder_norm = pack.norm(w.decoder_norm);
  layout_.projection = pack.linear(w.projection);

  const size_t bytes = pack.data().size() * sizeof(float);
  weights_ = static_cast<float*>(allocate_device(bytes));
  KINFORMER_CUDA_CHECK(cudaMemcpy(weights_, pack.data().data(), bytes, cudaMemcpyHostToDevice));
  if (pack.halves() > 0) {
    weights16_ = allocate_device(pack.halves() * 2);
    for (const auto& [from, to, count] : pack.jobs())
      KINFORMER_CUDA_CHECK(to_16bit(weights_ + from, static_cast<char*>(weights16_) + to * 2,
                                    static_cast<int64_t>(count), precision_ == Precision::bf16, stream_));
  }
  KINFORMER_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void Device::gemm(bool sixteen_bit, bool b_transposed, int64_t m, int64_t n, int64_t k, float alpha,
                  Operand a, Operand b, float beta, float* c, int64_t ldc, int64_t stride_c, int64_t batch) {
  // cuBLAS is column-major: gemm_mapping.hpp turns the row-major product into its call.
  const ColumnMajorGemm g = to_column_major(b_transposed, m, n, k, a, b, ldc, stride_c, batch);
  const cudaDataType type = !sixteen_bit                    ? CUDA_R_32F
                            : precision_ == Precision::bf16 ? CUDA_R_16BF
                                                            : CUDA_R_16F;
  const cublasComputeType_t compute =
      !sixteen_bit && precision_ == Precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  auto op = [](bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
  KINFORMER_CUBLAS_CHECK(cublasGemmStridedBatchedEx(blas_, op(g.transpose_a), op(g.transpose_b), g.m, g.n,
                                                    g.k, &alpha, g.a, type, g.lda, g.stride_a, g.b, type,
                                                    g.ldb, g.stride_b, &beta, c, CUDA_R_32F, g.ldc,
                                                    g.stride_c, g.batch, compute, CUBLAS_GEMM_DEFAULT));
}

void Device::softmax(const float* in, float* out, int64_t rows, int64_t cols) {
  const float one = 1.f, zero = 0.f;
  KINFORMER_CUDNN_CHECK(cudnnSetTensor4dDescriptor(softmax_desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                                   static_cast<int>(rows), static_cast<int>(cols), 1, 1));
  KINFORMER_CUDNN_CHECK(cudnnSoftmaxForward(dnn_, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one,
                                            softmax_desc_, in, &zero, softmax_desc_, out));
}

void* Device::allocate_device(size_t bytes) {
  void* p = nullptr;
  KINFORMER_CUDA_CHECK(cudaMalloc(&p, bytes == 0 ? 1 : bytes));
  ++allocations_;
  return p;
}

void* Device::allocate_pinned(size_t bytes) {
  void* p = nullptr;
  KINFORMER_CUDA_CHECK(cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocDefault));
  ++allocations_;
  return p;
}

void Device::free_device(void* p) noexcept {
  if (p) (void)cudaFree(p);
}

void Device::free_pinned(void* p) noexcept {
  if (p) (void)cudaFreeHost(p);
}

bool device_available(std::string* why) {
  static const std::pair<bool, std::string> probe = []() -> std::pair<bool, std::string> {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      return {false,
              std::string("no usable CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(status) + ")"};
    }
    if (count == 0) return {false, "no CUDA device"};
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      return {false, "cudaGetDeviceProperties failed for device 0"};
    }
    // The build carries sm_90 code and compute_90 PTX: it runs on Hopper and newer only.
    if (prop.major < 9)
      return {false, std::string("device 0 (") + prop.name + ") is sm_" + std::to_string(prop.major) +
                         std::to_string(prop.minor) + "; this build has sm_90 code only"};
    return {true, ""};
  }();
  if (why) *why = probe.second;
  return probe.first;
}

}  // namespace kinformer::models::cuda
