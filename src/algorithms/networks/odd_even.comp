#version 460
// Odd-even transposition sort of the whole array in one workgroup's shared memory: count
// phases, alternately comparing pairs (even, even+1) and (odd, odd+1). A pair swaps only when
// the right key is strictly smaller, so equal keys never pass each other: the sort is stable.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "tile_sort.glsl"

const uint PAIRS_PER_INVOCATION = (TILE / 2 + WORKGROUP - 1) / WORKGROUP;

#define PUSH_ODD_EVEN
#include "push.h"

void main() {
  uint count = element_count(count_address, n);
  if (count <= 1) return;
  load_tile(keys_address, 0, count, true);
  // The pairs of a phase are an unrolled loop of constant length: lavapipe ends a shader after
  // 65535 loop iterations in all (LP_MAX_TGSI_LOOP_ITERATIONS), which count phases x pairs
  // per invocation would exceed; only the phase loop remains.
  for (uint phase = 0; phase < count; ++phase) {
    [[unroll]] for (uint k = 0; k < PAIRS_PER_INVOCATION; ++k) {
      uint i = 2 * (k * WORKGROUP + gl_LocalInvocationID.x) + (phase & 1);
      if (i + 1 < count) {
        uvec2 left = tile_key(i), right = tile_key(i + 1);
        if (key_less(right, left)) swap_tile_slots(i, left, i + 1, right);
      }
    }
    barrier();
  }
  store_tile(keys_address, values_address, values_address, 0, count, true);
}
