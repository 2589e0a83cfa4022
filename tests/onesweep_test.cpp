// The Onesweep radix sort against std::stable_sort: every key type x values x order x size x
// distribution, bit ranges, a GPU-side count, and the decoupled fallback forced by tiles that
// never publish their counts (with a look-back table short enough that its slots wrap).
#include "algorithms/onesweep.hpp"
#include "test_support.hpp"
#include "vulkan/buffer.hpp"

#include <algorithm>
#include <numeric>

namespace gpusort::test {
namespace {

class Onesweep : public ::testing::TestWithParam<Combo> {};

// Around a subgroup, a workgroup and a tile on lavapipe (64 invocations x 8 keys = 512 keys), and
// many tiles with a remainder.
const uint64_t small_sizes[] = {0, 1, 2, 7, 65, 511, 513, 4097, 3 * 4096 + 77};

TEST_P(Onesweep, MatchesStableSortOnEveryDistributionAndSize) {
  const Combo c = GetParam();
  for (uint64_t n : small_sizes)
    for (Distribution d : all_distributions())
      EXPECT_TRUE(check_sort({Algorithm::onesweep, c.key, c.value_bytes, c.descending, n, d}));
}

TEST_P(Onesweep, MatchesStableSortWhenTheLookbackTableWraps) {
  const Combo c = GetParam();
  // More tiles than the look-back table has slots (1172 of 512 keys on lavapipe), so slots are
  // reused within a pass.
  EXPECT_TRUE(check_sort({Algorithm::onesweep, c.key, c.value_bytes, c.descending, 600'001,
                          Distribution::low_entropy}));
}

INSTANTIATE_TEST_SUITE_P(AllKeyTypes, Onesweep, ::testing::ValuesIn(all_combos()), combo_name);

TEST(OnesweepBits, SortsOnlyTheRequestedBitRange) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 4u, 20u}, std::tuple{KeyType::u64, 28u, 44u},
                                 std::tuple{KeyType::f32, 0u, 8u}, std::tuple{KeyType::i64, 40u, 64u},
                                 std::tuple{KeyType::u32, 3u, 4u}})
    for (bool descending : {false, true})
      EXPECT_TRUE(check_sort({Algorithm::onesweep, key, 4, descending, 20000, Distribution::uniform,
                              begin, end}));
}

// u64 keys with values whose high 40 bits are constant: five of eight passes are skipped on the
// GPU, an odd number of passes run (so the result is copied back from scratch).
TEST(OnesweepSkipping, SkipsPassesWhoseDigitIsTheSameForAllKeys) {
  for (uint64_t n : {5000ull, 70001ull})
    for (bool descending : {false, true})
      for (uint32_t value_bytes : {0u, 8u}) {
        EXPECT_TRUE(check_sort({Algorithm::onesweep, KeyType::u64, value_bytes, descending, n,
                                Distribution::uniform, 0, 24}));
        EXPECT_TRUE(check_sort({Algorithm::onesweep, KeyType::u32, value_bytes, descending, n,
                                Distribution::all_equal}));
      }
}

// Sorts u32 keys with u32 values (the identity) through an algorithm built with explicit Onesweep
// options, n given on the host or read from a GPU buffer, and checks the whole output.
::testing::AssertionResult check_onesweep(const OnesweepOptions& options, uint64_t n, uint64_t max_n,
                                          bool indirect, bool descending, bool expect_fallbacks = false) {
  auto& impl = context().impl();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  auto bits = make_key_bits(KeyType::u32, max_n, Distribution::low_entropy, rng);
  std::vector<uint32_t> keys(bits.begin(), bits.end()), values(max_n);
  std::iota(values.begin(), values.end(), 0u);
  const SortSpec spec = make_sort_spec(KeyType::u32, 4, descending, 0, 0);
  auto algorithm = make_onesweep(impl, spec, options);
  DeviceBuffer key_buffer(impl, max_n * 4, MemoryKind::device_local);
  DeviceBuffer value_buffer(impl, max_n * 4, MemoryKind::device_local);
  DeviceBuffer scratch(impl, algorithm->scratch_bytes(max_n), MemoryKind::device_local);
  DeviceBuffer count(impl, 4, MemoryKind::device_local);
  const uint32_t n32 = uint32_t(n);
  upload(impl, key_buffer, keys.data(), max_n * 4);
  upload(impl, value_buffer, values.data(), max_n * 4);
  upload(impl, count, &n32, 4);
  // Two sorts in a row on the same scratch: stale look-back entries of the first must not leak
  // into the second.
  for (int repeat = 0; repeat < 2; ++repeat)
    impl.submit([&](VkCommandBuffer cmd) {
      Recorder rec(impl, cmd);
      SortTargets t{key_buffer.address(), value_buffer.address(), scratch.address(), scratch.buffer(), 0,
                    indirect ? count.address() : 0, indirect ? max_n : n};
      algorithm->record(rec, t);
    });
  std::vector<uint32_t> got_keys(max_n), got_values(max_n);
  download(impl, key_buffer, got_keys.data(), max_n * 4);
  download(impl, value_buffer, got_values.data(), max_n * 4);
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return descending ? keys[a] > keys[b] : keys[a] < keys[b];
  });
  for (uint64_t i = 0; i < max_n; ++i) {
    // Beyond n (indirect), the buffers must be untouched.
    uint32_t want_value = i < n ? order[i] : uint32_t(i);
    if (got_keys[i] != keys[want_value] || got_values[i] != want_value)
      return ::testing::AssertionFailure()
             << "seed " << seed << " n " << n << " max_n " << max_n << ": element " << i << " is ("
             << got_keys[i] << ", " << got_values[i] << "), expected (" << keys[want_value] << ", "
             << want_value << ")";
  }
  if (expect_fallbacks) {
    // The last sort's look-backs must really have recounted tiles.
    DeviceBuffer fallbacks(impl, 4, MemoryKind::device_local);
    impl.submit([&](VkCommandBuffer cmd) {
      VkBufferCopy c{algorithm->fallback_count_offset(max_n), 0, 4};
      vkCmdCopyBuffer(cmd, scratch.buffer(), fallbacks.buffer(), 1, &c);
    });
    uint32_t count = 0;
    download(impl, fallbacks, &count, 4);
    if (count == 0) return ::testing::AssertionFailure() << "n " << n << ": no look-back fell back";
  }
  if (impl.validation_messages.load() != 0)
    return ::testing::AssertionFailure() << "validation messages";
  return ::testing::AssertionSuccess();
}

TEST(OnesweepFallback, TilesThatNeverPublishAreCountedByTheirSuccessors) {
  // Every third tile publishes nothing; successors give up after two look-back rounds, recount
  // it and insert its counts. Eight slots make the table wrap many times per pass.
  OnesweepOptions options{.lookback_slots = 8, .spin_limit = 2, .publish_refusal_period = 3};
  // (40000 keys are at least three tiles on every device, 1537 only on lavapipe.)
  EXPECT_TRUE(check_onesweep(options, 1, 1, false, false));
  for (bool descending : {false, true}) {
    EXPECT_TRUE(check_onesweep(options, 3 * 512 + 1, 3 * 512 + 1, false, descending));
    EXPECT_TRUE(check_onesweep(options, 40000, 40000, false, descending, true));
  }
  // Only the first tile refuses: everybody must recount back to the start.
  options.publish_refusal_period = 1;
  EXPECT_TRUE(check_onesweep(options, 9000, 9000, false, false, true));
}

TEST(OnesweepIndirect, ReadsTheCountFromTheGpu) {
  for (auto [n, max_n] : {std::pair{0ull, 5000ull}, std::pair{1ull, 5000ull}, std::pair{2ull, 5000ull},
                          std::pair{4097ull, 5000ull}, std::pair{5000ull, 5000ull}})
    EXPECT_TRUE(check_onesweep({}, n, max_n, true, false));
}

}  // namespace
}  // namespace gpusort::test
