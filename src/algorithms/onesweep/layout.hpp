// Where one Onesweep sort keeps its scratch, for every launcher (the Vulkan sort, the NVX pass and
// the CUDA face's): the key and value ping-pong copies, the indirect dispatch commands, then the
// state block that is zeroed before every sort (digit counts, control words, look-back table;
// state.h). Commands, counts and control words (8408 B) fit below the table's 256-B alignment
// (8448 B), so the commands add nothing to the total.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#include "algorithms/onesweep/state.h"
#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

struct OnesweepLayout {
  uint64_t keys_alt, values_alt, dispatch, state, digit_counts, control, lookback;
  uint64_t state_bytes, total;
  uint64_t tiles;           // tiles of max_n keys
  uint32_t lookback_slots;  // a power of two (the kernels index slots with a mask)
};

// The layout for max_n keys of `spec` in tiles of `tile_keys`, with at most max_lookback_slots
// look-back slots (rounded down to a power of two) and at most the tiles' count rounded up.
inline OnesweepLayout onesweep_layout(const SortSpec& spec, uint64_t max_n, uint32_t tile_keys,
                                      uint32_t max_lookback_slots) {
  constexpr uint64_t command_bytes = 12;  // VkDispatchIndirectCommand, 3 u32
  OnesweepLayout l{};
  l.tiles = std::max<uint64_t>(1, (max_n + tile_keys - 1) / tile_keys);
  l.lookback_slots = uint32_t(std::min<uint64_t>(
      std::bit_floor(std::max<uint32_t>(max_lookback_slots, 1)), std::bit_ceil(l.tiles)));
  l.keys_alt = 0;
  l.values_alt = align_up(max_n * spec.key_words * 4, 256);
  l.dispatch = l.values_alt + align_up(max_n * spec.value_words * 4, 256);
  l.state = l.dispatch + align_up(ONESWEEP_DISPATCH_COMMANDS * command_bytes, 16);
  l.digit_counts = l.state;
  l.control = l.digit_counts + ONESWEEP_MAX_PASSES * ONESWEEP_RADIX * 4;
  l.lookback = align_up(l.control + ONESWEEP_CONTROL_WORDS * 4, 256);
  l.total = l.lookback + uint64_t(l.lookback_slots) * ONESWEEP_RADIX * ONESWEEP_LOOKBACK_ENTRY_BYTES;
  l.state_bytes = l.total - l.state;
  return l;
}

// The passes of a sort of spec's bit range (8-bit digits, the last one narrower where the range
// ends inside it).
inline uint32_t onesweep_passes(const SortSpec& spec) {
  return (spec.end_bit - spec.begin_bit + ONESWEEP_DIGIT_BITS - 1) / ONESWEEP_DIGIT_BITS;
}

}  // namespace gpusort
