// The CUDA kernels of onesweep_pass.cu as embedded in the library at build time
// (cmake/CudaKernels.cmake generates the definitions; only built with GPUSORT_CUDA_KERNELS).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace gpusort::cuda {

struct EmbeddedCubin {
  uint32_t arch;  // SM number, e.g. 90
  const unsigned char* data;
  size_t size;
};
struct EmbeddedPtx {
  uint32_t arch;     // compute_<arch>: the newest architecture built
  const char* text;  // NUL-terminated
  size_t size;       // without the NUL
};

std::span<const EmbeddedCubin> embedded_cubins();
EmbeddedPtx embedded_ptx();

}  // namespace gpusort::cuda
