// The classic radix sort against std::stable_sort: every key type x values x order x size x
// distribution.
#include "test_support.hpp"

namespace gpusort::test {
namespace {

class RadixReduceScan : public ::testing::TestWithParam<Combo> {};

// Around the workgroup (128 on lavapipe, 256 elsewhere), a group's range (>= 4096 keys) and
// several groups plus a remainder.
const uint64_t small_sizes[] = {0, 1, 2, 31, 127, 128, 129, 255, 256, 257, 4095, 4097, 3 * 4096 + 77};

TEST_P(RadixReduceScan, MatchesStableSortOnEveryDistributionAndSize) {
  const Combo c = GetParam();
  for (uint64_t n : small_sizes)
    for (Distribution d : all_distributions())
      EXPECT_TRUE(check_sort({Algorithm::radix_reduce_scan, c.key, c.value_bytes, c.descending, n, d}));
}

TEST_P(RadixReduceScan, MatchesStableSortAtAMillionKeys) {
  const Combo c = GetParam();
  // One large case per combination keeps the suite short on a 2-core CPU.
  EXPECT_TRUE(check_sort({Algorithm::radix_reduce_scan, c.key, c.value_bytes, c.descending,
                          1'000'003, Distribution::low_entropy}));
}

INSTANTIATE_TEST_SUITE_P(AllKeyTypes, RadixReduceScan, ::testing::ValuesIn(all_combos()), combo_name);

TEST(RadixReduceScanBits, SortsOnlyTheRequestedBitRange) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 4u, 20u}, std::tuple{KeyType::u64, 28u, 44u},
                                 std::tuple{KeyType::f32, 0u, 8u}, std::tuple{KeyType::i64, 40u, 64u}})
    for (bool descending : {false, true})
      EXPECT_TRUE(check_sort({Algorithm::radix_reduce_scan, key, 4, descending, 20000,
                              Distribution::uniform, begin, end}));
}

}  // namespace
}  // namespace gpusort::test
