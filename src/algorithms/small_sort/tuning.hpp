// The small-array sort's tuning table: its row type, one row per device family (tuning.cpp).
#pragma once

#include <array>
#include <cstdint>

#include "tuning/tuning.hpp"

namespace gpusort {

// One size band of the small-array sort (SmallSortShape's fields, src/algorithms/small_sort): it
// takes n up to 2^log2_max_n (or its shape's own limit on the device, if lower).
struct SmallSortBandTuning {
  uint32_t log2_max_n = 0;      // 0: the row is unused
  bool bare_keys_only = false;  // a band for keys without values compared whole (sorts_bare_keys)
  uint32_t items = 0, single_workgroup = 0, tile_workgroup = 0, merge_workgroup = 0;
  bool subgroup_sort = false;
  uint32_t merge_tiles_per_round = 0, merge_bucket_bits = 0, merge_lanes = 0, merge_group_tiles = 0;
  bool adaptive_buckets = false, skip_sorted_tiles = false;
};
struct SmallSortTuning {
  std::array<SmallSortBandTuning, 6> bands;  // ascending log2_max_n; automatic's small sizes
};

const SmallSortTuning& small_sort_tuning(DeviceFamily family);
inline const SmallSortTuning& small_sort_tuning(const DeviceInfo& device) {
  return small_sort_tuning(device_family(device));
}

}  // namespace gpusort
