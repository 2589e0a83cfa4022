// The device half of launch_dependent (module.hpp). A kernel so launched may begin while the
// kernel before it on the stream ends (programmatic dependent launch, sm_90 and later): it calls
// wait_for_prior_kernel before it reads or writes anything, which waits for that kernel's
// completion and memory; it then lets the kernel after it begin as well. A kernel that others
// follow calls allow_dependent_launch as early as it likes. Without the launch attribute (a plain
// launch, the NVX path's) both are no-ops.
#pragma once

namespace gpusort::cuda {

__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void wait_for_prior_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  allow_dependent_launch();
}

}  // namespace gpusort::cuda
