// Algorithm::automatic on small arrays (the one- and two-dispatch small-array sort) against
// std::stable_sort, the switch to the radix sort above small_sort_max_n, and GPU-side counts
// (Sorter::record_indirect) for the small-array sort, bitonic and odd-even.
#include "test_support.hpp"

#include "algorithms/comparison_sorts.hpp"
#include "vulkan/buffer.hpp"

#include <algorithm>
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

// automatic's band with two merge levels (2^15 to 2^16): sizes inside it and at its edges, every
// distribution for 32-bit keys with values, some for descending 64-bit keys.
TEST(SmallSortSizes, TwoMergeLevelBandOnEveryDistribution) {
  for (uint64_t n : {(1ull << 15) + 1, 50000ull, 1ull << 16})
    for (Distribution d : all_distributions())
      EXPECT_TRUE(check_sort({Algorithm::automatic, KeyType::u32, 4, false, n, d}));
  for (uint64_t n : {(1ull << 16) - 1, 40000ull})
    for (Distribution d : {Distribution::uniform, Distribution::few_unique, Distribution::sorted})
      EXPECT_TRUE(check_sort({Algorithm::automatic, KeyType::u64, 8, true, n, d}));
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
                                             uint64_t max_n, bool indirect, bool descending) {
  auto& impl = context().impl();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> keys(max_n);
  for (auto& k : keys) k = uint32_t(rng() % 300);
  const SortSpec spec = make_sort_spec(KeyType::u32, 4, descending, 0, 0);
  auto algorithm = make_small_sort(impl, spec, small_sort_shape(impl, spec, wanted));
  return check_u32_pairs(*algorithm, keys, n, indirect, descending,
                         "seed " + std::to_string(seed) + " lanes " +
                             std::to_string(wanted.merge_lanes) + " group " +
                             std::to_string(wanted.merge_group_tiles));
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

// Two merge levels (SmallSortShape::merge_group_tiles): groups of 2, 3 or 8 tiles of 128 keys
// merged into runs, then the runs; groups and runs that are cut short at n, n on the host and
// from the GPU, with and without split searches.
TEST(SmallSortMergeGroups, TwoLevelsSortLikeOne) {
  for (uint32_t lanes : {1u, 4u})
    for (uint32_t group : {2u, 3u, 8u}) {
      const SmallSortShape shape{.items = 2,
                                 .single_workgroup = 64,
                                 .tile_workgroup = 64,
                                 .merge_workgroup = 64,
                                 .merge_tiles_per_round = 4,
                                 .merge_lanes = lanes,
                                 .merge_group_tiles = group};
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
