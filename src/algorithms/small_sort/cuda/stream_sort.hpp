// The small-array sorts on a CUDA stream (the CUDA face): the rank sort (rank_sort.cu) and one
// block (block_sort.cu), each in its band of sizes; one launch each (the rank sort in place: a
// cooperative launch, or a copy first where its grid does not fit the GPU at once).
#pragma once

#include <string>
#include <vector>

#include "algorithms/onesweep/cuda/stream_sort.hpp"
#include "algorithms/small_sort/cuda/block_sort.hpp"
#include "algorithms/small_sort/cuda/rank_sort.hpp"

namespace gpusort::cuda {

// The row that sorts max_n elements of `spec` by ranks (in its band of sizes, or up to
// GPUSORT_CUDA_RANK_SORT_MAX_N), or null.
const RankSortShape* rank_sort_shape(const SortSpec& spec, uint64_t max_n);
// Scratch bytes of the rank sort in place: the keys (and values) it reads, copied.
uint64_t rank_sort_scratch_bytes(const SortSpec& spec, uint64_t max_n);
// Enqueues the rank sort on `stream`: from t.keys_first (else t.keys in place, or a copy of them
// in t.scratch) into t.keys; the values from t.values in place or a copy (none with
// t.values_iota) into t.values, or t.values_wide where it is set.
void rank_stream_sort(Module& module, const RankSortShape& shape, const SortSpec& spec,
                      const StreamTargets& t, CUstream stream);

// The row that sorts max_n elements of `spec` in one block, or null where none holds them.
const BlockSortShape* block_sort_shape(const SortSpec& spec, uint64_t max_n);
// Enqueues the sort on `stream` (t.scratch unused).
void block_stream_sort(Module& module, const BlockSortShape& shape, const SortSpec& spec,
                       const StreamTargets& t, CUstream stream);

// Every kernel these sorts may launch (the check that the embedded module holds them).
std::vector<std::string> small_sort_function_names();

}  // namespace gpusort::cuda
