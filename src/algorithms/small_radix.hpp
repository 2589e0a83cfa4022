// The small-array radix sort: one workgroup, one dispatch, the whole sort in shared memory
// (shaders/small_radix.comp). Stable, every key type, values of 0/4/8 bytes, bit ranges, in place
// (no scratch), n up to one tile.
#pragma once

#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

// The tile: workgroup x items keys, where `workgroup` (a power of two, at most
// max_comparison_workgroup) is halved until the tile's shared memory fits the device.
// items: 1, 2, 4 or 8 (one embedded small_radix_i<items> shader each).
struct SmallRadixShape {
  uint32_t workgroup = 1024;
  uint32_t items = 4;
  uint64_t tile() const { return uint64_t(workgroup) * items; }
};
SmallRadixShape small_radix_shape(const Context::Impl& ctx, const SortSpec& spec,
                                  uint32_t workgroup, uint32_t items);
// The most keys make_small_radix(ctx, spec, workgroup, items) sorts: its tile.
uint64_t small_radix_max_n(const Context::Impl& ctx, const SortSpec& spec, uint32_t workgroup,
                           uint32_t items);
// Shared-memory bytes of small_radix.comp for a workgroup of `workgroup` x items keys: the tile
// (key words and, with values, an origin per key) and the digit counters (two per word, 256 per
// subgroup of the smallest size).
uint64_t small_radix_shared_bytes(const Context::Impl& ctx, const SortSpec& spec,
                                  uint32_t workgroup, uint32_t items);
// record() records one dispatch of the smallest power-of-two workgroup (of the shape's at most)
// whose tile covers max_n; it throws when max_n exceeds the shape's tile.
std::unique_ptr<SortAlgorithm> make_small_radix(Context::Impl& ctx, const SortSpec& spec,
                                                uint32_t workgroup, uint32_t items);

}  // namespace gpusort
