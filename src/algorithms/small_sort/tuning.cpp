// The small-array sort's tuning table (SmallSortTuning, tuning.hpp): one row per device
// family, each band with one line of provenance. Measured on an NVIDIA H100 80GB HBM3 (driver
// 580.159.04), 2026-11-23/24: the shapes with `small_sort_timing 25 8 shapes [19]` (dev/small_sort,
// u32, GPU timestamps, medians), then `gpusort bench --seed 2026 --keys u32,u32+u32,u64,f32
// --min-log2 10 --max-log2 20 --step 1 --algorithms automatic` against the previous code, twice.
// What was tried and the full results: docs/design/small-sort.md.
#include "algorithms/small_sort/tuning.hpp"

namespace gpusort {

namespace {

// Columns: log2_max_n, bare_keys_only, items, single_workgroup, tile_workgroup, merge_workgroup,
// subgroup_sort, merge_tiles_per_round, merge_bucket_bits, merge_lanes, merge_group_tiles,
// adaptive_buckets, skip_sorted_tiles.
constexpr SmallSortTuning h100{
    .bands = {{
        // bare keys, one dispatch of 1024 x 2: 978dfbc 9.57 us, tiles and a merge 11.65
        {11, true, 2, 1024, 256, 256, true, 4, 0, 8, 0, false, false},
        // tiles of 512, 8 merge lanes: 22b422e 2^14 15.10 -> 12.90 us; bench vs 953b0f0 -5-20 %
        {14, false, 2, 512, 256, 256, true, 4, 0, 8, 0, false, false},
        // tiles of 1024, 4 lanes: 22b422e 2^15 18.21 -> 15.90 us
        {15, false, 2, 512, 512, 256, true, 4, 0, 4, 0, false, false},
        // two merge levels, groups of 8 tiles: c5b4fed, 9c7735b 2^16 22.30 -> 20.13 us
        {16, false, 2, 512, 512, 256, true, 4, 0, 4, 8, false, false},
        // adaptive buckets, sorted tiles skipped: a2bd5e6 all-equal 27.1 -> 24.3 us; 2^18 slow
        {17, false, 2, 512, 512, 256, true, 4, 0, 4, 8, true, true},
    }}};

}  // namespace

const SmallSortTuning& small_sort_tuning(DeviceFamily family) {
  switch (family) {
    case DeviceFamily::nvidia:
    case DeviceFamily::nvidia_h200:
    case DeviceFamily::nvidia_integrated:
      return h100;
    // Not measured on these families: the H100's bands.
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
