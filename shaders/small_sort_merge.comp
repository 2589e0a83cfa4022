#version 460
// Small-array sort, pass 2: every key of the sorted tiles (small_sort_tile) finds its final
// position directly: its slot in its own tile plus, for every other tile, how many keys there
// precede it (for earlier tiles keys <= it, for later tiles keys < it: equal keys keep their
// input order, so the sort stays stable). The searches of TILES_PER_ROUND tiles advance
// together, one halving step at a time, so their memory reads overlap.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KEY_WORDS = 1;
layout(constant_id = 2) const uint KEY_KIND = 0;
layout(constant_id = 3) const uint DESCENDING = 0;
layout(constant_id = 4) const uint VALUE_WORDS = 0;
layout(constant_id = 5) const uint BEGIN_BIT = 0;
layout(constant_id = 6) const uint END_BIT = 32;
layout(constant_id = 7) const uint TILE = 1024;
layout(constant_id = 8) const uint TILE_CEIL_POW2 = 1024;  // smallest power of two >= TILE
// Tiles whose searches advance together (a compile-time define, one shader per value in
// CMakeLists.txt): their counters are an array that must stay in registers, so every index
// has to be a constant in the SPIR-V (as a specialization constant the driver kept it in local
// memory).
#ifndef TILES_PER_ROUND
#error "small_sort_merge.comp needs -DTILES_PER_ROUND"
#endif

#include "keys.glsl"
#include "key_compare.glsl"

layout(push_constant) uniform Push {
  uint64_t sorted_keys_address;  // radix order, tile by tile
  uint64_t sorted_values_address;
  uint64_t keys_address;
  uint64_t values_address;
  uint64_t count_address;
  uint n;
};

void main() {
  uint i = linear_workgroup_id() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  uint n_now = element_count(count_address, n);
  if (i >= n_now) return;
  uint tiles = div_ceil(n_now, TILE);
  uint own_tile = i / TILE;
  uvec2 key = load_key(sorted_keys_address, i);
  uint position = i - own_tile * TILE;
  for (uint first_tile = 0; first_tile < tiles; first_tile += TILES_PER_ROUND) {
    uint preceding[TILES_PER_ROUND], length[TILES_PER_ROUND];
    [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) {
      uint t = first_tile + r;
      preceding[r] = 0;
      length[r] = t < tiles && t != own_tile ? min(TILE, n_now - t * TILE) : 0;  // 0: not searched
    }
    // preceding[r] grows by step while the key at preceding[r] + step - 1 precedes ours; the
    // steps sum to 2 TILE_CEIL_POW2 - 1 >= TILE, so every count up to the tile length is
    // reachable.
    for (uint step = TILE_CEIL_POW2; step >= 1; step /= 2) {
      [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) {
        uint t = first_tile + r;
        uint probe = preceding[r] + step;
        if (probe <= length[r]) {
          uvec2 other = load_key(sorted_keys_address, t * TILE + probe - 1);
          bool precedes = t < own_tile ? !key_less(key, other) : key_less(other, key);
          if (precedes) preceding[r] = probe;
        }
      }
    }
    [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) position += preceding[r];
  }
  store_key(keys_address, position, from_radix_order(key));
  if (VALUE_WORDS != 0) store_value(values_address, position, load_value(sorted_values_address, i));
}
