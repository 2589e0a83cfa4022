#version 460
// Segmented sort, fast path, the medium classes' step 3 (one dispatch per medium class, sized
// by segment_plan): segment_sort_tile sorted each block of TILE keys of a medium segment to
// scratch; every key now finds its final place in its segment as the small-array sort's merge
// does (src/primitives/glsl/tile_merge.glsl), searching the other blocks of the same segment only,
// and its key, value and input position are written there. One invocation per slot of the
// class's SEGMENT_SLOTS-slot segments; the slots beyond a segment's end do nothing.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#include "constants.h"
#include "sort_key_spec.glsl"
layout(constant_id = TILE_ID_TILE) const uint TILE = 4096;  // a block: segment_sort_tile's tile
// The class: TILE x blocks.
layout(constant_id = SEGMENT_MERGE_ID_LOG2_SEGMENT_SLOTS) const uint LOG2_SEGMENT_SLOTS = 14;
// 1: u32 offsets, 2: u64.
layout(constant_id = SEGMENT_MERGE_ID_OFFSET_WORDS) const uint OFFSET_WORDS = 1;
// Blocks whose searches advance together (a compile-time define, as small_sort_merge's).
#ifndef TILES_PER_ROUND
#error "segment_merge.comp needs -DTILES_PER_ROUND"
#endif

#include "keys.glsl"
#include "key_compare.glsl"

#define PUSH_SEGMENT_MERGE
#include "push.h"

uint segment_size;  // this invocation's segment's keys

// Unbucketed: every key of another block may precede ours. Every block is full but the last.
uvec2 merge_search_bounds(uint block, uint bucket) {
  return uvec2(0, min(TILE, segment_size - block * TILE));
}

#include "tile_merge.glsl"

uint64_t offset_at(uint s) {
  if (OFFSET_WORDS == 1) return uint64_t(U32Array(offsets_address).v[s]);
  return U64Array(offsets_address).v[s];
}

void main() {
  const uint slot = linear_workgroup_id() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  const uint entry = slot >> LOG2_SEGMENT_SLOTS, i = slot & ((1u << LOG2_SEGMENT_SLOTS) - 1);
  if (entry >= min(U32Array(listed_address).v[0], list_capacity)) return;
  const uint s = U32Array(list_address).v[entry];
  // Clamped as segment_classify clamps them.
  const uint64_t b = min(offset_at(s), uint64_t(max_n));
  const uint begin = uint(b);
  const uint size = uint(min(clamp(offset_at(s + 1), b, uint64_t(max_n)) - b,
                             uint64_t(1u << LOG2_SEGMENT_SLOTS)));
  if (i >= size) return;
  segment_size = size;
  const uint own_block = i / TILE, blocks = div_ceil(size, TILE);
  const uvec2 key = load_key(sorted_keys_address, begin + i);
  const uint position = i - own_block * TILE +
                        keys_preceding(key, sorted_keys_address, begin, blocks, own_block, 0);
  store_key(keys_address, begin + position, from_radix_order(key));
  if (VALUE_WORDS != 0)
    store_value(values_address, begin + position, load_value(sorted_values_address, begin + i));
  if (indices_address != 0)
    U32Array(indices_address).v[begin + position] = U32Array(sorted_origins_address).v[begin + i];
}
