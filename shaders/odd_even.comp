#version 460
// Odd-even transposition sort of the whole array in one workgroup's shared memory: count
// phases, alternately comparing pairs (even, even+1) and (odd, odd+1). A pair swaps only when
// the right key is strictly smaller, so equal keys never pass each other: the sort is stable.
#include "common.glsl"
#include "tile_sort.glsl"

layout(push_constant) uniform Push {
  uint64_t keys_address;
  uint64_t values_address;
  uint64_t count_address;
  uint n;
};

void main() {
  uint count = element_count(count_address, n);
  if (count <= 1) return;
  load_tile(keys_address, 0, count, true);
  for (uint phase = 0; phase < count; ++phase) {
    for (uint i = 2 * gl_LocalInvocationID.x + (phase & 1); i + 1 < count; i += 2 * WORKGROUP) {
      uvec2 left = tile_key(i), right = tile_key(i + 1);
      if (key_less(right, left)) swap_tile_slots(i, left, i + 1, right);
    }
    barrier();
  }
  store_tile(keys_address, values_address, values_address, 0, count, true);
}
