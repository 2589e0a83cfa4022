// The segmented sort's tuning table (SegmentedTuning, tuning.hpp): one row per device
// family, each value with one line of provenance. Measured on an NVIDIA H100 80GB HBM3 (driver
// 580.159.04), 2026-11-23/24, with `segmented_timing` (dev/, GPU timestamps, medians; its
// SEGMENTED_MIN_TILE / SEGMENTED_ITEMS override a value each). What was tried and the full
// results: docs/design/segmented-sort.md.
#include "algorithms/segmented_sort/tuning.hpp"

namespace gpusort {

namespace {

constexpr SegmentedTuning h100{
    // not measured: the smallest class, 8-slot blocks
    .log2_first_class = 3,
    // SEGMENTED_MIN_TILE sweep 0d2e2e5: u32 2^10 x 2^14 0.622 -> 0.566 ms, 2^16 x 256 -15 %
    .log2_min_tile = 8,
    // SEGMENTED_ITEMS sweep 0d2e2e5: 4 keys a thread; 8 slower with values
    .log2_items = 2,
    // `bench/run_segmented_h100.sh` 030bf55: u32 2^10 x 2^14 1.702 -> 1.250 ms; >8 not measured
    .log2_max_blocks = 3,
    // not measured: default
    .merge_workgroup = 256,
    // segment_bucket 79c9c90, ms u32 / u32+u32: 512 x 8 0.265 / 0.399, 256 x 8 0.268 / 0.500
    .bucket_workgroup = 512,
    // not measured: default
    .bucket_max_subgroups = 16,
    // 79c9c90 (as .bucket_workgroup): 512 x 4 0.299 / 0.500 ms
    .bucket_keys_per_thread = 8,
};

}  // namespace

const SegmentedTuning& segmented_tuning(DeviceFamily family) {
  switch (family) {
    case DeviceFamily::nvidia:
    case DeviceFamily::nvidia_h200:
    case DeviceFamily::nvidia_integrated:
      return h100;
    // Not measured on these families: the H100's class shape and workgroups.
    case DeviceFamily::amd:
    case DeviceFamily::wide_subgroups:
    case DeviceFamily::intel:
    case DeviceFamily::cpu:
    case DeviceFamily::narrow_subgroups:
      return h100;
  }
  return h100;
}

}  // namespace gpusort
