// The segmented sort's tuning table: its row type, one row per device family (tuning.cpp).
#pragma once

#include <cstdint>

#include "tuning/tuning.hpp"

namespace gpusort {

// The segmented sort's fast path (src/algorithms/segmented_sort): size classes from
// 2^log2_first_class slots; below 2^log2_min_tile slots several segments share a workgroup of
// 2^(log2_min_tile - log2_items) invocations; medium classes of up to 2^log2_max_blocks largest
// tiles; and the workgroups of its merge and bucket steps.
struct SegmentedTuning {
  uint32_t log2_first_class = 0, log2_min_tile = 0, log2_items = 0, log2_max_blocks = 0;
  uint32_t merge_workgroup = 0;
  uint32_t bucket_workgroup = 0, bucket_max_subgroups = 0, bucket_keys_per_thread = 0;
};

const SegmentedTuning& segmented_tuning(DeviceFamily family);
inline const SegmentedTuning& segmented_tuning(const DeviceInfo& device) {
  return segmented_tuning(device_family(device));
}

}  // namespace gpusort
