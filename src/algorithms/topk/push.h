// Push constants of the kernels in algorithms/topk/, written once for the host (C++) and the
// kernels (GLSL): primitives/glsl/push_block.h.
#ifndef GPUSORT_TOPK_PUSH_H
#define GPUSORT_TOPK_PUSH_H

#ifdef __cplusplus
#include "primitives/glsl/push_block.h"
namespace gpusort {
#else
#include "push_block.h"
#endif

// topk_init.comp
#if defined(__cplusplus) || defined(PUSH_TOPK_INIT)
GPUSORT_PUSH_BEGIN(TopKInitPush)
  uint64_t state_address;  // the state block, then the histograms (cleared here)
  uint64_t count_address;  // 0, or the u32 element count (clamped to n)
  uint n;                  // the element count, or its maximum
  uint k;
  uint histogram_words;    // how many u32 of histograms to clear
GPUSORT_PUSH_END(TopKInitPush)
#endif

// topk_histogram.comp
#if defined(__cplusplus) || defined(PUSH_TOPK_HISTOGRAM)
GPUSORT_PUSH_BEGIN(TopKHistogramPush)
  uint64_t keys_address;
  uint64_t state_address;
  uint64_t histogram_address;  // this pass's TOPK_BINS u32
  uint64_t candidates_address;  // u32 positions: the first digit's candidates (pass 1 lists them)
  uint64_t tile_counts_address;  // pass 1: per tile, the keys below the first digit's bucket
  uint group_count;
  uint pass;  // which digit (topk_common.glsl's topk_digit)
  uint capacity;  // of the candidate list
  uint tiles;     // of the element count's maximum
GPUSORT_PUSH_END(TopKHistogramPush)
#endif

// topk_count.comp
#if defined(__cplusplus) || defined(PUSH_TOPK_COUNT)
GPUSORT_PUSH_BEGIN(TopKCountPush)
  uint64_t keys_address;
  uint64_t state_address;
  uint64_t tile_counts_address;  // u64 per tile: keys before the k-th (low word), equal (high)
  uint64_t candidates_address;
  uint group_count;
  uint tiles;  // of the element count's maximum
  uint capacity;
GPUSORT_PUSH_END(TopKCountPush)
#endif

// topk_write.comp
#if defined(__cplusplus) || defined(PUSH_TOPK_WRITE)
GPUSORT_PUSH_BEGIN(TopKWritePush)
  uint64_t keys_address;
  uint64_t state_address;
  uint64_t tile_counts_address;
  uint64_t tile_offsets_address;  // their exclusive scan
  uint64_t keys_out_address;
  uint64_t positions_address;     // u32: each output's position in the input
  uint group_count;
GPUSORT_PUSH_END(TopKWritePush)
#endif

// topk_gather.comp
#if defined(__cplusplus) || defined(PUSH_TOPK_GATHER)
GPUSORT_PUSH_BEGIN(TopKGatherPush)
  uint64_t values_address;
  uint64_t values_out_address;
  uint64_t positions_address;
  uint64_t count_address;  // the u32 result count (clamped to k)
  uint k;                  // the most results
  uint group_count;
GPUSORT_PUSH_END(TopKGatherPush)
#endif

// topk_segment_sizes.comp
#if defined(__cplusplus) || defined(PUSH_TOPK_SEGMENT_SIZES)
GPUSORT_PUSH_BEGIN(TopKSegmentSizesPush)
  uint64_t offsets_address;  // S + 1 CSR offsets
  uint64_t sizes_address;    // S + 1 u32: min(k, segment length), then 0
  uint64_t segment_count_address;  // u32: S, for the segmented sort of the results
  uint segments;
  uint k;
  uint group_count;
GPUSORT_PUSH_END(TopKSegmentSizesPush)
#endif

// topk_segment.comp
#if defined(__cplusplus) || defined(PUSH_TOPK_SEGMENT)
GPUSORT_PUSH_BEGIN(TopKSegmentPush)
  uint64_t keys_address;
  uint64_t offsets_address;      // S + 1 CSR offsets
  uint64_t out_offsets_address;  // S + 1 u32: where each segment's results go
  uint64_t keys_out_address;
  uint64_t positions_address;    // u32: each result's position in the whole array
  uint segments;
  uint k;
  uint group_count;
GPUSORT_PUSH_END(TopKSegmentPush)
#endif

#ifdef __cplusplus
}  // namespace gpusort
#endif

#endif  // GPUSORT_TOPK_PUSH_H
