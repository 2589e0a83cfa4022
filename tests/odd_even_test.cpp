// Odd-even transposition sort against std::stable_sort (stable, so values are checked exactly):
// every key type x values x order x distribution at sizes up to one workgroup's shared memory,
// the full sweep around every power of two for one key setup, and the refusal of larger n.
#include "test_support.hpp"

#include "algorithms/networks/networks.hpp"
#include "algorithms/small_sort/small_sort.hpp"
#include "vulkan/context_impl.hpp"

namespace gpusort::test {
namespace {

uint64_t capacity(const Combo& c) {
  return odd_even_capacity(context().impl(), make_sort_spec(c.key, c.value_bytes, c.descending, 0, 0));
}

class OddEven : public ::testing::TestWithParam<Combo> {};

TEST_P(OddEven, MatchesStableSortOnEveryDistribution) {
  const Combo c = GetParam();
  for (uint64_t n : {0ull, 1ull, 2ull, 3ull, 65ull, 1000ull})
    for (Distribution d : all_distributions())
      EXPECT_TRUE(check_sort({Algorithm::odd_even, c.key, c.value_bytes, c.descending, n, d}));
  // The largest array that fits: n phases of n/2 pairs, so one distribution only on lavapipe.
  EXPECT_TRUE(check_sort({Algorithm::odd_even, c.key, c.value_bytes, c.descending, capacity(c),
                          Distribution::few_unique}));
}

TEST_P(OddEven, RefusesMoreThanSharedMemoryHolds) {
  const Combo c = GetParam();
  const uint64_t n = capacity(c) + 1;
  std::vector<uint64_t> keys(n);
  std::vector<uint64_t> values(n);
  SortOptions options{c.descending, Algorithm::odd_even};
  try {
    sort_raw(context(), c.key, keys.data(), n, c.value_bytes ? values.data() : nullptr,
             c.value_bytes, options);
    ADD_FAILURE() << "odd_even accepted " << n << " keys";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("odd_even sorts at most " + std::to_string(n - 1)),
              std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(AllKeyTypes, OddEven, ::testing::ValuesIn(all_combos()), combo_name);

TEST(OddEvenSizes, EveryPowerOfTwoNeighbourThatFits) {
  const Combo c{KeyType::i32, 4, false};
  for (uint64_t n : sizes_around_powers_of_two(capacity(c)))
    EXPECT_TRUE(check_sort({Algorithm::odd_even, c.key, c.value_bytes, c.descending, n,
                            Distribution::few_unique}));
}

TEST(OddEvenBits, SortsOnlyTheRequestedBitRange) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 4u, 20u}, std::tuple{KeyType::u64, 28u, 44u}})
    EXPECT_TRUE(check_sort({Algorithm::odd_even, key, 4, false, 1500, Distribution::uniform, begin, end}));
}

}  // namespace
}  // namespace gpusort::test
