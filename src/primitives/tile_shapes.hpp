// Tile shapes shared by the comparison sorts' host code (the sorting networks, the small-array
// sort, the segmented sort): shared-memory sizes of tiles, workgroup limits, the tile
// specialization constants.
#pragma once

#include <algorithm>
#include <bit>

#include "primitives/sort_spec.hpp"
#include "primitives/glsl/tile_constants.h"

namespace gpusort {

// Shared-memory bytes of a tile of `tile` slots: keys and, when values are sorted, origins, each
// region with one padding word per 32 (src/algorithms/networks/tile_sort.glsl).
inline uint64_t tile_shared_bytes(const SortSpec& spec, uint64_t tile) {
  auto region = [](uint64_t words) { return words + words / 32; };
  return 4 * (region(tile * spec.key_words) + (spec.value_words != 0 ? region(tile) : 0));
}

// The most slots a tile of tile_sort.glsl can have in this device's shared memory.
inline uint64_t max_tile_slots(const Context::Impl& ctx, const SortSpec& spec) {
  const uint64_t slot_words = spec.key_words + (spec.value_words ? 1 : 0);
  uint64_t slots = ctx.info.shared_memory_bytes / 4 * 32 / 33 / slot_words + 2;
  while (slots > 0 && tile_shared_bytes(spec, slots) > ctx.info.shared_memory_bytes) --slots;
  return slots;
}

inline uint64_t ceil_pow2(uint64_t x) {
  return x <= 1 ? 1 : std::bit_ceil(x);
}

// The tile kernels' specialization constants (TileSpec, primitives/glsl/tile_constants.h;
// bitonic_global takes the shared prefix alone, .key).
inline TileSpec tile_specialization(const SortSpec& spec, uint32_t workgroup, uint32_t tile) {
  return {.key = {.workgroup = workgroup,
                  .key_words = spec.key_words,
                  .key_kind = spec.key_kind,
                  .descending = uint32_t(spec.descending),
                  .value_words = spec.value_words,
                  .begin_bit = spec.begin_bit,
                  .end_bit = spec.end_bit},
          .tile = tile};
}

// The largest power-of-two workgroup the device runs (1024 at most): within
// maxComputeWorkGroupInvocations and, since pipelines require the reported subgroup size where
// the device allows it, within that size x maxComputeWorkgroupSubgroups (256 on lavapipe with
// 8-wide subgroups).
uint32_t max_comparison_workgroup(const Context::Impl& ctx);

// Workgroup sizes are powers of two from 64 (a multiple of any subgroup size: full subgroups
// are required where the device can) to max_comparison_workgroup.
inline uint32_t clamp_workgroup(const Context::Impl& ctx, uint64_t wanted) {
  constexpr uint32_t min_workgroup = 64;
  return uint32_t(
      std::clamp<uint64_t>(ceil_pow2(wanted), min_workgroup, max_comparison_workgroup(ctx)));
}

}  // namespace gpusort
