# CUDA C++ kernels of the library (src/cuda/kernels.cu: every algorithm's cuda/ folder), compiled by nvcc
# at build time and embedded in the library like the SPIR-V (cmake/EmbedShaders.cmake), for
# NVIDIA devices that launch them through VK_NVX_binary_import (README.md, "Which path runs
# where"). Without nvcc the library builds as before, SPIR-V only.
#
#   GPUSORT_CUDA_KERNELS        ON by default where nvcc is found (CUDACXX, CMAKE_CUDA_COMPILER,
#                               PATH, /usr/local/cuda/bin)
#   GPUSORT_CUDA_ARCHITECTURES  the cubins built, e.g. "90" or "90;100" (default "90"); PTX of the
#                               newest is embedded too, so that newer GPUs JIT it
#   GPUSORT_CUDA_LINEINFO       OFF by default: ON compiles with -lineinfo (source lines for ncu's
#                               source view; the embedded cubin then grows about fourfold)
#
# Sets GPUSORT_CUDA_KERNELS_SOURCES (the generated C++ file that embeds the cubins and the PTX,
# to be added to the library) and, where the kernels are built, GPUSORT_CUDA_KERNELS_ENABLED.
# `nvcc -Xptxas -v` of every cubin (registers, spills, shared memory per kernel) is kept in the
# build directory: cuda_kernels/kernels_sm_<arch>.ptxas.txt.
set(GPUSORT_CUDA_KERNELS_SOURCES "")
set(GPUSORT_CUDA_KERNELS_ENABLED OFF)
set(_gpusort_nvcc_hints "")
if(DEFINED ENV{CUDACXX})
  get_filename_component(_dir "$ENV{CUDACXX}" DIRECTORY)
  list(APPEND _gpusort_nvcc_hints ${_dir})
endif()
if(CMAKE_CUDA_COMPILER)
  get_filename_component(_dir "${CMAKE_CUDA_COMPILER}" DIRECTORY)
  list(APPEND _gpusort_nvcc_hints ${_dir})
endif()
find_program(GPUSORT_NVCC nvcc HINTS ${_gpusort_nvcc_hints} PATHS /usr/local/cuda/bin)
if(GPUSORT_NVCC)
  set(_gpusort_cuda_default ON)
else()
  set(_gpusort_cuda_default OFF)
endif()
option(GPUSORT_CUDA_KERNELS "Build and embed the CUDA kernels (needs nvcc)" ${_gpusort_cuda_default})
set(GPUSORT_CUDA_ARCHITECTURES "90" CACHE STRING "SM architectures of the embedded cubins")

if(GPUSORT_CUDA_KERNELS AND NOT GPUSORT_NVCC)
  message(WARNING "GPUSORT_CUDA_KERNELS is on but nvcc was not found: the library is built "
                  "without CUDA kernels (SPIR-V only)")
endif()

if(GPUSORT_CUDA_KERNELS AND GPUSORT_NVCC)
  set(GPUSORT_CUDA_KERNELS_ENABLED ON)
  set(_src ${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/kernels.cu)
  option(GPUSORT_CUDA_LINEINFO "Compile the embedded CUDA kernels with -lineinfo" OFF)
  set(_lineinfo 0)
  if(GPUSORT_CUDA_LINEINFO)
    set(_lineinfo 1)
  endif()
  file(GLOB _kernel_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*/cuda/*.cu*
            ${CMAKE_CURRENT_SOURCE_DIR}/src/*/*/cuda/*.cu* ${CMAKE_CURRENT_SOURCE_DIR}/src/*/cuda/*.h*
            ${CMAKE_CURRENT_SOURCE_DIR}/src/*/*/cuda/*.h*)
  set(_deps ${_src} ${_kernel_sources} ${CMAKE_CURRENT_SOURCE_DIR}/src/algorithms/onesweep/state.h
            ${CMAKE_CURRENT_SOURCE_DIR}/src/primitives/key_order.h
            ${CMAKE_CURRENT_SOURCE_DIR}/cmake/CompileCudaKernel.cmake)
  set(_dir ${CMAKE_CURRENT_BINARY_DIR}/cuda_kernels)
  file(MAKE_DIRECTORY ${_dir})
  set(_blobs "")
  set(_incbins "")
  set(_cubins "")
  set(_newest 0)
  foreach(arch IN LISTS GPUSORT_CUDA_ARCHITECTURES)
    if(NOT arch MATCHES "^[0-9]+[a-z]?$")
      message(FATAL_ERROR "GPUSORT_CUDA_ARCHITECTURES: '${arch}' is not an SM number such as 90")
    endif()
    string(REGEX MATCH "^[0-9]+" _number ${arch})
    if(_number GREATER _newest)
      set(_newest ${_number})
    endif()
    set(_out ${_dir}/kernels_sm_${arch})
    add_custom_command(
      OUTPUT ${_out}.cubin ${_out}.ptxas.txt
      COMMAND ${CMAKE_COMMAND} -DNVCC=${GPUSORT_NVCC} -DSOURCE=${_src}
              -DINCLUDE_DIR=${CMAKE_CURRENT_SOURCE_DIR}/src -DKIND=cubin -DARCH=${arch} -DOUT=${_out}
              -DLINEINFO=${_lineinfo}
              -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/CompileCudaKernel.cmake
      DEPENDS ${_deps}
      COMMENT "nvcc kernels.cu -> cubin for sm_${arch}"
      VERBATIM)
    list(APPEND _blobs ${_out}.cubin)
    string(APPEND _incbins "GPUSORT_INCBIN(gpusort_cuda_cubin_${arch}, \"${_out}.cubin\")\n")
    string(APPEND _cubins "    {${_number}, gpusort_cuda_cubin_${arch}, size_t(gpusort_cuda_cubin_${arch}_end - gpusort_cuda_cubin_${arch})},\n")
  endforeach()
  set(_ptx ${_dir}/kernels_compute_${_newest})
  add_custom_command(
    OUTPUT ${_ptx}.ptx
    COMMAND ${CMAKE_COMMAND} -DNVCC=${GPUSORT_NVCC} -DSOURCE=${_src}
            -DINCLUDE_DIR=${CMAKE_CURRENT_SOURCE_DIR}/src -DKIND=ptx -DARCH=${_newest} -DOUT=${_ptx}
            -DLINEINFO=${_lineinfo}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/CompileCudaKernel.cmake
    DEPENDS ${_deps}
    COMMENT "nvcc kernels.cu -> PTX for compute_${_newest}"
    VERBATIM)
  list(APPEND _blobs ${_ptx}.ptx)
  string(APPEND _incbins "GPUSORT_INCBIN(gpusort_cuda_ptx, \"${_ptx}.ptx\")\n")
  set(GPUSORT_CUDA_KERNELS_SOURCES ${CMAKE_CURRENT_BINARY_DIR}/generated/embedded_cuda_kernels.cpp)
  # The blobs go into the library with the assembler's .incbin (each followed by a NUL, which
  # ends the PTX text), hidden so that no symbol is exported.
  file(CONFIGURE OUTPUT ${GPUSORT_CUDA_KERNELS_SOURCES} CONTENT
"// Generated by cmake/CudaKernels.cmake: do not edit.
#include \"cuda/embedded_images.hpp\"
#define GPUSORT_INCBIN(symbol, path)                                                           \\
  __asm__(\".section .rodata\\n.balign 16\\n.global \" #symbol \"\\n.hidden \" #symbol \"\\n\"      \\
          #symbol \":\\n.incbin \\\"\" path \"\\\"\\n.global \" #symbol \"_end\\n.hidden \" #symbol   \\
          \"_end\\n\" #symbol \"_end:\\n.byte 0\\n.previous\\n\");                                   \\
  extern \"C\" const unsigned char symbol[];                                                   \\
  extern \"C\" const unsigned char symbol##_end[];
@_incbins@
namespace gpusort::cuda {
std::span<const EmbeddedCubin> embedded_cubins() {
  static const EmbeddedCubin cubins[] = {
@_cubins@  };
  return cubins;
}
EmbeddedPtx embedded_ptx() {
  return {${_newest}, reinterpret_cast<const char*>(gpusort_cuda_ptx),
          size_t(gpusort_cuda_ptx_end - gpusort_cuda_ptx)};
}
}  // namespace gpusort::cuda
" @ONLY)
  set_source_files_properties(${GPUSORT_CUDA_KERNELS_SOURCES} PROPERTIES OBJECT_DEPENDS "${_blobs}")
  add_custom_target(gpusort_cuda_kernels DEPENDS ${_blobs})
  message(STATUS "gpusort: CUDA kernels for sm_${GPUSORT_CUDA_ARCHITECTURES} + PTX compute_${_newest} (${GPUSORT_NVCC})")
else()
  message(STATUS "gpusort: no CUDA kernels (SPIR-V only)")
endif()
