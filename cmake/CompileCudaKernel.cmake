# One nvcc step of cmake/CudaKernels.cmake (run with cmake -P):
#   KIND=cubin: nvcc -cubin for sm_ARCH, `-Xptxas -v` kept in OUT.ptxas.txt -> OUT.cubin
#   KIND=ptx:   nvcc -ptx for compute_ARCH -> OUT.ptx
# Variables: NVCC, SOURCE, INCLUDE_DIR, KIND, ARCH, OUT (path without suffix); LINEINFO=1 adds
# -lineinfo.
foreach(var NVCC SOURCE INCLUDE_DIR KIND ARCH OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "CompileCudaKernel.cmake: ${var} is not set")
  endif()
endforeach()
if(KIND STREQUAL "cubin")
  set(flags -cubin -arch=sm_${ARCH} -Xptxas -v -o ${OUT}.cubin)
else()
  set(flags -ptx -arch=compute_${ARCH} -o ${OUT}.ptx)
endif()
if(LINEINFO)
  list(APPEND flags -lineinfo)
endif()
execute_process(
  COMMAND ${NVCC} -std=c++17 -I${INCLUDE_DIR} ${flags} ${SOURCE}
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "nvcc (${KIND}, ${ARCH}) of ${SOURCE} failed:\n${output}")
endif()
if(KIND STREQUAL "cubin")
  # Registers, spills and shared memory per kernel; compile times left out.
  string(REGEX REPLACE "[^\n]*Compile time[^\n]*\n" "" output "${output}")
  file(WRITE ${OUT}.ptxas.txt "${output}")
elseif(NOT output STREQUAL "")
  message(WARNING "nvcc (${KIND}, ${ARCH}) of ${SOURCE}:\n${output}")
endif()
