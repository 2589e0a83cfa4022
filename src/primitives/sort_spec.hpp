// What a sort is asked for and where it works: read by the algorithms and by the primitives
// they share.
#pragma once

#include "vulkan/recorder.hpp"

namespace gpusort {

// A sort request after validation: bit range resolved, values in 32-bit words.
struct SortSpec {
  KeyType key = KeyType::u32;
  uint32_t key_words = 1;    // 1 or 2
  uint32_t key_kind = 0;     // 0 unsigned, 1 signed, 2 float (src/primitives/glsl/keys.glsl)
  uint32_t value_words = 0;  // 0, 1 or 2
  bool descending = false;
  uint32_t begin_bit = 0;
  uint32_t end_bit = 32;
  KernelPath kernels = KernelPath::automatic;  // Onesweep's pass kernels (SortOptions::kernels)
};

SortSpec make_sort_spec(KeyType key, uint32_t value_bytes, bool descending, uint32_t begin_bit,
                        uint32_t end_bit);

// Where a recorded sort works. Addresses of keys/values (values 0 without values) and scratch,
// the scratch buffer's handle for indirect dispatch arguments, and the element count: when
// count_address != 0, n is read there at execution time and `n` is max_n.
struct SortTargets {
  VkDeviceAddress keys = 0;
  VkDeviceAddress values = 0;
  VkDeviceAddress scratch = 0;
  VkBuffer scratch_buffer = VK_NULL_HANDLE;
  VkDeviceSize scratch_offset = 0;
  VkDeviceAddress count_address = 0;
  uint64_t n = 0;
};

inline uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace gpusort
