#version 460
// Top-k, the radix select's pass p: each workgroup selects the prefix of the passes before (from
// their histograms: topk_select.glsl), then histograms, over its tiles of keys, digit p of the keys
// whose higher compared bits equal that prefix (the candidates), in shared memory, and adds its
// counts to pass p's histogram.
#include "common.glsl"
#include "topk_common.glsl"

#define PUSH_TOPK_HISTOGRAM
#include "push.h"

shared uint histogram[TOPK_BINS];
#define SCAN_T uint
shared SCAN_T scan_tree[gl_WorkGroupSize.x];
#include "scan.glsl"
#include "topk_select.glsl"

void main() {
  const uint group = linear_workgroup_id();
  if (group >= group_count) return;
  const uint n = state_word(state_address, TOPK_STATE_N);
  const uint tile = gl_WorkGroupSize.x * ITEMS;
  // Uniform over the workgroup: nothing to select (k = 0) or no tile for this workgroup.
  if (state_word(state_address, TOPK_STATE_K) == 0 || group * tile >= n) return;
  const uint t = gl_LocalInvocationID.x;
  uint64_t prefix;
  uint before, remaining;
  select_digits(state_address, pass, prefix, before, remaining);
  const uvec2 digit = topk_digit(pass);
  const uint bit = digit.x, bits = digit.y;
  const uint bins = 1u << bits;
  for (uint d = t; d < bins; d += gl_WorkGroupSize.x) histogram[d] = 0;
  barrier();
  const uint above = bit + bits;  // the bits from here up are the prefix's
  const uint mask = bins - 1u;
  // Tiles grid-stride: a workgroup adds many tiles' counts before its one flush, so the global
  // atomics stay about bins x workgroups, not bins x tiles.
  for (uint base = group * tile; base < n; base += group_count * tile) {
    for (uint j = 0; j < ITEMS; ++j) {
      const uint i = base + j * gl_WorkGroupSize.x + t;
      if (i >= n) break;
      const uint64_t key = select_key(keys_address, i);
      if (above >= 64 || (key >> above) == (prefix >> above))
        atomicAdd(histogram[uint(key >> bit) & mask], 1u);
    }
  }
  barrier();
  for (uint d = t; d < bins; d += gl_WorkGroupSize.x) {
    const uint c = histogram[d];
    if (c != 0) atomicAdd(U32Array(histogram_address).v[d], c);
  }
}
