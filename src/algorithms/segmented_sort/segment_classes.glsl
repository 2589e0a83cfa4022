// The size classes of segmented sort's fast path (src/algorithms/segmented_sort/segmented_sort.cpp), shared by
// segment_classify, segment_plan and the host's layout: class c holds the segments of 2..2^
// (LOG2_FIRST_CLASS_SLOTS + c) keys not held by a lower class, each sorted in a block of
// 2^(LOG2_FIRST_CLASS_SLOTS + c) slots (the medium classes: in several tiles, then merged). Include after the specialization constants
// LOG2_FIRST_CLASS_SLOTS and CLASS_COUNT.

uint class_slots(uint c) { return 1u << (LOG2_FIRST_CLASS_SLOTS + c); }

// The fewest keys a segment of class c has: 2 in the first class, else one more than the class
// below holds.
uint class_min_size(uint c) { return c == 0 ? 2u : class_slots(c - 1) + 1; }

// The class of a segment of `size` keys (2 <= size <= class_slots(CLASS_COUNT - 1)).
uint class_of_size(uint size) {
  uint log2_ceil = findMSB(size - 1) + 1;
  return log2_ceil <= LOG2_FIRST_CLASS_SLOTS ? 0u : log2_ceil - LOG2_FIRST_CLASS_SLOTS;
}

// Where class c's list of segment ids begins in the lists' array: class c holds at most
// min(S, n / class_min_size(c)) segments (its segments are disjoint and each that large), so the
// lists of all classes together take about n/2 + n/4 entries at most, not CLASS_COUNT x S.
uint class_list_capacity(uint c, uint max_n, uint max_segments) {
  return min(max_segments, max_n / class_min_size(c));
}
uint class_list_begin(uint c, uint max_n, uint max_segments) {
  uint begin = 0;
  for (uint k = 0; k < c; ++k) begin += class_list_capacity(k, max_n, max_segments);
  return begin;
}
