// Onesweep's plan, made by one workgroup once every digit histogram is complete (in
// onesweep_histogram.comp, by its last workgroup to finish): turns each pass's histogram into
// exclusive digit offsets in place and writes the plan words: which passes run (a pass whose digit
// is the same for all keys is skipped), which buffer each reads, and whether an odd number of
// active passes leaves the result in scratch (then onesweep_copy_back.comp copies it home). It also
// writes the dispatches of the passes (one workgroup per tile of the count, none for a skipped
// pass) and of the copy-back (none where it is not needed), with the count on the host or the GPU.
//
// Include after common.glsl and onesweep_common.glsl, with GL_KHR_shader_subgroup_arithmetic and
// GL_KHR_memory_scope_semantics enabled. Every invocation of the workgroup calls plan_passes (it
// has barriers); any workgroup size works, each invocation taking PLAN_DIGITS_PER_INVOCATION
// consecutive digits.

const uint PLAN_DIGITS_PER_INVOCATION = (RADIX + gl_WorkGroupSize.x - 1) / gl_WorkGroupSize.x;

shared uint plan_subgroup_totals[gl_WorkGroupSize.x];  // at most one subgroup per invocation
shared uint plan_nonzero_digits[MAX_PASSES];

struct OnesweepPlanTargets {
  uint64_t digit_counts;  // MAX_PASSES x RADIX u32: the histograms in, exclusive offsets out
  uint64_t control;       // the control words (onesweep_common.glsl)
  uint64_t dispatch;      // the DISPATCH_* commands
  uint64_t count;         // the keys to sort (n, or the GPU-side count clamped to max_n)
  uint pass_count;
  uint tile;                 // keys per onesweep_pass workgroup
  uint copy_group_count;     // the copy-back's grid for max_n (onesweep_copy_back.comp)
  uint copy_keys_per_round;  // elements the copy-back's grid covers per round
  uint max_groups_x;
  uint pass_group_cap;  // at most this many workgroups per pass, each looping over tiles (0: one per tile)
};

// One pass's histogram to exclusive offsets in place; counts the digits that hold keys into
// plan_nonzero_digits[pass]. The histograms were added with atomics by other workgroups: read here
// with device-scope atomic loads, so no stale copy in a cache of this workgroup can be seen (the
// caller's acquire orders them after every addition).
void plan_exclusive_offsets(uint64_t digit_counts, uint pass) {
  U32Array counts = U32Array(digit_counts);
  uint first = gl_LocalInvocationID.x * PLAN_DIGITS_PER_INVOCATION;
  uint c[PLAN_DIGITS_PER_INVOCATION];
  uint sum = 0, nonzero = 0;
  for (uint k = 0; k < PLAN_DIGITS_PER_INVOCATION; ++k) {
    uint d = first + k;
    c[k] = d < RADIX ? atomicLoad(counts.v[pass * RADIX + d], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                                  gl_SemanticsRelaxed)
                     : 0u;
    sum += c[k];
    // A pass is skipped where at most one digit has keys (also n == 0: nothing to sort). Counted
    // rather than compared with n: a digit holding all of 2^32 keys counts 0 in u32.
    nonzero += c[k] != 0 ? 1u : 0u;
  }
  if (nonzero != 0) atomicAdd(plan_nonzero_digits[pass], nonzero);
  uint prefix = subgroupExclusiveAdd(sum);
  uint subgroup_total = subgroupAdd(sum);
  if (subgroupElect()) plan_subgroup_totals[gl_SubgroupID] = subgroup_total;
  barrier();
  for (uint s = 0; s < gl_SubgroupID; ++s) prefix += plan_subgroup_totals[s];
  for (uint k = 0; k < PLAN_DIGITS_PER_INVOCATION; ++k) {
    uint d = first + k;
    if (d < RADIX) counts.v[pass * RADIX + d] = prefix;
    prefix += c[k];
  }
  barrier();  // plan_subgroup_totals is reused by the next pass
}

// Whether a pass runs: more than one of its digits holds keys (after plan_exclusive_offsets).
bool plan_pass_active(uint pass) { return plan_nonzero_digits[pass] > 1; }

uint pass_groups(OnesweepPlanTargets p) {
  uint tiles = div_ceil64(p.count, p.tile);
  return p.pass_group_cap == 0 ? tiles : min(tiles, p.pass_group_cap);
}

// The plan words, the copy-back flag and the later steps' dispatches, from plan_nonzero_digits.
// One invocation.
void write_plan(OnesweepPlanTargets p) {
  U32Array control = U32Array(p.control);
  uint active_passes = 0;
  for (uint pass = 0; pass < p.pass_count; ++pass) active_passes += plan_pass_active(pass) ? 1 : 0;
  uint index = 0;
  for (uint pass = 0; pass < p.pass_count; ++pass) {
    uint plan = 0;
    if (plan_pass_active(pass)) {
      plan = PLAN_ACTIVE | ((index & 1u) != 0 ? PLAN_INPUT_ALT : 0u) | (index == 0 ? PLAN_FIRST : 0u) |
             (index + 1 == active_passes ? PLAN_LAST : 0u);
      ++index;
    }
    control.v[CONTROL_PLAN + pass] = plan;
  }
  control.v[CONTROL_COPY_BACK] = active_passes & 1u;
  for (uint pass = 0; pass < p.pass_count; ++pass)
    write_dispatch(dispatch_command(p.dispatch, DISPATCH_PASS + pass),
                   plan_pass_active(pass) ? pass_groups(p) : 0u, p.max_groups_x);
  uint copy_groups = groups_with_elements(p.count, p.copy_keys_per_round, p.copy_group_count);
  write_dispatch(dispatch_command(p.dispatch, DISPATCH_COPY_BACK), (active_passes & 1u) != 0 ? copy_groups : 0u,
                 p.max_groups_x);
}

void plan_passes(OnesweepPlanTargets p) {
  for (uint pass = gl_LocalInvocationID.x; pass < MAX_PASSES; pass += gl_WorkGroupSize.x)
    plan_nonzero_digits[pass] = 0;
  barrier();
  for (uint pass = 0; pass < p.pass_count; ++pass) plan_exclusive_offsets(p.digit_counts, pass);
  if (gl_LocalInvocationID.x == 0) write_plan(p);
}
