// Which kernels run Onesweep's passes (cuda_pass.hpp).
#include "algorithms/onesweep/cuda/cuda_pass.hpp"

#include <string>

#include "algorithms/onesweep/tuning.hpp"
#include "vulkan/context_impl.hpp"

namespace gpusort {

std::vector<std::string> cuda::function_names() {
  std::vector<std::string> names;
  for (const CudaPassShape& shape : kCudaPassShapes)
    for (const char* suffix : kCudaKeyOrderSuffixes)
      names.push_back(std::string(shape.kernel) + suffix);
  for (const CudaHistogramShape& histogram : kCudaHistogramShapes)
    names.emplace_back(histogram.kernel);
  return names;
}

namespace {
const std::vector<std::string>& nvx_function_names() {
  static const std::vector<std::string> names = cuda::function_names();
  return names;
}
}  // namespace

void start_loading_cuda_kernels(Context::Impl& ctx) {
  ctx.start_loading_cuda_kernels(nvx_function_names());
}

bool cuda_kernels_loaded(Context::Impl& ctx) {
  return ctx.cuda_kernels_loaded(nvx_function_names());
}

const cuda::CudaPassShape* choose_cuda_pass(const Context::Impl& ctx, const SortSpec& spec,
                                            KernelPath requested, uint32_t* function) {
  if (requested == KernelPath::spirv) return nullptr;
  // The key classes with a CUDA kernel: 32- or 64-bit keys, alone or with 4-byte values. Every
  // other class (8-byte values) takes the SPIR-V pass, whatever was asked for. Of a class's
  // kernels, the one the device family's table names (its first where the table names none).
  const OnesweepTuning& tuning = onesweep_tuning(ctx.info);
  const uint32_t key_class = cuda::cuda_key_class(spec.key_words, spec.value_words);
  const char* variant = tuning.cuda_variants[key_class];
  const cuda::CudaPassShape* shape = nullptr;
  bool class_has_kernels = false;
  for (uint32_t i = 0; i < cuda::kCudaPassShapeCount && !shape; ++i) {
    const cuda::CudaPassShape& row = cuda::kCudaPassShapes[i];
    if (row.key_words != spec.key_words || row.value_words != spec.value_words) continue;
    if ((row.hints & cuda::kHintWholeTile) != 0) continue;  // the CUDA face's alone
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
