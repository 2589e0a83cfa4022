#version 460
// Onesweep step 1: one read of the keys builds the histogram of every pass's digit at once
// (keys mapped to radix order on the fly), accumulated per workgroup in shared memory and then
// added into digit_counts[pass * RADIX + digit].
#include "common.glsl"
#include "onesweep_common.glsl"

layout(push_constant) uniform Push {
  uint64_t keys_address;
  uint64_t count_address;
  uint64_t digit_counts_address;
  uint n;
  uint group_count;
  uint begin_bit;
  uint end_bit;
  uint pass_count;
};

shared uint histogram[MAX_PASSES * RADIX];

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count) return;
  uint t = gl_LocalInvocationID.x;
  for (uint i = t; i < pass_count * RADIX; i += gl_WorkGroupSize.x) histogram[i] = 0;
  barrier();
  uint count = element_count(count_address, n);
  for (uint i = group * gl_WorkGroupSize.x + t; i < count; i += group_count * gl_WorkGroupSize.x) {
    uvec2 key = to_radix_order(load_key(keys_address, i));
    for (uint pass = 0; pass < pass_count; ++pass)
      atomicAdd(histogram[pass * RADIX +
                          key_digit(key, pass_bit(begin_bit, pass), pass_digit_bits(begin_bit, end_bit, pass))],
                1u);
  }
  barrier();
  U32Array counts = U32Array(digit_counts_address);
  for (uint i = t; i < pass_count * RADIX; i += gl_WorkGroupSize.x)
    if (histogram[i] != 0) atomicAdd(counts.v[i], histogram[i]);
}
