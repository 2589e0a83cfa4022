// Small-array sort, stable, in one to three dispatches (what Algorithm::automatic uses for small
// n):
//   small_sort_tile   each workgroup sorts one tile (workgroup x items keys, a power of two)
//                     with a bitonic network on (compared key bits, origin slot), stable by
//                     that tie-break: small pair distances in registers and subgroup shuffles,
//                     large ones in shared memory; a single tile writes the result in place
//                     and is the sort. With several tiles it also writes, per tile, where each
//                     merge bucket begins (2^bucket_bits() buckets: the top compared bits, or
//                     with adaptive_buckets a window chosen from a sample of the input,
//                     src/primitives/glsl/merge_buckets.glsl). With skip_sorted_tiles a tile already
//                     in order skips the network
//   small_sort_merge  (more than one tile) each key adds, to its slot in its sorted tile, the
//                     number of keys of every other tile that precede it: everything in lower
//                     buckets, plus a binary search over the keys of its own bucket; and is
//                     written straight to its final position. Its searches can be shared by
//                     several invocations (merge_lanes). With two levels (merge_group_tiles) a
//                     first dispatch merges groups of tiles into runs in scratch, whose bucket
//                     starts are the sums of their tiles', and a second merges the runs
// Every dispatch is sized from max_n and reads the true n on the GPU. Scratch holds the sorted
// tiles (keys in radix order, values) and the bucket starts only when there is more than one
// tile, and the runs alike with two levels.
#include "algorithms/small_sort/small_sort.hpp"

#include "algorithms/small_sort/tuning.hpp"
#include <optional>

#include "algorithms/small_sort/constants.h"
#include "algorithms/small_sort/push.h"

namespace gpusort {

namespace {

// small_sort_merge searches every other tile for every key, so its work per key grows with the
// tile count: n is bounded at max_tiles_per_lane tiles for each invocation that shares a key's
// searches (SmallSortShape::merge_lanes).
constexpr uint32_t max_tiles_per_lane = 32;

// small_sort_tile's kernels by keys per invocation (small_sort_shape allows 1, 2, 4 or 8), and
// where they exist its bare-key variants by key width (sorts_bare_keys).
struct TileKernels {
  uint32_t items;
  Kernel kernel;
  std::optional<Kernel> keys32, keys64;
};
constexpr TileKernels tile_kernels[] = {
    {1, Kernel::small_sort_tile_i1},
    {2, Kernel::small_sort_tile_i2, Kernel::small_sort_tile_i2_keys32,
     Kernel::small_sort_tile_i2_keys64},
    {4, Kernel::small_sort_tile_i4, Kernel::small_sort_tile_i4_keys32,
     Kernel::small_sort_tile_i4_keys64},
    {8, Kernel::small_sort_tile_i8}};
// small_sort_merge's kernels by tiles per round (4 or 8), and where it exists the variant whose
// searches are shared by several invocations (merge lanes).
struct MergeKernels {
  uint32_t tiles_per_round;
  Kernel kernel;
  std::optional<Kernel> lanes;
};
constexpr MergeKernels merge_kernels[] = {
    {4, Kernel::small_sort_merge_r4, Kernel::small_sort_merge_r4_lanes},
    {8, Kernel::small_sort_merge_r8}};

class SmallSort final : public SortAlgorithm {
 public:
  SmallSort(Context::Impl& ctx, const SortSpec& spec, SmallSortShape shape)
      : ctx_(ctx), spec_(spec), shape_(shape) {}

  uint32_t tile() const { return shape_.tile_workgroup * shape_.items; }
  bool single_tile(uint64_t max_n) const { return max_n <= shape_.single_workgroup * shape_.items; }

  // small_sort_merge's buckets: 2^bits of them (2^bits + 1 entries a tile).
  uint32_t bucket_bits() const {
    const uint32_t wanted =
        shape_.merge_bucket_bits ? shape_.merge_bucket_bits : uint32_t(std::countr_zero(tile()));
    return std::min(wanted, spec_.end_bit - spec_.begin_bit);
  }
  uint64_t bucket_entries() const { return (uint64_t(1) << bucket_bits()) + 1; }

  // Invocations per key in small_sort_merge: no more than the rounds of tiles each key searches.
  uint32_t merge_lanes(uint32_t tiles) const {
    const uint32_t rounds =
        (tiles + shape_.merge_tiles_per_round - 1) / shape_.merge_tiles_per_round;
    return std::min(shape_.merge_lanes, std::bit_ceil(rounds));
  }

  // Tiles per first-level group where two merge levels run for max_n, else 0.
  uint32_t group_tiles(uint64_t max_n) const {
    const uint64_t tiles = (max_n + tile() - 1) / tile();
    return shape_.merge_group_tiles != 0 && tiles > shape_.merge_group_tiles
               ? shape_.merge_group_tiles
               : 0;
  }

  // Scratch: the sorted tiles (keys in radix order, values, bucket starts), then with two merge
  // levels the runs alike.
  struct Layout {
    uint64_t sorted_values, bucket_starts, bucket_params, run_keys, run_values, run_starts, total;
  };
  Layout layout(uint64_t max_n) const {
    if (single_tile(max_n)) return {};
    const uint64_t tiles = (max_n + tile() - 1) / tile();
    Layout l{};
    l.sorted_values = align_up(max_n * spec_.key_words * 4, 256);
    l.bucket_starts = align_up(l.sorted_values + max_n * spec_.value_words * 4, 256);
    l.bucket_params = align_up(l.bucket_starts + tiles * bucket_entries() * 4, 16);
    l.total = l.bucket_params + 16;
    if (const uint32_t group = group_tiles(max_n)) {
      const uint64_t runs = (tiles + group - 1) / group;
      l.run_keys = align_up(l.total, 256);
      l.run_values = align_up(l.run_keys + max_n * spec_.key_words * 4, 256);
      l.run_starts = align_up(l.run_values + max_n * spec_.value_words * 4, 256);
      l.total = l.run_starts + runs * bucket_entries() * 4;
    }
    return l;
  }

  uint64_t scratch_bytes(uint64_t max_n) const override {
    check_fits(max_n);
    return layout(max_n).total;
  }

  void record(Recorder& rec, const SortTargets& t) const override {
    check_fits(t.n);
    if (t.n <= 1) return;
    const uint32_t n = uint32_t(t.n);
    if (single_tile(t.n)) {
      // The smallest power-of-two workgroup that covers max_n.
      uint32_t workgroup = clamp_workgroup(ctx_, (t.n + shape_.items - 1) / shape_.items);
      workgroup = std::min(workgroup, shape_.single_workgroup);
      rec.dispatch(
          tile_kernel(), tile_shader_spec(workgroup), 1,
          SmallSortTilePush{t.keys, t.values, t.keys, t.values, t.count_address, 0, 0, n, 1, 1});
      rec.compute_barrier();
      return;
    }
    const Layout l = layout(t.n);
    const VkDeviceAddress sorted_keys = t.scratch, sorted_values = t.scratch + l.sorted_values,
                          bucket_starts = t.scratch + l.bucket_starts,
                          bucket_params = t.scratch + l.bucket_params;
    const uint32_t tiles = uint32_t((t.n + tile() - 1) / tile());
    rec.dispatch(tile_kernel(), tile_shader_spec(shape_.tile_workgroup), tiles,
                 SmallSortTilePush{t.keys, t.values, sorted_keys, sorted_values, t.count_address,
                                   bucket_starts, bucket_params, n, tiles, 0});
    rec.compute_barrier();
    const uint32_t group = group_tiles(t.n);
    if (group == 0) {
      merge(rec, tile(), tiles, 0, t.n,
            SmallSortMergePush{sorted_keys, sorted_values, bucket_starts, t.keys, t.values,
                               t.count_address, 0, bucket_params, n});
      return;
    }
    // Two levels: groups of tiles into runs (radix order, in scratch), then the runs.
    const VkDeviceAddress run_keys = t.scratch + l.run_keys, run_values = t.scratch + l.run_values,
                          run_starts = t.scratch + l.run_starts;
    merge(rec, tile(), group, group, t.n,
          SmallSortMergePush{sorted_keys, sorted_values, bucket_starts, run_keys, run_values,
                             t.count_address, run_starts, bucket_params, n});
    merge(rec, tile() * group, (tiles + group - 1) / group, 0, t.n,
          SmallSortMergePush{run_keys, run_values, run_starts, t.keys, t.values, t.count_address, 0,
                             bucket_params, n});
  }

  // One small_sort_merge dispatch over sorted tiles of `tile_keys`, each key searching `searched`
  // tiles: its group of `group` tiles (writing the runs in radix order and their bucket starts),
  // or all (group 0).
  void merge(Recorder& rec, uint32_t tile_keys, uint32_t searched, uint32_t group, uint64_t max_n,
             const SmallSortMergePush& push) const {
    const uint32_t lanes = merge_lanes(searched);
    const SmallSortMergeSpec spec{
        .tile = tile_specialization(spec_, shape_.merge_workgroup, tile_keys),
        .bucket_bits = bucket_bits(),
        .lanes = lanes,
        .group_tiles = group,
        .output_radix = group != 0 ? 1u : 0u,
        .adaptive_buckets = uint32_t(shape_.adaptive_buckets)};
    rec.dispatch(merge_kernel(lanes), spec_constants(spec),
                 (max_n * lanes + shape_.merge_workgroup - 1) / shape_.merge_workgroup, push);
    rec.compute_barrier();
  }

 private:
  Kernel tile_kernel() const {
    for (const TileKernels& k : tile_kernels) {
      if (k.items != shape_.items) continue;
      const std::optional<Kernel>& bare = spec_.key_words == 1 ? k.keys32 : k.keys64;
      return sorts_bare_keys(spec_) && bare ? *bare : k.kernel;
    }
    throw Error("small-array sort: no tile kernel for " + std::to_string(shape_.items) +
                " keys per invocation");
  }
  Kernel merge_kernel(uint32_t lanes) const {
    for (const MergeKernels& k : merge_kernels) {
      if (k.tiles_per_round != shape_.merge_tiles_per_round) continue;
      if (lanes == 1) return k.kernel;
      if (k.lanes) return *k.lanes;
    }
    throw Error("small-array sort: no merge kernel for rounds of " +
                std::to_string(shape_.merge_tiles_per_round) + " tiles with " +
                std::to_string(lanes) + " lanes per key");
  }
  std::vector<uint32_t> tile_shader_spec(uint32_t workgroup) const {
    return spec_constants(SmallSortTileSpec{
        .tile = tile_specialization(spec_, workgroup, workgroup * shape_.items),
        .log2_subgroup_lanes =
            shape_.subgroup_sort ? uint32_t(std::countr_zero(subgroup_sort_lanes(ctx_))) : 0,
        .bucket_bits = bucket_bits(),
        .adaptive_buckets = uint32_t(shape_.adaptive_buckets),
        .skip_sorted = uint32_t(shape_.skip_sorted_tiles)});
  }

  void check_fits(uint64_t n) const {
    if (n > small_sort_max_n(shape_))
      throw Error("the small-array sort takes at most " + std::to_string(small_sort_max_n(shape_)) +
                  " keys, not " + std::to_string(n));
  }

  Context::Impl& ctx_;
  SortSpec spec_;
  SmallSortShape shape_;
};

}  // namespace

uint32_t subgroup_sort_lanes(const Context::Impl& ctx) {
  VkPhysicalDeviceSubgroupProperties subgroup{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  properties.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(ctx.physical, &properties);
  const bool shuffle = (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) != 0;
  const bool fixed_size =
      ctx.info.subgroup_size_control || ctx.info.min_subgroup_size == ctx.info.max_subgroup_size;
  return shuffle && fixed_size ? ctx.info.subgroup_size : 1;
}

SmallSortShape small_sort_shape(const Context::Impl& ctx, const SortSpec& spec,
                                SmallSortShape wanted) {
  SmallSortShape s = wanted;
  if (s.items != 1 && s.items != 2 && s.items != 4 && s.items != 8)
    throw Error("small-array sort: " + std::to_string(s.items) +
                " keys per invocation (1, 2, 4 or 8)");
  if (s.merge_tiles_per_round != 4 && s.merge_tiles_per_round != 8)
    throw Error("small-array sort: merge rounds of " + std::to_string(s.merge_tiles_per_round) +
                " tiles (4 or 8)");
  if (s.merge_bucket_bits > 12)
    throw Error("small-array sort: " + std::to_string(s.merge_bucket_bits) +
                " merge bucket bits (12 at most)");
  auto fits = [&](uint32_t workgroup) {
    return small_sort_tile_shared_bytes(spec, uint64_t(workgroup) * s.items) <=
           ctx.info.shared_memory_bytes;
  };
  auto shrink = [&](uint32_t& workgroup) {
    workgroup = clamp_workgroup(ctx, workgroup);
    while (workgroup > 64 && !fits(workgroup)) workgroup /= 2;
    if (!fits(workgroup))
      throw Error("small-array sort: a tile of " + std::to_string(workgroup * s.items) +
                  " keys does not fit " + std::to_string(ctx.info.shared_memory_bytes) +
                  " bytes of shared memory");
  };
  if (s.merge_group_tiles > max_tiles_per_lane * s.merge_lanes)
    throw Error("small-array sort: merge groups of " + std::to_string(s.merge_group_tiles) +
                " tiles (at most 32 per merge lane)");
  if (!std::has_single_bit(s.merge_lanes) || (s.merge_lanes > 1 && s.merge_tiles_per_round != 4))
    throw Error("small-array sort: " + std::to_string(s.merge_lanes) +
                " merge lanes per key (a power of two; above 1 only with rounds of 4 tiles)");
  shrink(s.single_workgroup);
  shrink(s.tile_workgroup);
  s.merge_workgroup = clamp_workgroup(ctx, s.merge_workgroup);
  s.merge_lanes = std::min({s.merge_lanes, subgroup_sort_lanes(ctx), s.merge_workgroup});
  return s;
}

uint64_t small_sort_max_n(const SmallSortShape& shape) {
  return std::max<uint64_t>(uint64_t(shape.single_workgroup) * shape.items,
                            uint64_t(shape.tile_workgroup) * shape.items *
                                std::max(shape.merge_group_tiles, 1u) * max_tiles_per_lane *
                                shape.merge_lanes);
}

std::vector<SmallSortBand> automatic_small_bands(const Context::Impl& ctx, const SortSpec& spec) {
  // The bands per device family, each with the measurement that chose it: tuning.cpp.
  std::vector<SmallSortBand> bands;
  for (const SmallSortBandTuning& b : small_sort_tuning(ctx.info).bands) {
    if (b.log2_max_n == 0 || (b.bare_keys_only && !sorts_bare_keys(spec))) continue;
    const SmallSortShape shape = small_sort_shape(ctx, spec,
                                                  {.items = b.items,
                                                   .single_workgroup = b.single_workgroup,
                                                   .tile_workgroup = b.tile_workgroup,
                                                   .merge_workgroup = b.merge_workgroup,
                                                   .subgroup_sort = b.subgroup_sort,
                                                   .merge_tiles_per_round = b.merge_tiles_per_round,
                                                   .merge_bucket_bits = b.merge_bucket_bits,
                                                   .merge_lanes = b.merge_lanes,
                                                   .merge_group_tiles = b.merge_group_tiles,
                                                   .adaptive_buckets = b.adaptive_buckets,
                                                   .skip_sorted_tiles = b.skip_sorted_tiles});
    bands.push_back({std::min(uint64_t(1) << b.log2_max_n, small_sort_max_n(shape)), shape});
  }
  return bands;
}

uint64_t small_sort_bucket_params_offset(Context::Impl& ctx, const SortSpec& spec,
                                         const SmallSortShape& shape, uint64_t max_n) {
  return SmallSort(ctx, spec, shape).layout(max_n).bucket_params;
}

std::unique_ptr<SortAlgorithm> make_small_sort(Context::Impl& ctx, const SortSpec& spec,
                                               SmallSortShape shape) {
  return std::make_unique<SmallSort>(ctx, spec, shape);
}

}  // namespace gpusort
