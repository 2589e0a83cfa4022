#version 460
// Top-k, the compaction's write: every key before the k-th goes to its place among them in input
// order (the tile's scanned count, then its rank in the tile), and the first need_equal keys equal
// to the k-th (by position) after them; each with its position. A tile that gives nothing (most,
// for a small k) reads only its counts.
#include "common.glsl"
#include "topk_common.glsl"

#define PUSH_TOPK_WRITE
#include "push.h"

// Both counts of an invocation in one scanned word: keys before the k-th (low half), equal to it
// (high half).
#include "topk_scan.glsl"

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
  // Each invocation takes ITEMS consecutive keys, so one scan of the invocations' counts ranks the
  // whole tile in input order.
  const uint first = group * gl_WorkGroupSize.x * ITEMS + t * ITEMS;
  uint flags = 0;  // bit j: key j is before the k-th; bit 16 + j: equal to it (ITEMS <= 16)
  uint64_t tile_keys[ITEMS];  // all the loads first: ITEMS reads in flight
  for (uint j = 0; j < ITEMS; ++j)
    tile_keys[j] = first + j < n ? select_key(keys_address, first + j) : 0ul;
  for (uint j = 0; j < ITEMS; ++j) {
    if (first + j >= n) break;
    if (tile_keys[j] < kth) flags |= 1u << j;
    else if (tile_keys[j] == kth) flags |= 0x10000u << j;
  }
  const uint mine = bitCount(flags & 0xffffu) | (bitCount(flags >> 16) << 16);
  uint total;
  const uint rank = workgroup_exclusive_scan(mine, total);
  uint less_at = offsets.x + (rank & 0xffffu), equal_at = offsets.y + (rank >> 16);
  for (uint j = 0; j < ITEMS && flags != 0; ++j) {
    const uint i = first + j;
    uint out_at = 0xffffffffu;
    if ((flags & (1u << j)) != 0) {
      out_at = less_at++;
    } else if ((flags & (0x10000u << j)) != 0) {
      if (equal_at < need) out_at = before + equal_at;
      ++equal_at;
    }
    if (out_at != 0xffffffffu) {
      store_key(keys_out_address, out_at, load_key(keys_address, i));
      U32Array(positions_address).v[out_at] = i;
    }
  }
}
