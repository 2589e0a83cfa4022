// Which kernels run Onesweep's passes (cuda_pass.hpp).
#include "algorithms/onesweep/cuda/cuda_pass.hpp"

#include <cstdlib>
#include <string>

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

CudaEnvironment cuda_environment() {
  auto read = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value ? value : "";
  };
  CudaEnvironment e;
  if (const std::string v = read("GPUSORT_CUDA_HISTOGRAM"); !v.empty()) {
    if (v != "0" && v != "1" && v != "2")
      throw Error("GPUSORT_CUDA_HISTOGRAM='" + v + "' is not 0, 1 or 2");
    e.histogram = uint32_t(v[0] - '0');
  }
  if (const std::string v = read("GPUSORT_CUDA_PREFETCH"); !v.empty()) {
    if (v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos)
      throw Error("GPUSORT_CUDA_PREFETCH='" + v + "' is not a number of tiles (0 to 999999999)");
    e.prefetch_tiles = uint32_t(std::stoul(v));
  }
  e.module = read("GPUSORT_CUDA_MODULE");
  if (!e.module.empty() && e.module != "ptx" && e.module != "cubin")
    throw Error("GPUSORT_CUDA_MODULE='" + e.module + "' is not ptx or cubin");
  return e;
}

void check_kernel_environment() {
  kernel_path_from_environment();
  cuda_environment();
}

std::vector<std::string> cuda::function_names() {
  std::vector<std::string> names;
  for (const CudaPassShape& shape : kCudaPassShapes)
    for (const char* suffix : kCudaKeyOrderSuffixes)
      names.push_back(std::string(shape.kernel) + suffix);
  for (const CudaHistogramShape& histogram : kCudaHistogramShapes)
    names.emplace_back(histogram.kernel);
  return names;
}

const cuda::CudaPassShape* choose_cuda_pass(const Context::Impl& ctx, const SortSpec& spec,
                                            KernelPath requested, uint32_t* function) {
  if (requested == KernelPath::spirv) return nullptr;
  // The key classes with a CUDA kernel: 32- or 64-bit keys, alone or with 4-byte values. Every
  // other class (8-byte values) takes the SPIR-V pass, whatever was asked for. Of a class's
  // kernels, the one the device family's table names (its first where the table names none).
  const OnesweepTuning& tuning = tuning_for(ctx.info).onesweep;
  const uint32_t key_class = cuda::cuda_key_class(spec.key_words, spec.value_words);
  const char* variant = tuning.cuda_variants[key_class];
  const cuda::CudaPassShape* shape = nullptr;
  bool class_has_kernels = false;
  for (uint32_t i = 0; i < cuda::kCudaPassShapeCount && !shape; ++i) {
    const cuda::CudaPassShape& row = cuda::kCudaPassShapes[i];
    if (row.key_words != spec.key_words || row.value_words != spec.value_words) continue;
    class_has_kernels = true;
    if (variant && std::string(variant) != row.variant) continue;
    shape = &row;
    if (function)
      *function = cuda::cuda_pass_function(i, cuda::cuda_key_order(spec.key_kind, spec.descending));
  }
  if (!class_has_kernels) return nullptr;
  if (!shape)
    throw Error(std::string("onesweep: no CUDA pass kernel '") + variant +
                "' for this key class (the tuning table)");
  if (!ctx.info.cuda_kernels) {
    if (requested == KernelPath::cuda)
      throw Error("the CUDA kernels (kernels=cuda) cannot run on " + ctx.info.name + ": " +
                  ctx.info.cuda_why);
    return nullptr;
  }
  if (requested == KernelPath::automatic && tuning.cuda_from_n[key_class] == 0) return nullptr;
  return shape;
}

}  // namespace gpusort
