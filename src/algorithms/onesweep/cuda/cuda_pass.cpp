// Which kernels run Onesweep's passes (cuda_pass.hpp).
#include "algorithms/onesweep/cuda/cuda_pass.hpp"

#include <cstdlib>

#include "tuning/tuning.hpp"
#include "vulkan/context_impl.hpp"

namespace gpusort {

const char* to_string(KernelPath path) {
  switch (path) {
    case KernelPath::automatic:
      return "auto";
    case KernelPath::spirv:
      return "spirv";
    case KernelPath::cuda:
      return "cuda";
  }
  return "unknown";
}

KernelPath parse_kernel_path(const std::string& text) {
  if (text == "auto" || text == "automatic") return KernelPath::automatic;
  if (text == "spirv") return KernelPath::spirv;
  if (text == "cuda") return KernelPath::cuda;
  throw Error("unknown kernel path '" + text + "' (expected one of auto, spirv, cuda)");
}

KernelPath kernel_path_from_environment() {
  const char* env = std::getenv("GPUSORT_KERNELS");
  if (!env || !*env) return KernelPath::automatic;
  const std::string value = env;
  if (value == "auto" || value == "automatic") return KernelPath::automatic;
  if (value == "spirv") return KernelPath::spirv;
  if (value == "cuda") return KernelPath::cuda;
  throw Error("GPUSORT_KERNELS='" + value + "' is not one of spirv, cuda, auto");
}

KernelPath requested_kernel_path(KernelPath option) {
  return option != KernelPath::automatic ? option : kernel_path_from_environment();
}

const cuda::CudaPassShape* choose_cuda_pass(const Context::Impl& ctx, const SortSpec& spec,
                                            KernelPath requested, uint32_t* shape_index) {
  if (requested == KernelPath::spirv) return nullptr;
  // The key classes with a CUDA kernel: 32- or 64-bit keys, alone or with 4-byte values. Every
  // other class (8-byte values) takes the SPIR-V pass, whatever was asked for.
  const cuda::CudaPassShape* shape = nullptr;
  for (uint32_t i = 0; i < cuda::kCudaPassShapeCount; ++i)
    if (cuda::kCudaPassShapes[i].key_words == spec.key_words &&
        cuda::kCudaPassShapes[i].value_words == spec.value_words) {
      shape = &cuda::kCudaPassShapes[i];
      if (shape_index) *shape_index = i;
    }
  if (!shape) return nullptr;
  if (!ctx.info.cuda_kernels) {
    if (requested == KernelPath::cuda)
      throw Error("the CUDA kernels (kernels=cuda) cannot run on " + ctx.info.name + ": " +
                  ctx.info.cuda_why);
    return nullptr;
  }
  if (requested == KernelPath::automatic &&
      tuning_for(ctx.info).onesweep.cuda_from_n[size_t(shape - cuda::kCudaPassShapes)] == 0)
    return nullptr;
  return shape;
}

}  // namespace gpusort
