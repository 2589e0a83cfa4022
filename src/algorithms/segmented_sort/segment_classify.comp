#version 460
// Segmented sort, fast path, step 1 (one pass over the offsets): each segment's size decides its
// method. 0 or 1 key: already sorted (the index of a lone key is written here when indices are
// wanted, and with separate outputs the key and value copied there); 2..class_slots(CLASS_COUNT - 1) keys: appended to its size class's list, which
// segment_sort_tile sorts on chip (the medium classes' with segment_merge); more: large, appended
// to the large list (its first position and size), whose elements the global path sorts. List
// order is whatever the atomics give: every segment is sorted on its own.
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
#include "common.glsl"

#include "constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;
// 1: u32 offsets, 2: u64.
layout(constant_id = SEGMENT_CLASSIFY_ID_OFFSET_WORDS) const uint OFFSET_WORDS = 1;
layout(constant_id = SEGMENT_CLASSIFY_ID_LOG2_FIRST_CLASS_SLOTS) const uint LOG2_FIRST_CLASS_SLOTS = 3;
layout(constant_id = SEGMENT_CLASSIFY_ID_CLASS_COUNT) const uint CLASS_COUNT = 1;
// For the copies of lone keys.
layout(constant_id = SEGMENT_CLASSIFY_ID_KEY_WORDS) const uint KEY_WORDS = 1;
layout(constant_id = SEGMENT_CLASSIFY_ID_VALUE_WORDS) const uint VALUE_WORDS = 0;
#include "segment_classes.glsl"
#include "segment_lists.glsl"

#define PUSH_SEGMENT_CLASSIFY
#include "push.h"

uint64_t offset_at(uint s) {
  if (OFFSET_WORDS == 1) return uint64_t(U32Array(offsets_address).v[s]);
  return U64Array(offsets_address).v[s];
}

void main() {
  uint group = linear_workgroup_id();
  if (group >= group_count) return;
  uint segment_count = element_count(segment_count_address, segments);
  // Whole subgroups iterate together (list_slot's ballots): segment s exists where s < count.
  const uint stride = group_count * gl_WorkGroupSize.x;
  const uint first = group * gl_WorkGroupSize.x + gl_SubgroupID * gl_SubgroupSize;
  for (uint base = first; base < segment_count; base += stride) {
    const uint s = base + gl_SubgroupInvocationID;
    uint c = NO_CLASS;
    uint begin = 0, size = 0;
    if (s < segment_count) {
      // Clamped to max_n and to non-decreasing, so that bad offsets give some order, never an
      // access outside the arrays.
      const uint64_t first_key = min(offset_at(s), uint64_t(max_n));
      const uint64_t end = clamp(offset_at(s + 1), first_key, uint64_t(max_n));
      begin = uint(first_key);
      size = uint(end - first_key);
      if (size <= 1) {
        const uint i = begin;
        if (size == 1 && indices_address != 0) U32Array(indices_address).v[i] = i;
        if (size == 1 && keys_out_address != 0)
          for (uint w = 0; w < KEY_WORDS; ++w)
            U32Array(keys_out_address).v[i * KEY_WORDS + w] = U32Array(keys_address).v[i * KEY_WORDS + w];
        if (size == 1 && values_out_address != 0)
          for (uint w = 0; w < VALUE_WORDS; ++w)
            U32Array(values_out_address).v[i * VALUE_WORDS + w] =
                U32Array(values_address).v[i * VALUE_WORDS + w];
      } else {
        c = size > class_slots(CLASS_COUNT - 1) ? CLASS_COUNT : class_of_size(size);
      }
    }
    const uint position = list_slot(counters_address, c);
    // c == CLASS_COUNT: large, to the large list (none on the second level: large_capacity 0). As
    // for the class lists, only overlapping (bad) offsets overfill it.
    if (c == CLASS_COUNT && position < large_capacity) {
      U32Array(large_begins_address).v[position] = begin;
      U32Array(large_sizes_address).v[position] = size;
    }
    // Only overlapping (bad) offsets overfill a list: those segments stay unsorted.
    if (c < CLASS_COUNT && position < class_list_capacity(c, max_n, segments))
      U32Array(lists_address).v[class_list_begin(c, max_n, segments) + position] = s;
  }
}
