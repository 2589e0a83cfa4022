// The CUDA kernels as embedded in the library at build time (cmake/CudaKernels.cmake compiles
// them and generates the definitions of embedded_cubins and embedded_ptx, which exist only with
// GPUSORT_CUDA_KERNELS): the images both CUDA launchers load, the Vulkan backend's
// (VK_NVX_binary_import, src/vulkan/nvx.cpp) and the CUDA backend's (src/cuda).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

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

// The embedded images in the order a loader tries them ("cubin sm_90, PTX compute_90"); "" in a
// library built without the CUDA kernels.
std::string embedded_images();

}  // namespace gpusort::cuda
