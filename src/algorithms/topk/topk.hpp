// Top-k (src/algorithms/topk/topk.cpp, docs/design/topk.md): the k smallest keys of an array in
// the order of a stable sort (the k largest where the spec is descending), with their positions
// and, where asked, their values: what the convenient face's host path and the engine face's
// TopKSelector record.
#pragma once

#include "algorithms/segmented_sort/segmented_sort.hpp"
#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

// Where a recorded top-k works. keys (n keys) and values (n values, 0 without) are only read;
// keys_out receives min(k, n) keys, values_out (0 without values) their values, positions
// (0: scratch holds them) their u32 positions in the input. When count_address != 0 the element
// count is the u32 there, clamped to n, read on the GPU; outputs from min(k, count) on are left
// as they are.
struct TopKTargets {
  VkDeviceAddress keys = 0, values = 0;
  VkDeviceAddress keys_out = 0, values_out = 0, positions = 0;
  VkDeviceAddress scratch = 0;
  VkBuffer scratch_buffer = VK_NULL_HANDLE;
  VkDeviceSize scratch_offset = 0;
  VkDeviceAddress count_address = 0;
  uint64_t n = 0;
  uint64_t k = 0;
};

// Per segment: offsets (S + 1 CSR offsets of offset_words) of the n keys; segment s's
// min(k, its length) results go one segment after another (from the sum of min(k, length) over
// the segments before it; their count is computed on the GPU). results: at least their count
// (the outputs' capacity; min(n, S k) always is). positions are in the whole array.
struct TopKSegmentsTargets {
  VkDeviceAddress keys = 0, values = 0, offsets = 0;
  VkDeviceAddress keys_out = 0, values_out = 0, positions = 0;
  VkDeviceAddress scratch = 0;
  VkBuffer scratch_buffer = VK_NULL_HANDLE;
  VkDeviceSize scratch_offset = 0;
  uint64_t n = 0, segments = 0, k = 0, results = 0;
};

class TopK {
 public:
  virtual ~TopK() = default;
  virtual uint64_t scratch_bytes(uint64_t max_n, uint64_t k) const = 0;
  // Ends with a compute barrier when it recorded anything (nothing for n = 0 or k = 0).
  virtual void record(Recorder& rec, const TopKTargets& targets) const = 0;
  virtual uint64_t segments_scratch_bytes(uint64_t n, uint64_t segments, uint64_t results) const = 0;
  virtual void record_segments(Recorder& rec, const TopKSegmentsTargets& targets) const = 0;
};

// Makes the segmented sort of the results (their keys with u32 positions as values, u32
// offsets); it must be stable.
using MakeSegmentedSort =
    std::function<std::unique_ptr<SegmentedSort>(const SegmentedSpec& spec)>;

// `spec`: key type, the caller's value words, order (descending: the k largest) and compared
// bits. `make_sort` makes the sort of the k survivors (keys with u32 positions as values); it
// must be stable. offset_words: the per-segment form's offsets (1: u32, 2: u64; 0: not used).
std::unique_ptr<TopK> make_topk(Context::Impl& ctx, const SortSpec& spec, MakeSort make_sort,
                                uint32_t offset_words = 0,
                                MakeSegmentedSort make_segmented_sort = {});

}  // namespace gpusort
