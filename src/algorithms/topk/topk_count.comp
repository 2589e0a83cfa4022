#version 460
// Top-k, the compaction's count: per tile, how many keys lie before the k-th key and how many
// equal it (u64: low word, high word), for the scan that gives each tile its place. Every tile of
// the grid writes (0 past the count), so the scan reads no stale counts.
#include "common.glsl"
#include "topk_common.glsl"

#define PUSH_TOPK_COUNT
#include "push.h"

shared uint less_count, equal_count;

void main() {
  const uint group = linear_workgroup_id();
  if (group >= group_count) return;
  const uint n = state_word(state_address, TOPK_STATE_N);
  const uint t = gl_LocalInvocationID.x;
  const uint base = group * gl_WorkGroupSize.x * ITEMS;
  const bool none = state_word(state_address, TOPK_STATE_K) == 0 || base >= n;  // uniform
  if (none) {
    if (t == 0) U64Array(tile_counts_address).v[group] = 0;
    return;
  }
  if (t == 0) {
    less_count = 0;
    equal_count = 0;
  }
  barrier();
  const uint64_t kth = state_prefix(state_address);
  uint less = 0, equal = 0;
  for (uint j = 0; j < ITEMS; ++j) {
    const uint i = base + j * gl_WorkGroupSize.x + t;
    if (i >= n) break;
    const uint64_t key = select_key(keys_address, i);
    less += key < kth ? 1u : 0u;
    equal += key == kth ? 1u : 0u;
  }
  if (less != 0) atomicAdd(less_count, less);
  if (equal != 0) atomicAdd(equal_count, equal);
  barrier();
  if (t == 0) U64Array(tile_counts_address).v[group] = packUint2x32(uvec2(less_count, equal_count));
}
