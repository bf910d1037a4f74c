# Decides KINFORMER_HAVE_CUDA from KINFORMER_CUDA (AUTO | ON | OFF) and, when on,
# enables CUDA for sm_90 (H100/H200) and defines CuDNN::cudnn. cudart links
# statically; cuDNN and cuBLAS are found at run time through RUNPATH $ORIGIN/lib
# or LD_LIBRARY_PATH (deps-notes.md §5).
set(KINFORMER_HAVE_CUDA OFF)
if(NOT KINFORMER_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_ARCHITECTURES 90)
    set(CMAKE_CUDA_STANDARD 17)
    enable_language(CUDA)
    find_package(CUDAToolkit)
    find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
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
