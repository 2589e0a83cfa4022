// The generic tables, by subgroup width, for devices of no measured family. Not measured: the
// H100's values where they carry over (src/tuning/nvidia.cpp), small tiles for narrow subgroups.
// In a header because the families that have no table of their own yet (AMD, Intel, the CPU
// drivers) start from these: src/tuning/<family>.cpp copies one and sets its family.
#pragma once

#include "tuning/tuning.hpp"

namespace gpusort {

inline constexpr Tuning wide_subgroups_table{
    .family = DeviceFamily::wide_subgroups,
    // Not measured on this family: the H100's tile shapes and switches (src/tuning/nvidia.cpp,
    // which cites each), for the subgroups of 32 and more they were measured with.
    .onesweep =
        {
            .keys32 = {.large = {512, 20},
                       .bands = {{{uint64_t(1) << 18, {384, 8}}, {uint64_t(1) << 22, {512, 8}}}},
                       .counters_in_exchange = true,
                       .full_tile_copy = false,
                       .guess_tile = true,
                       .prefetch_next = true,
                       // Not measured: one workgroup per tile.
                       .persistent_groups_per_unit = 0},
            .keys32_values = {.large = {512, 16},
                              .bands = {{{uint64_t(1) << 18, {384, 8}},
                                         {uint64_t(1) << 19, {512, 8}}}},
                              .counters_in_exchange = false,
                              .full_tile_copy = true,
                              .guess_tile = true,
                              .prefetch_next = false,
                              .persistent_groups_per_unit = 0},
            .keys64 = {.large = {512, 16},
                       .bands = {{{uint64_t(1) << 18, {384, 8}}, {uint64_t(1) << 19, {512, 8}}}},
                       .counters_in_exchange = false,
                       .full_tile_copy = true,
                       .guess_tile = false,
                       .prefetch_next = false,
                       .persistent_groups_per_unit = 0},
            // Tiles are claimed from the pass's counter: workgroups are not known to start in id
            // order (where they do not, the look-back's fallback must recount).
            .tiles_by_id = false,
            .persistent_min_rounds = 8,
            .histogram_groups_per_unit = 1,
            .lookback_window = 16,
        },
    // Not measured on this family: the H100's bands (src/tuning/nvidia.cpp). Columns: log2_max_n,
    // bare_keys_only, items, single_workgroup, tile_workgroup, merge_workgroup, subgroup_sort,
    // merge_tiles_per_round, merge_bucket_bits, merge_lanes, merge_group_tiles,
    // adaptive_buckets, skip_sorted_tiles.
    .small_sort = {.bands = {{{11, true, 2, 1024, 256, 256, true, 4, 0, 8, 0, false, false},
                              {14, false, 2, 512, 256, 256, true, 4, 0, 8, 0, false, false},
                              {15, false, 2, 512, 512, 256, true, 4, 0, 4, 0, false, false},
                              {16, false, 2, 512, 512, 256, true, 4, 0, 4, 8, false, false},
                              {17, false, 2, 512, 512, 256, true, 4, 0, 4, 8, true, true}}}},
    // Not measured on this family: the H100's class shape and workgroups (src/tuning/nvidia.cpp).
    .segmented = {.log2_first_class = 3,
                  .log2_min_tile = 8,
                  .log2_items = 2,
                  .log2_max_blocks = 3,
                  .merge_workgroup = 256,
                  .bucket_workgroup = 512,
                  .bucket_max_subgroups = 16,
                  .bucket_keys_per_thread = 8},
    // Not measured: default (the segmented sort's capacity per workgroup).
    .partition = {.max_bucket = 1u << 14},
    // Not measured: the DMA engine (shader copies were measured on NVIDIA discrete GPUs only).
    .host = {.shader_copies = false},
};

inline constexpr Tuning narrow_subgroups_table{
    .family = DeviceFamily::narrow_subgroups,
    // Narrow subgroups: small tiles of 64 x 8 and no size bands (onesweep_pass's per-subgroup
    // counters cost 1 KiB a subgroup; the workgroup is widened to one subgroup where that is
    // more). The switches by key class as on the H100 (src/tuning/nvidia.cpp). Not measured.
    .onesweep =
        {
            .keys32 = {.large = {64, 8},
                       .bands = {},
                       .counters_in_exchange = true,
                       .full_tile_copy = false,
                       .guess_tile = true,
                       .prefetch_next = true,
                       .persistent_groups_per_unit = 0},
            .keys32_values = {.large = {64, 8},
                              .bands = {},
                              .counters_in_exchange = false,
                              .full_tile_copy = true,
                              .guess_tile = true,
                              .prefetch_next = false,
                              .persistent_groups_per_unit = 0},
            .keys64 = {.large = {64, 8},
                       .bands = {},
                       .counters_in_exchange = false,
                       .full_tile_copy = true,
                       .guess_tile = false,
                       .prefetch_next = false,
                       .persistent_groups_per_unit = 0},
            // Tiles are claimed from the pass's counter: lavapipe does not start workgroups in id
            // order (with tiles by id its look-back fell back 28-354 times per sort: correct,
            // slower; docs/design/onesweep.md).
            .tiles_by_id = false,
            .persistent_min_rounds = 8,
            .histogram_groups_per_unit = 1,
            .lookback_window = 16,
        },
    // Not measured on this family: the H100's bands (src/tuning/nvidia.cpp). Columns: log2_max_n,
    // bare_keys_only, items, single_workgroup, tile_workgroup, merge_workgroup, subgroup_sort,
    // merge_tiles_per_round, merge_bucket_bits, merge_lanes, merge_group_tiles,
    // adaptive_buckets, skip_sorted_tiles.
    .small_sort = {.bands = {{{11, true, 2, 1024, 256, 256, true, 4, 0, 8, 0, false, false},
                              {14, false, 2, 512, 256, 256, true, 4, 0, 8, 0, false, false},
                              {15, false, 2, 512, 512, 256, true, 4, 0, 4, 0, false, false},
                              {16, false, 2, 512, 512, 256, true, 4, 0, 4, 8, false, false},
                              {17, false, 2, 512, 512, 256, true, 4, 0, 4, 8, true, true}}}},
    // Not measured on this family: the H100's class shape and workgroups (src/tuning/nvidia.cpp).
    .segmented = {.log2_first_class = 3,
                  .log2_min_tile = 8,
                  .log2_items = 2,
                  .log2_max_blocks = 3,
                  .merge_workgroup = 256,
                  .bucket_workgroup = 512,
                  .bucket_max_subgroups = 16,
                  .bucket_keys_per_thread = 8},
    // Not measured: default (the segmented sort's capacity per workgroup).
    .partition = {.max_bucket = 1u << 14},
    // Not measured: the DMA engine (shader copies were measured on NVIDIA discrete GPUs only).
    .host = {.shader_copies = false},
};

// A generic table under another family's name.
constexpr Tuning with_family(Tuning table, DeviceFamily family) {
  table.family = family;
  return table;
}

}  // namespace gpusort
