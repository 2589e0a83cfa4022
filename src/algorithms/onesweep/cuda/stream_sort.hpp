// Onesweep on a CUDA stream (the CUDA face): the same kernels the Vulkan faces launch through
// VK_NVX_binary_import, launched through the driver on the caller's stream with what NVX cannot
// give them: the whole tile in dynamic shared memory (kHintWholeTile rows). Every step is
// enqueued; nothing waits on the host.
#pragma once

#include <cstdint>

#include "algorithms/sort_algorithm.hpp"
#include "cuda/module.hpp"

namespace gpusort::cuda {

// Where the sort works: device addresses (values 0 without), count 0 or a u32 GPU-side count.
struct StreamTargets {
  CUdeviceptr keys = 0, values = 0, count = 0, scratch = 0;
  uint64_t n = 0;  // max_n with a count
};

// Scratch bytes of a sort of up to max_n elements of `spec` (the key and value copies and the
// state block).
uint64_t onesweep_stream_scratch_bytes(const SortSpec& spec, uint64_t max_n);
// Enqueues the sort on `stream` (the module's context current). spec.value_words is 0 or 1.
void onesweep_stream_sort(Module& module, const SortSpec& spec, const StreamTargets& t,
                          CUstream stream);

}  // namespace gpusort::cuda
