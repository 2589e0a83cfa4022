// The specialization constants of the small-array sort's kernels, written once for the host (C++)
// and the kernels (GLSL): a kernel declares each constant at the id defined here, and the host
// passes a struct whose fields are the constants in id order (spec_constants,
// vulkan/specialization.hpp), checked field by field below.
#ifndef GPUSORT_SMALL_SORT_CONSTANTS_H
#define GPUSORT_SMALL_SORT_CONSTANTS_H

#ifdef __cplusplus
#include "primitives/glsl/tile_constants.h"
#else
#include "tile_constants.h"
#endif

// small_sort_tile.comp, after the tile constants
#define SMALL_SORT_TILE_ID_LOG2_SUBGROUP_LANES 8
#define SMALL_SORT_TILE_ID_BUCKET_BITS 9
#define SMALL_SORT_TILE_ID_ADAPTIVE_BUCKETS 10
#define SMALL_SORT_TILE_ID_SKIP_SORTED 11

// small_sort_merge.comp, after the tile constants
#define SMALL_SORT_MERGE_ID_BUCKET_BITS 8
#define SMALL_SORT_MERGE_ID_LANES 9
#define SMALL_SORT_MERGE_ID_GROUP_TILES 10
#define SMALL_SORT_MERGE_ID_OUTPUT_RADIX 11
#define SMALL_SORT_MERGE_ID_ADAPTIVE_BUCKETS 12

#ifdef __cplusplus

namespace gpusort {

struct SmallSortTileSpec {
  TileSpec tile;
  uint32_t log2_subgroup_lanes, bucket_bits, adaptive_buckets, skip_sorted;
};
GPUSORT_SPEC_AT(SmallSortTileSpec, log2_subgroup_lanes, SMALL_SORT_TILE_ID_LOG2_SUBGROUP_LANES);
GPUSORT_SPEC_AT(SmallSortTileSpec, bucket_bits, SMALL_SORT_TILE_ID_BUCKET_BITS);
GPUSORT_SPEC_AT(SmallSortTileSpec, adaptive_buckets, SMALL_SORT_TILE_ID_ADAPTIVE_BUCKETS);
GPUSORT_SPEC_AT(SmallSortTileSpec, skip_sorted, SMALL_SORT_TILE_ID_SKIP_SORTED);
static_assert(sizeof(SmallSortTileSpec) == 4 * (SMALL_SORT_TILE_ID_SKIP_SORTED + 1));

struct SmallSortMergeSpec {
  TileSpec tile;
  uint32_t bucket_bits, lanes, group_tiles, output_radix, adaptive_buckets;
};
GPUSORT_SPEC_AT(SmallSortMergeSpec, bucket_bits, SMALL_SORT_MERGE_ID_BUCKET_BITS);
GPUSORT_SPEC_AT(SmallSortMergeSpec, lanes, SMALL_SORT_MERGE_ID_LANES);
GPUSORT_SPEC_AT(SmallSortMergeSpec, group_tiles, SMALL_SORT_MERGE_ID_GROUP_TILES);
GPUSORT_SPEC_AT(SmallSortMergeSpec, output_radix, SMALL_SORT_MERGE_ID_OUTPUT_RADIX);
GPUSORT_SPEC_AT(SmallSortMergeSpec, adaptive_buckets, SMALL_SORT_MERGE_ID_ADAPTIVE_BUCKETS);
static_assert(sizeof(SmallSortMergeSpec) == 4 * (SMALL_SORT_MERGE_ID_ADAPTIVE_BUCKETS + 1));

}  // namespace gpusort

#endif  // __cplusplus

#endif  // GPUSORT_SMALL_SORT_CONSTANTS_H
