#version 460
// Segmented sort, fast path, the steps around segment_classify (one invocation works):
//   CLEAR = 1: zero the class counters, the large count and segment_bucket's piece table
//   counter, before segment_classify.
//   CLEAR = 0: from the counters, each class's indirect dispatch (workgroups of
//   several segments, one, or for a medium class one per block of each segment; split over x
//   and y above max_groups_x), each medium class's segment_merge dispatch (one invocation per
//   slot) or with BUCKETED its segment_bucket dispatch (one workgroup per segment). The large
//   segments are segment_large_scan's (which writes the global
//   path's n and its step kernels' dispatch); the classes dispatch as usual beside them.
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;
// Unused since the large segments moved to segment_large_scan; kept so the constant ids stay put.
layout(constant_id = SEGMENT_PLAN_ID_OFFSET_WORDS) const uint OFFSET_WORDS = 1;
layout(constant_id = SEGMENT_PLAN_ID_LOG2_FIRST_CLASS_SLOTS) const uint LOG2_FIRST_CLASS_SLOTS = 3;
layout(constant_id = SEGMENT_PLAN_ID_CLASS_COUNT) const uint CLASS_COUNT = 1;
// segment_sort_tile's smallest tile (log2 slots): the classes below it pack several segments
// into one workgroup.
layout(constant_id = SEGMENT_PLAN_ID_LOG2_MIN_TILE) const uint LOG2_MIN_TILE = 7;
layout(constant_id = SEGMENT_PLAN_ID_CLEAR) const uint CLEAR = 0;
// The classes sorted in one tile each; classes TILE_CLASSES.. are the medium ones, of 2, 4, ...
// blocks of the largest tile class.
layout(constant_id = SEGMENT_PLAN_ID_TILE_CLASSES) const uint TILE_CLASSES = 1;
// Segment_merge's.
layout(constant_id = SEGMENT_PLAN_ID_MERGE_WORKGROUP) const uint MERGE_WORKGROUP = 256;
// 1: the medium classes are bucketed (segment_bucket, one workgroup per segment, no merge).
layout(constant_id = SEGMENT_PLAN_ID_BUCKETED) const uint BUCKETED = 0;
#include "segment_classes.glsl"

#define PUSH_SEGMENT_PLAN
#include "push.h"

void write_class_dispatch(uint d, uint groups) {
  write_dispatch(dispatch_address + 12 * d, groups, max_groups_x);
}

void main() {
  if (gl_LocalInvocationID.x != 0) return;
  if (CLEAR != 0) {
    for (uint c = 0; c <= CLASS_COUNT + 1; ++c) U32Array(counters_address).v[c] = 0;
    return;
  }
  for (uint c = 0; c < CLASS_COUNT; ++c) {
    uint listed = min(U32Array(counters_address).v[c], class_list_capacity(c, max_n, segments));
    if (c < TILE_CLASSES) {
      uint per_group = max(1u, (1u << LOG2_MIN_TILE) / class_slots(c));
      write_class_dispatch(c, div_ceil(listed, per_group));
    } else if (BUCKETED != 0) {
      write_class_dispatch(c, listed);  // a workgroup per segment
      write_class_dispatch(CLASS_COUNT + c - TILE_CLASSES, 0);
    } else {
      write_class_dispatch(c, listed << (c - TILE_CLASSES + 1));  // a workgroup per block
      write_class_dispatch(CLASS_COUNT + c - TILE_CLASSES,
                           listed * (class_slots(c) / MERGE_WORKGROUP));
    }
  }
}
