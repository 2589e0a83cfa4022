#version 460
// Segmented sort, step 3: after the keys were sorted stably by key, each element's segment id,
// ids[i] = segment of origins[i]: the last segment s < S whose offset is <= the origin (a binary
// search over the caller's CSR offsets, u32 or u64). Sorting stably by these ids next leaves every
// segment together, in order, and sorted inside. Offsets that are not non-decreasing give some
// order, never an access outside offsets[0..S].
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;
layout(constant_id = SEGMENT_OFFSETS_ID_OFFSET_WORDS) const uint OFFSET_WORDS = 1;  // 1: u32 offsets, 2: u64

#define PUSH_SEGMENT_IDS
#include "push.h"

uint64_t offset_at(uint s) {
  if (OFFSET_WORDS == 1) return uint64_t(U32Array(offsets_address).v[s]);
  return U64Array(offsets_address).v[s];
}

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count) return;
  uint count = element_count(count_address, n);
  uint segment_count = element_count(segment_count_address, segments);
  for (uint i = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < count;
       i += group_count * gl_WorkGroupSize.x) {
    uint64_t origin = uint64_t(U32Array(origins_address).v[i]);
    // upper_bound over offsets[0..S): how many segments begin at or before the origin.
    uint first = 0, left = segment_count;
    while (left > 0) {
      uint half_left = left / 2;
      if (offset_at(first + half_left) <= origin) {
        first += half_left + 1;
        left -= half_left + 1;
      } else {
        left = half_left;
      }
    }
    U32Array(ids_address).v[i] = first == 0 ? 0u : first - 1;
  }
}
