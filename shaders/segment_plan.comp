#version 460
// Segmented sort, fast path, the steps around segment_classify (one invocation works):
//   CLEAR = 1: zero the class counters and the large count, before segment_classify.
//   CLEAR = 0: from the counters, each class's indirect dispatch (workgroups of
//   SEGMENTS_PER_GROUP(c) segments, split over x and y above max_groups_x) and the element count
//   of the global path: n when any segment is large (the global path then sorts everything and
//   the classes dispatch nothing), else 0 (its steps then do nothing).
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OFFSET_WORDS = 1;  // 1: u32 offsets, 2: u64
layout(constant_id = 2) const uint LOG2_FIRST_CLASS_SLOTS = 3;
layout(constant_id = 3) const uint CLASS_COUNT = 1;
// segment_sort_tile's smallest tile (log2 slots): the classes below it pack several segments
// into one workgroup.
layout(constant_id = 4) const uint LOG2_MIN_TILE = 7;
layout(constant_id = 5) const uint CLEAR = 0;
#include "segment_classes.glsl"

layout(push_constant) uniform Push {
  uint64_t offsets_address;
  uint64_t segment_count_address;  // 0, or the u32 segment count S (clamped to segments)
  uint64_t counters_address;
  uint64_t dispatch_address;       // CLASS_COUNT x (x, y, z) VkDispatchIndirectCommand
  uint64_t global_count_address;   // the global path's n
  uint max_n;
  uint segments;
  uint max_groups_x;
};

void main() {
  if (gl_LocalInvocationID.x != 0) return;
  if (CLEAR != 0) {
    for (uint c = 0; c <= CLASS_COUNT; ++c) U32Array(counters_address).v[c] = 0;
    return;
  }
  const bool large = U32Array(counters_address).v[CLASS_COUNT] != 0;
  for (uint c = 0; c < CLASS_COUNT; ++c) {
    uint per_group = max(1u, (1u << LOG2_MIN_TILE) / class_slots(c));
    uint listed = min(U32Array(counters_address).v[c], class_list_capacity(c, max_n, segments));
    uint groups = large ? 0u : div_ceil(listed, per_group);
    uint x = min(groups, max_groups_x);
    U32Array(dispatch_address).v[3 * c] = x;
    U32Array(dispatch_address).v[3 * c + 1] = x == 0 ? 0u : div_ceil(groups, x);
    U32Array(dispatch_address).v[3 * c + 2] = 1;
  }
  uint n = max_n;
  if (segment_count_address != 0) {
    uint s = element_count(segment_count_address, segments);
    uint64_t last = OFFSET_WORDS == 1 ? uint64_t(U32Array(offsets_address).v[s])
                                      : U64Array(offsets_address).v[s];
    n = uint(min(last, uint64_t(max_n)));
  }
  U32Array(global_count_address).v[0] = large ? n : 0u;
}
