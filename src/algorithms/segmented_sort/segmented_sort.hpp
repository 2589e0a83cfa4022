// Segmented sort and argsort (src/algorithms/segmented_sort/segmented_sort.cpp): what the convenient face's
// host path and the engine face's SegmentedSorter record.
#pragma once

#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

struct SegmentedSpec {
  SortSpec sort;              // key type, caller's value words, order, bit range
  uint32_t offset_words = 0;  // 0: no offsets (one segment: argsort), 1: u32 offsets, 2: u64
  // Whether the caller's keys receive their sorted order. When false (argsort of a copy the
  // host path uploaded) the keys buffer ends in some other order and only values/indices count.
  bool write_keys = true;
};

// Where a recorded segmented sort works. keys/values (0 without) are sorted in place; indices,
// when not 0, receive the stable sorting permutation (u32: output i came from input
// indices[i]). offsets: segments + 1 CSR offsets (not used without offsets). When
// segment_count_address != 0 the segment count S is the u32 there (clamped to `segments`) and n
// is offsets[S] (clamped to `n`), both read on the GPU. keys_out / values_out, when not 0, receive
// the sorted keys / values instead (keys and values are then left in some order; used by the
// partition sort, whose buckets lie in scratch); they need offsets and more than one segment.
struct SegmentedTargets {
  VkDeviceAddress keys = 0, values = 0, offsets = 0, indices = 0, scratch = 0;
  VkDeviceAddress keys_out = 0, values_out = 0;
  VkBuffer scratch_buffer = VK_NULL_HANDLE;
  VkDeviceSize scratch_offset = 0;
  VkDeviceAddress segment_count_address = 0;
  uint64_t n = 0;
  uint64_t segments = 1;
};

class SegmentedSort {
 public:
  virtual ~SegmentedSort() = default;
  virtual uint64_t scratch_bytes(uint64_t max_n, uint64_t max_segments) const = 0;
  // The largest n the inner sorts take (odd-even: one workgroup's shared memory).
  virtual uint64_t max_elements() const = 0;
  // Ends with a compute barrier when it recorded anything.
  virtual void record(Recorder& rec, const SegmentedTargets& targets) const = 0;
};

// The fast path's size classes on this device for this key type (for tests and benchmarks):
// the most keys each class takes, smallest first, and the largest class sorted in one tile (the
// classes above it, the medium ones, split a segment into blocks of that size and merge them).
// A larger segment is large: the global path sorts the large segments' elements. Empty: no fast
// path.
struct SegmentedClassTable {
  std::vector<uint64_t> class_slots;
  uint64_t largest_tile = 0;
};
SegmentedClassTable segmented_class_table(const Context::Impl& ctx, const SortSpec& spec);

// Shapes of segment_bucket (the medium classes' scatter) and of the size classes, for development
// tools (dev/segmented); 0: the default.
struct SegmentedOptions {
  uint32_t bucket_workgroup = 0;
  uint32_t bucket_keys_per_thread = 0;
  uint32_t log2_min_tile = 0;  // the classes below it pack several segments per workgroup
  uint32_t log2_items = 0;     // keys per invocation of the tile classes (2^this; 0: the default)
};

// `make_sort` makes the inner sorts (by key, by segment id); they must be stable
// (src/dispatch/dispatch.hpp's make_segmented_sort chooses them by Algorithm).
std::unique_ptr<SegmentedSort> make_segmented_sort(Context::Impl& ctx, const SegmentedSpec& spec,
                                                   MakeSort make_sort,
                                                   const SegmentedOptions& options = {});

}  // namespace gpusort
