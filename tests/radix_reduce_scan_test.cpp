// The classic radix sort against std::stable_sort: every key type x values x order x size x
// distribution.
#include "test_support.hpp"

namespace gpusort::test {
namespace {

struct Combo {
  KeyType key;
  uint32_t value_bytes;
  bool descending;
};

class RadixReduceScan : public ::testing::TestWithParam<Combo> {};

std::vector<Combo> all_combos() {
  std::vector<Combo> combos;
  for (KeyType key : {KeyType::u32, KeyType::i32, KeyType::f32, KeyType::u64, KeyType::i64, KeyType::f64})
    for (uint32_t value_bytes : {0u, 4u, 8u})
      for (bool descending : {false, true}) combos.push_back({key, value_bytes, descending});
  return combos;
}

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

INSTANTIATE_TEST_SUITE_P(AllKeyTypes, RadixReduceScan, ::testing::ValuesIn(all_combos()),
                         [](const auto& info) {
                           const Combo& c = info.param;
                           return std::string(to_string(c.key)) + "_values" + std::to_string(c.value_bytes) +
                                  (c.descending ? "_descending" : "_ascending");
                         });

TEST(RadixReduceScanBits, SortsOnlyTheRequestedBitRange) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 4u, 20u}, std::tuple{KeyType::u64, 28u, 44u},
                                 std::tuple{KeyType::f32, 0u, 8u}, std::tuple{KeyType::i64, 40u, 64u}})
    for (bool descending : {false, true})
      EXPECT_TRUE(check_sort({Algorithm::radix_reduce_scan, key, 4, descending, 20000,
                              Distribution::uniform, begin, end}));
}

}  // namespace
}  // namespace gpusort::test
