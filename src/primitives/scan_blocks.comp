#version 460
// Scan, level 1: each workgroup scans its block of WORKGROUP_SIZE * ITEMS elements (exclusive or
// inclusive) and records the block's total, so a scan of the totals and scan_add.comp finish it.
#include "common.glsl"
#ifdef SCAN_U64
#define SCAN_T uint64_t
#define SCAN_ARRAY U64Array
#else
#define SCAN_T uint
#define SCAN_ARRAY U32Array
#endif

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;
layout(constant_id = SCAN_ID_ITEMS) const uint ITEMS = 8;

#define PUSH_SCAN_BLOCKS
#include "push.h"

const uint TILE = gl_WorkGroupSize.x * ITEMS;
shared SCAN_T tile[TILE];
shared SCAN_T scan_tree[gl_WorkGroupSize.x];
#include "scan.glsl"

void main() {
  uint block = linear_workgroup_id();
  if (block >= block_count) return;
  SCAN_ARRAY src = SCAN_ARRAY(in_address);
  SCAN_ARRAY dst = SCAN_ARRAY(out_address);
  uint t = gl_LocalInvocationID.x;
  uint base = block * TILE;
  // Coalesced load into shared memory; each invocation then owns ITEMS consecutive elements.
  for (uint k = 0; k < ITEMS; ++k) {
    uint i = base + k * gl_WorkGroupSize.x + t;
    tile[k * gl_WorkGroupSize.x + t] = i < n ? src.v[i] : SCAN_T(0);
  }
  barrier();
  SCAN_T sum = SCAN_T(0);
  for (uint k = 0; k < ITEMS; ++k) sum += tile[t * ITEMS + k];
  SCAN_T total;
  SCAN_T running = workgroup_exclusive_scan(sum, total);
  for (uint k = 0; k < ITEMS; ++k) {
    SCAN_T x = tile[t * ITEMS + k];
    tile[t * ITEMS + k] = inclusive != 0 ? running + x : running;
    running += x;
  }
  barrier();
  for (uint k = 0; k < ITEMS; ++k) {
    uint i = base + k * gl_WorkGroupSize.x + t;
    if (i < n) dst.v[i] = tile[k * gl_WorkGroupSize.x + t];
  }
  if (block_totals_address != 0 && t == 0) SCAN_ARRAY(block_totals_address).v[block] = total;
}
