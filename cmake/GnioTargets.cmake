# SPDX-License-Identifier: Apache-2.0
# Shared build settings: warnings, libcu++ location and kernel sources that
# compile with nvcc for the GPU or as plain C++ for the emulated device.

add_library(gnio_warnings INTERFACE)
target_compile_options(gnio_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
# Warnings stop the build only where GNIO_WERROR asks (the project's presets
# and CI): a newer compiler's new warning must not break a user's build.
if(GNIO_WERROR)
  target_compile_options(gnio_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()
# In a unity build each source is included by the generated one, so GCC takes
# a test's fixture in an anonymous namespace for a header's type
# (-Wsubobject-linkage), which it is not.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(gnio_warnings INTERFACE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:$<TARGET_PROPERTY:UNITY_BUILD>>>:-Wno-subobject-linkage>)
endif()
# GCC 12 at -O3 (Release) reports out-of-bounds and overlapping copies inside
# libstdc++'s std::string and std::copy that cannot happen (GCC bugs 105329,
# 105651): keep them as warnings there rather than failing the build.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(gnio_warnings INTERFACE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release>>:-Wno-error=restrict -Wno-error=array-bounds
      -Wno-error=stringop-overflow -Wno-error=stringop-overread>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CONFIG:Release>>:-Xcompiler=-Wno-error=restrict,-Wno-error=array-bounds,-Wno-error=stringop-overflow,-Wno-error=stringop-overread>)
endif()

# libcu++ (cuda::atomic_ref): the toolkit's own copy when CUDA is used, so
# host and device code agree on one version; Debian's libcu++-dev otherwise.
if(GNIO_HAVE_CUDA)
  find_path(GNIO_LIBCUXX_INCLUDE_DIR cuda/atomic
    HINTS ${CUDAToolkit_INCLUDE_DIRS}/cccl ${CUDAToolkit_INCLUDE_DIRS}
    NO_DEFAULT_PATH)
else()
  find_path(GNIO_LIBCUXX_INCLUDE_DIR cuda/atomic)
endif()
if(NOT GNIO_LIBCUXX_INCLUDE_DIR)
  message(FATAL_ERROR "gnio needs libcu++ (cuda/atomic): install libcu++-dev, or a CUDA toolkit")
endif()

# gnio_kernel_sources(TARGET file.cu ...): device code is written once; with
# CUDA it is compiled by nvcc, without it by the C++ compiler for the emulated
# device.
function(gnio_kernel_sources target)
  target_sources(${target} PRIVATE ${ARGN})
  if(GNIO_HAVE_CUDA)
    set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CUDA)
  else()
    set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target}
      PROPERTIES LANGUAGE CXX COMPILE_OPTIONS "-xc++")
  endif()
endfunction()
