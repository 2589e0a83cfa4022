#version 460
// Segmented sort, last step: destination[i] = source[origins[i]] for elements of WORDS 32-bit
// words (keys and values, from the copies taken before the sorts, into the caller's buffers).
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;
layout(constant_id = SEGMENT_GATHER_ID_WORDS) const uint WORDS = 1;

#define PUSH_SEGMENT_GATHER
#include "push.h"

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count) return;
  uint count = element_count(count_address, n);
  for (uint i = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < count;
       i += group_count * gl_WorkGroupSize.x) {
    uint origin = U32Array(origins_address).v[i];
    if (WORDS == 1) U32Array(destination_address).v[i] = U32Array(source_address).v[origin];
    else U32x2Array(destination_address).v[i] = U32x2Array(source_address).v[origin];
  }
}
