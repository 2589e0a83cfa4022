#version 460
// Top-k, last step with values: values_out[i] = values[positions[i]] for each result.
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;
layout(constant_id = TOPK_GATHER_ID_WORDS) const uint WORDS = 1;

#define PUSH_TOPK_GATHER
#include "push.h"

void main() {
  const uint group = linear_workgroup_id();
  if (group >= group_count) return;
  const uint count = min(k, U32Array(count_address).v[0]);
  for (uint i = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < count;
       i += group_count * gl_WorkGroupSize.x)
    copy_element(values_address, U32Array(positions_address).v[i], values_out_address, i, WORDS);
}
