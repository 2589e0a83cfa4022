// What the library embeds of the CUDA kernels (embedded_images.hpp).
#include "cuda/embedded_images.hpp"

namespace gpusort::cuda {

std::string embedded_images() {
#if !GPUSORT_CUDA_KERNELS
  return "";
#else
  std::string images;
  for (const EmbeddedCubin& cubin : embedded_cubins())
    images += "cubin sm_" + std::to_string(cubin.arch) + ", ";
  return images + "PTX compute_" + std::to_string(embedded_ptx().arch);
#endif
}

}  // namespace gpusort::cuda
