// The Onesweep radix sort against std::stable_sort: every key type x values x order x size x
// distribution, bit ranges, a GPU-side count, the passes skipped where a digit is the same for
// every key (read back from the GPU's plan), and the decoupled fallback forced by tiles that never
// publish their counts (with a look-back table short enough that its slots wrap).
#include "algorithms/onesweep/onesweep.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <sstream>

#include "test_support.hpp"
#include "vulkan/buffer.hpp"

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
  for (auto [key, begin, end] :
       {std::tuple{KeyType::u32, 4u, 20u}, std::tuple{KeyType::u64, 28u, 44u},
        std::tuple{KeyType::f32, 0u, 8u}, std::tuple{KeyType::i64, 40u, 64u},
        std::tuple{KeyType::u32, 3u, 4u}})
    for (bool descending : {false, true})
      EXPECT_TRUE(check_sort(
          {Algorithm::onesweep, key, 4, descending, 20000, Distribution::uniform, begin, end}));
}

// Onesweep's input for the checks below: max_n keys whose bits outside `varying` are one random
// constant (so only the passes of the varying digits run), with values (their input positions,
// high bits scrambled for 8-byte values), sorted over the whole key width. n is max_n, given on
// the host, or with gpu_count min(*gpu_count, max_n), read on the GPU.
struct PartlyConstantKeys {
  KeyType key = KeyType::u32;
  uint32_t value_bytes = 0;
  bool descending = false;
  uint64_t varying = ~0ull;
  uint64_t max_n = 0;
  std::optional<uint32_t> gpu_count;
  int32_t claim_by_id = -1;  // OnesweepOptions::claim_by_id
  int32_t persistent_groups = -1;  // OnesweepOptions::persistent_groups
  int32_t prefetch_next = -1;      // OnesweepOptions::prefetch_next
};

// What check_partly_constant_keys leaves for further checks.
struct SortedKeys {
  std::string description;
  std::vector<uint64_t> sort_keys;  // the input's keys in radix order (descending inverted)
  std::vector<uint32_t> plan;       // the plan read back: max_passes words, then the copy-back flag
};

// Sorts c on poisoned scratch (a dispatch or pass that reads what it did not write shows) and
// checks every element: the first n against std::stable_sort, the rest as they were.
::testing::AssertionResult check_partly_constant_keys(const PartlyConstantKeys& c,
                                                      SortedKeys& sorted) {
  auto& impl = context().impl();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const SortSpec spec = make_sort_spec(c.key, c.value_bytes, c.descending, 0, 0);
  const uint32_t key_bytes = spec.key_words * 4, value_bytes = c.value_bytes;
  const uint64_t max_n = c.max_n, n = std::min<uint64_t>(c.gpu_count.value_or(max_n), max_n);
  const uint64_t width_mask = key_bytes == 8 ? ~0ull : (1ull << 32) - 1;
  const uint64_t constant = rng() & ~c.varying & width_mask;
  std::vector<uint64_t> bits(max_n), values(max_n);
  std::vector<uint8_t> key_data(max_n * key_bytes), value_data(max_n * value_bytes);
  for (uint64_t i = 0; i < max_n; ++i) {
    bits[i] = constant | (rng() & c.varying & width_mask);
    values[i] = i ^ (value_bytes == 8 ? 0xA5A5A5A500000000ull : 0);
    std::memcpy(&key_data[i * key_bytes], &bits[i], key_bytes);
    std::memcpy(&value_data[i * value_bytes], &values[i], value_bytes);
  }
  std::ostringstream description;
  description << to_string(c.key) << " values=" << value_bytes
              << (c.descending ? " descending" : " ascending") << " n=" << n;
  if (c.gpu_count) description << " (GPU count " << *c.gpu_count << ", max_n " << max_n << ")";
  description << " varying=0x" << std::hex << c.varying << std::dec << " seed=" << seed
              << " tiles by id " << c.claim_by_id << " persistent groups " << c.persistent_groups
              << " prefetch " << c.prefetch_next;
  sorted.description = description.str();

  OnesweepOptions options;
  options.claim_by_id = c.claim_by_id;
  options.persistent_groups = c.persistent_groups;
  options.prefetch_next = c.prefetch_next;
  auto algorithm = make_onesweep(impl, spec, options);
  DeviceBuffer key_buffer(impl, std::max<uint64_t>(max_n * key_bytes, 4), MemoryKind::device_local);
  DeviceBuffer value_buffer(impl, std::max<uint64_t>(max_n * value_bytes, 4),
                            MemoryKind::device_local);
  DeviceBuffer count(impl, 4, MemoryKind::device_local);
  const uint64_t scratch_bytes = algorithm->scratch_bytes(max_n);
  DeviceBuffer scratch(impl, scratch_bytes, MemoryKind::device_local);
  upload(impl, key_buffer, key_data.data(), key_data.size());
  if (value_bytes) upload(impl, value_buffer, value_data.data(), value_data.size());
  if (c.gpu_count) upload(impl, count, &*c.gpu_count, 4);
  std::vector<uint8_t> poison(scratch_bytes, 0xA7);
  upload(impl, scratch, poison.data(), scratch_bytes);
  impl.submit([&](VkCommandBuffer cmd) {
    Recorder rec(impl, cmd);
    algorithm->record(
        rec, {key_buffer.address(), value_bytes ? value_buffer.address() : 0, scratch.address(),
              scratch.buffer(), 0, c.gpu_count ? count.address() : 0, max_n});
  });
  download(impl, key_buffer, key_data.data(), key_data.size());
  if (value_bytes) download(impl, value_buffer, value_data.data(), value_data.size());

  sorted.sort_keys.resize(max_n);
  for (uint64_t i = 0; i < max_n; ++i)
    sorted.sort_keys[i] = radix_order(c.key, bits[i], c.descending);
  std::vector<uint64_t> order(max_n);
  std::iota(order.begin(), order.end(), 0);  // beyond n: untouched
  std::stable_sort(order.begin(), order.begin() + n, [&](uint64_t a, uint64_t b) {
    return sorted.sort_keys[a] < sorted.sort_keys[b];
  });
  for (uint64_t i = 0; i < max_n; ++i) {
    uint64_t got_key = 0, got_value = 0;
    std::memcpy(&got_key, &key_data[i * key_bytes], key_bytes);
    std::memcpy(&got_value, &value_data[i * value_bytes], value_bytes);
    const uint64_t want_value =
        value_bytes ? values[order[i]] & (value_bytes == 8 ? ~0ull : 0xffffffffull) : 0;
    if (got_key != bits[order[i]] || got_value != want_value) {
      // One stream: AssertionResult formats each << on its own, dropping std::hex.
      std::ostringstream what;
      what << ": element " << i << std::hex << " is (0x" << got_key << ", 0x" << got_value
           << "), expected (0x" << bits[order[i]] << ", 0x" << want_value << ")";
      return ::testing::AssertionFailure() << sorted.description << what.str();
    }
  }
  sorted.plan.resize(OnesweepSort::max_passes + 1);
  download_range(scratch, algorithm->plan_offset(max_n), sorted.plan.data(),
                 sorted.plan.size() * 4);
  return no_new_validation_messages();
}

// After check_partly_constant_keys(c, sorted): checks that exactly the passes whose digit (of the
// first n keys in radix order) is not the same for every key ran, and the copy-back flag; counts
// the passes that ran into *ran.
::testing::AssertionResult check_plan(const PartlyConstantKeys& c, const SortedKeys& sorted,
                                      uint32_t* ran) {
  const uint64_t n = std::min<uint64_t>(c.gpu_count.value_or(c.max_n), c.max_n);
  const uint32_t passes = key_bytes(c.key);  // 8-bit digits
  *ran = 0;
  for (uint32_t pass = 0; pass < passes; ++pass) {
    auto digit = [&](uint64_t i) { return (sorted.sort_keys[i] >> (8 * pass)) & 0xff; };
    bool varies = false;
    for (uint64_t i = 1; i < n && !varies; ++i) varies = digit(i) != digit(0);
    *ran += varies ? 1 : 0;
    if (bool(sorted.plan[pass] & 1u) != varies)
      return ::testing::AssertionFailure()
             << sorted.description << ": pass " << pass << (varies ? " was skipped" : " ran")
             << ", although its digit " << (varies ? "varies" : "is the same for all keys");
  }
  if (sorted.plan[OnesweepSort::max_passes] != *ran % 2)
    return ::testing::AssertionFailure()
           << sorted.description << ": copy-back flag " << sorted.plan[OnesweepSort::max_passes]
           << " after " << *ran << " passes";
  return ::testing::AssertionSuccess();
}

// Partly constant keys sorted with n on the host: checks the whole output, and that exactly the
// passes whose digit (of the keys in radix order) is not the same for every key ran.
::testing::AssertionResult check_pass_skipping(KeyType key, uint32_t value_bytes, bool descending,
                                               uint64_t varying, uint64_t n) {
  const PartlyConstantKeys c{key, value_bytes, descending, varying, n};
  SortedKeys sorted;
  if (auto r = check_partly_constant_keys(c, sorted); !r) return r;
  uint32_t ran = 0;
  if (auto r = check_plan(c, sorted, &ran); !r) return r;
  if (ran == 0 || ran == key_bytes(key))
    return ::testing::AssertionFailure()
           << sorted.description << ": the case skips no pass or every pass";
  return ::testing::AssertionSuccess();
}

// Keys whose digits are partly constant: only the other passes run, in any pattern (a leading,
// middle or trailing run of skipped passes; one pass alone, which then both maps the keys to radix
// order and back), with an odd count (result copied back from scratch) and an even one.
TEST(OnesweepSkipping, RunsOnlyThePassesWhoseDigitVaries) {
  for (uint64_t n : {700ull, 20001ull}) {
    EXPECT_TRUE(check_pass_skipping(KeyType::u64, 0, false, 0xffffff, n));  // 3 of 8
    EXPECT_TRUE(check_pass_skipping(KeyType::u64, 8, true, 0xffffff, n));
    EXPECT_TRUE(check_pass_skipping(KeyType::u32, 4, false, 0xff00ff00, n));             // 1 and 3
    EXPECT_TRUE(check_pass_skipping(KeyType::i32, 0, true, 0x0000ff00, n));              // 1 alone
    EXPECT_TRUE(check_pass_skipping(KeyType::i64, 4, false, 0x00ff00000000ff00ull, n));  // 1 and 5
    EXPECT_TRUE(check_pass_skipping(KeyType::f32, 8, true, 0x007f0000, n));              // 2 alone
    EXPECT_TRUE(check_pass_skipping(KeyType::f64, 4, false, 0x00ffff0000000000ull, n));  // 5 and 6
  }
}

// The last histogram workgroup to finish makes the plan (onesweep_histogram.comp). Many histogram
// workgroups (8192 keys each: 129 for max_n here), n on the host or a GPU-side count that runs
// only some of them (2, 37), and keys whose high digits are the same for every key (those passes
// skipped, an even or odd number run) or none: the plan must still see every workgroup's counts,
// so the whole output and the plan words are checked.
TEST(OnesweepPlan, TheLastHistogramWorkgroupPlansFromEveryWorkgroupsCounts) {
  const uint64_t max_n = (1u << 20) + 4321;
  for (uint64_t varying : {0xffffull, 0xffffffull, ~0ull})
    for (std::optional<uint32_t> count :
         {std::optional<uint32_t>(), std::optional(300'001u), std::optional(8193u)}) {
      const PartlyConstantKeys c{KeyType::u32, 4, false, varying, max_n, count};
      SortedKeys sorted;
      uint32_t ran = 0;
      const ::testing::AssertionResult output = check_partly_constant_keys(c, sorted);
      EXPECT_TRUE(output);
      if (output) EXPECT_TRUE(check_plan(c, sorted, &ran));
    }
}

// Every pass skipped: all keys equal, nothing moves.
TEST(OnesweepSkipping, LeavesAllEqualKeysInPlace) {
  for (uint64_t n : {5000ull, 70001ull})
    for (bool descending : {false, true})
      for (uint32_t value_bytes : {0u, 8u})
        EXPECT_TRUE(check_sort({Algorithm::onesweep, KeyType::u32, value_bytes, descending, n,
                                Distribution::all_equal}));
}

// Beyond the key/value ping-pong copies, scratch holds a state block whose look-back table has a
// fixed number of slots (fewer when there are fewer tiles than slots: 2^22 keys are 410 of the
// H100's 10240-key tiles, which a 512-slot table holds): at most 2,105,600 bytes for every n, and
// the same bytes for every n from 2^26 (over 1024 tiles on every device's tile shape).
TEST(OnesweepScratch, StateBeyondTheCopiesDoesNotGrowWithN) {
  auto& impl = context().impl();
  for (const Combo& c : all_combos()) {
    const SortSpec spec = make_sort_spec(c.key, c.value_bytes, c.descending, 0, 0);
    auto algorithm = make_onesweep(impl, spec, OnesweepOptions{});
    auto state_bytes = [&](uint64_t n) {
      return algorithm->scratch_bytes(n) - align_up(n * spec.key_words * 4, 256) -
             align_up(n * spec.value_words * 4, 256);
    };
    const uint64_t large = state_bytes(1ull << 26);
    for (uint64_t n : {1ull << 26, 1ull << 28, 1ull << 30, (1ull << 31) - 1})
      EXPECT_EQ(state_bytes(n), large) << to_string(c.key) << " values " << c.value_bytes;
    for (uint64_t n : {1ull << 10, 1ull << 16, 1ull << 22, 1ull << 26, (1ull << 31) - 1})
      EXPECT_LE(state_bytes(n), 2'105'600u) << to_string(c.key) << " values " << c.value_bytes;
  }
}

// Sorts u32 keys with u32 values (the identity) through an algorithm built with explicit Onesweep
// options, n given on the host or read from a GPU buffer, and checks the whole output.
::testing::AssertionResult check_onesweep(const OnesweepOptions& options, uint64_t n,
                                          uint64_t max_n, bool indirect, bool descending,
                                          bool expect_fallbacks = false) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  auto bits = make_key_bits(KeyType::u32, max_n, Distribution::low_entropy, rng);
  const std::vector<uint32_t> keys(bits.begin(), bits.end());
  auto algorithm =
      make_onesweep(context().impl(), make_sort_spec(KeyType::u32, 4, descending, 0, 0), options);
  // Two sorts in a row on the same scratch: stale look-back entries of the first must not leak
  // into the second. With expect_fallbacks, the last sort's look-backs must really have recounted
  // tiles.
  auto fallbacks = [&](const DeviceBuffer& scratch) -> ::testing::AssertionResult {
    if (!expect_fallbacks) return ::testing::AssertionSuccess();
    uint32_t count = 0;
    download_range(scratch, algorithm->fallback_count_offset(max_n), &count, 4);
    if (count == 0) return ::testing::AssertionFailure() << "n " << n << ": no look-back fell back";
    return ::testing::AssertionSuccess();
  };
  return check_u32_pairs(*algorithm, keys, n, indirect, descending, "seed " + std::to_string(seed),
                         2, fallbacks);
}

// The tuning table's mid-size shape (384 x 8 on NVIDIA-like devices, onesweep.cpp: a workgroup that
// is no power of two) on this device, with n on the host and from the GPU, several tiles. Four-lane
// subgroups need 1 KiB of counters for each of 96: there, 192 x 8 (no power of two either).
TEST(OnesweepShapes, TheMidSizeShapeSorts) {
  OnesweepOptions mid;
  mid.workgroup = context().device_info().min_subgroup_size >= 8 ? 384 : 192;
  mid.keys_per_thread = 8;
  for (bool descending : {false, true})
    for (uint64_t n : {uint64_t(3 * 3072 + 123), uint64_t(20000)}) {
      EXPECT_TRUE(check_onesweep(mid, n, n, false, descending));
      EXPECT_TRUE(check_onesweep(mid, n, n + 777, true, descending));
    }
}

// Indices of 2^31 and more are addressed in 64-bit arithmetic (WIDE_INDICES, used by the host only
// beyond 2^31 elements, which lavapipe cannot hold): that code, forced at small n, sorts like the
// narrow one, n on the host and from the GPU, with look-back fallbacks; then 64-bit keys with
// 8-byte values, whose words it addresses differently.
TEST(OnesweepWideIndices, SortLikeTheNarrowOnes) {
  OnesweepOptions wide{.lookback_slots = 8, .spin_limit = 2, .publish_refusal_period = 3};
  wide.wide_indices = true;
  for (bool descending : {false, true}) {
    EXPECT_TRUE(check_onesweep(wide, 30011, 30011, false, descending, true));
    EXPECT_TRUE(check_onesweep(wide, 20000, 20777, true, descending));
  }
  auto& impl = context().impl();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const uint64_t n = 25013;
  std::vector<uint64_t> keys = make_key_bits(KeyType::u64, n, Distribution::few_unique, rng);
  std::vector<uint64_t> values(n);
  std::iota(values.begin(), values.end(), uint64_t(1) << 40);
  auto algorithm = make_onesweep(impl, make_sort_spec(KeyType::u64, 8, true, 0, 0), wide);
  DeviceBuffer key_buffer(impl, n * 8, MemoryKind::device_local);
  DeviceBuffer value_buffer(impl, n * 8, MemoryKind::device_local);
  DeviceBuffer scratch(impl, algorithm->scratch_bytes(n), MemoryKind::device_local);
  upload(impl, key_buffer, keys.data(), n * 8);
  upload(impl, value_buffer, values.data(), n * 8);
  impl.submit([&](VkCommandBuffer cmd) {
    Recorder rec(impl, cmd);
    algorithm->record(rec, SortTargets{key_buffer.address(), value_buffer.address(),
                                       scratch.address(), scratch.buffer(), 0, 0, n});
  });
  std::vector<uint64_t> got_keys(n), got_values(n);
  download(impl, key_buffer, got_keys.data(), n * 8);
  download(impl, value_buffer, got_values.data(), n * 8);
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint64_t a, uint64_t b) { return keys[a] > keys[b]; });
  for (uint64_t i = 0; i < n; ++i)
    ASSERT_TRUE(got_keys[i] == keys[order[i]] && got_values[i] == values[order[i]])
        << "seed " << seed << ": element " << i;
  EXPECT_TRUE(no_new_validation_messages());
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
  // No tile publishes: every tile recounts all of its predecessors.
  options.publish_refusal_period = 1;
  EXPECT_TRUE(check_onesweep(options, 9000, 9000, false, false, true));
}

// Tiles by workgroup id (the device table's choice on NVIDIA, where workgroups start in id order),
// forced here on and off: lavapipe need not start workgroups in that order, so a tile may wait on
// one whose workgroup has not run yet, and the look-back's fallback (two rounds, eight slots) must
// recount it. n on the host and from the GPU (the grid's surplus workgroups return), ascending and
// descending; then partly constant keys with tiles by id, so that passes are skipped and a pass
// reads its keys from the other buffer than its parity suggests (they are requested before the
// plan word arrives, and requested again where that guess was wrong).
TEST(OnesweepTilesById, SortWithAndWithoutTheClaim) {
  for (int32_t by_id : {1, 0}) {
    OnesweepOptions options{.lookback_slots = 8, .spin_limit = 2};
    options.claim_by_id = by_id;
    for (bool descending : {false, true}) {
      EXPECT_TRUE(check_onesweep(options, 40000, 40000, false, descending)) << "by id " << by_id;
      EXPECT_TRUE(check_onesweep(options, 20000, 33333, true, descending)) << "by id " << by_id;
    }
  }
  for (const PartlyConstantKeys& c :
       {PartlyConstantKeys{KeyType::u32, 4, false, 0xff00ff00, 20001, {}, 1},      // passes 1 and 3
        PartlyConstantKeys{KeyType::f32, 0, true, 0x007f0000, 20001, {}, 1},       // 2 alone
        PartlyConstantKeys{KeyType::u64, 8, false, 0xffffff, 20001, 9000u, 1}}) {  // 3 of 8
    SortedKeys sorted;
    uint32_t ran = 0;
    const ::testing::AssertionResult output = check_partly_constant_keys(c, sorted);
    EXPECT_TRUE(output);
    if (output) EXPECT_TRUE(check_plan(c, sorted, &ran));
  }
}

// Persistent workgroups (the device table's choice where it knows the compute units), forced here:
// 1 or 3 workgroups per pass sort every tile, the tile of their id first and then the ones they
// claim while ranking (the product), or every tile by id (i, i + the grid, ...; profiling), with
// and without the next tile's keys requested after the look-back; n on the host and from the GPU
// (the plan caps the grid at the count's tiles), look-back slots that wrap, and every third tile
// refusing to publish (its successors recount it). Then partly constant keys (skipped passes: the
// prefetch must read the next tile from the buffer this pass reads), keys alone (the counters
// inside the exchange array, cleared again for each tile), f32 descending and 64-bit keys with
// 8-byte values.
TEST(OnesweepPersistent, SortTileAfterTile) {
  for (auto [groups, by_id, prefetch] :
       {std::tuple{3, 0, 0}, std::tuple{3, 0, 1}, std::tuple{1, 0, 1}, std::tuple{3, 1, 1}}) {
    OnesweepOptions options{.lookback_slots = 8, .spin_limit = 2};
    options.claim_by_id = by_id;
    options.persistent_groups = groups;
    options.prefetch_next = prefetch;
    const std::string what = "groups " + std::to_string(groups) + " by id " +
                             std::to_string(by_id) + " prefetch " + std::to_string(prefetch);
    EXPECT_TRUE(check_onesweep(options, 40000, 40000, false, prefetch == 1)) << what;
    EXPECT_TRUE(check_onesweep(options, 20000, 33333, true, prefetch == 0)) << what;
    if (groups == 3 && prefetch == 1) {
      options.publish_refusal_period = 3;
      EXPECT_TRUE(check_onesweep(options, 40000, 40000, false, false, true)) << what;
    }
  }
  for (const PartlyConstantKeys& c :
       {PartlyConstantKeys{KeyType::u32, 0, false, 0xff00ff00, 20001, {}, 0, 3, 1},
        PartlyConstantKeys{KeyType::u32, 0, false, ~0ull, 30000, 17000u, 0, 2, 1},
        PartlyConstantKeys{KeyType::f32, 0, true, 0x007f0000, 20001, {}, 1, 3, 1},
        PartlyConstantKeys{KeyType::u64, 8, false, 0xffffff, 20001, 9000u, 0, 3, 0}}) {
    SortedKeys sorted;
    uint32_t ran = 0;
    const ::testing::AssertionResult output = check_partly_constant_keys(c, sorted);
    EXPECT_TRUE(output);
    if (output) EXPECT_TRUE(check_plan(c, sorted, &ran));
  }
}

// With a GPU-side count the histogram, the passes and the copy-back are dispatched for the count,
// not for max_n: a count far below max_n (the segmented sort's global path sees 0 often) sorts
// exactly its elements and leaves the rest untouched, whether a step then runs no workgroup, one,
// or all of the host's grid. Keys alone and pairs, with an even number of active passes and an
// odd one (then the copy-back runs).
TEST(OnesweepIndirect, SizesItsStepsFromTheGpuCount) {
  const uint64_t max_n = (1u << 16) + 4321;
  const PartlyConstantKeys cases[] = {
      {KeyType::u32, 0, false, ~0ull},                 // 4 passes
      {KeyType::u64, 0, true, 0x0000ff00ffffffffull},  // 5 passes
      {KeyType::u32, 4, true, 0x00ffffffull},          // 3 passes
      {KeyType::i64, 8, false, ~0ull},                 // 8 passes
  };
  for (PartlyConstantKeys c : cases) {
    c.max_n = max_n;
    const uint32_t tile =
        make_onesweep(context().impl(), make_sort_spec(c.key, c.value_bytes, c.descending, 0, 0),
                      OnesweepOptions{})
            ->tile_keys();
    for (uint32_t count : {0u, 1u, 3u, tile + 1, uint32_t(max_n) - 1, uint32_t(max_n)}) {
      c.gpu_count = count;
      SortedKeys sorted;
      EXPECT_TRUE(check_partly_constant_keys(c, sorted));
    }
  }
}

// The histogram's grid spread over more workgroups than its four rounds of keys each would give
// (at small n, one workgroup per compute unit: here forced to 64, so each workgroup counts one
// round of 2048 keys or fewer): n on the host, and from the GPU, whose count sizes the grid in
// onesweep_clear.comp; every key must be counted once, or the digit offsets and the sort go wrong.
TEST(OnesweepHistogramGrid, SpreadOverOneRoundPerWorkgroup) {
  OnesweepOptions spread;
  spread.histogram_groups_per_unit = 64;
  for (bool descending : {false, true}) {
    EXPECT_TRUE(check_onesweep(spread, 40000, 40000, false, descending));
    EXPECT_TRUE(check_onesweep(spread, 30001, 40000, true, descending));
    EXPECT_TRUE(check_onesweep(spread, 2049, 40000, true, descending));
  }
}

TEST(OnesweepIndirect, ReadsTheCountFromTheGpu) {
  for (auto [n, max_n] :
       {std::pair{0ull, 5000ull}, std::pair{1ull, 5000ull}, std::pair{2ull, 5000ull},
        std::pair{4097ull, 5000ull}, std::pair{5000ull, 5000ull}})
    EXPECT_TRUE(check_onesweep({}, n, max_n, true, false));
}

}  // namespace
}  // namespace gpusort::test
