// The specialization constants of the segmented sort's kernels, written once for the host (C++)
// and the kernels (GLSL): each kernel's own constants after the shared prefix it takes
// (primitives/glsl/spec_constants.h); a kernel declares each constant at the id defined here, and
// the host passes a struct whose fields are the constants in id order (spec_constants,
// vulkan/specialization.hpp), checked field by field below. segment_iota and segment_large_scan
// take the workgroup alone (WorkgroupSpec).
#ifndef GPUSORT_SEGMENTED_SORT_CONSTANTS_H
#define GPUSORT_SEGMENTED_SORT_CONSTANTS_H

#ifdef __cplusplus
#include "primitives/glsl/tile_constants.h"
#else
#include "tile_constants.h"
#endif

// segment_ids.comp, segment_count.comp: u32 (1) or u64 (2) offsets, after the workgroup
#define SEGMENT_OFFSETS_ID_OFFSET_WORDS 1

// segment_gather.comp: 32-bit words per element, after the workgroup
#define SEGMENT_GATHER_ID_WORDS 1

// segment_large_compact.comp, segment_large_gather.comp, after the workgroup
#define SEGMENT_LARGE_ID_KEY_WORDS 1
#define SEGMENT_LARGE_ID_VALUE_WORDS 2

// segment_classify.comp, after the workgroup
#define SEGMENT_CLASSIFY_ID_OFFSET_WORDS 1
#define SEGMENT_CLASSIFY_ID_LOG2_FIRST_CLASS_SLOTS 2
#define SEGMENT_CLASSIFY_ID_CLASS_COUNT 3
#define SEGMENT_CLASSIFY_ID_KEY_WORDS 4
#define SEGMENT_CLASSIFY_ID_VALUE_WORDS 5

// segment_plan.comp, after the workgroup
#define SEGMENT_PLAN_ID_OFFSET_WORDS 1
#define SEGMENT_PLAN_ID_LOG2_FIRST_CLASS_SLOTS 2
#define SEGMENT_PLAN_ID_CLASS_COUNT 3
#define SEGMENT_PLAN_ID_LOG2_MIN_TILE 4
#define SEGMENT_PLAN_ID_CLEAR 5
#define SEGMENT_PLAN_ID_TILE_CLASSES 6
#define SEGMENT_PLAN_ID_MERGE_WORKGROUP 7
#define SEGMENT_PLAN_ID_BUCKETED 8

// segment_sort_tile.comp, after the tile constants
#define SEGMENT_SORT_TILE_ID_LOG2_SUBGROUP_LANES 8
#define SEGMENT_SORT_TILE_ID_LOG2_SEGMENT_SLOTS 9
#define SEGMENT_SORT_TILE_ID_OFFSET_WORDS 10
#define SEGMENT_SORT_TILE_ID_LOG2_BLOCKS 11

// segment_merge.comp, after the tile constants
#define SEGMENT_MERGE_ID_LOG2_SEGMENT_SLOTS 8
#define SEGMENT_MERGE_ID_OFFSET_WORDS 9

// segment_bucket.comp, after the workgroup, key layout and compared bits
#define SEGMENT_BUCKET_ID_MIN_SUBGROUP_SIZE 7
#define SEGMENT_BUCKET_ID_MAX_SUBGROUP_SIZE 8
#define SEGMENT_BUCKET_ID_KEYS_PER_THREAD 9
#define SEGMENT_BUCKET_ID_LOG2_SEGMENT_SLOTS 10
#define SEGMENT_BUCKET_ID_OFFSET_WORDS 11
#define SEGMENT_BUCKET_ID_LOG2_FIRST_CLASS_SLOTS 12
#define SEGMENT_BUCKET_ID_CLASS_COUNT 13

#ifdef __cplusplus

namespace gpusort {

struct SegmentOffsetsSpec {
  uint32_t workgroup, offset_words;
};
GPUSORT_SPEC_AT(SegmentOffsetsSpec, workgroup, SPEC_ID_WORKGROUP);
GPUSORT_SPEC_AT(SegmentOffsetsSpec, offset_words, SEGMENT_OFFSETS_ID_OFFSET_WORDS);
static_assert(sizeof(SegmentOffsetsSpec) == 4 * (SEGMENT_OFFSETS_ID_OFFSET_WORDS + 1));

struct SegmentGatherSpec {
  uint32_t workgroup, words;
};
GPUSORT_SPEC_AT(SegmentGatherSpec, workgroup, SPEC_ID_WORKGROUP);
GPUSORT_SPEC_AT(SegmentGatherSpec, words, SEGMENT_GATHER_ID_WORDS);
static_assert(sizeof(SegmentGatherSpec) == 4 * (SEGMENT_GATHER_ID_WORDS + 1));

struct SegmentLargeSpec {
  uint32_t workgroup, key_words, value_words;
};
GPUSORT_SPEC_AT(SegmentLargeSpec, workgroup, SPEC_ID_WORKGROUP);
GPUSORT_SPEC_AT(SegmentLargeSpec, key_words, SEGMENT_LARGE_ID_KEY_WORDS);
GPUSORT_SPEC_AT(SegmentLargeSpec, value_words, SEGMENT_LARGE_ID_VALUE_WORDS);
static_assert(sizeof(SegmentLargeSpec) == 4 * (SEGMENT_LARGE_ID_VALUE_WORDS + 1));

struct SegmentClassifySpec {
  uint32_t workgroup, offset_words, log2_first_class_slots, class_count, key_words, value_words;
};
GPUSORT_SPEC_AT(SegmentClassifySpec, workgroup, SPEC_ID_WORKGROUP);
GPUSORT_SPEC_AT(SegmentClassifySpec, offset_words, SEGMENT_CLASSIFY_ID_OFFSET_WORDS);
GPUSORT_SPEC_AT(SegmentClassifySpec, log2_first_class_slots,
                SEGMENT_CLASSIFY_ID_LOG2_FIRST_CLASS_SLOTS);
GPUSORT_SPEC_AT(SegmentClassifySpec, class_count, SEGMENT_CLASSIFY_ID_CLASS_COUNT);
GPUSORT_SPEC_AT(SegmentClassifySpec, key_words, SEGMENT_CLASSIFY_ID_KEY_WORDS);
GPUSORT_SPEC_AT(SegmentClassifySpec, value_words, SEGMENT_CLASSIFY_ID_VALUE_WORDS);
static_assert(sizeof(SegmentClassifySpec) == 4 * (SEGMENT_CLASSIFY_ID_VALUE_WORDS + 1));

struct SegmentPlanSpec {
  uint32_t workgroup, offset_words, log2_first_class_slots, class_count, log2_min_tile, clear,
      tile_classes, merge_workgroup, bucketed;
};
GPUSORT_SPEC_AT(SegmentPlanSpec, workgroup, SPEC_ID_WORKGROUP);
GPUSORT_SPEC_AT(SegmentPlanSpec, offset_words, SEGMENT_PLAN_ID_OFFSET_WORDS);
GPUSORT_SPEC_AT(SegmentPlanSpec, log2_first_class_slots, SEGMENT_PLAN_ID_LOG2_FIRST_CLASS_SLOTS);
GPUSORT_SPEC_AT(SegmentPlanSpec, class_count, SEGMENT_PLAN_ID_CLASS_COUNT);
GPUSORT_SPEC_AT(SegmentPlanSpec, log2_min_tile, SEGMENT_PLAN_ID_LOG2_MIN_TILE);
GPUSORT_SPEC_AT(SegmentPlanSpec, clear, SEGMENT_PLAN_ID_CLEAR);
GPUSORT_SPEC_AT(SegmentPlanSpec, tile_classes, SEGMENT_PLAN_ID_TILE_CLASSES);
GPUSORT_SPEC_AT(SegmentPlanSpec, merge_workgroup, SEGMENT_PLAN_ID_MERGE_WORKGROUP);
GPUSORT_SPEC_AT(SegmentPlanSpec, bucketed, SEGMENT_PLAN_ID_BUCKETED);
static_assert(sizeof(SegmentPlanSpec) == 4 * (SEGMENT_PLAN_ID_BUCKETED + 1));

struct SegmentSortTileSpec {
  TileSpec tile;
  uint32_t log2_subgroup_lanes, log2_segment_slots, offset_words, log2_blocks;
};
GPUSORT_SPEC_AT(SegmentSortTileSpec, log2_subgroup_lanes, SEGMENT_SORT_TILE_ID_LOG2_SUBGROUP_LANES);
GPUSORT_SPEC_AT(SegmentSortTileSpec, log2_segment_slots, SEGMENT_SORT_TILE_ID_LOG2_SEGMENT_SLOTS);
GPUSORT_SPEC_AT(SegmentSortTileSpec, offset_words, SEGMENT_SORT_TILE_ID_OFFSET_WORDS);
GPUSORT_SPEC_AT(SegmentSortTileSpec, log2_blocks, SEGMENT_SORT_TILE_ID_LOG2_BLOCKS);
static_assert(sizeof(SegmentSortTileSpec) == 4 * (SEGMENT_SORT_TILE_ID_LOG2_BLOCKS + 1));

struct SegmentMergeSpec {
  TileSpec tile;
  uint32_t log2_segment_slots, offset_words;
};
GPUSORT_SPEC_AT(SegmentMergeSpec, log2_segment_slots, SEGMENT_MERGE_ID_LOG2_SEGMENT_SLOTS);
GPUSORT_SPEC_AT(SegmentMergeSpec, offset_words, SEGMENT_MERGE_ID_OFFSET_WORDS);
static_assert(sizeof(SegmentMergeSpec) == 4 * (SEGMENT_MERGE_ID_OFFSET_WORDS + 1));

struct SegmentBucketSpec {
  SortKeySpec key;
  uint32_t min_subgroup_size, max_subgroup_size, keys_per_thread, log2_segment_slots, offset_words,
      log2_first_class_slots, class_count;
};
GPUSORT_SPEC_AT(SegmentBucketSpec, min_subgroup_size, SEGMENT_BUCKET_ID_MIN_SUBGROUP_SIZE);
GPUSORT_SPEC_AT(SegmentBucketSpec, max_subgroup_size, SEGMENT_BUCKET_ID_MAX_SUBGROUP_SIZE);
GPUSORT_SPEC_AT(SegmentBucketSpec, keys_per_thread, SEGMENT_BUCKET_ID_KEYS_PER_THREAD);
GPUSORT_SPEC_AT(SegmentBucketSpec, log2_segment_slots, SEGMENT_BUCKET_ID_LOG2_SEGMENT_SLOTS);
GPUSORT_SPEC_AT(SegmentBucketSpec, offset_words, SEGMENT_BUCKET_ID_OFFSET_WORDS);
GPUSORT_SPEC_AT(SegmentBucketSpec, log2_first_class_slots,
                SEGMENT_BUCKET_ID_LOG2_FIRST_CLASS_SLOTS);
GPUSORT_SPEC_AT(SegmentBucketSpec, class_count, SEGMENT_BUCKET_ID_CLASS_COUNT);
static_assert(sizeof(SegmentBucketSpec) == 4 * (SEGMENT_BUCKET_ID_CLASS_COUNT + 1));

}  // namespace gpusort

#endif  // __cplusplus

#endif  // GPUSORT_SEGMENTED_SORT_CONSTANTS_H
