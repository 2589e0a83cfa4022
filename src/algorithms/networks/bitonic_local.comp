#version 460
// Bitonic sort, first pass: each workgroup sorts one TILE-slot tile completely in shared memory
// (flip then disperse for every block size up to TILE). Keys are mapped to radix order on read;
// written back mapped (more passes follow) or raw (the tile is the whole array).
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "tile_sort.glsl"
#include "bitonic.glsl"

#define PUSH_BITONIC_LOCAL
#include "push.h"

void main() {
  uint tile = linear_workgroup_id();
  if (tile >= tile_count) return;
  uint n_now = element_count(count_address, n);
  uint base = tile * TILE;
  if (base >= n_now) return;  // whole workgroup: an indirect n below max_n
  uint count = min(TILE, n_now - base);
  load_tile(keys_address, base, count, true);
  for (uint half_block = 1; half_block < TILE; half_block *= 2) {
    bitonic_flip(half_block, count);
    bitonic_disperse(half_block / 2, count);
  }
  store_tile(keys_address, values_address, values_address, base, count, output_raw != 0);
}
