// NVIDIA's tables. Every measured value was chosen on an NVIDIA H100 80GB HBM3 (driver 580.159.04,
// 132 SMs, subgroups of 32, 48 KiB of shared memory per workgroup), 2026-11-23 and 2026-11-24,
// unless its row says otherwise; the commands, their full results and what else was tried are in
// the design notes (docs/design/onesweep.md, small-sort.md, segmented-sort.md, host-path.md).
// Commits name the code measured. Single-shape times come from the development tools in dev/
// (`onesweep_timing <u32|u64> <value bytes> <log2 n> [workgroup keys_per_thread]`,
// `small_sort_timing`, `segmented_timing`: GPU timestamps, medians); `gpusort bench` rows compare
// base and new code alternately, twice (docs/PERFORMANCE.md, "Protocol").
#include "tuning/tuning.hpp"

namespace gpusort {

constexpr Tuning nvidia_tuning{
    .family = DeviceFamily::nvidia,
    .onesweep =
        {
            // 32-bit keys alone.
            .keys32 =
                {
                    // Per-subgroup counters inside the exchange array, the 8 KiB saved spent on
                    // 20 keys per invocation (8ba3db6): `onesweep_timing u32 0 24` 512 x 20 0.726
                    // -> 0.692 ms, 2^28 10.51 -> 9.80 ms (docs/design/onesweep.md, "The tile").
                    .large = {512, 20},
                    .bands =
                        {{// Up to 2^18: 86 tiles for 132 SMs where 512 x 20 gives 26 (456f085):
                          // `onesweep_timing u32 0 18 <shape>` 0.076 -> 0.059 ms, CUB 0.072.
                          {uint64_t(1) << 18, {384, 8}},
                          // Up to 2^22, two workgroups per SM (942b462): `gpusort bench --seed
                          // 2026 --keys u32,u32+u32,u64,f32 --min-log2 18 --max-log2 23 --step 1
                          // --algorithms onesweep,automatic` against 2a4e068, twice: 2^19 -14 %,
                          // 2^21 -5 %, 2^22 -3.4 %; at 2^23 0.361 -> 0.502 ms, so not beyond.
                          {uint64_t(1) << 22, {512, 8}}}},
                    .counters_in_exchange = true,
                    // 032bc15, then `ONESWEEP_FULL_TILE_COPY=1 onesweep_timing u32 0 <log2 n>`
                    // twice each with tiles by id: 2^22 0.215 -> 0.233, 2^24 0.655 -> 0.679 ms
                    // (slower); -2 % only at 2^28. Off.
                    .full_tile_copy = false,
                    // 685fa57: `onesweep_timing u32 0 28` 10.78 -> 10.60 ms.
                    .guess_tile = true,
                    // 665e941: `gpusort bench --seed 2026 --keys u32,u32+u32,u64,f32 --min-log2 18
                    // --max-log2 28 --step 2 --algorithms onesweep,automatic` against ddf0845,
                    // twice after 30 s of warm-up: u32 2^24 -3 %, 2^26 -5 %, 2^28 9.06 -> 8.55 ms;
                    // f32 -2.5 / -4.5 / -5 %; 2^18-2^22 unchanged. The prefetch is most of the
                    // gain (without it 0.650 / 8.825 ms at 2^24 / 2^28).
                    .prefetch_next = true,
                    .persistent_groups_per_unit = 1,
                },
            // 32-bit keys with values.
            .keys32_values =
                {
                    // Tile sweep (5744ebd, 0f09a32; `onesweep_timing u32 4 24 <shape>`): pairs
                    // best at 512 x 16; counters inside the exchange array no better for them.
                    .large = {512, 16},
                    .bands = {{// 456f085: `onesweep_timing u32 4 18 <shape>` 0.077 -> 0.062 ms.
                               {uint64_t(1) << 18, {384, 8}},
                               // 942b462 (the bench above): pairs -10 to -11 % at 2^19, unchanged
                               // beyond, and 512 x 8 from 2^18 cost them 2.8 %.
                               {uint64_t(1) << 19, {512, 8}}}},
                    .counters_in_exchange = false,
                    // 032bc15: `onesweep_timing u32 4 24` 0.907 -> 0.877 ms.
                    .full_tile_copy = true,
                    // 685fa57: `onesweep_timing u32 4 28` 12.71 -> 12.22 ms.
                    .guess_tile = true,
                    // c9224e2 (experiment, `onesweep_timing u32 4 <log2 n>`, twice): pairs +2.1 %
                    // with the prefetch; 665e941's bench: persistent pairs +2 to +3 % at 2^24.
                    .prefetch_next = false,
                    .persistent_groups_per_unit = 0,
                },
            // 64-bit keys, with or without values.
            .keys64 =
                {
                    // Tile sweep (5744ebd, 0f09a32; `onesweep_timing u64 0 24 <shape>`): best at
                    // 512 x 16.
                    .large = {512, 16},
                    .bands = {{// 456f085: `onesweep_timing u64 0 18 <shape>` 0.139 -> 0.106 ms.
                               {uint64_t(1) << 18, {384, 8}},
                               // 942b462 (the bench above): u64 -10 to -11 % at 2^19.
                               {uint64_t(1) << 19, {512, 8}}}},
                    .counters_in_exchange = false,
                    // 032bc15: `onesweep_timing u64 0 24` 1.839 -> 1.672 ms.
                    .full_tile_copy = true,
                    // 685fa57: `onesweep_timing u64 0 28` unchanged to -1 %.
                    .guess_tile = false,
                    // c9224e2 / 665e941 (as above): persistent 64-bit keys +2 to +3 % at 2^24,
                    // -1.4 to -1.7 % at 2^28. Off.
                    .prefetch_next = false,
                    .persistent_groups_per_unit = 0,
                },
            // 622b218: `onesweep_timing u32 0 24` 0.669 -> 0.650 ms, 2^28 9.25 -> 8.91 ms, pairs
            // -3 %, u64 -3 to -4 %, f32 -4 to -5 % (NVIDIA starts workgroups in id order).
            .tiles_by_id = true,
            // 665e941 (the bench above): with three tiles per workgroup (2^22) persistent
            // workgroups were 4 % slower; from 8 they gain.
            .persistent_min_rounds = 8,
            // 53df214 against 942b462: `gpusort bench --seed 2026 --keys u32,u32+u32,u64,f32
            // --min-log2 18 --max-log2 22 --step 1 --algorithms onesweep,automatic`, twice after
            // 30 s of warm-up: 2^18 -3 to -5 %, 2^19 -1 to -3 %; 2 or 4 per SM no better.
            .histogram_groups_per_unit = 1,
            // `onesweep_timing u32 0 24` per window (docs/design/onesweep.md, "Look-back"): 2 / 4
            // / 8 / 16 entries 0.789 / 0.768 / 0.755 / 0.756 ms; with tiles by id (2^24 / 2^28)
            // 1 entry 0.698 / 9.82, 4 entries 0.659 / 9.15, 16 entries 0.651 / 8.98 ms.
            .lookback_window = 16,
            // The passes as CUDA kernels through VK_NVX_binary_import (the tile shapes per key
            // class: src/algorithms/onesweep/cuda/cuda_kernels.hpp) from where they beat this
            // SPIR-V pass: `gpusort bench --algorithms onesweep --kernels spirv,cuda --keys
            // u32,u32+u32,u64,u64+u32,f32 --min-log2 16 --max-log2 28 --step 2` at 599ff3b on an
            // NVIDIA H100 80GB HBM3, driver 580.159.04, 2026-11-26, ms SPIR-V / CUDA:
            //   u32      2^20 0.0801 / 0.0808, 2^22 0.197 / 0.155, 2^28 8.55 / 6.89 (f32 alike)
            //   u32+u32  2^22 0.236 / 0.238,   2^24 0.792 / 0.756, 2^28 11.49 / 11.20
            //   u64      2^20 0.154 / 0.161,   2^22 0.448 / 0.403, 2^28 21.76 / 20.14
            //   u64+u32  2^22 0.552 / 0.569,   2^24 1.837 / 1.935, 2^26 6.87 / 7.30: not by itself
            // Every CUDA pass was slower than SPIR-V at 2^18 (the SPIR-V bands' small tiles).
            // Pairs again with the CUDA histogram, tiles and plan of 20e5436: `gpusort bench
            // --seed 20261127 --algorithms onesweep --kernels spirv,cuda --keys u32+u32,u64+u32
            // --min-log2 20 --max-log2 28 --step 2` at 6924e3a on an NVIDIA H200, driver
            // 580.159.04, 2026-11-27, ms SPIR-V / CUDA:
            //   u32+u32  2^20 0.0834 / 0.0929, 2^22 0.228 / 0.200, 2^24 0.773 / 0.601
            //   u64+u32  2^20 0.170 / 0.163,   2^22 0.516 / 0.498, 2^28 25.84 / 25.51
            // (u64+u32 on the H200: nvidia_h200_tuning below.) 32-bit keys alone from 2^19 since
            // the key order is compiled into the pass (446f441): the same command with `--keys
            // u32,f32,u64,u32+u32,u64+u32 --min-log2 18 --max-log2 22 --step 1` at b288d66,
            // 2026-11-27, ms SPIR-V / CUDA, on the H100: u32 2^18 0.0553 / 0.0561, 2^19 0.0623 /
            // 0.0601, 2^20 0.0810 / 0.0708, f32 2^19 0.0639 / 0.0605, 2^20 0.0816 / 0.0727 (u32+u32
            // 2^20 0.0860 / 0.0948, u64 0.1530 / 0.1567: above 2^20 still; u64+u32 0.1759 /
            // 0.1647); on an H200: u32 2^18 0.0546 / 0.0540, 2^19 0.0610 / 0.0580, 2^20 0.0781 /
            // 0.0689, f32 2^19 0.0622 / 0.0581.
            .cuda_from_n = {uint64_t(1) << 19, (uint64_t(1) << 20) + 1, (uint64_t(1) << 20) + 1,
                            uint64_t(1) << 20},
            // The histogram and plan as CUDA kernels too where the passes are, one shared
            // histogram per block: `ONESWEEP_PHASES=1 onesweep_timing u32 0 28` (dev/) with
            // GPUSORT_CUDA_HISTOGRAM=0 / 1 / 2 at 7c1b67b on an NVIDIA H100 80GB HBM3, driver
            // 580.159.04, 2026-11-26: histogram + plan 0.551 / 0.490 / 0.502 ms (u64 2^26: 0.301 /
            // 0.261 / 0.260). Prefetch ahead (cuda_prefetch_tiles, GPUSORT_CUDA_PREFETCH) did not
            // pay and stays off: u32 passes 1.534 ms at D = 0, 1.522 at 96, 1.541 at 264, 1.603 at
            // 792; u32+u32 2.50 ms at 0, 3.16 at 264; u64 2^26 0.55 at 0, 0.69 at 264.
            .cuda_histogram = 1,
            // Keys alone and u64+u32: each block sorts the tile its id names, no claim from the
            // pass's counter. `ONESWEEP_CLAIM_BY_ID=0|1 ONESWEEP_PHASES=1 onesweep_timing
            // <type> 0 28` at 20e5436 on an H100 80GB HBM3, 2026-11-26, ms counter / by id: u32
            // 6.638 / 6.532, f32 6.671 / 6.566, u64 18.384 / 18.061 (u32 2^24 0.475 / 0.468); with
            // values at 6bccd72 u32+u32 lost (10.64 / 10.98) and u64+u32 gained (27.03 / 26.59,
            // docs/design/onesweep.md). On an NVIDIA H200 at b0d0a04 (`... onesweep_timing <type>
            // 4 28`, 2026-11-27) u64+u32 22.306 / 21.717 and u32+u32 8.614 / 8.454: u64+u32 gains
            // on both GPUs, u32+u32 only on the H200, so it stays with the counter here (the
            // H200's table below takes it by id). Again at eef0274 (`gpusort bench --seed 20261128
            // --algorithms automatic --keys u32+u32 --min-log2 24 --max-log2 28 --step 2`, twice
            // each in one call on an H100 80GB HBM3), ms counter / by id: 2^24 0.6782 0.6803 /
            // 0.6755 0.6737, 2^26 2.5696 2.5671 / 2.6249 2.6346, 2^28 10.0604 10.0607 / 10.3514
            // 10.3472 (+2.4 to +2.9 % above 2^24).
            .cuda_tiles_by_id = {1, 0, 1, 1},
            // The tile shapes (src/algorithms/onesweep/cuda/cuda_kernels.hpp), from
            // experiments/nvx_onesweep on the H100. u64+u32 in one block of 1024 per SM: the
            // H200's two blocks of 384 (nvidia_h200_tuning) measured slower here, `gpusort bench
            // --seed 20261127 --algorithms automatic --keys u64+u32 --min-log2 20 --max-log2 28
            // --step 2` with 60980de (1024x12seg1) / ce37e74 (384x18s3pk above 2^20) beside
            // `cub_baseline` in one call on an H100 80GB HBM3, 2026-11-27, CUB ms / ours: 2^22
            // 0.954 / 0.989, 2^24 0.892 / 0.837, 2^26 0.922 / 0.812, 2^28 0.922 / 0.812; at 2^20
            // 1024x12seg1 1.117 against SPIR-V's 1.075.
            .cuda_variants = {"512x15seg", "512x15seg", "384x18s3pk", "1024x12seg1"},
        },
    // docs/design/small-sort.md: `small_sort_timing 25 8 shapes [19]` (dev/small_sort) for the
    // shapes, then `gpusort bench --seed 2026 --keys u32,u32+u32,u64,f32 --min-log2 10 --max-log2
    // 20
    // --step 1 --algorithms automatic` against the previous code, twice.
    .small_sort =
        {
            .bands =
                {{// Keys without values: 2048 in one dispatch of 1024 x 2, 9.57 us against 11.65
                  // for tiles of 512 and a merge (`small_sort_timing`, u32, 978dfbc).
                  {.log2_max_n = 11,
                   .bare_keys_only = true,
                   .items = 2,
                   .single_workgroup = 1024,
                   .tile_workgroup = 256,
                   .merge_workgroup = 256,
                   .subgroup_sort = true,
                   .merge_tiles_per_round = 4,
                   .merge_bucket_bits = 0,
                   .merge_lanes = 8,
                   .merge_group_tiles = 0,
                   .adaptive_buckets = false,
                   .skip_sorted_tiles = false},
                  // One dispatch of 512 x 2 to 1024 keys (with values: 12.80 us against 12.90 for
                  // tiles, 978dfbc); tiles of 512 keys, each key's merge searches over 8
                  // invocations, to 2^14: 2^14 15.10 -> 12.90 us (22b422e; the bench 5-20 % faster
                  // at 2^11-2^16 against 953b0f0).
                  {.log2_max_n = 14,
                   .bare_keys_only = false,
                   .items = 2,
                   .single_workgroup = 512,
                   .tile_workgroup = 256,
                   .merge_workgroup = 256,
                   .subgroup_sort = true,
                   .merge_tiles_per_round = 4,
                   .merge_bucket_bits = 0,
                   .merge_lanes = 8,
                   .merge_group_tiles = 0,
                   .adaptive_buckets = false,
                   .skip_sorted_tiles = false},
                  // Tiles of 1024, 4 lanes, to 2^15: 18.21 -> 15.90 us (22b422e).
                  {.log2_max_n = 15,
                   .bare_keys_only = false,
                   .items = 2,
                   .single_workgroup = 512,
                   .tile_workgroup = 512,
                   .merge_workgroup = 256,
                   .subgroup_sort = true,
                   .merge_tiles_per_round = 4,
                   .merge_bucket_bits = 0,
                   .merge_lanes = 4,
                   .merge_group_tiles = 0,
                   .adaptive_buckets = false,
                   .skip_sorted_tiles = false},
                  // Two merge levels, groups of 8 tiles of 1024, to 2^16: 22.30 -> 20.13 us
                  // (c5b4fed, 9c7735b; the bench 9-26 % faster at 2^11-2^16 against 953b0f0).
                  {.log2_max_n = 16,
                   .bare_keys_only = false,
                   .items = 2,
                   .single_workgroup = 512,
                   .tile_workgroup = 512,
                   .merge_workgroup = 256,
                   .subgroup_sort = true,
                   .merge_tiles_per_round = 4,
                   .merge_bucket_bits = 0,
                   .merge_lanes = 4,
                   .merge_group_tiles = 8,
                   .adaptive_buckets = false,
                   .skip_sorted_tiles = false},
                  // To 2^17 (Onesweep 62.08 us, two levels 27.04), with merge buckets that follow
                  // the keys (a2bd5e6) and tiles in order skipping their network: all-equal keys
                  // 27.1 -> 24.3 us (1.01x Onesweep). Not to 2^18: all-equal keys 1.66x
                  // Onesweep's time, low-bit keys 1.23x, against the 1.1x allowed.
                  {.log2_max_n = 17,
                   .bare_keys_only = false,
                   .items = 2,
                   .single_workgroup = 512,
                   .tile_workgroup = 512,
                   .merge_workgroup = 256,
                   .subgroup_sort = true,
                   .merge_tiles_per_round = 4,
                   .merge_bucket_bits = 0,
                   .merge_lanes = 4,
                   .merge_group_tiles = 8,
                   .adaptive_buckets = true,
                   .skip_sorted_tiles = true}}},
        },
    .segmented =
        {
            .log2_first_class =
                3,  // not measured: the smallest class, 8-slot blocks
                    // `SEGMENTED_MIN_TILE` / `SEGMENTED_ITEMS` sweep of `segmented_timing`
                    // (0d2e2e5, docs/design/segmented-sort.md): u32 2^10 x 2^14 0.622 -> 0.566 ms,
                    // u32 2^16 x 256 0.336 -> 0.284 ms; 8 keys per invocation slower with values.
            .log2_min_tile = 8,
            .log2_items = 2,
            // 030bf55 (`bench/run_segmented_h100.sh`): medium classes of 2-8 blocks, u32
            // 2^10 x 2^14 1.702 -> 1.250 ms; not measured beyond 8 blocks.
            .log2_max_blocks = 3,
            .merge_workgroup =
                256,  // not measured: default
                      // segment_bucket's scatter (79c9c90), ms u32 / u32+u32: 512 x 8 0.265 / 0.399
                      // against 256 x 8 0.268 / 0.500 and 512 x 4 0.299 / 0.500.
            .bucket_workgroup = 512,
            .bucket_max_subgroups = 16,  // not measured: default
            .bucket_keys_per_thread = 8,
        },
    // Not measured: default (docs/design/partition-sort.md: the partition sort was slower than
    // Onesweep at every size measured on the H100 and H200, 2026-11-23, so no crossover was
    // chosen; 2^14 is the segmented sort's capacity per workgroup).
    .partition = {.max_bucket = 1u << 14},
    // Staging copies by a compute shader (983e368, docs/design/host-path.md,
    // `dev/host_path/e2e_call.sh` DMA against shader copies): 2^28 u32 host to host 73.79 ms (sort
    // 20.32) -> 60.39 ms (sort 9.69); every size from 2^24 as fast or faster.
    .host = {.shader_copies = true},
};

// The H200: NVIDIA's table but for u64+u32, whose kernel runs two blocks of 384 per SM (384x18s3pk)
// above 2^20 keys. experiments/nvx_onesweep/README.md "On the H200": 0.940-0.955 of CUB at
// 2^24-2^28 against 1024x12seg1's 0.819-0.849; in the library (`gpusort bench --seed 20261127
// --algorithms automatic --keys u64+u32 --min-log2 18 --max-log2 28 --step 2`, 60980de / b0d0a04,
// one call, 2026-11-27), ms: 2^20 0.165 / 0.178 (SPIR-V, as the others, at 2^20), 2^22 0.499 /
// 0.472, 2^24 1.709 / 1.488, 2^28 25.49 / 22.32. Tiles by id, as on the H100: 22.306 / 21.717 ms
// from the counter / by id at 2^28 (b0d0a04).
// And u32 pairs by id too (on the H100 they lost 3.2 %, above): `gpusort bench --seed 20261128
// --algorithms automatic --keys u32+u32 --min-log2 22 --max-log2 28 --step 2` with ca4ae6f's table
// / this one, three times each in one call on an NVIDIA H200 (driver 580.159.04, 2026-11-27), ms:
// 2^22 0.1951 0.1942 0.1950 / 0.1855 0.1847 0.1839 (-5.0 %), 2^24 0.5895 0.5879 0.5882 / 0.5740
// 0.5741 0.5749 (-2.4 %), 2^26 2.1313 2.1246 2.1266 / 2.1140 2.1150 2.1163 (-0.5 %), 2^28 8.2820
// 8.2834 8.2823 / 8.2245 8.2144 8.2181 (-0.7 %); CUB (`cub_baseline`, same seed and call) 0.2086 /
// 0.5604 / 1.9276 / 7.4627.
constexpr Tuning nvidia_h200_tuning = [] {
  Tuning t = nvidia_tuning;
  t.family = DeviceFamily::nvidia_h200;
  t.onesweep.cuda_from_n[3] = (uint64_t(1) << 20) + 1;
  t.onesweep.cuda_variants[3] = "384x18s3pk";
  t.onesweep.cuda_tiles_by_id = {1, 1, 1, 1};
  return t;
}();

// NVIDIA's integrated GPUs (Tegra): not measured. Onesweep as on the discrete GPUs (NVIDIA
// starts workgroups in id order), the copies by the DMA engine (the shader copies were measured
// across PCIe only).
constexpr Tuning nvidia_integrated_tuning = [] {
  Tuning t = nvidia_tuning;
  t.family = DeviceFamily::nvidia_integrated;
  t.host.shader_copies = false;
  return t;
}();

}  // namespace gpusort
