# Decides KINFORMER_HAVE_CUDA from KINFORMER_CUDA (AUTO | ON | OFF) and, when on,
# enables CUDA for sm_90 (H100/H200: SASS) plus compute_90 PTX (JIT on newer chips),
# and defines CuDNN::cudnn. cudart links statically; cuDNN and cuBLAS are found at
# run time through RUNPATH $ORIGIN/lib or LD_LIBRARY_PATH (deps-notes.md §5).
# cuDNN may live outside the toolkit (NVIDIA's pip wheels ship only libcudnn.so.9):
# pass -DCUDNN_INCLUDE_DIR=... -DCUDNN_LIBRARY=... or -DCUDNN_ROOT=... (bench/gpu_check.sh does).
set(KINFORMER_HAVE_CUDA OFF)
if(NOT KINFORMER_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual")
    endif()
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    find_package(CUDAToolkit)
    find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDNN_ROOT} ${CUDNN_ROOT}/include ${CUDAToolkit_INCLUDE_DIRS})
    find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
                 HINTS ${CUDNN_ROOT} ${CUDNN_ROOT}/lib ${CUDNN_ROOT}/lib64 ${CUDAToolkit_LIBRARY_DIR})
    if(CUDAToolkit_FOUND AND TARGET CUDA::cublas AND CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
      add_library(CuDNN::cudnn SHARED IMPORTED)
      set_target_properties(CuDNN::cudnn PROPERTIES
        IMPORTED_LOCATION ${CUDNN_LIBRARY} INTERFACE_INCLUDE_DIRECTORIES ${CUDNN_INCLUDE_DIR})
      set(KINFORMER_HAVE_CUDA ON)
    endif()
  endif()
  if(KINFORMER_CUDA STREQUAL "ON" AND NOT KINFORMER_HAVE_CUDA)
    message(FATAL_ERROR "KINFORMER_CUDA=ON but nvcc, cuDNN or cuBLAS was not found")
  endif()
endif()
