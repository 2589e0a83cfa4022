#version 460
// Partition sort step (one workgroup of RADIX invocations, after Onesweep's plan turned every
// pass's histogram into exclusive digit offsets, src/algorithms/onesweep/onesweep_plan.glsl): chooses between
//  - partition: the highest digit that is not the same for every key (the digits above it are,
//    so a stable scatter by it orders the keys by every bit above the digit's lowest), when its
//    largest bucket holds at most max_bucket keys. Writes that digit to the control words (the
//    partition pass reads them), the buckets as segments (offsets[0..RADIX], segment count
//    RADIX) for the segmented sort, and clears Onesweep's plan and its passes' and copy-back's
//    indirect commands, so that those dispatches run no workgroup;
//  - Onesweep: no such digit, or a bucket too big. Segment count 0 (the segmented sort then
//    has nothing to do), partition digit 0 (the partition pass returns at once), Onesweep's
//    plan untouched.
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
#include "onesweep/onesweep_common.glsl"

#define PUSH_PARTITION_PLAN
#include "push.h"

shared uint subgroup_max[RADIX];

void main() {
  uint t = gl_LocalInvocationID.x;  // the digit
  uint count = element_count(count_address, n);
  U32Array control = U32Array(control_address);
  // The highest pass whose digit differs between keys: Onesweep's plan marked it active. Every
  // invocation reads the same words, so the choice is uniform.
  uint chosen = 0;  // pass + 1
  for (uint pass = pass_count; pass > 0; --pass)
    if ((control.v[CONTROL_PLAN + pass - 1] & PLAN_ACTIVE) != 0) {
      chosen = pass;
      break;
    }
  uint bucket = 0, start = 0;
  if (chosen != 0) {
    U32Array offsets = U32Array(digit_offsets_address);
    start = offsets.v[(chosen - 1) * RADIX + t];
    uint end = t + 1 < RADIX ? offsets.v[(chosen - 1) * RADIX + t + 1] : count;
    bucket = end - start;
  }
  uint largest = subgroupMax(bucket);
  if (gl_SubgroupInvocationID == 0) subgroup_max[gl_SubgroupID] = largest;
  barrier();
  for (uint s = 0; s < gl_NumSubgroups; ++s) largest = max(largest, subgroup_max[s]);
  bool partitioned = chosen != 0 && largest <= max_bucket;

  U32Array segment_offsets = U32Array(segment_offsets_address);
  if (partitioned) {
    segment_offsets.v[t] = start;
    if (t < MAX_PASSES) control.v[CONTROL_PLAN + t] = 0;
    if (t < MAX_PASSES + 1) write_dispatch(dispatch_command(dispatch_address, DISPATCH_PASS + t), 0, 1);
  }
  if (t == 0) {
    if (partitioned) {
      segment_offsets.v[RADIX] = count;
      uint bit = pass_bit(begin_bit, chosen - 1);
      control.v[CONTROL_PARTITION_BIT] = bit;
      control.v[CONTROL_PARTITION_BITS] = pass_digit_bits(begin_bit, end_bit, chosen - 1);
      control.v[CONTROL_COPY_BACK] = 0;
    } else {
      segment_offsets.v[0] = 0;  // the segmented sort reads n = offsets[0] = 0
    }
    control.v[CONTROL_PARTITION_DIGIT] = partitioned ? chosen : 0;
    U32Array(segment_count_address).v[0] = partitioned ? RADIX : 0;
  }
}
