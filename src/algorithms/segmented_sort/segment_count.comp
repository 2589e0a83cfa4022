#version 460
// Segmented sort, indirect: the element count n = offsets[S] (S the u32 at segment_count_address,
// clamped to segments; n clamped to max_n), written as a u32 where the other steps read it, and
// the dispatch of the global path's step kernels sized from it.
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;  // one invocation works: the rest fill whole subgroups
layout(constant_id = SEGMENT_OFFSETS_ID_OFFSET_WORDS) const uint OFFSET_WORDS = 1;  // 1: u32 offsets, 2: u64

#define PUSH_SEGMENT_COUNT
#include "push.h"

void main() {
  if (gl_LocalInvocationID.x != 0) return;
  uint s = element_count(segment_count_address, segments);
  uint64_t last = OFFSET_WORDS == 1 ? uint64_t(U32Array(offsets_address).v[s])
                                    : U64Array(offsets_address).v[s];
  uint n = uint(min(last, uint64_t(max_n)));
  U32Array(count_address).v[0] = n;
  write_dispatch(step_dispatch_address, groups_with_elements(n, step_workgroup, step_group_count),
                 max_groups_x);
}
