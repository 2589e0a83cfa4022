#version 460
// Copies n elements of WORDS 32-bit words each (the last step of an odd number of passes).
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;
layout(constant_id = COPY_ELEMENTS_ID_WORDS) const uint WORDS = 1;

#define PUSH_COPY_ELEMENTS
#include "push.h"

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count) return;
  uint count = element_count(count_address, n);
  // Grid-stride so a grid sized for max_n also covers an indirect count.
  for (uint i = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < count;
       i += group_count * gl_WorkGroupSize.x) {
    if (WORDS == 1) U32Array(dst_address).v[i] = U32Array(src_address).v[i];
    else U32x2Array(dst_address).v[i] = U32x2Array(src_address).v[i];
  }
}
