// The small-array sort on a CUDA stream (the CUDA face): one block, one launch
// (block_sort.cu).
#pragma once

#include "algorithms/onesweep/cuda/stream_sort.hpp"
#include "algorithms/small_sort/cuda/block_sort.hpp"

namespace gpusort::cuda {

// The row that sorts max_n elements of `spec` in one block, or null where none holds them.
const BlockSortShape* block_sort_shape(const SortSpec& spec, uint64_t max_n);
// Enqueues the sort on `stream` (t.scratch unused).
void block_stream_sort(Module& module, const BlockSortShape& shape, const SortSpec& spec,
                       const StreamTargets& t, CUstream stream);

}  // namespace gpusort::cuda
