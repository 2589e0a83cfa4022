#version 460
// Bitonic sort, the end of every block larger than a tile: once the global passes have brought
// the pair distance below TILE, each workgroup finishes every remaining disperse step
// (distances TILE/2 ... 1) of its tile in shared memory in one dispatch. Keys stay in radix
// order unless this is the last pass.
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
  if (base >= n_now) return;
  uint count = min(TILE, n_now - base);
  load_tile(keys_address, base, count, false);
  bitonic_disperse(TILE / 2, count);
  store_tile(keys_address, values_address, values_address, base, count, output_raw != 0);
}
