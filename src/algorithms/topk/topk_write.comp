#version 460
// Top-k, the compaction's write: every key before the k-th goes to its place among them in input
// order (the tile's scanned count, then its rank in the tile), and the first need_equal keys equal
// to the k-th (by position) after them; each with its position. A tile that gives nothing (most,
// for a small k) reads only its counts.
#include "common.glsl"
#include "topk_common.glsl"

#define PUSH_TOPK_WRITE
#include "push.h"

// Both flags of a key in one scanned word: before the k-th (low half), equal to it (high half).
#define SCAN_T uint
shared SCAN_T scan_tree[gl_WorkGroupSize.x];
#include "scan.glsl"

void main() {
  const uint group = linear_workgroup_id();
  if (group >= group_count) return;
  const uvec2 counts = unpackUint2x32(U64Array(tile_counts_address).v[group]);
  const uvec2 offsets = unpackUint2x32(U64Array(tile_offsets_address).v[group]);
  const uint need = state_word(state_address, TOPK_STATE_NEED_EQUAL);
  if (counts.x == 0 && (counts.y == 0 || offsets.y >= need)) return;  // uniform
  const uint n = state_word(state_address, TOPK_STATE_N);
  const uint before = state_word(state_address, TOPK_STATE_BEFORE);
  const uint64_t kth = state_prefix(state_address);
  const uint t = gl_LocalInvocationID.x;
  const uint base = group * gl_WorkGroupSize.x * ITEMS;
  uint less_at = offsets.x, equal_at = offsets.y;
  for (uint j = 0; j < ITEMS; ++j) {  // uniform bound: every invocation takes every scan
    const uint i = base + j * gl_WorkGroupSize.x + t;
    uvec2 raw = uvec2(0u);
    uint flags = 0;
    if (i < n) {
      raw = load_key(keys_address, i);
      const uint64_t key = compared_bits(to_radix_order(raw));
      flags = key < kth ? 1u : (key == kth ? 0x10000u : 0u);
    }
    uint total;
    const uint rank = workgroup_exclusive_scan(flags, total);
    uint out_at = 0xffffffffu;
    if (flags == 1u) out_at = less_at + (rank & 0xffffu);
    else if (flags != 0u && equal_at + (rank >> 16) < need) out_at = before + equal_at + (rank >> 16);
    if (out_at != 0xffffffffu) {
      store_key(keys_out_address, out_at, raw);
      U32Array(positions_address).v[out_at] = i;
    }
    less_at += total & 0xffffu;
    equal_at += total >> 16;
  }
}
