#version 460
// Onesweep last step: when the plan ran an odd number of passes the sorted keys (and values) are
// in scratch; copy them into the caller's buffers. Otherwise the plan (src/algorithms/onesweep/onesweep_plan.glsl)
// dispatches no workgroup, and where it copies only the first groups_with_elements() of the grid
// for max_n. Workgroups still check the copy-back flag: the partition sort clears it after the
// plan, when its own steps sorted the keys (partition_plan.comp), and they then return at once.
#include "constants.h"
#define WIDE_INDICES_ID ONESWEEP_COPY_BACK_ID_WIDE_INDICES  // 1 where n > 2^31 (common.glsl)
#include "common.glsl"
#include "onesweep_common.glsl"

#define PUSH_ONESWEEP_COPY_BACK
#include "push.h"

void copy_element_at(uint i) {
  store_key(keys_to, i, load_key(keys_from, i));
  if (VALUE_WORDS != 0) store_value(values_to, i, load_value(values_from, i));
}

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count || U32Array(control_address).v[CONTROL_COPY_BACK] == 0) return;
  uint64_t count = element_count64(count_address, n);
  uint first = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x, stride = group_count * gl_WorkGroupSize.x;
  if (WIDE_INDICES != 0) {  // a 64-bit counter only where n may pass 2^31
    for (uint64_t i = first; i < count; i += stride) copy_element_at(uint(i));
  } else {
    for (uint i = first; i < uint(count); i += stride) copy_element_at(i);
  }
}
