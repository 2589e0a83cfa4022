// Push constants of the kernels in algorithms/segmented_sort/, written once for the host (C++) and
// the kernels (GLSL): primitives/glsl/push_block.h.
#ifndef GPUSORT_SEGMENTED_SORT_PUSH_H
#define GPUSORT_SEGMENTED_SORT_PUSH_H

#ifdef __cplusplus
#include "primitives/glsl/push_block.h"
namespace gpusort {
#else
#include "push_block.h"
#endif

// segment_bucket.comp
#if defined(__cplusplus) || defined(PUSH_SEGMENT_BUCKET)
GPUSORT_PUSH_BEGIN(SegmentBucketPush)
  uint64_t keys_address;  // the caller's
  uint64_t values_address;
  uint64_t bucket_keys_address;  // scratch: the segment's keys by bucket, at the segment's place
  uint64_t bucket_values_address;
  uint64_t offsets_address;
  uint64_t list_address;            // this class's segment ids
  uint64_t listed_address;          // how many (a u32 counter of segment_classify)
  uint64_t pieces_address;          // the piece table
  uint64_t piece_counter_address;   // u32: the next free slot of 257 entries (zeroed by the plan)
  uint64_t piece_counters_address;  // the second level's class counters (zeroed by its plan)
  uint64_t piece_lists_address;     // the second level's class lists
  // The outputs (the second level's), where keys alone in their buckets (and values) go.
  uint64_t keys_out_address;
  uint64_t values_out_address;
  uint max_n;
  uint list_capacity;
  uint piece_capacity;  // slots of the piece table
  uint piece_segments;  // the second level's segment capacity (piece table entries)
GPUSORT_PUSH_END(SegmentBucketPush)
#endif

// segment_classify.comp
#if defined(__cplusplus) || defined(PUSH_SEGMENT_CLASSIFY)
GPUSORT_PUSH_BEGIN(SegmentClassifyPush)
  uint64_t offsets_address;
  uint64_t segment_count_address;  // 0, or the u32 segment count S (clamped to segments)
  uint64_t counters_address;       // CLASS_COUNT class sizes, then the large count (zeroed)
  uint64_t lists_address;          // the class lists (class_list_begin)
  uint64_t indices_address;        // 0, or where the stable permutation goes
  // Separate outputs (0: in place): where lone keys and values are copied.
  uint64_t keys_address, values_address, keys_out_address, values_out_address;
  uint max_n;
  uint segments;
  uint group_count;
  // The large list: each large segment's first position and size; counters[CLASS_COUNT] counts
  // them. large_capacity: the most that fit max_n (0: none can be large).
  uint64_t large_begins_address, large_sizes_address;
  uint large_capacity;
GPUSORT_PUSH_END(SegmentClassifyPush)
#endif

// segment_count.comp
#if defined(__cplusplus) || defined(PUSH_SEGMENT_COUNT)
GPUSORT_PUSH_BEGIN(SegmentCountPush)
  uint64_t offsets_address;
  uint64_t segment_count_address;
  uint64_t count_address;          // where n goes
  uint64_t step_dispatch_address;  // the step kernels' VkDispatchIndirectCommand
  uint max_n;
  uint segments;
  uint step_group_count;  // the step kernels' grid for max_n, of step_workgroup invocations
  uint step_workgroup;
  uint max_groups_x;
GPUSORT_PUSH_END(SegmentCountPush)
#endif

// segment_gather.comp
#if defined(__cplusplus) || defined(PUSH_SEGMENT_GATHER)
GPUSORT_PUSH_BEGIN(SegmentGatherPush)
  uint64_t source_address;
  uint64_t destination_address;
  uint64_t origins_address;
  uint64_t count_address;  // 0, or the u32 element count (clamped to n)
  uint n;
  uint group_count;
GPUSORT_PUSH_END(SegmentGatherPush)
#endif

// segment_ids.comp
#if defined(__cplusplus) || defined(PUSH_SEGMENT_IDS)
GPUSORT_PUSH_BEGIN(SegmentIdsPush)
  uint64_t origins_address;
  uint64_t ids_address;
  uint64_t offsets_address;
  uint64_t count_address;          // 0, or the u32 element count (clamped to n)
  uint64_t segment_count_address;  // 0, or the u32 segment count S (clamped to segments)
  uint n;
  uint segments;
  uint group_count;
GPUSORT_PUSH_END(SegmentIdsPush)
#endif

// segment_iota.comp
#if defined(__cplusplus) || defined(PUSH_SEGMENT_IOTA)
GPUSORT_PUSH_BEGIN(SegmentIotaPush)
  uint64_t indices_address;
  uint64_t count_address;  // 0, or a u32 element count read on the GPU (clamped to n)
  uint n;
  uint group_count;
GPUSORT_PUSH_END(SegmentIotaPush)
#endif

// segment_large_compact.comp
#if defined(__cplusplus) || defined(PUSH_SEGMENT_LARGE_COMPACT)
GPUSORT_PUSH_BEGIN(SegmentLargeCompactPush)
  uint64_t keys_address, values_address;
  uint64_t sort_keys_address;   // the keys sort 1 sorts
  uint64_t key_copy_address;    // 0: the keys are not written (argsort)
  uint64_t value_copy_address;  // 0: no values
  uint64_t origins_address;
  uint64_t large_begins_address, large_bases_address;
  uint64_t count_address;        // the compacted element count (segment_large_scan's)
  uint64_t large_count_address;  // the u32 count of large segments
  uint max_n;
  uint large_capacity;
  uint group_count;
GPUSORT_PUSH_END(SegmentLargeCompactPush)
#endif

// segment_large_gather.comp
#if defined(__cplusplus) || defined(PUSH_SEGMENT_LARGE_GATHER)
GPUSORT_PUSH_BEGIN(SegmentLargeGatherPush)
  uint64_t key_copy_address, keys_out_address;      // 0: the keys are not written
  uint64_t value_copy_address, values_out_address;  // 0: no values
  uint64_t indices_address;                         // 0: no indices
  uint64_t origins_address, ids_address;
  uint64_t large_begins_address, large_bases_address;
  uint64_t count_address;  // the compacted element count (segment_large_scan's)
  uint max_n;
  uint group_count;
GPUSORT_PUSH_END(SegmentLargeGatherPush)
#endif

// segment_large_scan.comp
#if defined(__cplusplus) || defined(PUSH_SEGMENT_LARGE_SCAN)
GPUSORT_PUSH_BEGIN(SegmentLargeScanPush)
  uint64_t large_count_address;  // the u32 count of large segments (clamped to large_capacity)
  uint64_t large_sizes_address;
  uint64_t large_bases_address;
  uint64_t global_count_address;
  uint64_t step_dispatch_address;  // the global path's step kernels' VkDispatchIndirectCommand
  uint max_n;
  uint large_capacity;
  uint step_group_count;  // the step kernels' grid for max_n, of step_workgroup invocations
  uint step_workgroup;
  uint max_groups_x;
GPUSORT_PUSH_END(SegmentLargeScanPush)
#endif

// segment_merge.comp
#if defined(__cplusplus) || defined(PUSH_SEGMENT_MERGE)
GPUSORT_PUSH_BEGIN(SegmentMergePush)
  uint64_t sorted_keys_address;  // radix order, each block at its own place
  uint64_t sorted_values_address;
  uint64_t sorted_origins_address;  // 0 without indices
  uint64_t keys_address;            // the outputs: the caller's arrays or separate ones
  uint64_t values_address;
  uint64_t indices_address;
  uint64_t offsets_address;
  uint64_t list_address;    // this class's segment ids
  uint64_t listed_address;  // how many (a u32 counter of segment_classify)
  uint max_n;
  uint list_capacity;
GPUSORT_PUSH_END(SegmentMergePush)
#endif

// segment_plan.comp
#if defined(__cplusplus) || defined(PUSH_SEGMENT_PLAN)
GPUSORT_PUSH_BEGIN(SegmentPlanPush)
  uint64_t counters_address;
  // CLASS_COUNT segment_sort_tile, then CLASS_COUNT - TILE_CLASSES segment_merge
  // VkDispatchIndirectCommands (x, y, z)
  uint64_t dispatch_address;
  uint max_n;
  uint segments;
  uint max_groups_x;
GPUSORT_PUSH_END(SegmentPlanPush)
#endif

// segment_sort_tile.comp
#if defined(__cplusplus) || defined(PUSH_SEGMENT_SORT_TILE)
GPUSORT_PUSH_BEGIN(SegmentSortTilePush)
  uint64_t keys_address;
  uint64_t values_address;
  uint64_t indices_address;  // 0, or where the stable permutation goes
  uint64_t offsets_address;
  uint64_t list_address;    // this class's segment ids
  uint64_t listed_address;  // how many (a u32 counter of segment_classify)
  // Medium classes: where the sorted blocks go (keys in radix order, values, and when indices
  // are wanted the input positions), each at its block's own place.
  uint64_t sorted_keys_address;
  uint64_t sorted_values_address;
  uint64_t sorted_origins_address;
  // Where the sorted keys and values go: keys_address / values_address (in place) or separate
  // outputs (the partition sort's).
  uint64_t keys_out_address;
  uint64_t values_out_address;
  uint max_n;
  uint list_capacity;  // the most ids the list holds
GPUSORT_PUSH_END(SegmentSortTilePush)
#endif

#ifdef __cplusplus
}  // namespace gpusort
#endif

#endif  // GPUSORT_SEGMENTED_SORT_PUSH_H
