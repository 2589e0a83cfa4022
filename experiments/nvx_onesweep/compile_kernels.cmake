# Builds one variant of onesweep.cu for sm_90 (run with cmake -P by CMakeLists.txt):
#   nvcc -ptx   -> OUT.ptx   (what --ptx loads; the driver compiles it)
#   nvcc -cubin -> OUT.cubin (from that PTX, with -lineinfo; ptxas -v's report -> OUT.ptxas.txt)
# Variables: NVCC, SOURCE, INCLUDE_DIR, LIBRARY_INCLUDE_DIR (the library's src/: the shared
# look-back), VARIANT (index into kVariants), OUT (path without suffix).
foreach(var NVCC SOURCE INCLUDE_DIR LIBRARY_INCLUDE_DIR VARIANT OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "compile_kernels.cmake: ${var} is not set")
  endif()
endforeach()

execute_process(
  COMMAND ${NVCC} -std=c++17 -ptx -arch=sm_90 -lineinfo -DONESWEEP_VARIANT=${VARIANT} -I${INCLUDE_DIR}
          -I${LIBRARY_INCLUDE_DIR}
          -o ${OUT}.ptx ${SOURCE}
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "nvcc -ptx of ${SOURCE} (variant ${VARIANT}) failed:\n${output}")
endif()
if(NOT output STREQUAL "")
  message(WARNING "nvcc -ptx of ${SOURCE} (variant ${VARIANT}):\n${output}")
endif()

execute_process(
  COMMAND ${NVCC} -cubin -arch=sm_90 -lineinfo -Xptxas -v -o ${OUT}.cubin ${OUT}.ptx
  RESULT_VARIABLE result
  OUTPUT_VARIABLE report
  ERROR_VARIABLE report)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "nvcc -cubin of ${OUT}.ptx failed:\n${report}")
endif()
# Keep the lines that say something per kernel (names, registers, spills, shared memory).
string(REGEX REPLACE "[^\n]*Compile time[^\n]*\n" "" report "${report}")
file(WRITE ${OUT}.ptxas.txt "${report}")
