// Algorithm::automatic on small arrays (the one- and two-dispatch small-array sort) against
// std::stable_sort, the switch to the radix sort above small_sort_max_n, and GPU-side counts
// (Sorter::record_indirect) for the small-array sort, bitonic and odd-even.
#include "test_support.hpp"

#include "algorithms/small_sort/small_sort.hpp"
#include "vulkan/buffer.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <numeric>

namespace gpusort::test {
namespace {

// automatic's small-array bands (the first one's single tile, the last one's limit).
std::vector<SmallSortBand> bands_of(const Combo& c) {
  return automatic_small_bands(context().impl(),
                               make_sort_spec(c.key, c.value_bytes, c.descending, 0, 0));
}

class SmallSort : public ::testing::TestWithParam<Combo> {};

// One tile (single dispatch) at several workgroup sizes, just past it, and several tiles.
TEST_P(SmallSort, MatchesStableSortOnEveryDistribution) {
  const Combo c = GetParam();
  const SmallSortShape shape = bands_of(c).front().shape;
  const uint64_t single = uint64_t(shape.single_workgroup) * shape.items;
  for (uint64_t n : {0ull, 1ull, 2ull, 3ull, 300ull})
    for (Distribution d : all_distributions())
      EXPECT_TRUE(check_sort({Algorithm::automatic, c.key, c.value_bytes, c.descending, n, d}));
  for (uint64_t n : std::vector<uint64_t>{single, single + 1, 3 * single + 77})
    for (Distribution d : {Distribution::uniform, Distribution::few_unique, Distribution::special_floats})
      EXPECT_TRUE(check_sort({Algorithm::automatic, c.key, c.value_bytes, c.descending, n, d}));
}

INSTANTIATE_TEST_SUITE_P(AllKeyTypes, SmallSort, ::testing::ValuesIn(all_combos()), combo_name);

TEST(SmallSortSizes, EveryPowerOfTwoNeighbourUpTo2To16) {
  for (Combo c : {Combo{KeyType::u32, 4, false}, Combo{KeyType::i64, 8, true}})
    for (uint64_t n : sizes_around_powers_of_two(1 << 16))
      for (Distribution d : {Distribution::uniform, Distribution::few_unique})
        EXPECT_TRUE(check_sort({Algorithm::automatic, c.key, c.value_bytes, c.descending, n, d}));
}

// Keys for the merge's buckets to cope with: 99 % sharing their top byte (one bucket holding 99 %
// of the keys, for fixed top-bit buckets), or all below 2^16 (the top half of every key zero).
// And for the check of tiles in order: ascending keys, all equal, and ascending within each pair
// of slots (an invocation's two) while the pairs descend.
enum class MergeKeys {
  any_below_300,
  skewed_top_byte,
  below_2_to_16,
  ascending,
  all_equal,
  pairs_ascending_descending
};

// automatic's bands with two merge levels (2^15 to 2^18 on the H100; on lavapipe smaller tiles
// and more of them): sizes inside each and at its edges, every distribution for 32-bit keys with
// values, some for descending 64-bit keys, and skewed and low-bit keys.
using ScratchCheck = std::function<::testing::AssertionResult(const DeviceBuffer& scratch)>;
::testing::AssertionResult check_small_shape(const SmallSortShape& wanted, uint64_t n,
                                             uint64_t max_n, bool indirect, bool descending,
                                             MergeKeys keys = MergeKeys::any_below_300,
                                             const ScratchCheck& after = {});
TEST(SmallSortSizes, MergeLevelBandsOnEveryDistribution) {
  const Combo c{KeyType::u32, 4, false};
  const std::vector<SmallSortBand> bands = bands_of(c);
  for (size_t b = 1; b < bands.size(); ++b) {
    if (bands[b].shape.merge_group_tiles == 0) continue;
    const uint64_t low = bands[b - 1].max_n + 1, high = bands[b].max_n;
    for (uint64_t n : {low, (low + high) / 2, high})
      for (Distribution d : all_distributions())
        EXPECT_TRUE(check_sort({Algorithm::automatic, KeyType::u32, 4, false, n, d}));
    for (uint64_t n : {low, high - 1})
      for (Distribution d : {Distribution::uniform, Distribution::few_unique, Distribution::sorted})
        EXPECT_TRUE(check_sort({Algorithm::automatic, KeyType::u64, 8, true, n, d}));
    for (MergeKeys keys : {MergeKeys::skewed_top_byte, MergeKeys::below_2_to_16})
      for (bool descending : {false, true})
        EXPECT_TRUE(check_small_shape(bands[b].shape, high, high, false, descending, keys));
  }
}

// Keys without values sort as bare keys (no origins): the slots past the count hold all ones,
// which ties with a key whose radix order is all ones (the largest unsigned key ascending, 0
// descending, NaN with every payload bit set). Such keys must still all come out, at a single
// tile's sizes and with a partial last tile in every band, for 32- and 64-bit keys.
template <class K>
void check_keys_that_tie_with_the_empty_slots(std::mt19937_64& rng) {
  const K all_ones = ~K(0);
  std::vector<uint64_t> sizes{1, 77};
  for (const SmallSortBand& band : bands_of(Combo{key_type_of<K>(), 0, false}))
    sizes.push_back(band.max_n - 5);
  for (bool descending : {false, true})
    for (uint64_t n : sizes) {
      const K top = descending ? K(0) : all_ones;
      const K pool[] = {
          top, top, top, descending ? K(1) : K(all_ones - 1), K(7), K(all_ones / 2 + 1)};
      std::vector<K> keys(n);
      for (auto& k : keys) k = pool[rng() % 6];
      std::vector<K> want = keys;
      std::stable_sort(want.begin(), want.end(),
                       [&](K a, K b) { return descending ? a > b : a < b; });
      SortOptions options;
      options.descending = descending;
      sort(context(), std::span<K>(keys), options);
      for (uint64_t i = 0; i < n; ++i)
        if (keys[i] != want[i]) {
          ADD_FAILURE() << sizeof(K) * 8 << "-bit keys, n=" << n
                        << (descending ? " descending" : "") << ": key " << i << " is "
                        << uint64_t(keys[i]) << ", expected " << uint64_t(want[i]);
          break;
        }
    }
}

template <class F, class Bits>
void check_nans_that_tie_with_the_empty_slots(std::mt19937_64& rng) {
  const Bits nan = ~Bits(0) >> 1;  // positive, every payload bit set: radix order all ones
  std::vector<F> floats(3000);
  for (auto& f : floats)
    f = std::bit_cast<F>(rng() % 2 ? nan : Bits(rng() % 200) << (sizeof(F) * 8 - 12));
  const KeyType type = key_type_of<F>();
  auto order = [&](F f) { return radix_order(type, std::bit_cast<Bits>(f), false); };
  std::vector<F> want = floats;
  std::stable_sort(want.begin(), want.end(), [&](F a, F b) { return order(a) < order(b); });
  sort(context(), std::span<F>(floats));
  for (size_t i = 0; i < floats.size(); ++i)
    if (std::bit_cast<Bits>(floats[i]) != std::bit_cast<Bits>(want[i])) {
      ADD_FAILURE() << to_string(type) << ": key " << i << " has bits "
                    << uint64_t(std::bit_cast<Bits>(floats[i])) << ", expected "
                    << uint64_t(std::bit_cast<Bits>(want[i]));
      break;
    }
}

TEST(SmallSortKeysAlone, KeysThatTieWithTheEmptySlots) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (GPUSORT_TEST_SEED reruns it)");
  std::mt19937_64 rng(seed);
  check_keys_that_tie_with_the_empty_slots<uint32_t>(rng);
  check_keys_that_tie_with_the_empty_slots<uint64_t>(rng);
  check_nans_that_tie_with_the_empty_slots<float, uint32_t>(rng);
  check_nans_that_tie_with_the_empty_slots<double, uint64_t>(rng);
  EXPECT_TRUE(no_new_validation_messages());
}

TEST(SmallSortSizes, AutomaticSwitchesToRadixAboveTheLimit) {
  const Combo c{KeyType::f32, 4, false};
  const uint64_t limit = bands_of(c).back().max_n;
  for (uint64_t n : {limit, limit + 1})
    EXPECT_TRUE(check_sort({Algorithm::automatic, c.key, c.value_bytes, c.descending, n,
                            Distribution::low_entropy}));
}

TEST(SmallSortBits, SortsOnlyTheRequestedBitRange) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 4u, 20u}, std::tuple{KeyType::u64, 28u, 44u}})
    for (uint64_t n : {1000ull, 20000ull})
      EXPECT_TRUE(check_sort({Algorithm::automatic, key, 4, true, n, Distribution::uniform, begin, end}));
}

// Sorts u32 keys (repeats, so stability shows) with u32 values (the identity) through a small-array
// sort of the given shape, n on the host or read from a GPU buffer, and checks the whole output
// (beyond n, with the count on the GPU, the buffers must be untouched).
::testing::AssertionResult check_small_shape(const SmallSortShape& wanted, uint64_t n,
                                             uint64_t max_n, bool indirect, bool descending,
                                             MergeKeys kind, const ScratchCheck& after) {
  auto& impl = context().impl();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> keys(max_n);
  for (uint64_t i = 0; i < max_n; ++i) {
    uint32_t& k = keys[i];
    const uint64_t r = rng();
    switch (kind) {
      case MergeKeys::ascending:
        k = uint32_t(i);
        break;
      case MergeKeys::all_equal:
        k = 7;
        break;
      case MergeKeys::pairs_ascending_descending:
        k = uint32_t(2 * (max_n - i / 2) + i % 2);
        break;
      case MergeKeys::any_below_300:
        k = uint32_t(r % 300);
        break;
      case MergeKeys::skewed_top_byte:
        k = r % 100 != 0 ? (uint32_t(r >> 32) & 0xffffffu) | 0x5a000000u : uint32_t(r >> 32);
        break;
      case MergeKeys::below_2_to_16:
        k = uint32_t(r >> 48);
        break;
    }
  }
  const SortSpec spec = make_sort_spec(KeyType::u32, 4, descending, 0, 0);
  auto algorithm = make_small_sort(impl, spec, small_sort_shape(impl, spec, wanted));
  return check_u32_pairs(*algorithm, keys, n, indirect, descending,
                         "seed " + std::to_string(seed) + " lanes " +
                             std::to_string(wanted.merge_lanes) + " group " +
                             std::to_string(wanted.merge_group_tiles),
                         1, after);
}

// small_sort_merge with each key's searches split over 2, 4 or 8 invocations (capped by the
// subgroup): tiles of 128 keys, so that n up to 4096 makes 2 to 32 tiles, rounds of 4 tiles that
// the lanes do not divide evenly, and a last tile that is partly empty; then as many tiles as the
// lanes allow (32 per lane).
TEST(SmallSortMergeLanes, SplitSearchesSortLikeOneInvocationPerKey) {
  for (uint32_t lanes : {1u, 2u, 4u, 8u}) {
    const SmallSortShape shape{.items = 2,
                               .single_workgroup = 64,
                               .tile_workgroup = 64,
                               .merge_workgroup = 64,
                               .merge_tiles_per_round = 4,
                               .merge_lanes = lanes};
    for (bool descending : {false, true})
      for (uint64_t n : {129ull, 1000ull, 2688ull, 4096ull}) {
        EXPECT_TRUE(check_small_shape(shape, n, n, false, descending));
        EXPECT_TRUE(check_small_shape(shape, n - 77, n, true, descending));
      }
    // Up to 32 tiles per lane: near the limit that gives.
    const uint64_t limit = small_sort_max_n(
        small_sort_shape(context().impl(), make_sort_spec(KeyType::u32, 4, false, 0, 0), shape));
    EXPECT_TRUE(check_small_shape(shape, limit - 50, limit, false, false));
    EXPECT_TRUE(check_small_shape(shape, limit - 50, limit, true, true));
  }
}

// Two merge levels (groups of 8 tiles) with buckets that follow the keys
// (SmallSortShape::adaptive_buckets), tiles of 2 x tile_workgroup keys.
SmallSortShape adaptive_shape(uint32_t tile_workgroup, bool skip_sorted_tiles) {
  return {.items = 2,
          .single_workgroup = 64,
          .tile_workgroup = tile_workgroup,
          .merge_workgroup = 64,
          .merge_tiles_per_round = 4,
          .merge_lanes = 4,
          .merge_group_tiles = 8,
          .adaptive_buckets = true,
          .skip_sorted_tiles = skip_sorted_tiles};
}

// Adaptive buckets on keys that share their top bits, in workgroups of 64, whose few subgroups
// take the median's sort across lanes (automatic's bands, in larger workgroups, take the ranking
// loop on lavapipe).
TEST(SmallSortMergeGroups, AdaptiveBucketsOnSkewedAndLowBitKeys) {
  const SmallSortShape shape = adaptive_shape(64, false);
  for (MergeKeys keys :
       {MergeKeys::skewed_top_byte, MergeKeys::below_2_to_16, MergeKeys::any_below_300})
    for (uint64_t n : {1000ull, 8000ull}) {
      EXPECT_TRUE(check_small_shape(shape, n, n, false, true, keys));
      EXPECT_TRUE(check_small_shape(shape, n - 77, n, true, false, keys));
    }
}

// The window the adaptive buckets cover (merge_buckets.glsl) holds the bulk of the keys: for 99 %
// of the keys in one top byte, inside that byte; for keys below 2^16, below 2^16. (The sort is
// exact whatever the window; this guards the speed on such keys, which bench rows measure.)
TEST(SmallSortMergeGroups, AdaptiveBucketsCoverTheBulkOfTheKeys) {
  auto& impl = context().impl();
  const SortSpec spec = make_sort_spec(KeyType::u32, 4, false, 0, 0);
  for (uint32_t workgroup : {64u, 256u}) {
    const SmallSortShape wanted = adaptive_shape(workgroup, false);
    const SmallSortShape shape = small_sort_shape(impl, spec, wanted);
    const uint32_t bucket_bits = std::countr_zero(shape.tile_workgroup * shape.items);
    const uint64_t n = 16 * shape.tile_workgroup * shape.items + 333;
    for (MergeKeys keys : {MergeKeys::skewed_top_byte, MergeKeys::below_2_to_16}) {
      const uint32_t bulk_bits = keys == MergeKeys::skewed_top_byte ? 24 : 16;
      const uint64_t bulk_base = keys == MergeKeys::skewed_top_byte ? 0x5a000000u : 0;
      auto window = [&](const DeviceBuffer& scratch) -> ::testing::AssertionResult {
        uint32_t params[3];
        download_range(scratch, small_sort_bucket_params_offset(impl, spec, shape, n), params, 12);
        const uint64_t origin = params[0] | uint64_t(params[1]) << 32;
        if (origin < bulk_base || origin >= bulk_base + (uint64_t(1) << bulk_bits) ||
            params[2] + bucket_bits > bulk_bits)
          return ::testing::AssertionFailure()
                 << "workgroup " << workgroup << ": the buckets start at " << origin
                 << " in steps of 2^" << params[2] << " (" << bucket_bits
                 << " bucket bits), not within the keys' " << bulk_bits << " varying bits above "
                 << bulk_base;
        return ::testing::AssertionSuccess();
      };
      EXPECT_TRUE(check_small_shape(wanted, n, n, false, false, keys, window));
    }
  }
}

// Tiles in order skip the network (SmallSortShape::skip_sorted_tiles), and only those: tiles of
// ascending or equal keys, and tiles whose invocations each hold two ascending keys while the
// pairs descend; with the count on the host and from the GPU.
TEST(SmallSortMergeGroups, TilesInOrderSkipTheirNetwork) {
  for (uint32_t workgroup : {64u, 256u}) {
    const SmallSortShape shape = adaptive_shape(workgroup, true);
    for (MergeKeys keys : {MergeKeys::ascending, MergeKeys::all_equal,
                           MergeKeys::pairs_ascending_descending, MergeKeys::any_below_300})
      for (uint64_t n : {3000ull, 9000ull}) {
        EXPECT_TRUE(check_small_shape(shape, n, n, false, false, keys));
        EXPECT_TRUE(check_small_shape(shape, n - 77, n, true, true, keys));
      }
  }
}

// Two merge levels (SmallSortShape::merge_group_tiles): groups of 2, 3 or 8 tiles of 128 keys
// merged into runs, then the runs; groups and runs that are cut short at n, n on the host and
// from the GPU, with and without split searches (with them, buckets that follow the keys).
TEST(SmallSortMergeGroups, TwoLevelsSortLikeOne) {
  for (uint32_t lanes : {1u, 4u})
    for (uint32_t group : {2u, 3u, 8u}) {
      const SmallSortShape shape{.items = 2,
                                 .single_workgroup = 64,
                                 .tile_workgroup = 64,
                                 .merge_workgroup = 64,
                                 .merge_tiles_per_round = 4,
                                 .merge_lanes = lanes,
                                 .merge_group_tiles = group,
                                 .adaptive_buckets = lanes == 4};
      for (bool descending : {false, true})
        for (uint64_t n : {300ull, 1000ull, 4096ull, 8000ull}) {
          EXPECT_TRUE(check_small_shape(shape, n, n, false, descending)) << "group " << group;
          EXPECT_TRUE(check_small_shape(shape, n - 77, n, true, descending)) << "group " << group;
        }
    }
}

// Sorter::record_indirect with the count on the GPU: the first min(count, max_n) u32 keys (and
// their u32 values) are sorted, the rest is left as it was.
::testing::AssertionResult check_indirect(Algorithm algorithm, uint64_t max_n, uint32_t count) {
  auto& impl = context().impl();
  std::mt19937_64 rng(fresh_seed());
  std::vector<uint32_t> keys(max_n), values(max_n);
  for (auto& k : keys) k = uint32_t(rng() % 1000);  // repeats, so stability shows
  std::iota(values.begin(), values.end(), 0u);
  Sorter sorter(context(), {KeyType::u32, 4, algorithm});
  DeviceBuffer key_buffer(impl, max_n * 4, MemoryKind::device_local);
  DeviceBuffer value_buffer(impl, max_n * 4, MemoryKind::device_local);
  DeviceBuffer count_buffer(impl, 16, MemoryKind::device_local);
  DeviceBuffer scratch(impl, std::max<uint64_t>(sorter.scratch_bytes(max_n), 16), MemoryKind::device_local);
  upload(impl, key_buffer, keys.data(), max_n * 4);
  upload(impl, value_buffer, values.data(), max_n * 4);
  upload(impl, count_buffer, &count, 4);
  impl.submit([&](VkCommandBuffer cmd) {
    sorter.record_indirect(cmd, key_buffer.ref(), value_buffer.ref(), scratch.ref(),
                           count_buffer.ref(), max_n);
  });
  std::vector<uint32_t> got_keys(max_n), got_values(max_n);
  download(impl, key_buffer, got_keys.data(), max_n * 4);
  download(impl, value_buffer, got_values.data(), max_n * 4);
  const uint64_t n = std::min<uint64_t>(count, max_n);
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  const bool stable = algorithm != Algorithm::bitonic;
  std::vector<std::pair<uint32_t, uint32_t>> got, want;
  for (uint64_t i = 0; i < max_n; ++i) {
    uint32_t want_key = i < n ? keys[order[i]] : keys[i];
    uint32_t want_value = i < n ? values[order[i]] : values[i];
    if (got_keys[i] != want_key || (stable && got_values[i] != want_value))
      return ::testing::AssertionFailure() << to_string(algorithm) << " max_n=" << max_n << " count="
                                           << count << ": element " << i << " is (" << got_keys[i]
                                           << ", " << got_values[i] << "), expected (" << want_key
                                           << ", " << want_value << ")";
    got.emplace_back(got_keys[i], got_values[i]);
    want.emplace_back(want_key, want_value);
  }
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  if (got != want)
    return ::testing::AssertionFailure() << to_string(algorithm) << " max_n=" << max_n << " count="
                                         << count << ": values are not a permutation";
  return ::testing::AssertionSuccess();
}

TEST(IndirectCount, ComparisonSortsReadTheCountOnTheGpu) {
  for (Algorithm algorithm : {Algorithm::automatic, Algorithm::bitonic, Algorithm::odd_even})
    for (auto [max_n, count] : {std::pair{uint64_t(3000), 0u}, std::pair{uint64_t(3000), 1u}, std::pair{uint64_t(3000), 2u},
                                std::pair{uint64_t(3000), 1777u}, std::pair{uint64_t(3000), 5000u}})
      EXPECT_TRUE(check_indirect(algorithm, max_n, count));
  for (Algorithm algorithm : {Algorithm::automatic, Algorithm::bitonic})
    for (uint32_t count : {0u, 4097u, 20000u, 50000u})
      EXPECT_TRUE(check_indirect(algorithm, 40000, count));
  EXPECT_EQ(context().validation_messages(), 0u);
}

}  // namespace
}  // namespace gpusort::test
