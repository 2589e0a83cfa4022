#version 460
// Top-k, the compaction's count: the last pass's select gives the k-th key (workgroup 0 stores it,
// the keys below it and how many equal ones the result takes in the state block); then per tile,
// how many keys lie before the k-th key and how many equal it (u64: low word, high word), for the
// scan that gives each tile its place. Every tile up to the maximum writes (0 past the count), so
// the scan reads no stale counts. Where a pass listed its candidates, the tiles' counts are that
// pass's plus what the listed keys add (no read of the other keys).
#extension GL_EXT_shader_atomic_int64 : require
#include "common.glsl"
#include "topk_common.glsl"

#define PUSH_TOPK_COUNT
#include "push.h"

shared uint less_count, equal_count;
#include "topk_scan.glsl"
#include "topk_select.glsl"

void main() {
  const uint group = linear_workgroup_id();
  if (group >= group_count) return;
  const uint n = state_word(state_address, TOPK_STATE_N);
  const uint t = gl_LocalInvocationID.x;
  const uint tile = gl_WorkGroupSize.x * ITEMS;
  // The last pass's select: the k-th key. Workgroup 0 keeps it for the write and the sort.
  uint64_t kth;
  uint before, need, list_pass, listed;
  select_digits(state_address, topk_passes(), capacity, kth, before, need, list_pass, listed);
  if (group == 0 && t == 0) {
    U64Array(state_address).v[TOPK_STATE_PREFIX / 2] = kth;
    U32Array(state_address).v[TOPK_STATE_BEFORE] = before;
    U32Array(state_address).v[TOPK_STATE_REMAINING] = need;
    U32Array(state_address).v[TOPK_STATE_NEED_EQUAL] = need;
  }
  if (list_pass < topk_passes()) {  // uniform
    // The listing pass counted each tile's keys below its prefix and listed its candidates: only
    // they are read, each added to its tile.
    for (uint c = group * gl_WorkGroupSize.x + t; c < listed; c += group_count * gl_WorkGroupSize.x) {
      const uint i = U32Array(candidates_address).v[c];
      const uint64_t key = select_key(keys_address, i);
      if (key <= kth)
        atomicAdd(U64Array(tile_counts_address).v[i / tile], key < kth ? 1ul : (1ul << 32));
    }
    return;
  }
  const bool none = state_word(state_address, TOPK_STATE_K) == 0;  // uniform
  // Tiles grid-stride (a bounded grid: the select above is read once per workgroup).
  for (uint index = group; index < tiles; index += group_count) {
    const uint base = index * tile;
    if (none || base >= n) {  // uniform
      if (t == 0) U64Array(tile_counts_address).v[index] = 0;
      continue;
    }
    if (t == 0) {
      less_count = 0;
      equal_count = 0;
    }
    barrier();
    uint less = 0, equal = 0;
    uint64_t tile_keys[ITEMS];  // all the loads first: ITEMS reads in flight
    for (uint j = 0; j < ITEMS; ++j) {
      const uint i = base + j * gl_WorkGroupSize.x + t;
      tile_keys[j] = i < n ? select_key(keys_address, i) : ~0ul;
    }
    for (uint j = 0; j < ITEMS; ++j) {
      if (base + j * gl_WorkGroupSize.x + t >= n) break;
      less += tile_keys[j] < kth ? 1u : 0u;
      equal += tile_keys[j] == kth ? 1u : 0u;
    }
    if (less != 0) atomicAdd(less_count, less);
    if (equal != 0) atomicAdd(equal_count, equal);
    barrier();
    if (t == 0) U64Array(tile_counts_address).v[index] = packUint2x32(uvec2(less_count, equal_count));
    barrier();  // the counts are read before the next tile clears them
  }
}
