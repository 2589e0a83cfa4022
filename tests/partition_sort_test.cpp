// The partition sort (src/algorithms/partition_sort/partition_sort.cpp) against std::stable_sort: every key type
// x values x order x size x distribution through the public face, bit ranges, and the inputs that
// break bucket sorts (all keys equal, few distinct keys, one bucket holding 99 %, sorted,
// reversed, keys differing only in their low bits, NaN-laden floats) through the internal face,
// where each check also reads back which path the GPU took (partition by which digit, or
// Onesweep) and asserts it, with a GPU-side count and with several buckets and one huge one.
#include "algorithms/partition_sort/partition_sort.hpp"
#include "algorithms/onesweep/onesweep.hpp"
#include "test_support.hpp"
#include "vulkan/buffer.hpp"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace gpusort::test {
namespace {

class PartitionSort : public ::testing::TestWithParam<Combo> {};

// Around lavapipe's tiles (512 keys) and buckets; 20000 keys make many buckets of
// uniform keys and, for few_unique / low_entropy, buckets past the default 2^14-key limit.
const uint64_t sizes[] = {0, 2, 513, 20000};

TEST_P(PartitionSort, MatchesStableSortOnEveryDistributionAndSize) {
  const Combo c = GetParam();
  for (uint64_t n : sizes)
    for (Distribution d : all_distributions())
      EXPECT_TRUE(check_sort({Algorithm::partition, c.key, c.value_bytes, c.descending, n, d}));
}

INSTANTIATE_TEST_SUITE_P(AllKeyTypes, PartitionSort, ::testing::ValuesIn(all_combos()), combo_name);

TEST(PartitionSortBits, SortsOnlyTheRequestedBitRange) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 4u, 20u}, std::tuple{KeyType::u64, 28u, 44u},
                                 std::tuple{KeyType::f32, 0u, 8u}, std::tuple{KeyType::i64, 40u, 64u},
                                 std::tuple{KeyType::u32, 3u, 4u}})
    for (bool descending : {false, true})
      EXPECT_TRUE(check_sort({Algorithm::partition, key, 4, descending, 20000,
                              Distribution::uniform, begin, end}));
}

struct PathCase {
  KeyType key = KeyType::u32;
  uint32_t value_bytes = 4;
  bool descending = false;
  uint32_t max_bucket = 0;  // 0: the device's tuned value
  int32_t expected_digit = -1;  // the partition digit's pass + 1; 0: Onesweep's path; -1: any
  uint64_t n = 0;               // with a GPU-side count when n < bits.size()
};

// Sorts `bits` (the first c.n of them where c.n is smaller: count read on the GPU, the rest
// must stay untouched) with values = input index, twice on the same scratch, and checks the whole
// output against std::stable_sort and the path the GPU chose.
::testing::AssertionResult check_path(const PathCase& c, const std::vector<uint64_t>& bits,
                                      const std::string& what) {
  auto& impl = context().impl();
  const uint64_t max_n = bits.size(), n = c.n ? c.n : max_n;
  const bool indirect = n < max_n;
  const SortSpec spec = make_sort_spec(c.key, c.value_bytes, c.descending, 0, 0);
  const uint32_t key_bytes = spec.key_words * 4;
  auto algorithm = make_partition_sort(impl, spec, c.max_bucket);
  std::vector<uint8_t> key_data(max_n * key_bytes), value_data(max_n * c.value_bytes);
  std::vector<uint64_t> values(max_n);
  for (uint64_t i = 0; i < max_n; ++i) {
    values[i] = i ^ (c.value_bytes == 8 ? 0xA5A5A5A500000000ull : 0);
    std::memcpy(&key_data[i * key_bytes], &bits[i], key_bytes);
    std::memcpy(&value_data[i * c.value_bytes], &values[i], c.value_bytes);
  }
  DeviceBuffer key_buffer(impl, std::max<uint64_t>(key_data.size(), 4), MemoryKind::device_local);
  DeviceBuffer value_buffer(impl, std::max<uint64_t>(value_data.size(), 4), MemoryKind::device_local);
  const uint64_t scratch_bytes = algorithm->scratch_bytes(max_n);
  DeviceBuffer scratch(impl, scratch_bytes, MemoryKind::device_local);
  DeviceBuffer count(impl, 4, MemoryKind::device_local);
  const uint32_t n32 = uint32_t(n);
  upload(impl, count, &n32, 4);
  std::vector<uint8_t> poison(scratch_bytes, 0xA7);
  upload(impl, scratch, poison.data(), scratch_bytes);
  for (int repeat = 0; repeat < 2; ++repeat) {
    upload(impl, key_buffer, key_data.data(), key_data.size());
    if (c.value_bytes) upload(impl, value_buffer, value_data.data(), value_data.size());
    impl.submit([&](VkCommandBuffer cmd) {
      Recorder rec(impl, cmd);
      algorithm->record(rec, {key_buffer.address(), c.value_bytes ? value_buffer.address() : 0,
                              scratch.address(), scratch.buffer(), 0,
                              indirect ? count.address() : 0, indirect ? max_n : n});
    });
  }
  std::vector<uint8_t> got_keys(key_data.size()), got_values(value_data.size());
  download(impl, key_buffer, got_keys.data(), got_keys.size());
  if (c.value_bytes) download(impl, value_buffer, got_values.data(), got_values.size());

  auto describe = [&] {
    std::ostringstream s;
    s << what << ": " << to_string(c.key) << " values=" << c.value_bytes
      << (c.descending ? " descending" : " ascending") << " n=" << n << " max_n=" << max_n
      << " max_bucket=" << c.max_bucket;
    return s.str();
  };
  std::vector<uint64_t> order(max_n);
  std::iota(order.begin(), order.end(), 0);
  auto sort_key = [&](uint64_t i) { return radix_order(c.key, bits[i], c.descending); };
  std::stable_sort(order.begin(), order.begin() + n,
                   [&](uint64_t a, uint64_t b) { return sort_key(a) < sort_key(b); });
  const uint64_t value_mask = c.value_bytes == 8 ? ~0ull : 0xffffffffull;
  for (uint64_t i = 0; i < max_n; ++i) {
    uint64_t got_key = 0, got_value = 0;
    std::memcpy(&got_key, &got_keys[i * key_bytes], key_bytes);
    std::memcpy(&got_value, &got_values[i * c.value_bytes], c.value_bytes);
    const uint64_t want_value = c.value_bytes ? values[order[i]] & value_mask : 0;
    if (got_key != bits[order[i]] || got_value != want_value)
      return ::testing::AssertionFailure()
             << describe() << ": element " << i << " is (0x" << std::hex << got_key << ", 0x"
             << got_value << "), expected (0x" << bits[order[i]] << ", 0x" << want_value << ")";
  }
  if (c.expected_digit >= 0) {
    // The partition sort's scratch starts with Onesweep's: its control words.
    auto onesweep = make_onesweep(impl, spec, OnesweepOptions{});
    const uint64_t control = onesweep->plan_offset(max_n) - OnesweepSort::max_passes * 4;
    uint32_t chosen = 0;
    download_range(scratch, control + OnesweepSort::control_partition_digit * 4, &chosen, 4);
    if (int32_t(chosen) != c.expected_digit)
      return ::testing::AssertionFailure() << describe() << ": the GPU chose digit " << chosen
                                           << ", expected " << c.expected_digit
                                           << " (0: Onesweep's passes)";
    // Onesweep's passes and copy-back run workgroups exactly where its plan words (cleared when
    // the keys were partitioned) say they run.
    std::vector<uint32_t> plan(OnesweepSort::max_passes + 1);
    std::vector<VkDispatchIndirectCommand> commands(OnesweepSort::max_passes + 2);
    download_range(scratch, onesweep->plan_offset(max_n), plan.data(), plan.size() * 4);
    download_range(scratch, onesweep->dispatch_offset(max_n), commands.data(),
                   commands.size() * sizeof(VkDispatchIndirectCommand));
    // The passes of a full-width key (one per byte), then the copy-back.
    const uint32_t passes = key_bytes;
    for (uint32_t step = 0; step <= OnesweepSort::max_passes; ++step) {
      if (step >= passes && step < OnesweepSort::max_passes) continue;  // never dispatched
      const VkDispatchIndirectCommand& command = commands[1 + step];
      const bool runs = uint64_t(command.x) * command.y * command.z != 0;
      if (runs != ((plan[step] & 1u) != 0))
        return ::testing::AssertionFailure()
               << describe() << ": "
               << (step < OnesweepSort::max_passes ? "pass " + std::to_string(step)
                                                   : "the copy-back")
               << (runs ? " runs workgroups although its plan word is clear"
                        : " runs no workgroup although its plan word is set");
    }
  }
  return no_new_validation_messages();
}

std::vector<uint64_t> random_bits(uint64_t n, uint64_t mask, std::mt19937_64& rng) {
  std::vector<uint64_t> bits(n);
  for (auto& b : bits) b = rng() & mask;
  return bits;
}

constexpr uint64_t u32_mask = 0xffffffffull;

TEST(PartitionSortPaths, UniformKeysArePartitionedByTheTopDigit) {
  std::mt19937_64 rng(fresh_seed());
  for (uint32_t value_bytes : {0u, 4u, 8u})
    for (bool descending : {false, true}) {
      EXPECT_TRUE(check_path({KeyType::u32, value_bytes, descending, 0, 4},
                             random_bits(30000, u32_mask, rng), "uniform u32"));
      EXPECT_TRUE(check_path({KeyType::u64, value_bytes, descending, 0, 8},
                             random_bits(30000, ~0ull, rng), "uniform u64"));
    }
}

TEST(PartitionSortPaths, AGpuSideCountLeavesTheRestUntouched) {
  std::mt19937_64 rng(fresh_seed());
  for (uint64_t n : {0ull, 1ull, 2ull, 777ull, 25000ull})
    EXPECT_TRUE(check_path({KeyType::u32, 4, false, 0, -1, n}, random_bits(30000, u32_mask, rng),
                           "indirect count"));
  // The count picks the partition path, or Onesweep's, on the GPU.
  EXPECT_TRUE(check_path({KeyType::u32, 4, false, 50, 4, 1000}, random_bits(30000, u32_mask, rng),
                         "indirect count, small buckets"));
  EXPECT_TRUE(check_path({KeyType::u32, 4, false, 50, 0, 29000}, random_bits(30000, u32_mask, rng),
                         "indirect count, buckets too big"));
}

TEST(PartitionSortPaths, AllKeysEqualTakeOnesweep) {
  for (KeyType key : {KeyType::u32, KeyType::f64})
    EXPECT_TRUE(check_path({key, 4, false, 0, 0}, std::vector<uint64_t>(20000, 0x3ff0000012345678ull & (key == KeyType::u32 ? u32_mask : ~0ull)),
                           "all equal"));
}

TEST(PartitionSortPaths, OneBucketHolding99PercentTakesOnesweepOrOneHugeBucket) {
  std::mt19937_64 rng(fresh_seed());
  const uint64_t n = 40000;
  std::vector<uint64_t> bits = random_bits(n, u32_mask, rng);
  for (uint64_t i = 0; i < n; ++i)
    if (i % 100 != 0) bits[i] = (0x7Bull << 24) | (bits[i] & 0xffffff);
  for (bool descending : {false, true}) {
    EXPECT_TRUE(check_path({KeyType::u32, 4, descending, 0, 0}, bits, "one bucket 99 %"));
    // Allowed to partition: a bucket of 39600 keys beside near-empty ones.
    EXPECT_TRUE(check_path({KeyType::u32, 4, descending, uint32_t(n), 4}, bits,
                           "one bucket 99 %, partitioned"));
  }
}

TEST(PartitionSortPaths, FewDistinctKeys) {
  std::mt19937_64 rng(fresh_seed());
  std::vector<uint64_t> distinct = random_bits(5, ~0ull, rng);
  std::vector<uint64_t> bits(30000);
  for (auto& b : bits) b = distinct[rng() % distinct.size()];
  // ~6000 keys per bucket: Onesweep's path below that bucket limit, the partition above it.
  EXPECT_TRUE(check_path({KeyType::i64, 8, false, 3000, 0}, bits, "five distinct keys"));
  EXPECT_TRUE(check_path({KeyType::i64, 8, true, 30000, 8}, bits, "five distinct keys, partitioned"));
}

TEST(PartitionSortPaths, SortedAndReversedInput) {
  std::mt19937_64 rng(fresh_seed());
  std::vector<uint64_t> bits = random_bits(30000, u32_mask, rng);
  std::sort(bits.begin(), bits.end());
  EXPECT_TRUE(check_path({KeyType::u32, 4, false, 0, 4}, bits, "sorted"));
  std::reverse(bits.begin(), bits.end());
  EXPECT_TRUE(check_path({KeyType::u32, 4, false, 0, 4}, bits, "reversed"));
}

TEST(PartitionSortPaths, KeysDifferingOnlyInLowBitsArePartitionedByTheHighestDigitThatDiffers) {
  std::mt19937_64 rng(fresh_seed());
  // u32 keys below 2^12: digits 3 and 2 are zero for every key, so digit 1 (bits 8..11) is the
  // highest that differs: 16 buckets of ~1900 keys.
  EXPECT_TRUE(check_path({KeyType::u32, 4, false, 0, 2}, random_bits(30000, 0xfff, rng),
                         "u32 below 2^12"));
  // u64 keys with a constant high half and random bits 16..23 and 0..7 only: digit 2.
  std::vector<uint64_t> bits = random_bits(30000, 0xff00ffull, rng);
  for (auto& b : bits) b |= 0x1234567800000000ull;
  EXPECT_TRUE(check_path({KeyType::u64, 4, true, 0, 3}, bits, "u64, low bits"));
}

TEST(PartitionSortPaths, NanLadenFloats) {
  std::mt19937_64 rng(fresh_seed());
  for (KeyType key : {KeyType::f32, KeyType::f64})
    for (bool descending : {false, true})
      EXPECT_TRUE(check_path({key, 4, descending, 30000, -1},
                             make_key_bits(key, 30000, Distribution::special_floats, rng),
                             "special floats"));
}

}  // namespace
}  // namespace gpusort::test
