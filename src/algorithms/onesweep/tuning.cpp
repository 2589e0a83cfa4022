// Onesweep's tuning table (OnesweepTuning, tuning.hpp): one row per device family, each
// value with one line of provenance: the command, the commit measured, the result. Where a line
// names no device it is an NVIDIA H100 80GB HBM3 (driver 580.159.04, 132 SMs), 2026-11-23/24;
// "H200" is an NVIDIA H200 on the same driver, 2026-11-27. The commands are the development tools
// in dev/ (`onesweep_timing <u32|u64> <value bytes> <log2 n> [shape]`, GPU timestamps, medians) and
// `gpusort bench` (base and new code alternately, twice: docs/PERFORMANCE.md, "Protocol"); "bench"
// below is `gpusort bench --seed 2026 --keys u32,u32+u32,u64,f32 --algorithms onesweep,automatic`.
// What was tried and the full results: docs/design/onesweep.md, "Tuning".
#include "algorithms/onesweep/tuning.hpp"

namespace gpusort {

namespace {

constexpr uint64_t pow2(uint32_t log2) {
  return uint64_t(1) << log2;
}

// NVIDIA's discrete GPUs (and, not measured, its integrated ones).
constexpr OnesweepTuning nvidia{
    .keys32 =
        {
            // 20 keys, counters in the exchange: `onesweep_timing u32 0 24` 8ba3db6 0.726 -> 0.692
            .large = {512, 20},
            .bands = {{
                // 86 tiles, 132 SMs: `onesweep_timing u32 0 18 <shape>` 456f085 0.076 -> 0.059 ms
                {pow2(18), {384, 8}},
                // bench --min-log2 18 --max-log2 23, 942b462 vs 2a4e068: 2^19 -14 %, 2^23 slower
                {pow2(22), {512, 8}},
            }},
            // 8ba3db6 (as .large): the 8 KiB of counters freed for keys
            .counters_in_exchange = true,
            // `ONESWEEP_FULL_TILE_COPY=1 onesweep_timing u32 0 24` 032bc15: 0.655 -> 0.679 ms, off
            .full_tile_copy = false,
            // `onesweep_timing u32 0 28` 685fa57: 10.78 -> 10.60 ms
            .guess_tile = true,
            // bench --min-log2 18 --max-log2 28 --step 2, 665e941 vs ddf0845: 2^28 9.06 -> 8.55 ms
            .prefetch_next = true,
            // 665e941 (as .prefetch_next): persistent workgroups, one per SM
            .persistent_groups_per_unit = 1,
        },
    .keys32_values =
        {
            // tile sweep `onesweep_timing u32 4 24 <shape>` 5744ebd, 0f09a32: best at 512 x 16
            .large = {512, 16},
            .bands = {{
                // `onesweep_timing u32 4 18 <shape>` 456f085: 0.077 -> 0.062 ms
                {pow2(18), {384, 8}},
                // bench (as keys32's) 942b462: 2^19 -10 %, beyond unchanged
                {pow2(19), {512, 8}},
            }},
            // tile sweep 5744ebd, 0f09a32: no better for pairs
            .counters_in_exchange = false,
            // `onesweep_timing u32 4 24` 032bc15: 0.907 -> 0.877 ms
            .full_tile_copy = true,
            // `onesweep_timing u32 4 28` 685fa57: 12.71 -> 12.22 ms
            .guess_tile = true,
            // `onesweep_timing u32 4 <log2 n>` c9224e2: +2.1 % with the prefetch, off
            .prefetch_next = false,
            // bench 665e941: persistent pairs +2 to +3 % at 2^24, off
            .persistent_groups_per_unit = 0,
        },
    .keys64 =
        {
            // tile sweep `onesweep_timing u64 0 24 <shape>` 5744ebd, 0f09a32: best at 512 x 16
            .large = {512, 16},
            .bands = {{
                // `onesweep_timing u64 0 18 <shape>` 456f085: 0.139 -> 0.106 ms
                {pow2(18), {384, 8}},
                // bench (as keys32's) 942b462: u64 2^19 -10 to -11 %
                {pow2(19), {512, 8}},
            }},
            // tile sweep 5744ebd, 0f09a32: no better for 64-bit keys
            .counters_in_exchange = false,
            // `onesweep_timing u64 0 24` 032bc15: 1.839 -> 1.672 ms
            .full_tile_copy = true,
            // `onesweep_timing u64 0 28` 685fa57: unchanged to -1 %, off
            .guess_tile = false,
            // c9224e2 / bench 665e941: persistent u64 +2 to +3 % at 2^24, off
            .prefetch_next = false,
            // bench 665e941: +2 to +3 % at 2^24, -1.4 to -1.7 % at 2^28, off
            .persistent_groups_per_unit = 0,
        },
    // `onesweep_timing u32 0 24` 622b218: 0.669 -> 0.650 ms (workgroups start in id order)
    .tiles_by_id = true,
    // bench 665e941: persistent at three tiles a workgroup (2^22) +4 %, from 8 they gain
    .persistent_min_rounds = 8,
    // bench --min-log2 18 --max-log2 22, 53df214 vs 942b462: 2^18 -3 to -5 %; 2 or 4 no better
    .histogram_groups_per_unit = 1,
    // `onesweep_timing u32 0 24` per window: 1 / 4 / 16 entries 0.698 / 0.659 / 0.651 ms
    .lookback_window = 16,
    // bench --kernels spirv,cuda 599ff3b, b288d66 (H100, H200), 6924e3a (H200): from the crossover
    .cuda_from_n = {pow2(19), pow2(20) + 1, pow2(20) + 1, pow2(20)},
    // GPUSORT_CUDA_HISTOGRAM=0/1/2 `onesweep_timing u32 0 28` 7c1b67b: 0.551 / 0.490 / 0.502 ms
    .cuda_histogram = 1,
    // GPUSORT_CUDA_PREFETCH=0/96/264/792, 7c1b67b: u32 passes 1.534 / 1.522 / 1.541 / 1.603 ms, off
    .cuda_prefetch_tiles = {0, 0, 0, 0},
    // ONESWEEP_CLAIM_BY_ID=0|1 20e5436, 6bccd72; bench eef0274: u32+u32 +2.4 to +2.9 % by id
    .cuda_tiles_by_id = {1, 0, 1, 1},
    // nvx_onesweep experiment 6183dc2, cdf397c; bench 60980de vs ce37e74: u64+u32 1024x12seg1 here
    .cuda_variants = {"512x15seg", "512x15seg", "384x18s3pk", "1024x12seg1"},
};

// The H200: NVIDIA's row but for u64+u32 (two blocks of 384 per SM) and u32 pairs by id.
constexpr OnesweepTuning nvidia_h200 = [] {
  OnesweepTuning t = nvidia;
  // bench --keys u64+u32 60980de / b0d0a04, H200: SPIR-V at 2^20 (0.165 / 0.178 ms), as the others
  t.cuda_from_n[3] = pow2(20) + 1;
  // nvx_onesweep 60980de, H200: 0.940-0.955 of CUB at 2^24-2^28 against 1024x12seg1's 0.82-0.85
  t.cuda_variants[3] = "384x18s3pk";
  // bench --keys u32+u32 ca4ae6f's row / this one, H200: 2^22 -5.0 %, 2^24 -2.4 %, 2^28 -0.7 %
  t.cuda_tiles_by_id = {1, 1, 1, 1};
  return t;
}();

// Wide subgroups (32 and more) of no measured family: not measured, the H100's tile shapes and
// switches without what depends on NVIDIA (workgroups in id order, the CUDA kernels).
constexpr OnesweepTuning wide = [] {
  OnesweepTuning t = nvidia;
  // not measured: one workgroup per tile
  t.keys32.persistent_groups_per_unit = 0;
  // not measured: workgroups are not known to start in id order (the fallback would recount)
  t.tiles_by_id = false;
  // no CUDA kernels: NVIDIA only
  t.cuda_from_n = {};
  t.cuda_histogram = 0;
  t.cuda_tiles_by_id = {};
  t.cuda_variants = {};
  return t;
}();

// Narrow subgroups (under 32): not measured, small tiles of 64 x 8 without bands (the per-subgroup
// counters cost 1 KiB a subgroup), the switches by key class as on the H100.
constexpr OnesweepTuning narrow = [] {
  OnesweepTuning t = wide;
  // not measured: 64 x 8, widened to one subgroup where that is more (onesweep_tile_on)
  for (OnesweepKeyTuning* keys : {&t.keys32, &t.keys32_values, &t.keys64}) {
    keys->large = {64, 8};
    keys->bands = {};
  }
  // lavapipe starts workgroups out of id order: by id, 28-354 look-back fallbacks a sort
  t.tiles_by_id = false;
  return t;
}();

}  // namespace

const OnesweepTuning& onesweep_tuning(DeviceFamily family) {
  switch (family) {
    case DeviceFamily::nvidia:
    case DeviceFamily::nvidia_integrated:  // not measured: as the discrete GPUs
      return nvidia;
    case DeviceFamily::nvidia_h200:
      return nvidia_h200;
    case DeviceFamily::amd:  // not measured
    case DeviceFamily::wide_subgroups:
      return wide;
    case DeviceFamily::intel:  // not measured
    case DeviceFamily::cpu:    // correctness only
    case DeviceFamily::narrow_subgroups:
      return narrow;
  }
  return narrow;
}

uint64_t smallest_cuda_n() {
  uint64_t smallest = UINT64_MAX;
  for (uint32_t f = 0; f < device_family_count; ++f)
    for (uint64_t from : onesweep_tuning(DeviceFamily(f)).cuda_from_n)
      if (from != 0) smallest = std::min(smallest, from);
  return smallest;
}


}  // namespace gpusort
