// The partition sort's tuning table: its row type, one row per device family (tuning.cpp).
#pragma once

#include <cstdint>

#include "tuning/tuning.hpp"

namespace gpusort {

// The partition sort (src/algorithms/partition_sort): the largest bucket it sorts with the
// segmented sort rather than finishing with Onesweep's passes.
struct PartitionTuning {
  uint32_t max_bucket = 0;
};

const PartitionTuning& partition_tuning(DeviceFamily family);
inline const PartitionTuning& partition_tuning(const DeviceInfo& device) {
  return partition_tuning(device_family(device));
}

}  // namespace gpusort
