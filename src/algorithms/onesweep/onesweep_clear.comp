#version 460
// Onesweep step 0: zeroes the state block (histograms, control words, look-back table) so that
// histograms start from zero, the histogram's ticket too, and no look-back entry of an earlier
// sort carries a valid tag. With a GPU-side count it also writes the histogram's dispatch, sized
// from the count (the histogram's last workgroup makes the plan, which sizes the other steps).
#include "common.glsl"

#include "spec_constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;

#define PUSH_ONESWEEP_CLEAR
#include "push.h"

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count) return;
  if (count_address != 0 && group == 0 && gl_LocalInvocationID.x == 0) {
    // At least one workgroup, also for a count of 0: the last one to finish makes the plan.
    uint groups = max(1u, groups_with_elements(element_count64(count_address, n), histogram_keys_per_round,
                                               histogram_group_count));
    write_dispatch(histogram_dispatch, groups, max_groups_x);
  }
  for (uint i = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < words;
       i += group_count * gl_WorkGroupSize.x)
    U32Array(state_address).v[i] = 0u;
}
