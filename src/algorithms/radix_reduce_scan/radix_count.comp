#version 460
// Classic LSD radix sort, pass step 1 (count): each workgroup histograms the current digit of its
// range into digit_counts[digit * group_count + group].
#include "common.glsl"
#include "radix_common.glsl"

#define PUSH_RADIX_COUNT
#include "push.h"

shared uint histogram[RADIX];

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count) return;
  uint t = gl_LocalInvocationID.x;
  for (uint d = t; d < RADIX; d += gl_WorkGroupSize.x) histogram[d] = 0;
  barrier();
  uvec2 range = workgroup_range(group, group_count, element_count(count_address, n));
  for (uint i = range.x + t; i < range.y; i += gl_WorkGroupSize.x) {
    uvec2 key = load_key(keys_address, i);
    if (input_raw != 0) key = to_radix_order(key);
    atomicAdd(histogram[key_digit(key, bit, digit_bits)], 1u);
  }
  barrier();
  U32Array counts = U32Array(digit_counts_address);
  for (uint d = t; d < RADIX; d += gl_WorkGroupSize.x) counts.v[d * group_count + group] = histogram[d];
}
