#version 460
// Top-k per segment, step 1: sizes[s] = min(k, the length of segment s) for s < S, sizes[S] = 0;
// their exclusive scan places each segment's results (and its last entry is their count). Also S
// where the segmented sort of the results reads its segment count.
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;
layout(constant_id = TOPK_SEGMENT_SIZES_ID_OFFSET_WORDS) const uint OFFSET_WORDS = 1;

#define PUSH_TOPK_SEGMENT_SIZES
#include "push.h"

uint64_t offset_at(uint s) {
  if (OFFSET_WORDS == 1) return uint64_t(U32Array(offsets_address).v[s]);
  return U64Array(offsets_address).v[s];
}

void main() {
  const uint group = linear_workgroup_id();
  if (group >= group_count) return;
  for (uint s = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x; s <= segments;
       s += group_count * gl_WorkGroupSize.x) {
    uint size = 0;
    if (s < segments) {
      const uint64_t begin = offset_at(s), end = offset_at(s + 1);
      size = end > begin ? uint(min(end - begin, uint64_t(k))) : 0u;
    }
    U32Array(sizes_address).v[s] = size;
    if (s == segments) U32Array(segment_count_address).v[0] = segments;
  }
}
