# FindCAF.cmake: CAF 0.17 as Debian 12 packages it (headers and libcaf_*.so, but no
# CMake config, no pkg-config file).
#
#   find_package(CAF 0.17 REQUIRED COMPONENTS core io)
#   target_link_libraries(x PRIVATE CAF::core CAF::io)
#
# Defines CAF::<component> imported targets (the names CAF 0.18+ exports itself),
# CAF_FOUND and CAF_VERSION. Set CAF_ROOT_DIR to search another prefix first.
find_package(Threads REQUIRED)

find_path(CAF_INCLUDE_DIR caf/config.hpp HINTS ${CAF_ROOT_DIR} PATH_SUFFIXES include)
mark_as_advanced(CAF_INCLUDE_DIR)

# caf/config.hpp: "#define CAF_VERSION 1706" means 0.17.6
if(CAF_INCLUDE_DIR)
  file(STRINGS ${CAF_INCLUDE_DIR}/caf/config.hpp version_line REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX MATCH "[0-9]+$" version_number "${version_line}")
  if(version_number)
    math(EXPR major "${version_number} / 10000")
    math(EXPR minor "(${version_number} / 100) % 100")
    math(EXPR patch "${version_number} % 100")
    set(CAF_VERSION ${major}.${minor}.${patch})
  endif()
endif()

foreach(component IN LISTS CAF_FIND_COMPONENTS)
  find_library(CAF_${component}_LIBRARY caf_${component} HINTS ${CAF_ROOT_DIR} PATH_SUFFIXES lib)
  mark_as_advanced(CAF_${component}_LIBRARY)
  set(CAF_${component}_FOUND FALSE)
  if(CAF_INCLUDE_DIR AND CAF_${component}_LIBRARY)
    set(CAF_${component}_FOUND TRUE)
    if(NOT TARGET CAF::${component})
      add_library(CAF::${component} UNKNOWN IMPORTED)
      set(link_deps Threads::Threads)
      if(NOT component STREQUAL "core")
        list(APPEND link_deps CAF::core)
      endif()
      set_target_properties(CAF::${component} PROPERTIES
        IMPORTED_LOCATION ${CAF_${component}_LIBRARY}
        INTERFACE_INCLUDE_DIRECTORIES ${CAF_INCLUDE_DIR}
        INTERFACE_LINK_LIBRARIES "${link_deps}")
    endif()
  endif()
endforeach()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF REQUIRED_VARS CAF_INCLUDE_DIR VERSION_VAR CAF_VERSION HANDLE_COMPONENTS)
