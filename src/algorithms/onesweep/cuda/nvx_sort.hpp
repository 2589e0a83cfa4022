// Onesweep whose passes (and, where the tuning table says so, histogram and plan) are the CUDA
// kernels of onesweep_pass.cu, launched into the Vulkan recording through VK_NVX_binary_import;
// the clear and the copy-back stay SPIR-V (onesweep_steps.hpp).
#pragma once

#include "algorithms/onesweep/cuda/cuda_kernels.hpp"
#include "algorithms/onesweep/onesweep.hpp"

namespace gpusort {

// The sort with the pass kernel `shape`, at `function` in the Context's CUDA functions
// (choose_cuda_pass gives both).
std::unique_ptr<OnesweepSort> make_onesweep_nvx(Context::Impl& ctx, const SortSpec& spec,
                                                const OnesweepOptions& options,
                                                const cuda::CudaPassShape& shape,
                                                uint32_t function);

}  // namespace gpusort
