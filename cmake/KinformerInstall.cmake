# KinformerInstall.cmake: `cmake --install build --prefix P` (issue 15, item 1).
#
#   P/include/kinformer/<layer>/*.hpp     the headers, in their source folders
#   P/lib/libkinformer_<layer>.a          the static libraries
#   P/bin/kinformer                       the CLI
#   P/lib/cmake/kinformer/                kinformerConfig.cmake (+ version, targets, FindCAF.cmake)
#
# The headers include each other as "runtime/x.hpp" (rooted at the repository), so the
# imported targets carry include/kinformer for that spelling, and include/ so that a
# consumer writes the namespaced <kinformer/actors/shared_informer.hpp>.
# Included last from the top-level CMakeLists.txt, once every layer's target exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(kinformer_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kinformer)
set(kinformer_installed_targets "")
foreach(layer runtime actors models apiserver)
  if(TARGET kinformer_${layer})
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kinformer/${layer}
            FILES_MATCHING PATTERN "*.hpp")  # runtime/ brings runtime/http/
  endif()
endforeach()
foreach(library runtime http actors models apiserver)
  if(TARGET kinformer_${library})
    set_target_properties(kinformer_${library} PROPERTIES EXPORT_NAME ${library})
    list(APPEND kinformer_installed_targets kinformer_${library})
  endif()
endforeach()
install(TARGETS ${kinformer_installed_targets} EXPORT kinformerTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} ${CMAKE_INSTALL_INCLUDEDIR}/kinformer)
if(TARGET kinformer)
  install(TARGETS kinformer RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT kinformerTargets NAMESPACE kinformer:: DESTINATION ${kinformer_cmake_dir})

# What the config must find again: the link dependencies of the static libraries
# (private ones included, since a static library's users link them).
set(KINFORMER_CONFIG_MODELS_ONLY ${KINFORMER_MODELS_ONLY})
set(KINFORMER_CONFIG_HAVE_ONEDNN OFF)
if(TARGET DNNL::dnnl)
  set(KINFORMER_CONFIG_HAVE_ONEDNN ON)
endif()
set(KINFORMER_CONFIG_HAVE_CUDA ${KINFORMER_HAVE_CUDA})
set(CUDNN_LIBRARY_DIR "")
if(KINFORMER_HAVE_CUDA)
  get_filename_component(CUDNN_LIBRARY_DIR ${CUDNN_LIBRARY} DIRECTORY)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kinformerConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/kinformerConfig.cmake INSTALL_DESTINATION ${kinformer_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kinformerConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kinformerConfig.cmake ${PROJECT_BINARY_DIR}/kinformerConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindCAF.cmake
        DESTINATION ${kinformer_cmake_dir})
