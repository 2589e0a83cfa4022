#version 460
// Onesweep step 1: one read of the keys builds the histogram of every pass's digit at once
// (keys mapped to radix order on the fly), accumulated per workgroup in shared memory and then
// added into digit_counts[pass * RADIX + digit] (u32: a digit that holds all of 2^32 keys counts
// 0, which the plan reads as a skipped pass like any digit that holds every key). Then every
// workgroup draws a ticket from a control word; the one that draws the last (every other
// workgroup's additions are then complete) makes the plan: exclusive digit offsets, plan words
// and the later steps' dispatches (src/algorithms/onesweep/onesweep_plan.glsl). That saves a dispatch and a
// barrier per sort over a separate plan step.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_memory_scope_semantics : require
#include "constants.h"
#define WIDE_INDICES_ID ONESWEEP_HISTOGRAM_ID_WIDE_INDICES  // 1 where n > 2^31 (common.glsl)
#include "common.glsl"
#include "onesweep_common.glsl"
#include "onesweep_plan.glsl"

#define PUSH_ONESWEEP_HISTOGRAM
#include "push.h"

layout(constant_id = ONESWEEP_HISTOGRAM_ID_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;

shared uint histogram[MAX_PASSES * RADIX];

// One round of an invocation: the keys at base + k * workgroup size for k * workgroup size < left.
void count_round(uint base, uint left) {
  uvec2 keys[KEYS_PER_THREAD];
  [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
    uint step = k * gl_WorkGroupSize.x;
    keys[k] = step < left ? to_radix_order(load_key(keys_address, base + step)) : uvec2(0u);
  }
  [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
    if (k * gl_WorkGroupSize.x >= left) break;
    uint64_t wide = packUint2x32(keys[k]) >> begin_bit;
    [[unroll]] for (uint pass = 0; pass < MAX_PASSES; ++pass) {
      if (pass >= pass_count || (KEY_WORDS == 1 && pass >= 4)) break;
      // Bits beyond end_bit only reach the last pass's digit through the mask.
      uint digit_mask = (1u << pass_digit_bits(begin_bit, end_bit, pass)) - 1u;
      uint digit = (KEY_WORDS == 1 ? (keys[k].x >> (begin_bit + pass * DIGIT_BITS)) : uint(wide >> (pass * DIGIT_BITS))) & digit_mask;
      atomicAdd(histogram[pass * RADIX + digit], 1u);
    }
  }
}

// This workgroup's keys into the shared histograms, then those added into digit_counts.
void count_keys(uint group) {
  uint t = gl_LocalInvocationID.x;
  for (uint i = t; i < pass_count * RADIX; i += gl_WorkGroupSize.x) histogram[i] = 0;
  barrier();
  uint64_t count = element_count64(count_address, n);
  // KEYS_PER_THREAD loads in flight per invocation and round; rounds stride over the grid of
  // group_count groups (with a GPU-side count only its first groups_with_elements() run). The
  // loop counts in 64 bits only where n may pass 2^31 (WIDE_INDICES): that cost time below.
  const uint ROUND = gl_WorkGroupSize.x * KEYS_PER_THREAD;
  if (WIDE_INDICES != 0) {
    for (uint64_t base = group * ROUND + t; base < count; base += group_count * ROUND)
      count_round(uint(base), uint(min(count - base, uint64_t(ROUND))));
  } else {
    uint count32 = uint(count);
    for (uint base = group * ROUND + t; base < count32; base += group_count * ROUND)
      count_round(base, min(count32 - base, ROUND));
  }
  barrier();
  U32Array counts = U32Array(digit_counts_address);
  for (uint i = t; i < pass_count * RADIX; i += gl_WorkGroupSize.x)
    if (histogram[i] != 0) atomicAdd(counts.v[i], histogram[i]);
}

shared uint drawn_ticket;

// Whether this workgroup finished last: every dispatched workgroup draws one ticket (also one
// beyond group_count, the last row of an x * y split), so the last ticket is the dispatched
// grid's size, whether the host sized it or onesweep_clear.comp from a GPU-side count.
// Release: this workgroup's additions to digit_counts (made available by the barrier, at device
// scope, to the invocation that draws) happen before its ticket; acquire: the workgroup that draws
// the last ticket sees every earlier ticket's additions (the tickets form one release sequence).
bool finished_last() {
  controlBarrier(gl_ScopeWorkgroup, gl_ScopeDevice, gl_StorageSemanticsBuffer | gl_StorageSemanticsShared,
                 gl_SemanticsAcquireRelease);
  if (gl_LocalInvocationID.x == 0)
    drawn_ticket = atomicAdd(U32Array(control_address).v[CONTROL_HISTOGRAM_TICKET], 1u, gl_ScopeDevice,
                             gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
  // Also carries the acquire to the workgroup's other invocations.
  controlBarrier(gl_ScopeWorkgroup, gl_ScopeDevice, gl_StorageSemanticsBuffer | gl_StorageSemanticsShared,
                 gl_SemanticsAcquireRelease);
  return drawn_ticket == gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z - 1u;
}

void main() {
  uint group = linear_workgroup_id();
  if (group < group_count) count_keys(group);  // uniform in the workgroup
  if (!finished_last()) return;
  plan_passes(OnesweepPlanTargets(digit_counts_address, control_address, dispatch_address,
                                  element_count64(count_address, n), pass_count, tile, copy_group_count,
                                  copy_keys_per_round, max_groups_x, pass_group_cap));
}
