#version 460
// Onesweep step 0: zeroes the state block (histograms, control words, look-back table) so that
// histograms start from zero and no look-back entry of an earlier sort carries a valid tag.
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Push {
  uint64_t state_address;
  uint words;
  uint group_count;
};

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count) return;
  for (uint i = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < words;
       i += group_count * gl_WorkGroupSize.x)
    U32Array(state_address).v[i] = 0u;
}
