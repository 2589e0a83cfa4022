// Bitonic sort against std::stable_sort, with the unstable-sort check (keys exact, values the
// same multiset within each run of equal keys): every key type x values x order x distribution
// at a few sizes, and the full sweep around every power of two up to 2^16 for two key setups.
#include "test_support.hpp"

namespace gpusort::test {
namespace {

class Bitonic : public ::testing::TestWithParam<Combo> {};

// One tile (lavapipe tiles are 2048-8192 keys), a non-power-of-two just past a tile, and
// several tiles with global flip/disperse steps.
TEST_P(Bitonic, MatchesReferenceOnEveryDistribution) {
  const Combo c = GetParam();
  for (uint64_t n : {0ull, 1ull, 2ull, 3ull, 100ull, 1000ull})
    for (Distribution d : all_distributions())
      EXPECT_TRUE(check_unstable_sort({Algorithm::bitonic, c.key, c.value_bytes, c.descending, n, d}));
  // Larger sizes on fewer distributions keep the suite short on lavapipe.
  for (uint64_t n : {2049ull, 12345ull})
    for (Distribution d : {Distribution::uniform, Distribution::few_unique, Distribution::special_floats})
      EXPECT_TRUE(check_unstable_sort({Algorithm::bitonic, c.key, c.value_bytes, c.descending, n, d}));
}

INSTANTIATE_TEST_SUITE_P(AllKeyTypes, Bitonic, ::testing::ValuesIn(all_combos()), combo_name);

TEST(BitonicSizes, EveryPowerOfTwoNeighbourUpTo2To16) {
  for (Combo c : {Combo{KeyType::u32, 4, false}, Combo{KeyType::f64, 8, true}})
    for (uint64_t n : sizes_around_powers_of_two(1 << 16))
      for (Distribution d : {Distribution::uniform, Distribution::few_unique})
        EXPECT_TRUE(check_unstable_sort({Algorithm::bitonic, c.key, c.value_bytes, c.descending, n, d}));
}

TEST(BitonicBits, SortsOnlyTheRequestedBitRange) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 4u, 20u}, std::tuple{KeyType::u64, 28u, 44u},
                                 std::tuple{KeyType::f32, 0u, 8u}})
    for (bool descending : {false, true})
      EXPECT_TRUE(check_unstable_sort({Algorithm::bitonic, key, 4, descending, 20000,
                                       Distribution::uniform, begin, end}));
}

}  // namespace
}  // namespace gpusort::test
