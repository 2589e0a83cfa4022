#version 460
// Segmented sort, fast path, last step of the global path: after sort 2 the large segments lie
// compacted in list order, each sorted, entry k at bases[k]..; each element goes back to its
// segment's place in the caller's arrays: position i of entry k = ids[i] to begins[k] + (i -
// bases[k]), its key and value gathered from the copies (origins[i]: its compacted position),
// its index the input position it came from.
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;
layout(constant_id = SEGMENT_LARGE_ID_KEY_WORDS) const uint KEY_WORDS = 1;
layout(constant_id = SEGMENT_LARGE_ID_VALUE_WORDS) const uint VALUE_WORDS = 0;

#define PUSH_SEGMENT_LARGE_GATHER
#include "push.h"

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count) return;
  const uint count = element_count(count_address, max_n);
  for (uint i = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < count;
       i += group_count * gl_WorkGroupSize.x) {
    const uint k = U32Array(ids_address).v[i];
    const uint origin = U32Array(origins_address).v[i];
    const uint begin = U32Array(large_begins_address).v[k];
    const uint base = U32Array(large_bases_address).v[k];
    const uint to = begin + (i - base);
    if (key_copy_address != 0)
      copy_element(key_copy_address, origin, keys_out_address, to, KEY_WORDS);
    if (VALUE_WORDS != 0)
      copy_element(value_copy_address, origin, values_out_address, to, VALUE_WORDS);
    if (indices_address != 0) U32Array(indices_address).v[to] = begin + (origin - base);
  }
}
