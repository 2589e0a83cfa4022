// The small-array sort: bitonic tiles (sort_element.glsl, bitonic_tile.glsl) merged by rank
// (tile_merge.glsl, merge_buckets.glsl), and the size switch Algorithm::automatic builds from its
// bands.
#pragma once

#include <vector>

#include "algorithms/sort_algorithm.hpp"
#include "primitives/tile_shapes.hpp"

namespace gpusort {

// How the small-array sort cuts its work: arrays up to single_workgroup x items keys are
// sorted by one workgroup in one dispatch; larger ones as tiles of tile_workgroup x items keys
// (one workgroup each) and a second dispatch that merges the tiles by rank. The defaults below
// serve tests and experiments; automatic's shapes are its device family's (SmallSortTuning).
struct SmallSortShape {
  uint32_t items = 2;  // keys per invocation: 1, 2, 4 or 8 (one small_sort_tile shader each)
  uint32_t single_workgroup = 1024;
  uint32_t tile_workgroup = 1024;
  uint32_t merge_workgroup = 256;
  bool subgroup_sort = true;  // small pair distances through subgroup shuffles, not shared memory
  uint32_t merge_tiles_per_round = 8;  // tiles searched together by small_sort_merge: 4 or 8
  // small_sort_merge's buckets: the top this many compared bits (at most 12). 0: log2(tile
  // keys), about one key of a tile per bucket, so most searches take one step.
  uint32_t merge_bucket_bits = 0;
  // Invocations that share one key's searches in small_sort_merge (a power of two; rounds of 4
  // tiles): each takes every merge_lanes-th round. Capped by the rounds there are and by the
  // subgroup (1 where subgroups have no fixed size or no shuffles).
  uint32_t merge_lanes = 1;
  // Two merge levels where there are more tiles than this (0: one level): groups of this many
  // tiles are merged into runs first, then the runs into the output.
  uint32_t merge_group_tiles = 0;
  // small_sort_merge's buckets follow the keys: their window comes from a sample of the input
  // (src/primitives/glsl/merge_buckets.glsl), so that keys sharing their top bits (below 2^k, or 99 %
  // with one top byte) still spread over them. Off: the top compared bits, with no sample.
  bool adaptive_buckets = false;
  // small_sort_tile checks whether a tile is in order already (all keys equal, sorted input) and
  // then skips its network; the check costs two barriers a tile.
  bool skip_sorted_tiles = false;
};
// Keys without values, compared whole: equal keys cannot be told apart, so small_sort_tile sorts
// them as bare keys, without origins (its `_keys32` / `_keys64` variants, for 2 or 4 keys per
// invocation; src/primitives/glsl/sort_element.glsl).
inline bool sorts_bare_keys(const SortSpec& spec) {
  return spec.value_words == 0 && spec.begin_bit == 0 && spec.end_bit == 32 * spec.key_words;
}

// The shape chosen for this device and spec (workgroups shrunk to the shared memory).
SmallSortShape small_sort_shape(const Context::Impl& ctx, const SortSpec& spec,
                                SmallSortShape wanted = {});
// Stable sort in one dispatch (n <= one tile) or two (n <= small_sort_max_n).
std::unique_ptr<SortAlgorithm> make_small_sort(Context::Impl& ctx, const SortSpec& spec,
                                               SmallSortShape shape);
uint64_t small_sort_max_n(const SmallSortShape& shape);
// Where in scratch small_sort_tile leaves the merge buckets' parameters (origin, low word first,
// and shift: three u32s) for a sort of max_n keys of more than one tile (tests read them).
uint64_t small_sort_bucket_params_offset(Context::Impl& ctx, const SortSpec& spec,
                                         const SmallSortShape& shape, uint64_t max_n);

// The sizes Algorithm::automatic gives the small-array sort, smallest first: each band's shape
// takes n up to its max_n (the band's bound, or less where the shape's own limit is lower on this
// device), from the device family's tuning table (SmallSortTuning: tuning.cpp in this folder,
// the rows measured on the H100 with their results).
struct SmallSortBand {
  uint64_t max_n;
  SmallSortShape shape;
};
std::vector<SmallSortBand> automatic_small_bands(const Context::Impl& ctx, const SortSpec& spec);

// Shared-memory bytes of small_sort_tile's tile of `tile` slots: one 64-bit order word per slot
// plus one padding word per 16, and for 64-bit keys a 32-bit origin per slot plus one padding
// word per 32 (src/algorithms/small_sort/small_sort_tile.comp, src/primitives/glsl/sort_element.glsl). Bare keys
// (sorts_bare_keys) take less: this bounds them too.
inline uint64_t small_tile_shared_bytes(const SortSpec& spec, uint64_t tile) {
  return 8 * (tile + tile / 16) + 4 * (spec.key_words == 1 ? 1 : tile + tile / 32);
}

// The same plus small_sort_tile's choice of merge buckets (src/primitives/glsl/merge_buckets.glsl:
// two 64-bit words per 4 invocations, at most one invocation per slot), its in-order flag and
// its values (one padding word per 32).
inline uint64_t small_sort_tile_shared_bytes(const SortSpec& spec, uint64_t tile) {
  const uint64_t value_words = spec.value_words * tile;
  return small_tile_shared_bytes(spec, tile) + 4 * tile + 4 +
         4 * std::max<uint64_t>(value_words + value_words / 32, 1);
}

// Lanes whose keys small_sort_tile sorts together with subgroup shuffles: the subgroup size
// where shuffles exist and pipelines run at the reported size, else 1 (registers only).
uint32_t subgroup_sort_lanes(const Context::Impl& ctx);

}  // namespace gpusort
