// The one place that decides which kernels run Onesweep's passes (gpusort::KernelPath): the CUDA
// pass of onesweep_pass.cu through VK_NVX_binary_import, or the SPIR-V onesweep_pass.
#pragma once

#include <gpusort/gpusort.hpp>
#include <string>
#include <vector>

#include "algorithms/onesweep/cuda/cuda_kernels.hpp"
#include "cuda/environment.hpp"
#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

// Onesweep's CUDA pass for a sort of `spec` on ctx asking for `requested` (after
// requested_kernel_path): its row of cuda::kCudaPassShapes (*function: the index in
// ctx.nvx.functions of the row's kernel for the sort's key order, cuda::cuda_key_order), or
// nullptr for the SPIR-V pass:
//  - spirv, or a key class without a CUDA kernel (8-byte values): SPIR-V;
//  - of a key class's kernels, the one the device family's table names
//    (OnesweepTuning::cuda_variants; gpusort::Error where no kernel has that name);
//  - cuda: the CUDA pass, or gpusort::Error naming why it is not available on this device;
//  - automatic: the CUDA pass where the device has it and its tuning table enables it for the
//    key class (OnesweepTuning::cuda_from_n not 0; the sizes are make_onesweep's), else SPIR-V.
namespace cuda {
// The embedded kernels' names in the order of the Context's functions (ctx.nvx.functions, made
// from them by src/vulkan/nvx.cpp): at cuda_pass_function(row, order) a pass row's kernel for
// that key order, at cuda_histogram_function(row) a histogram row's.
std::vector<std::string> function_names();
}  // namespace cuda

// The Context's CUDA kernels through VK_NVX_binary_import (Context::Impl's nvx), named by
// cuda::function_names(): start_loading starts their load unless it was started;
// cuda_kernels_loaded starts it if need be, waits and says whether they loaded.
void start_loading_cuda_kernels(Context::Impl& ctx);
bool cuda_kernels_loaded(Context::Impl& ctx);

const cuda::CudaPassShape* choose_cuda_pass(const Context::Impl& ctx, const SortSpec& spec,
                                            KernelPath requested, uint32_t* function);

}  // namespace gpusort
