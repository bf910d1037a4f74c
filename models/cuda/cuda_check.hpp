// models/cuda/cuda_check.hpp
//
// KINFORMER_CUDA_CHECK / KINFORMER_CUBLAS_CHECK / KINFORMER_CUDNN_CHECK: turn a
// failed CUDA runtime, cuBLAS or cuDNN status into models::BackendError naming the
// call, the file:line and the library's own message (style.md, models/ errors).
// Host code only (the .cpp files of models/cuda/); kernels report through their
// launchers' cudaGetLastError().
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

namespace kinformer::models::cuda {

[[noreturn]] void throw_backend_error(const char* library, const char* call, const char* message,
                                      const char* file, int line);

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_backend_error("CUDA", call, cudaGetErrorString(status), file, line);
}
inline void check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw_backend_error("cuBLAS", call, cublasGetStatusString(status), file, line);
}
inline void check(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw_backend_error("cuDNN", call, cudnnGetErrorString(status), file, line);
}

}  // namespace kinformer::models::cuda

#define KINFORMER_CUDA_CHECK(call) ::kinformer::models::cuda::check((call), #call, __FILE__, __LINE__)
#define KINFORMER_CUBLAS_CHECK(call) ::kinformer::models::cuda::check((call), #call, __FILE__, __LINE__)
#define KINFORMER_CUDNN_CHECK(call) ::kinformer::models::cuda::check((call), #call, __FILE__, __LINE__)
