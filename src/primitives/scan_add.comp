#version 460
// Scan, level 2: adds each block's exclusive prefix (the scanned block totals) to its elements.
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

#define PUSH_SCAN_ADD
#include "push.h"

void main() {
  uint block = linear_workgroup_id();
  if (block >= block_count || block == 0) return;
  SCAN_ARRAY dst = SCAN_ARRAY(out_address);
  SCAN_T prefix = SCAN_ARRAY(block_prefixes_address).v[block];
  uint base = block * gl_WorkGroupSize.x * ITEMS;
  for (uint k = 0; k < ITEMS; ++k) {
    uint i = base + k * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i < n) dst.v[i] += prefix;
  }
}
