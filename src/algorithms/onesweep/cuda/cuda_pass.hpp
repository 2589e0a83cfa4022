// The one place that decides which kernels run Onesweep's passes (gpusort::KernelPath): the CUDA
// pass of onesweep_pass.cu through VK_NVX_binary_import, or the SPIR-V onesweep_pass.
#pragma once

#include <gpusort/gpusort.hpp>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/onesweep/cuda/cuda_kernels.hpp"
#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

// GPUSORT_KERNELS: unset, empty, auto or automatic -> automatic; spirv; cuda; anything else
// throws gpusort::Error naming the value.
KernelPath kernel_path_from_environment();
// What a sort asks for: `option` where it is not automatic, else GPUSORT_KERNELS.
KernelPath requested_kernel_path(KernelPath option);

// The CUDA pass's switches for measurements, from the environment (unset or empty: not set):
//   GPUSORT_CUDA_HISTOGRAM=0|1|2   the histogram kernel (Onesweep's cuda_histogram_ row)
//   GPUSORT_CUDA_PREFETCH=<tiles>  prefetch ahead by this many tiles (0 to 999999999)
//   GPUSORT_CUDA_MODULE=ptx|cubin  the only kind of embedded image loaded (src/vulkan/nvx.cpp)
// Any other value throws gpusort::Error naming the variable and the value.
struct CudaEnvironment {
  std::optional<uint32_t> histogram;
  std::optional<uint32_t> prefetch_tiles;
  std::string module;  // "", "ptx" or "cubin"
};
CudaEnvironment cuda_environment();
// Refuses a bad GPUSORT_KERNELS or CudaEnvironment value: every sort request checks them
// (make_sort_spec), whether or not its path would read them.
void check_kernel_environment();

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
// The embedded images in the order a Context tries them ("cubin sm_90, PTX compute_90"); "" in a
// library built without the CUDA kernels.
std::string embedded_images();
}  // namespace cuda

const cuda::CudaPassShape* choose_cuda_pass(const Context::Impl& ctx, const SortSpec& spec,
                                            KernelPath requested, uint32_t* function);

}  // namespace gpusort
