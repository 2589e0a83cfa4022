#version 460
// Segmented sort / argsort, step 1: indices[i] = i for every element (the permutation that the
// sorts carry along as their values, so that the caller never builds an iota).
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;

#define PUSH_SEGMENT_IOTA
#include "push.h"

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count) return;
  uint count = element_count(count_address, n);
  // Grid-stride so a grid sized for max_n also covers an indirect count.
  for (uint i = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < count;
       i += group_count * gl_WorkGroupSize.x)
    U32Array(indices_address).v[i] = i;
}
