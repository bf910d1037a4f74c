# install_consumer.cmake: run by ctest (tests/install/CMakeLists.txt) with cmake -P.
# Installs the build into WORK_DIR/prefix (fresh each run), then configures and builds
# CONSUMER_SOURCE_DIR in WORK_DIR/build with only CMAKE_PREFIX_PATH pointing at it; any
# failing step fails the test with that step's output. Optional:
#   COPY_AS=NAME  build a copy, WORK_DIR/src/NAME, so nothing else of the tree is within
#                 reach (an example that includes tests/ fails to compile);
#   RUN=PROGRAM   then run WORK_DIR/build/PROGRAM, print its output, and run the
#                 installed CLI.
#   UNOPTIMIZED=ON  configure without a build type, so without -O (g++'s -O0): for a copy
#                 that is only built, never run.
#   UNITY=ON      a unity build, like the tree's own (KINFORMER_UNITY_BUILD).
foreach(var KINFORMER_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR CXX_COMPILER GENERATOR)
  if(NOT ${var})
    message(FATAL_ERROR "install_consumer.cmake: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
set(source ${CONSUMER_SOURCE_DIR})
if(COPY_AS)
  set(source ${WORK_DIR}/src/${COPY_AS})
  file(COPY ${CONSUMER_SOURCE_DIR}/ DESTINATION ${source})
endif()

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step("cmake --install" ${CMAKE_COMMAND} --install ${KINFORMER_BUILD_DIR} --prefix ${prefix})
foreach(installed include/kinformer/runtime/object.hpp include/kinformer/actors/shared_informer.hpp
                  include/kinformer/runtime/http/http_list_watch.hpp lib/libkinformer_http.a
                  lib/libkinformer_runtime.a lib/cmake/kinformer/kinformerConfig.cmake
                  lib/cmake/kinformer/kinformerConfigVersion.cmake lib/cmake/kinformer/FindCAF.cmake bin/kinformer)
  if(NOT EXISTS ${prefix}/${installed})
    message(FATAL_ERROR "cmake --install did not install ${installed}")
  endif()
endforeach()

set(options "")
if(CXX_LAUNCHER)
  set(options -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER})
endif()
if(UNITY)
  list(APPEND options -DCMAKE_UNITY_BUILD=ON)
endif()
set(build_type Release)
if(UNOPTIMIZED)
  set(build_type "")
endif()
step("configuring ${source}" ${CMAKE_COMMAND} -S ${source} -B ${WORK_DIR}/build -G ${GENERATOR}
     -DCMAKE_BUILD_TYPE=${build_type} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${options})
step("building ${source}" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
if(RUN)
  step("running ${RUN}" ${WORK_DIR}/build/${RUN})
  message("${step_output}")
  step("running the installed CLI" ${prefix}/bin/kinformer version)
endif()
