#version 460
// Segmented sort, fast path, after segment_classify (one workgroup): the large segments'
// compacted positions. bases[k] = the sizes of the large list's entries before k (an exclusive
// scan in list order), and the global path's element count = all of them: the global path
// sorts only these elements, entry k's at bases[k].. of its compacted arrays; beside it the
// dispatch of the global path's step kernels, sized from it (none for 0). The list holds at
// most max_n / (largest class + 1) entries, so one workgroup loops over it.
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;

#define PUSH_SEGMENT_LARGE_SCAN
#include "push.h"

// 64-bit sums: overlapping (bad) offsets may list more than max_n keys in all; the bases are
// clamped to max_n, so the later steps stay inside their arrays.
#define SCAN_T uint64_t
shared SCAN_T scan_tree[gl_WorkGroupSize.x];
#include "scan.glsl"

void main() {
  const uint count = element_count(large_count_address, large_capacity);
  uint64_t carry = 0;
  // Uniform bound: every invocation takes every turn of the scan's barriers.
  for (uint first = 0; first < count; first += gl_WorkGroupSize.x) {
    const uint k = first + gl_LocalInvocationID.x;
    const uint size = k < count ? U32Array(large_sizes_address).v[k] : 0u;
    uint64_t total;
    const uint64_t prefix = workgroup_exclusive_scan(uint64_t(size), total);
    if (k < count) U32Array(large_bases_address).v[k] = uint(min(carry + prefix, uint64_t(max_n)));
    carry += total;
  }
  if (gl_LocalInvocationID.x == 0) {
    const uint n = uint(min(carry, uint64_t(max_n)));
    U32Array(global_count_address).v[0] = n;
    write_dispatch(step_dispatch_address, groups_with_elements(n, step_workgroup, step_group_count),
                   max_groups_x);
  }
}
