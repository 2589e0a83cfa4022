// The CUDA backend's device side: the embedded kernels loaded as a module of the caller's CUDA
// context (once per context, on first use), their functions by name, and launches on the
// caller's stream. The algorithms name their kernels; this room knows none of them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cuda/driver.hpp"

namespace gpusort::cuda {

class Module {
 public:
  // The function `name`, fetched once; `dynamic_shared` > 0 raises its dynamic shared memory
  // limit to that many bytes (it must stay the same for a name).
  CUfunction function(const std::string& name, uint32_t dynamic_shared = 0);
  CUcontext context() const { return context_; }
  uint32_t sm_count() const { return sm_count_; }
  // The most blocks of `function` (`block` threads, no dynamic shared memory) the GPU holds at
  // once, the limit of a cooperative launch's grid; asked of the driver once per function.
  uint32_t resident_blocks(CUfunction function, uint32_t block);
  uint32_t shared_per_block_optin() const { return shared_optin_; }
  // Whether launch_dependent overlaps a kernel with the end of the one before it: sm_90 and later,
  // a driver with cuLaunchKernelEx, and not GPUSORT_CUDA_OVERLAP=0 (read as the module loads).
  bool overlaps_launches() const { return overlaps_; }
  const std::string& loaded() const { return loaded_; }  // "cubin sm_90" or "PTX compute_90 (JIT)"

  explicit Module(CUcontext context);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

 private:
  struct Functions;
  CUcontext context_;
  CUmodule module_ = nullptr;
  uint32_t sm_count_ = 0, shared_optin_ = 0;
  bool overlaps_ = false;
  std::string loaded_;
  std::unique_ptr<Functions> functions_;
};

// The context `stream` belongs to (for the null stream: the calling thread's current context),
// made current on this thread while the object lives.
class StreamContext {
 public:
  explicit StreamContext(CUstream stream);
  ~StreamContext();
  StreamContext(const StreamContext&) = delete;
  StreamContext& operator=(const StreamContext&) = delete;
  CUcontext context() const { return context_; }

 private:
  CUcontext context_ = nullptr;
  bool pushed_ = false;
};

// The module of `context`, loaded on the first call for it (thread-safe; kept for the process).
Module& module_for(CUcontext context);

// Launches `function` with its arguments (kernel parameter structs, in order) on `stream`.
template <class... Params>
void launch(CUfunction function, uint32_t grid, uint32_t block, uint32_t dynamic_shared,
            CUstream stream, const Params&... params) {
  void* arguments[] = {const_cast<void*>(static_cast<const void*>(&params))...};
  check(driver().launch_kernel(function, grid, 1, 1, block, 1, 1, dynamic_shared, stream,
                               arguments, nullptr),
        "cuLaunchKernel");
}

// The same for a kernel that begins with wait_for_prior_kernel (dependent_launch.cuh): where the
// module allows it, its blocks may start while the kernel before it on the stream ends, and wait
// in the kernel for that one's completion and memory.
template <class... Params>
void launch_dependent(const Module& module, CUfunction function, uint32_t grid, uint32_t block,
                      uint32_t dynamic_shared, CUstream stream, const Params&... params) {
  if (!module.overlaps_launches())
    return launch(function, grid, block, dynamic_shared, stream, params...);
  void* arguments[] = {const_cast<void*>(static_cast<const void*>(&params))...};
  LaunchAttribute overlap{};
  overlap.id = launch_attribute_programmatic_stream_serialization;
  overlap.value.allowed = 1;
  const LaunchConfig config{grid, 1, 1, block, 1, 1, dynamic_shared, stream, &overlap, 1};
  check(driver().launch_kernel_ex(&config, function, arguments, nullptr), "cuLaunchKernelEx");
}

// The same as a cooperative launch: every block resident at once (grid at most
// Module::resident_blocks), so that the blocks may meet at a grid barrier.
template <class... Params>
void launch_cooperative(CUfunction function, uint32_t grid, uint32_t block, CUstream stream,
                        const Params&... params) {
  void* arguments[] = {const_cast<void*>(static_cast<const void*>(&params))...};
  check(driver().launch_cooperative_kernel(function, grid, 1, 1, block, 1, 1, 0, stream, arguments),
        "cuLaunchCooperativeKernel");
}

}  // namespace gpusort::cuda
