// Top-k (src/algorithms/topk/topk.cpp, docs/design/topk.md): the k smallest keys of an array in
// the order of a stable sort (the k largest where the spec is descending), with their positions
// and, where asked, their values: what the convenient face's host path and the engine face's
// TopKSelector record.
#pragma once

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

class TopK {
 public:
  virtual ~TopK() = default;
  virtual uint64_t scratch_bytes(uint64_t max_n, uint64_t k) const = 0;
  // Ends with a compute barrier when it recorded anything (nothing for n = 0 or k = 0).
  virtual void record(Recorder& rec, const TopKTargets& targets) const = 0;
};

// `spec`: key type, the caller's value words, order (descending: the k largest) and compared
// bits. `make_sort` makes the sort of the k survivors (keys with u32 positions as values); it
// must be stable.
std::unique_ptr<TopK> make_topk(Context::Impl& ctx, const SortSpec& spec, MakeSort make_sort);

}  // namespace gpusort
