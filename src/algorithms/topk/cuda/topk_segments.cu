// Top-k per segment on the CUDA face (topk_params.hpp, "Per segment"): after the segmented
// argsort, the results' places and the take. Launched by src/api/cuda_topk.cpp.
#include <cstdint>
#include <cub/block/block_scan.cuh>

#include "algorithms/topk/cuda/topk_params.hpp"

namespace gpusort::cuda::topk_segments {
namespace {

using u64 = unsigned long long;

__device__ __forceinline__ u64 offset_at(const TopKSegmentsParams& p, u64 s) {
  return p.offset_bytes == 4 ? static_cast<const uint32_t*>(p.offsets)[s]
                             : static_cast<const u64*>(p.offsets)[s];
}
// Segment s's first key and its result count (offsets that fall read as empty).
struct Segment {
  u64 begin, results;
};
__device__ __forceinline__ Segment segment(const TopKSegmentsParams& p, u64 s) {
  const u64 begin = offset_at(p, s), end = offset_at(p, s + 1);
  return {begin, end > begin ? min(p.k, end - begin) : 0};
}

template <class T>
__device__ __forceinline__ void copy(void* to, u64 at, const void* from, u64 i) {
  static_cast<T*>(to)[at] = static_cast<const T*>(from)[i];
}

}  // namespace
}  // namespace gpusort::cuda::topk_segments

// One block: result_offsets[s] for s in [0, S], S + 1 entries a block's width at a time.
extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKSegmentOffsetsThreads)
    gpusort_topk_segment_offsets(const gpusort::cuda::TopKSegmentsParams p) {
  using namespace gpusort::cuda;
  using namespace gpusort::cuda::topk_segments;
  using BlockScan = cub::BlockScan<u64, kTopKSegmentOffsetsThreads>;
  __shared__ typename BlockScan::TempStorage scan;
  u64 carry = 0;
  for (u64 first = 0; first <= p.segments; first += kTopKSegmentOffsetsThreads) {
    const u64 s = first + threadIdx.x;
    const u64 results = s < p.segments ? segment(p, s).results : 0;
    u64 before, total;
    BlockScan(scan).ExclusiveSum(results, before, total);
    if (s <= p.segments) p.result_offsets[s] = uint32_t(carry + before);
    carry += total;
    __syncthreads();  // the scan's storage is read before the next chunk's scan
  }
}

// A warp per segment: its results from the sorted order, with their values and positions.
extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKSegmentTakeThreads)
    gpusort_topk_segment_take(const gpusort::cuda::TopKSegmentsParams p) {
  using namespace gpusort::cuda;
  using namespace gpusort::cuda::topk_segments;
  const u64 warps = u64(gridDim.x) * (kTopKSegmentTakeThreads / 32);
  const uint32_t lane = threadIdx.x % 32;
  for (u64 s = u64(blockIdx.x) * (kTopKSegmentTakeThreads / 32) + threadIdx.x / 32;
       s < p.segments; s += warps) {
    const Segment g = segment(p, s);
    const u64 out = p.result_offsets[s];
    for (u64 j = lane; j < g.results; j += 32) {
      const uint32_t i = p.order[g.begin + j];
      if (p.keys_out) {
        if (p.key_bytes == 4) copy<uint32_t>(p.keys_out, out + j, p.keys, i);
        else copy<u64>(p.keys_out, out + j, p.keys, i);
      }
      if (p.values_out) {
        if (p.value_bytes == 4) copy<uint32_t>(p.values_out, out + j, p.values, i);
        else copy<u64>(p.values_out, out + j, p.values, i);
      }
      if (p.indices) {
        const u64 position = p.in_segment != 0 ? i - g.begin : i;
        if (p.index_bytes == 4) static_cast<uint32_t*>(p.indices)[out + j] = uint32_t(position);
        else static_cast<u64*>(p.indices)[out + j] = position;
      }
    }
  }
}

// Rows of one length: offsets[s] = s row_length for s in [0, S] (u64, written into `offsets`).
extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKSegmentTakeThreads)
    gpusort_topk_row_offsets(const gpusort::cuda::TopKSegmentsParams p) {
  using gpusort::cuda::topk_segments::u64;
  u64* offsets = static_cast<u64*>(const_cast<void*>(p.offsets));
  for (u64 s = u64(blockIdx.x) * blockDim.x + threadIdx.x; s <= p.segments;
       s += u64(gridDim.x) * blockDim.x)
    offsets[s] = s * p.row_length;
}
