#version 460
// Segmented sort, fast path, after segment_large_scan: the large segments' elements laid out
// compactly, entry k of the large list at bases[k].., each segment's keys in input order (the
// sorts after it are stable): the keys that sort 1 sorts, a copy of them for the last gather,
// the values, and origins[j] = j (the compacted position, which the sorts carry along). Grid-
// stride over the compacted positions, each finding its segment by a binary search of the bases:
// the work is even however the sizes differ. Reads only the large segments, which the fast
// path's classes never touch, so it runs beside them.
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;
layout(constant_id = SEGMENT_LARGE_ID_KEY_WORDS) const uint KEY_WORDS = 1;
layout(constant_id = SEGMENT_LARGE_ID_VALUE_WORDS) const uint VALUE_WORDS = 0;

#define PUSH_SEGMENT_LARGE_COMPACT
#include "push.h"

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count) return;
  const uint count = element_count(count_address, max_n);
  const uint large_count = element_count(large_count_address, large_capacity);
  U32Array bases = U32Array(large_bases_address);
  for (uint j = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x; j < count;
       j += group_count * gl_WorkGroupSize.x) {
    // upper_bound over bases[0..large_count) (bases[0] = 0 <= j): the last k with bases[k] <= j.
    uint first = 0, left = large_count;
    while (left > 0) {
      uint half_left = left / 2;
      if (bases.v[first + half_left] <= j) {
        first += half_left + 1;
        left -= half_left + 1;
      } else {
        left = half_left;
      }
    }
    const uint k = first - 1;
    const uint from = U32Array(large_begins_address).v[k] + (j - bases.v[k]);
    copy_element(keys_address, from, sort_keys_address, j, KEY_WORDS);
    if (key_copy_address != 0) copy_element(keys_address, from, key_copy_address, j, KEY_WORDS);
    if (VALUE_WORDS != 0) copy_element(values_address, from, value_copy_address, j, VALUE_WORDS);
    U32Array(origins_address).v[j] = j;
  }
}
