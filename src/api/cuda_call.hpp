// What every call of the CUDA face (cuda_api.cpp, cuda_topk.cpp) uses: its scratch, the caller's
// or allocated on the stream for the call, and an element-wise launch
// (primitives/cuda/elementwise.hpp).
#pragma once

#include <gpusort/cuda.hpp>

#include <algorithm>
#include <string>

#include "cuda/module.hpp"
#include "primitives/cuda/elementwise.hpp"
#include "primitives/sort_spec.hpp"  // align_up

namespace gpusort::cuda {

// The caller's scratch (Options::scratch, refused below `bytes` with the error `prefix` + "scratch
// of ... bytes is below the ... " + `needs`), or one allocated on the stream for this call and
// freed there after it.
class CallScratch {
 public:
  CallScratch(const Options& options, uint64_t bytes, CUstream stream, const std::string& prefix,
              const char* needs)
      : stream_(stream) {
    if (bytes == 0) return;
    if (options.scratch) {
      if (options.scratch_size < bytes)
        throw Error(prefix + "scratch of " + std::to_string(options.scratch_size) +
                    " bytes is below the " + std::to_string(bytes) + " " + needs);
      base_ = reinterpret_cast<CUdeviceptr>(options.scratch);
      return;
    }
    check(driver().mem_alloc_async(&base_, size_t(bytes), stream), "cuMemAllocAsync");
    owned_ = true;
  }
  ~CallScratch() {
    if (owned_) driver().mem_free_async(base_, stream_);
  }
  CallScratch(const CallScratch&) = delete;
  CallScratch& operator=(const CallScratch&) = delete;
  CUdeviceptr at(uint64_t offset) const { return base_ + offset; }
  template <class T>
  T* at(uint64_t offset) const {
    return reinterpret_cast<T*>(base_ + offset);
  }

 private:
  CUstream stream_;
  CUdeviceptr base_ = 0;
  bool owned_ = false;
};

// A call's scratch laid out buffer after buffer, each at a 256-byte boundary: take() gives a
// buffer's offset, total() the bytes of them all.
class ScratchLayout {
 public:
  uint64_t take(uint64_t bytes) {
    const uint64_t offset = total_;
    total_ += align_up(bytes, 256);
    return offset;
  }
  uint64_t total() const { return total_; }

 private:
  uint64_t total_ = 0;
};

// The grid of an element-wise kernel over n elements: a block of kElementwiseThreads per as
// many, at most 8 blocks an SM (the kernels stride).
inline uint32_t elementwise_grid(Module& module, uint64_t n) {
  return uint32_t(std::clamp<uint64_t>((n + kElementwiseThreads - 1) / kElementwiseThreads, 1,
                                       8ull * module.sm_count()));
}

// One element-wise kernel over params.n elements.
inline void elementwise(Module& module, const char* kernel, const ElementwiseParams& params,
                        CUstream stream) {
  launch(module.function(kernel), elementwise_grid(module, params.n), kElementwiseThreads, 0,
         stream, params);
}

}  // namespace gpusort::cuda
