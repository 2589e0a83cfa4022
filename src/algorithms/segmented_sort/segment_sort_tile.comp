#version 460
// Segmented sort, fast path, step 2 (one dispatch per size class, sized by segment_plan): each
// workgroup sorts TILE / SEGMENT_SLOTS segments of its class's list on chip, each padded to a
// block of SEGMENT_SLOTS slots (a power of two; empty slots hold the largest element), in place:
// the bitonic network of the small-array sort (src/primitives/glsl/bitonic_tile.glsl) run up to
// blocks of SEGMENT_SLOTS only, so that the packed segments never meet (or to separate outputs,
// the partition sort's, at the same positions). Elements are the compared key bits and the
// slot (sort_element.glsl): stable. Keys are rebuilt from the
// elements when the whole key is compared, else gathered by origin, like values; indices, when
// wanted, receive each output's input position.
// The medium classes (LOG2_BLOCKS > 0: segments larger than the largest tile) split each segment
// into 2^LOG2_BLOCKS blocks of TILE slots, one workgroup each; a block's sorted elements go to
// scratch at the block's place (keys in radix order, values, input positions) for segment_merge.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"

#include "constants.h"
#include "sort_key_spec.glsl"
layout(constant_id = TILE_ID_TILE) const uint TILE = 128;  // workgroup x ITEMS
// Lanes sorted together by shuffles (2^this): the subgroup size where the pipeline fixes it,
// else 1 (registers only).
layout(constant_id = SEGMENT_SORT_TILE_ID_LOG2_SUBGROUP_LANES) const uint LOG2_SUBGROUP_LANES = 0;
// ITEMS..TILE.
layout(constant_id = SEGMENT_SORT_TILE_ID_LOG2_SEGMENT_SLOTS) const uint LOG2_SEGMENT_SLOTS = 7;
// 1: u32 offsets, 2: u64.
layout(constant_id = SEGMENT_SORT_TILE_ID_OFFSET_WORDS) const uint OFFSET_WORDS = 1;
// Blocks per segment (2^this) of a medium class, whose blocks are whole tiles
// (LOG2_SEGMENT_SLOTS = log2(TILE)); 0: the segments of a tile class, sorted in place.
layout(constant_id = SEGMENT_SORT_TILE_ID_LOG2_BLOCKS) const uint LOG2_BLOCKS = 0;
// Keys per invocation (2^LOG2_ITEMS): a compile-time define, one shader per value, as
// small_sort_tile (CMakeLists.txt).
#ifndef LOG2_ITEMS
#error "segment_sort_tile.comp needs -DLOG2_ITEMS"
#endif

#include "keys.glsl"
#include "sort_element.glsl"
#include "bitonic_tile.glsl"

const uint SEGMENT_SLOTS = 1u << LOG2_SEGMENT_SLOTS;
const uint SEGMENTS_PER_TILE = TILE / SEGMENT_SLOTS;

#define PUSH_SEGMENT_SORT_TILE
#include "push.h"

uint64_t offset_at(uint s) {
  if (OFFSET_WORDS == 1) return uint64_t(U32Array(offsets_address).v[s]);
  return U64Array(offsets_address).v[s];
}

void main() {
  const uint listed = min(U32Array(listed_address).v[0], list_capacity);
  const uint BLOCKS = 1u << LOG2_BLOCKS;
  const uint group = linear_workgroup_id();
  const uint first_entry = LOG2_BLOCKS > 0 ? group >> LOG2_BLOCKS : group * SEGMENTS_PER_TILE;
  if (first_entry >= listed) return;  // whole workgroup

  // Positions follow subgroups, so the lanes of one subgroup own one contiguous run.
  const uint lane = SUBGROUP_LANES > 1 ? gl_SubgroupInvocationID : 0;
  const uint position = SUBGROUP_LANES > 1 ? gl_SubgroupID * SUBGROUP_LANES + lane : gl_LocalInvocationID.x;
  const uint first = position * ITEMS;
  // An invocation's ITEMS slots lie in one block (ITEMS <= SEGMENT_SLOTS): one segment.
  const uint block = first / SEGMENT_SLOTS, block_first = block * SEGMENT_SLOTS;
  uint begin = 0, size = 0;  // no segment: every slot absent
  if (first_entry + block < listed) {
    uint s = U32Array(list_address).v[first_entry + block];
    // Clamped as segment_classify clamps them.
    uint64_t b = min(offset_at(s), uint64_t(max_n));
    begin = uint(b);
    size = uint(min(clamp(offset_at(s + 1), b, uint64_t(max_n)) - b, uint64_t(SEGMENT_SLOTS * BLOCKS)));
    if (LOG2_BLOCKS > 0) {  // this workgroup's block of the segment
      const uint block_begin = (group & (BLOCKS - 1)) * TILE;
      if (block_begin >= size) return;  // whole workgroup: the segment has fewer blocks
      begin += block_begin;
      size = min(size - block_begin, TILE);
    }
  }
  const uint in_block = first - block_first;
  const uint owned = in_block < size ? min(ITEMS, size - in_block) : 0;
  uint64_t orders[ITEMS];
  uint origins[ITEMS];
  // Loads are unconditional (clamped into the segment, or to key 0 for an absent block: a
  // listed segment exists, so n >= 2) and the absent slots chosen after (small_sort_tile says
  // why).
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    origins[k] = first + k;
    uvec2 key = load_key(keys_address, begin + min(in_block + k, max(size, 1u) - 1));
    orders[k] = k < owned ? element_order(compared_bits(to_radix_order(key)), first + k)
                          : absent_element_order(first + k);
  }

  sort_tile_blocks(orders, origins, lane, first, SEGMENT_SLOTS);

  // Write out. What is gathered by origin is read before any output is written: in place, the
  // origins of one invocation's outputs belong to others. An origin is a slot of the same block.
  const bool gather = VALUE_WORDS != 0 || !WHOLE_KEY_COMPARED;
  uvec2 gathered_keys[ITEMS], values[ITEMS];
  uint sources[ITEMS];
  [[unroll]] for (uint k = 0; k < ITEMS; ++k)
    sources[k] = begin + min(element_origin(orders[k], origins[k]) - block_first, max(size, 1u) - 1);
  if (gather) {
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
      if (!WHOLE_KEY_COMPARED) gathered_keys[k] = load_key(keys_address, sources[k]);
      if (VALUE_WORDS != 0) values[k] = load_value(values_address, sources[k]);
    }
    memoryBarrierBuffer();
    barrier();
  }
  // Conditions, not break or continue: the loop must unroll to keep the arrays in registers.
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    if (k < owned) {
      uvec2 key = WHOLE_KEY_COMPARED ? from_radix_order(element_radix_key(orders[k]))
                                     : gathered_keys[k];
      const uint slot = begin + in_block + k;
      if (LOG2_BLOCKS > 0) {
        store_key(sorted_keys_address, slot, WHOLE_KEY_COMPARED ? element_radix_key(orders[k])
                                                                : to_radix_order(gathered_keys[k]));
        if (VALUE_WORDS != 0) store_value(sorted_values_address, slot, values[k]);
        if (sorted_origins_address != 0) U32Array(sorted_origins_address).v[slot] = sources[k];
      } else {
        store_key(keys_out_address, slot, key);
        if (VALUE_WORDS != 0) store_value(values_out_address, slot, values[k]);
        if (indices_address != 0) U32Array(indices_address).v[slot] = sources[k];
      }
    }
  }
}
