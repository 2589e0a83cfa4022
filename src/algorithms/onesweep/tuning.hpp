// Onesweep's tuning table: its row type, one row per device family (tuning.cpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "tuning/tuning.hpp"

namespace gpusort {

// Onesweep's tile: workgroup invocations x keys per invocation.
struct OnesweepTile {
  uint32_t workgroup = 0, keys_per_thread = 0;
};
// A smaller tile for recordings of at most max_n keys (0: the band is unused).
struct OnesweepBand {
  uint64_t max_n = 0;
  OnesweepTile tile;
};
// Onesweep for one key class (onesweep_keys): its tiles and the pass's switches.
struct OnesweepKeyTuning {
  OnesweepTile large;                 // sorts every size above the bands
  std::array<OnesweepBand, 2> bands;  // ascending max_n: each takes the sizes up to its max_n
  bool counters_in_exchange = false;  // per-subgroup counters inside the exchange array
  bool full_tile_copy = false;        // a bounds-check-free copy of the tile code for full tiles
  bool guess_tile = false;            // the id's tile's keys requested before the claim returns
  bool prefetch_next = false;         // persistent groups request the next tile's keys early
  // Persistent workgroups per compute unit, each sorting tile after tile (0: one per tile; also
  // where the device reports no compute units). Bands always run one workgroup per tile.
  uint32_t persistent_groups_per_unit = 0;
};
struct OnesweepTuning {
  OnesweepKeyTuning keys32;         // 32-bit keys alone
  OnesweepKeyTuning keys32_values;  // 32-bit keys with values
  OnesweepKeyTuning keys64;         // 64-bit keys, with or without values
  // Workgroup i sorts tile i (no claim on an atomic counter): where workgroups start in id order.
  bool tiles_by_id = false;
  // Persistent workgroups only where each gets at least this many tiles.
  uint64_t persistent_min_rounds = 0;
  // Small n: the histogram's grid spread to this many workgroups per compute unit.
  uint32_t histogram_groups_per_unit = 0;
  // The look-back's predecessors read at once per round.
  uint32_t lookback_window = 0;
  // KernelPath::automatic: the passes run as CUDA kernels (src/algorithms/onesweep/cuda, through
  // VK_NVX_binary_import) where the device can launch them, for recordings of at least this many
  // keys (Algorithm::onesweep / automatic; smaller ones keep the SPIR-V bands); 0: never by
  // themselves (the SPIR-V pass unless the CUDA one is asked for). One per key class with CUDA
  // kernels (cuda::cuda_key_class): 32-bit keys alone, with 4-byte values, 64-bit keys alone,
  // with 4-byte values.
  std::array<uint64_t, 4> cuda_from_n{};
  // Where the passes are CUDA kernels: the histogram and plan too (one CUDA kernel: the v-th row of
  // cuda::kCudaHistogramShapes for the key width) instead of onesweep_histogram.comp; 0: not.
  // GPUSORT_CUDA_HISTOGRAM=0, 1 or 2 overrides it, for measurements of each.
  uint32_t cuda_histogram = 0;
  // Where the passes are CUDA kernels: a block that claims tile t prefetches into L2 the keys (and
  // values) of tile t + this many, which a block claims about that many claims later (0: off). In
  // the order of cuda_from_n; GPUSORT_CUDA_PREFETCH=<tiles> overrides it for every key class.
  std::array<uint32_t, 4> cuda_prefetch_tiles{};
  // Where the passes are CUDA kernels: 1 where each block sorts the tile its id names instead of
  // claiming the next one from the pass's counter (a block that starts late is recounted by its
  // successors' fallback, as with tiles_by_id). In the order of cuda_from_n.
  std::array<uint32_t, 4> cuda_tiles_by_id{};
  // Where the passes are CUDA kernels: the tile shape (CudaPassShape::variant, a row of
  // cuda::kCudaPassShapes of the key class) each key class takes; null: the class's first row. In
  // the order of cuda_from_n.
  std::array<const char*, 4> cuda_variants{};
};

// The fewest keys any family's row sorts with the CUDA pass by itself (the least non-zero
// OnesweepTuning::cuda_from_n): a Context for smaller sorts alone can leave it off
// (ContextOptions::kernels).
uint64_t smallest_cuda_n();

// Onesweep's key class of a sort of key_words-wide keys with value_words-wide values.
inline const OnesweepKeyTuning& onesweep_keys(const OnesweepTuning& t, uint32_t key_words,
                                              uint32_t value_words) {
  if (key_words == 2) return t.keys64;
  return value_words ? t.keys32_values : t.keys32;
}

// A tile as it runs on the device: at least one subgroup wide (the narrow families' 64 x 8 on a
// device whose subgroups may be wider).
inline OnesweepTile onesweep_tile_on(const DeviceInfo& device, OnesweepTile tile) {
  tile.workgroup = std::max(tile.workgroup, device.max_subgroup_size);
  return tile;
}
// The tile that sorts a recording of max_n keys: the first band (ascending) that holds max_n,
// else the large tile (make_onesweep's size switches).
inline OnesweepTile onesweep_tile_for(const DeviceInfo& device, const OnesweepKeyTuning& keys,
                                      uint64_t max_n) {
  for (const OnesweepBand& band : keys.bands)
    if (band.max_n != 0 && max_n <= band.max_n) return onesweep_tile_on(device, band.tile);
  return onesweep_tile_on(device, keys.large);
}

// The device family's row (tuning.cpp).
const OnesweepTuning& onesweep_tuning(DeviceFamily family);
inline const OnesweepTuning& onesweep_tuning(const DeviceInfo& device) {
  return onesweep_tuning(device_family(device));
}

}  // namespace gpusort
