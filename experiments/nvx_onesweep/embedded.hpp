// The kernels built from onesweep.cu, one cubin and one PTX per variant (kVariants), embedded in
// the executable at build time (the generated embedded_kernels.cpp, see CMakeLists.txt).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nvx_onesweep {

struct EmbeddedKernels {
  const unsigned char* cubin;
  size_t cubin_size;
  const char* ptx;         // NUL-terminated
  size_t ptx_size;         // without the NUL
  const char* ptxas_info;  // ptxas -v of the cubin's build (registers, spills, shared memory)
};

const EmbeddedKernels& embedded_kernels(uint32_t variant);

}  // namespace nvx_onesweep
