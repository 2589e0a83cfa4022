// The CUDA kernels' arguments for one Onesweep sort (cuda_kernels.hpp's structs), filled in one
// place for both launchers: the NVX pass (nvx_sort.cpp, a Vulkan recording) and the CUDA face
// (stream_sort.cpp, a CUDA stream).
#pragma once

#include <algorithm>

#include "algorithms/onesweep/cuda/cuda_kernels.hpp"
#include "algorithms/onesweep/layout.hpp"
#include "primitives/key_order.h"

namespace gpusort::cuda {

// Device addresses of one sort: the caller's keys and values (0 without), its GPU-side u32 count
// (0: n), the scratch laid out by onesweep_layout; n is max_n with a count. The CUDA face's fused
// steps (OnesweepFusedParams): keys read from keys_first (0: keys), canonical where they are
// NumPy's floats (canonical), the values made as positions (values_iota), the values written as
// 8 bytes to values_wide (0: to values).
struct OnesweepAddresses {
  uint64_t keys = 0, values = 0, count = 0, scratch = 0;
  uint64_t n = 0;
  uint64_t keys_first = 0, values_wide = 0;
  bool values_iota = false, canonical = false;
  bool fused() const { return keys_first != 0 || values_wide != 0 || values_iota || canonical; }
};

// The pass kernels' switches: OnesweepOptions's on the NVX path, their defaults on the CUDA face.
struct OnesweepPassSwitches {
  uint32_t spin_limit = 64;      // OnesweepOptions::spin_limit
  uint32_t refusal_period = 0;   // OnesweepOptions::publish_refusal_period
  uint32_t claim_by_id = 0;      // 1: each block sorts the tile its id names
  uint32_t prefetch_tiles = 0;   // prefetch ahead by this many tiles (0: off)
};

inline OnesweepPassParams onesweep_pass_params(const SortSpec& spec, const OnesweepLayout& l,
                                               const OnesweepAddresses& a, uint32_t pass,
                                               const OnesweepPassSwitches& s) {
  const uint32_t bit = spec.begin_bit + pass * ONESWEEP_DIGIT_BITS;
  return OnesweepPassParams{
      .keys_a = reinterpret_cast<void*>(a.keys),
      .keys_b = reinterpret_cast<void*>(a.scratch + l.keys_alt),
      .values_a = reinterpret_cast<void*>(a.values),
      .values_b = reinterpret_cast<void*>(spec.value_words ? a.scratch + l.values_alt : 0),
      .count = reinterpret_cast<const uint32_t*>(a.count),
      .digit_offsets = reinterpret_cast<const uint32_t*>(a.scratch + l.digit_counts +
                                                         pass * ONESWEEP_RADIX * 4),
      .control = reinterpret_cast<uint32_t*>(a.scratch + l.control),
      .lookback = reinterpret_cast<unsigned long long*>(a.scratch + l.lookback),
      .n = a.n,
      .pass = pass,
      .bit = bit,
      .digit_bits = std::min<uint32_t>(ONESWEEP_DIGIT_BITS, spec.end_bit - bit),
      .first_tag = uint32_t(1 + pass * l.tiles),
      .slot_mask = l.lookback_slots - 1,
      .key_kind = spec.key_kind,
      .descending = spec.descending ? 1u : 0u,
      .spin_limit = s.spin_limit,
      .refusal_period = s.refusal_period,
      .claim_by_id = s.claim_by_id,
      .prefetch_tiles = s.prefetch_tiles};
}

inline OnesweepFusedParams onesweep_fused_params(const OnesweepAddresses& a) {
  return OnesweepFusedParams{.keys_first = reinterpret_cast<const void*>(a.keys_first),
                             .values_wide = reinterpret_cast<unsigned long long*>(a.values_wide),
                             .values_iota = a.values_iota ? 1u : 0u,
                             .canonical = a.canonical ? 1u : 0u};
}

// The histogram and plan: `tile` keys per pass tile, and the copy-back's grid (copy_group_count
// groups of copy_keys_per_round, at most max_groups_x wide) for the command the plan writes. The
// CUDA passes are launched directly (a launch cannot be indirect), so their commands are unused
// and uncapped.
inline OnesweepHistogramParams onesweep_histogram_params(
    const SortSpec& spec, const OnesweepLayout& l, const OnesweepAddresses& a, uint32_t tile,
    uint32_t copy_group_count, uint32_t copy_keys_per_round, uint32_t max_groups_x) {
  return OnesweepHistogramParams{
      .keys = reinterpret_cast<const void*>(a.keys_first != 0 ? a.keys_first : a.keys),
      .count = reinterpret_cast<const uint32_t*>(a.count),
      .n = a.n,
      .digit_counts = reinterpret_cast<uint32_t*>(a.scratch + l.digit_counts),
      .control = reinterpret_cast<uint32_t*>(a.scratch + l.control),
      .dispatch = reinterpret_cast<uint32_t*>(a.scratch + l.dispatch),
      .begin_bit = spec.begin_bit,
      .end_bit = spec.end_bit,
      .pass_count = onesweep_passes(spec),
      .key_kind = spec.key_kind == key_kind_numpy_float ? key_kind_float : spec.key_kind,
      .descending = spec.descending ? 1u : 0u,
      .copy_group_count = copy_group_count,
      .copy_keys_per_round = copy_keys_per_round,
      .max_groups_x = max_groups_x,
      .tile = tile,
      .pass_group_cap = 0,
      .first_pass_always = a.fused() ? 1u : 0u,
      .canonical = (a.canonical || spec.key_kind == key_kind_numpy_float) ? 1u : 0u};
}

// The histogram's grid: one round of keys per block, at most blocks_per_sm blocks per SM (16 SMs
// at least), each block striding over the rounds.
inline uint32_t onesweep_histogram_grid(const CudaHistogramShape& h, uint64_t n,
                                        uint32_t sm_count) {
  const uint64_t per_block = uint64_t(h.threads) * h.vectors * (4 / h.key_words);
  const uint64_t cap = uint64_t(h.blocks_per_sm) * std::max<uint32_t>(sm_count, 16);
  return uint32_t(std::clamp<uint64_t>((n + per_block - 1) / per_block, 1, cap));
}

}  // namespace gpusort::cuda
