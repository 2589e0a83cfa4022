#version 460
// Small-array sort, pass 2: every key of the sorted tiles (small_sort_tile) finds its final
// position directly (src/primitives/glsl/tile_merge.glsl): its slot in its own tile plus, for every
// other tile, how many keys there precede it. Each count is a binary search over only the keys
// of the tile in the same bucket (merge_buckets.glsl) as ours, whose bounds small_sort_tile
// wrote.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#include "constants.h"
#include "sort_key_spec.glsl"
layout(constant_id = TILE_ID_TILE) const uint TILE = 1024;
// As in small_sort_tile.
layout(constant_id = SMALL_SORT_MERGE_ID_BUCKET_BITS) const uint BUCKET_BITS = 8;
// Tiles whose searches advance together (a compile-time define, one shader per value in
// CMakeLists.txt): their counters are an array that must stay in registers, so every index
// has to be a constant in the SPIR-V (with a specialization constant it stayed an array in
// function memory).
#ifndef TILES_PER_ROUND
#error "small_sort_merge.comp needs -DTILES_PER_ROUND"
#endif

// LANES_PER_KEY (a define: the variant needs subgroup shuffles) splits each key's searches over
// LANES neighbouring invocations of a subgroup (a specialization constant, a power of two up to
// the subgroup size): each takes every LANES-th round of tiles, and their counts are summed by
// shuffles. With many tiles a key's rounds then overlap instead of running one after the other.
#ifdef LANES_PER_KEY
#extension GL_KHR_shader_subgroup_shuffle : require
layout(constant_id = SMALL_SORT_MERGE_ID_LANES) const uint LANES = 4;
#else
const uint LANES = 1;
#endif

// Two merge levels (SmallSortShape::merge_group_tiles): the first merges groups of GROUP_TILES
// tiles into sorted runs (keys kept in radix order, OUTPUT_RADIX) and writes each run's bucket
// starts, the sum of its tiles' (the buckets are the same top bits); the second merges the runs
// as tiles of GROUP_TILES x TILE keys. GROUP_TILES 0: one level, all tiles.
layout(constant_id = SMALL_SORT_MERGE_ID_GROUP_TILES) const uint GROUP_TILES = 0;
layout(constant_id = SMALL_SORT_MERGE_ID_OUTPUT_RADIX) const bool OUTPUT_RADIX = false;

#include "keys.glsl"
#include "key_compare.glsl"
#include "sort_element.glsl"
#define ADAPTIVE_BUCKETS_ID SMALL_SORT_MERGE_ID_ADAPTIVE_BUCKETS
#include "merge_buckets.glsl"

#define PUSH_SMALL_SORT_MERGE
#include "push.h"


// Keys of other buckets precede ours or not by their bucket alone: only the keys of our bucket
// in each tile are searched (about TILE / BUCKETS of them for spread keys).
uint first_searched_tile = 0;  // the group's first tile (set by main)
uvec2 merge_search_bounds(uint tile, uint bucket) {
  uint entry = (first_searched_tile + tile) * (BUCKETS + 1) + bucket;
  return uvec2(U32Array(bucket_starts_address).v[entry], U32Array(bucket_starts_address).v[entry + 1]);
}

#include "tile_merge.glsl"

void main() {
  uint invocation = linear_workgroup_id() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  // The LANES invocations of one key are neighbours in one subgroup (the workgroup size is a
  // multiple of LANES), and leave or stay together.
  uint i = invocation / LANES, lane = invocation % LANES;
  uint n_now = element_count(count_address, n);
  const uint tiles = div_ceil(n_now, TILE);
  if (GROUP_TILES != 0 && invocation < div_ceil(tiles, GROUP_TILES) * (BUCKETS + 1)) {
    // A run's bucket starts: the sums of its tiles' (every tile's last entry is its count).
    uint run = invocation / (BUCKETS + 1), entry = invocation % (BUCKETS + 1), start = 0;
    for (uint t = run * GROUP_TILES; t < min(tiles, (run + 1) * GROUP_TILES); ++t)
      start += U32Array(bucket_starts_address).v[t * (BUCKETS + 1) + entry];
    U32Array(run_starts_address).v[invocation] = start;
  }
  if (i >= n_now) return;
  uint own_tile = i / TILE;
  uvec2 key = load_key(sorted_keys_address, i);
  load_merge_buckets(bucket_params_address);
  const uint bucket = merge_bucket(compared_bits(key));
  // Tiles searched: the own tile's group (GROUP_TILES), or all.
  first_searched_tile = GROUP_TILES != 0 ? own_tile - own_tile % GROUP_TILES : 0;
  const uint searched = GROUP_TILES != 0 ? min(GROUP_TILES, tiles - first_searched_tile) : tiles;
  uint preceding = keys_preceding_rounds(key, sorted_keys_address, first_searched_tile * TILE, searched,
                                         own_tile - first_searched_tile, bucket, lane * TILES_PER_ROUND,
                                         LANES * TILES_PER_ROUND);
#ifdef LANES_PER_KEY
  for (uint distance = 1; distance < LANES; distance *= 2)
    preceding += subgroupShuffleXor(preceding, distance);
  if (lane != 0) return;
#endif
  uint position = first_searched_tile * TILE + i - own_tile * TILE + preceding;
  store_key(keys_address, position, OUTPUT_RADIX ? key : from_radix_order(key));
  if (VALUE_WORDS != 0) store_value(values_address, position, load_value(sorted_values_address, i));
}
