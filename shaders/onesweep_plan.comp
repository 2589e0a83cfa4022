#version 460
// Onesweep step 2 (one workgroup of RADIX invocations): turns each pass's digit histogram into
// exclusive digit offsets in place and writes the plan: which passes run (a pass whose digit is
// the same for all n keys is skipped), which buffer each reads, and whether an odd number of
// active_passes passes leaves the result in scratch (then onesweep_copy_back.comp copies it home).
// With a GPU-side count it also writes the dispatches of the passes (one workgroup per tile of the
// count, none for a skipped pass) and of the copy-back (none where it is not needed).
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
#include "onesweep_common.glsl"

layout(push_constant) uniform Push {
  uint64_t digit_counts_address;
  uint64_t control_address;
  uint64_t count_address;
  uint64_t dispatch_address;  // the DISPATCH_* commands; 0 without a GPU-side count
  uint64_t n;                 // up to 2^32
  uint pass_count;
  uint tile;                  // keys per onesweep_pass workgroup
  uint copy_group_count;      // the copy-back's grid for max_n (onesweep_copy_back.comp)
  uint copy_keys_per_round;
  uint max_groups_x;
};

shared uint subgroup_totals[RADIX];
shared uint pass_nonzero_digits[MAX_PASSES];

void main() {
  uint t = gl_LocalInvocationID.x;  // the digit
  uint64_t count = element_count64(count_address, n);
  U32Array counts = U32Array(digit_counts_address);
  if (t < MAX_PASSES) pass_nonzero_digits[t] = 0;
  barrier();
  for (uint pass = 0; pass < pass_count; ++pass) {
    uint c = counts.v[pass * RADIX + t];
    // A pass is skipped where at most one digit has keys (also n == 0: nothing to sort). Counted
    // rather than compared with n: a digit holding all of 2^32 keys counts 0 in u32.
    if (c != 0) atomicAdd(pass_nonzero_digits[pass], 1u);
    uint prefix = subgroupExclusiveAdd(c);
    if (gl_SubgroupInvocationID == gl_SubgroupSize - 1) subgroup_totals[gl_SubgroupID] = prefix + c;
    barrier();
    for (uint s = 0; s < gl_SubgroupID; ++s) prefix += subgroup_totals[s];
    counts.v[pass * RADIX + t] = prefix;
    barrier();
  }
  if (t == 0) {
    U32Array control = U32Array(control_address);
    uint active_passes = 0;
    for (uint pass = 0; pass < pass_count; ++pass) active_passes += pass_nonzero_digits[pass] > 1 ? 1 : 0;
    uint index = 0;
    for (uint pass = 0; pass < pass_count; ++pass) {
      uint plan = 0;
      if (pass_nonzero_digits[pass] > 1) {
        plan = PLAN_ACTIVE | ((index & 1u) != 0 ? PLAN_INPUT_ALT : 0u) | (index == 0 ? PLAN_FIRST : 0u) |
               (index + 1 == active_passes ? PLAN_LAST : 0u);
        ++index;
      }
      control.v[CONTROL_PLAN + pass] = plan;
    }
    control.v[CONTROL_COPY_BACK] = active_passes & 1u;
    if (dispatch_address != 0) {
      for (uint pass = 0; pass < pass_count; ++pass)
        write_dispatch(dispatch_command(dispatch_address, DISPATCH_PASS + pass),
                       pass_nonzero_digits[pass] > 1 ? div_ceil64(count, tile) : 0u, max_groups_x);
      uint copy_groups = groups_with_elements(uint(min(count, 0xffffffffuL)), copy_keys_per_round, copy_group_count);
      write_dispatch(dispatch_command(dispatch_address, DISPATCH_COPY_BACK),
                     (active_passes & 1u) != 0 ? copy_groups : 0u, max_groups_x);
    }
  }
}
