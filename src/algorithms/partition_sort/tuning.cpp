// The partition sort's tuning table (PartitionTuning, tuning.hpp): one row per device
// family. Nothing measured chose it: the partition sort was slower than Onesweep at every size
// measured on the H100 and H200 (docs/design/partition-sort.md), so no crossover was chosen.
#include "algorithms/partition_sort/tuning.hpp"

namespace gpusort {

namespace {

constexpr PartitionTuning every_family{
    // not measured: default, the segmented sort's capacity per workgroup
    .max_bucket = 1u << 14,
};

}  // namespace

const PartitionTuning& partition_tuning(DeviceFamily) {
  return every_family;
}

}  // namespace gpusort
