#version 460
// Bitonic sort, one global step for pair distances of a tile or more: flip (slot s of a block's
// lower half against the mirrored slot) or disperse (s against s + half). One invocation per
// pair of the power-of-two padded array; pairs reaching index >= n meet a virtual +inf key and
// are skipped, so the padding is never stored. Keys are in radix order in memory.
#include "common.glsl"

#include "spec_constants.h"
#include "sort_key_spec.glsl"

#include "keys.glsl"
#include "key_compare.glsl"

#define PUSH_BITONIC_GLOBAL
#include "push.h"

void main() {
  uint pair = linear_workgroup_id() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (pair >= pair_count) return;
  uint n_now = element_count(count_address, n);
  uint half_block = 1u << log2_half_block;
  uint offset = pair & (half_block - 1);
  uint block_begin = (pair - offset) * 2;
  uint i = block_begin + offset;
  uint j = flip != 0 ? block_begin + 2 * half_block - 1 - offset : i + half_block;
  if (j >= n_now) return;
  uvec2 key_i = load_key(keys_address, i), key_j = load_key(keys_address, j);
  if (!key_less(key_j, key_i)) return;
  store_key(keys_address, i, key_j);
  store_key(keys_address, j, key_i);
  if (VALUE_WORDS != 0) {
    uvec2 value_i = load_value(values_address, i);
    store_value(values_address, i, load_value(values_address, j));
    store_value(values_address, j, value_i);
  }
}
