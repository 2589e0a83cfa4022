// Push constants of the kernels in algorithms/small_sort/, written once for the host (C++) and the
// kernels (GLSL): primitives/glsl/push_block.h.
#ifndef GPUSORT_SMALL_SORT_PUSH_H
#define GPUSORT_SMALL_SORT_PUSH_H

#ifdef __cplusplus
#include "primitives/glsl/push_block.h"
namespace gpusort {
#else
#include "push_block.h"
#endif

// small_sort_merge.comp
#if defined(__cplusplus) || defined(PUSH_SMALL_SORT_MERGE)
GPUSORT_PUSH_BEGIN(SmallSortMergePush)
  uint64_t sorted_keys_address;  // radix order, tile by tile
  uint64_t sorted_values_address;
  uint64_t bucket_starts_address;  // per tile, where each bucket begins (small_sort_tile)
  uint64_t keys_address;
  uint64_t values_address;
  uint64_t count_address;
  uint64_t run_starts_address;     // first level of two: where each run's bucket starts go
  uint64_t bucket_params_address;  // the buckets' parameters (small_sort_tile)
  uint n;
GPUSORT_PUSH_END(SmallSortMergePush)
#endif

// small_sort_tile.comp
#if defined(__cplusplus) || defined(PUSH_SMALL_SORT_TILE)
GPUSORT_PUSH_BEGIN(SmallSortTilePush)
  uint64_t keys_in_address;
  uint64_t values_in_address;
  uint64_t keys_out_address;
  uint64_t values_out_address;
  uint64_t count_address;
  // 0, or where, per tile, the BUCKETS + 1 slots at which each bucket's keys begin go (the
  // last: the tile's count), for small_sort_merge; and where the buckets' parameters go
  // (merge_buckets.glsl)
  uint64_t bucket_starts_address;
  uint64_t bucket_params_address;
  uint n;
  uint tile_count;
  uint output_raw;
GPUSORT_PUSH_END(SmallSortTilePush)
#endif

#ifdef __cplusplus
}  // namespace gpusort
#endif

#endif  // GPUSORT_SMALL_SORT_PUSH_H
