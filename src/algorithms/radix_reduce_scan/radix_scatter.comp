#version 460
// Classic LSD radix sort, pass step 3 (scatter): each workgroup walks its range in rounds of one
// key per invocation, ranks each key among equal digits of the round (subgroup ballots, then a
// scan over subgroups), and writes it to its digit's running offset: stable by construction.
#extension GL_KHR_shader_subgroup_ballot : require
#include "common.glsl"
#include "radix_common.glsl"

#define PUSH_RADIX_SCATTER
#include "push.h"

const uint MAX_SUBGROUPS = gl_WorkGroupSize.x / MIN_SUBGROUP_SIZE;
shared uint digit_next[RADIX];                            // next free slot per digit
shared uint subgroup_digit_slots[MAX_SUBGROUPS * RADIX];  // counts, then first slot

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count) return;
  uint t = gl_LocalInvocationID.x;
  U32Array offsets = U32Array(digit_offsets_address);
  for (uint d = t; d < RADIX; d += gl_WorkGroupSize.x) digit_next[d] = offsets.v[d * group_count + group];
  uvec2 range = workgroup_range(group, group_count, element_count(count_address, n));
  uint subgroups = gl_NumSubgroups;
  for (uint round_begin = range.x; round_begin < range.y; round_begin += gl_WorkGroupSize.x) {
    uint i = round_begin + t;
    bool valid = i < range.y;
    uvec2 key = uvec2(0u);
    uint digit = 0;
    if (valid) {
      key = load_key(keys_in_address, i);
      if (input_raw != 0) key = to_radix_order(key);
      digit = key_digit(key, bit, digit_bits);
    }
    // Lanes of this subgroup with the same digit: intersect one ballot per digit bit.
    uvec4 same = subgroupBallot(valid);
    for (uint b = 0; b < digit_bits; ++b) {
      bool set = ((digit >> b) & 1u) != 0u;
      uvec4 ones = subgroupBallot(set);
      same &= set ? ones : ~ones;
    }
    uint rank = subgroupBallotExclusiveBitCount(same);
    uint count = subgroupBallotBitCount(same);
    for (uint s = t; s < subgroups * RADIX; s += gl_WorkGroupSize.x) subgroup_digit_slots[s] = 0;
    barrier();
    if (valid && rank == 0) subgroup_digit_slots[gl_SubgroupID * RADIX + digit] = count;
    barrier();
    for (uint d = t; d < RADIX; d += gl_WorkGroupSize.x) {
      uint next = digit_next[d];
      for (uint s = 0; s < subgroups; ++s) {
        uint c = subgroup_digit_slots[s * RADIX + d];
        subgroup_digit_slots[s * RADIX + d] = next;
        next += c;
      }
      digit_next[d] = next;
    }
    barrier();
    if (valid) {
      uint slot = subgroup_digit_slots[gl_SubgroupID * RADIX + digit] + rank;
      store_key(keys_out_address, slot, output_raw != 0 ? from_radix_order(key) : key);
      if (VALUE_WORDS != 0) store_value(values_out_address, slot, load_value(values_in_address, i));
    }
    barrier();
  }
}
