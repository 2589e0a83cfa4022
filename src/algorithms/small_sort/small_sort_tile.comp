#version 460
// Small-array sort, pass 1: each workgroup sorts one tile of TILE = workgroup x ITEMS keys (a
// power of two) with a bitonic network (flip/disperse form) on sort elements: the compared key
// bits and the origin slot (sort_element.glsl). Ordering equal keys by where they came from
// makes it stable; slots >= count hold the largest element, so they sort last. The network
// (registers, subgroup shuffles, shared memory) is src/primitives/glsl/bitonic_tile.glsl.
// When the tile is the whole array this is the whole sort (in place); otherwise the sorted
// tiles (keys in radix order, values beside them) and where each merge bucket begins in each go
// to scratch for small_sort_merge. Keys are rebuilt from the elements when the whole key is
// compared, else gathered by origin, like values.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_ballot : require
#include "common.glsl"

#include "constants.h"
#include "sort_key_spec.glsl"
layout(constant_id = TILE_ID_TILE) const uint TILE = 1024;
// Lanes sorted together by shuffles (2^this): the subgroup size where the pipeline fixes it,
// else 1 (registers only).
layout(constant_id = SMALL_SORT_TILE_ID_LOG2_SUBGROUP_LANES) const uint LOG2_SUBGROUP_LANES = 0;
// Bits of the compared key, from its top, that make small_sort_merge's buckets (<= the width).
layout(constant_id = SMALL_SORT_TILE_ID_BUCKET_BITS) const uint BUCKET_BITS = 8;
// Tiles already in order (all keys equal, sorted input) skip the network: a check of each
// invocation's items against its neighbour's first, two barriers.
layout(constant_id = SMALL_SORT_TILE_ID_SKIP_SORTED) const bool SKIP_SORTED = false;
shared uint tile_out_of_order;
// Keys per invocation (2^LOG2_ITEMS): a compile-time define, one shader per value
// (CMakeLists.txt), so that the loops over registers unroll in the SPIR-V and every array index
// is a constant (with a specialization constant the SPIR-V kept the arrays in function memory,
// indexed by loop counters, and 4 keys per invocation measured 2x slower than 1 on the H100).
#ifndef LOG2_ITEMS
#error "small_sort_tile.comp needs -DLOG2_ITEMS"
#endif

#include "keys.glsl"
#include "sort_element.glsl"
#include "bitonic_tile.glsl"

// The tile's values (VALUE_WORDS words per slot, one padding word per 32), loaded with the keys.
shared uint tile_values[VALUE_WORDS != 0 ? VALUE_WORDS * TILE + VALUE_WORDS * TILE / 32 : 1];
void set_tile_value(uint slot, uvec2 value) {
  const uint word = VALUE_WORDS * slot;
  tile_values[word + (word >> 5)] = value.x;
  if (VALUE_WORDS == 2) tile_values[word + 1 + ((word + 1) >> 5)] = value.y;
}
uvec2 tile_value(uint slot) {
  const uint word = VALUE_WORDS * slot;
  return uvec2(tile_values[word + (word >> 5)],
               VALUE_WORDS == 2 ? tile_values[word + 1 + ((word + 1) >> 5)] : 0u);
}
#define MERGE_BUCKET_CHOICE
#define ADAPTIVE_BUCKETS_ID SMALL_SORT_TILE_ID_ADAPTIVE_BUCKETS
#include "merge_buckets.glsl"

#define PUSH_SMALL_SORT_TILE
#include "push.h"

void main() {
  uint tile = linear_workgroup_id();
  if (tile >= tile_count) return;
  uint n_now = element_count(count_address, n);
  uint base = tile * TILE;
  if (base >= n_now) return;  // whole workgroup: an indirect n below max_n
  const uint count = min(TILE, n_now - base);  // keys in this tile

  // Positions follow subgroups, so the lanes of one subgroup own one contiguous run.
  const uint lane = SUBGROUP_LANES > 1 ? gl_SubgroupInvocationID : 0;  // == gl_SubgroupSize - 1 at most
  const uint position = SUBGROUP_LANES > 1 ? gl_SubgroupID * SUBGROUP_LANES + lane : gl_LocalInvocationID.x;
  const uint first = position * ITEMS;
  const uint owned = first < count ? min(ITEMS, count - first) : 0;
  element_order_t orders[ITEMS];
  uint origins[ITEMS];
  // Loads are unconditional (clamped into the array) and the absent slots chosen after: a load
  // under a branch is not issued before the previous one returns, and each is a trip to memory.
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    origins[k] = first + k;
    uvec2 key = load_key(keys_in_address, min(base + first + k, n_now - 1));
    orders[k] = k < owned ? element_order(compared_bits(to_radix_order(key)), first + k)
                          : absent_element_order(first + k);
  }
  // Values are loaded with the keys, into shared memory, so that after the sort each is picked
  // by its origin there instead of by a second trip to memory.
  if (VALUE_WORDS != 0) {
    [[unroll]] for (uint k = 0; k < ITEMS; ++k)
      set_tile_value(first + k, load_value(values_in_address, min(base + first + k, n_now - 1)));
  }

  // The merge buckets' sample, reduced now: its loads return with the tile's, and the reduction's
  // shared-memory results wait out the sort (measured: left until after it, it cost 1.7 us).
  if (ADAPTIVE_BUCKETS && bucket_starts_address != 0) publish_sample_extremes(keys_in_address, n_now);

  // 1. The bitonic network over the whole tile, unless the tile is in order already (its
  // elements ascend slot by slot; absent slots come last in any case).
  bool in_order = false;
  if (SKIP_SORTED) {
    if (gl_LocalInvocationID.x == 0) tile_out_of_order = 0;
    store_slot(first, orders[0], origins[0]);
    barrier();
    bool ordered = true;
    [[unroll]] for (uint k = 1; k < ITEMS; ++k)
      ordered = ordered && !element_precedes(orders[k], origins[k], orders[k - 1], origins[k - 1]);
    if (first + ITEMS < TILE) {
      element_order_t next_order;
      uint next_origin;
      load_slot(first + ITEMS, next_order, next_origin);
      ordered = ordered && !element_precedes(next_order, next_origin, orders[ITEMS - 1], origins[ITEMS - 1]);
    }
    if (!ordered) tile_out_of_order = 1;
    barrier();
    in_order = tile_out_of_order == 0;
  }
  if (!in_order) sort_tile_blocks(orders, origins, lane, first, TILE);

  // 2. For small_sort_merge: the buckets, chosen from the sample, and where each begins in the
  // sorted tile (a binary search per bucket over the tile in shared memory).
  if (bucket_starts_address != 0) {
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) store_slot(first + k, orders[k], origins[k]);
    barrier();
    if (ADAPTIVE_BUCKETS) choose_merge_buckets();
    if (tile == 0 && gl_LocalInvocationID.x == 0) store_merge_buckets(bucket_params_address);
    for (uint bucket = gl_LocalInvocationID.x; bucket <= BUCKETS; bucket += WORKGROUP) {
      uint begin = 0;  // grows while the slot before begin + step holds a smaller bucket
      for (uint step = TILE; step >= 1; step /= 2) {
        uint probe = begin + step;
        if (probe <= count &&
            merge_bucket(element_bits(tile_orders[padded_order(probe - 1)])) < bucket)
          begin = probe;
      }
      U32Array(bucket_starts_address).v[tile * (BUCKETS + 1) + bucket] = begin;
    }
  }

  // 3. Write out. Keys gathered by origin (when only some bits were compared) are read before
  // any output is written: in place, the origins of one invocation's outputs belong to others.
  // Values come from shared memory.
  uvec2 gathered_keys[ITEMS], values[ITEMS];
  if (!WHOLE_KEY_COMPARED) {
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
      // Unconditional, clamped (absent slots' origins lie beyond n), as the first loads.
      uint origin = min(base + element_origin(orders[k], origins[k]), n_now - 1);
      gathered_keys[k] = load_key(keys_in_address, origin);
    }
    memoryBarrierBuffer();
  }
  if (VALUE_WORDS != 0) {
    barrier();  // every invocation's values are in shared memory (the sort may have had no barrier)
    [[unroll]] for (uint k = 0; k < ITEMS; ++k)
      values[k] = tile_value(element_origin(orders[k], origins[k]));  // an origin < TILE
  } else if (!WHOLE_KEY_COMPARED) {
    barrier();
  }
  // Conditions, not break or continue: the loop must unroll to keep the arrays in registers.
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    if (k < owned) {
      uvec2 key;
      if (WHOLE_KEY_COMPARED) {
        key = element_radix_key(orders[k]);
        if (output_raw != 0) key = from_radix_order(key);
      } else {
        key = output_raw != 0 ? gathered_keys[k] : to_radix_order(gathered_keys[k]);
      }
      store_key(keys_out_address, base + first + k, key);
      if (VALUE_WORDS != 0) store_value(values_out_address, base + first + k, values[k]);
    }
  }
}
