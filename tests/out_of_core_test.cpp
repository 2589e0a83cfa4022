// Out-of-core sorting (core/out_of_core.hpp): arrays beyond SortOptions::device_memory_limit
// sorted in runs on the device and merged on the CPU; every key type, values, both orders, bit
// ranges, awkward run splits, stability across runs, against std::stable_sort.
#include "host/out_of_core.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "host/host_path.hpp"
#include "test_support.hpp"
#include "vulkan/context_impl.hpp"

namespace gpusort::test {
namespace {

// The smallest device_memory_limit under which sorts of `key` (with values) run in pieces of at
// least `run` elements.
uint64_t limit_for_run(KeyType key, uint32_t value_bytes, uint64_t run) {
  return context().impl().host_path().device_bytes(make_sort_spec(key, value_bytes, false, 0, 0),
                                                   Algorithm::automatic, run);
}

class OutOfCoreKeys : public ::testing::TestWithParam<Combo> {};

// 0.2-1 MiB per array in about 6 runs, for the distributions that test the merge's order:
// ties across runs (stability), NaN / +-0 / +-inf, extremes.
TEST_P(OutOfCoreKeys, SortsInRunsAndMerges) {
  const Combo c = GetParam();
  const uint64_t n = 60001;
  const uint64_t limit = limit_for_run(c.key, c.value_bytes, 10000);
  for (Distribution d : {Distribution::uniform, Distribution::all_equal, Distribution::few_unique,
                         Distribution::special_floats}) {
    SortTimings timings;
    EXPECT_TRUE(check_sort({.key = c.key,
                            .value_bytes = c.value_bytes,
                            .descending = c.descending,
                            .n = n,
                            .distribution = d,
                            .device_memory_limit = limit,
                            .timings = &timings}));
    EXPECT_GE(timings.runs, 2u) << to_string(d);
    EXPECT_LE(timings.runs, 8u) << to_string(d);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKeyTypes, OutOfCoreKeys, ::testing::ValuesIn(all_combos()), combo_name);

// Onesweep-sized runs (beyond the small-array path), and about 50 runs.
TEST(OutOfCore, LargeRunsAndManyRuns) {
  SortTimings timings;
  EXPECT_TRUE(check_sort({.key = KeyType::u32,
                          .n = 700000,
                          .device_memory_limit = limit_for_run(KeyType::u32, 0, 250000),
                          .timings = &timings}));
  EXPECT_EQ(timings.runs, 3u);
  EXPECT_GT(timings.merge_ms, 0.0);
  // The limit allows runs of 2000 elements or a little more (allocations are rounded up).
  EXPECT_TRUE(check_sort({.key = KeyType::f64,
                          .value_bytes = 4,
                          .descending = true,
                          .n = 100000,
                          .device_memory_limit = limit_for_run(KeyType::f64, 4, 2000),
                          .timings = &timings}));
  EXPECT_GE(timings.runs, 40u);
  EXPECT_LE(timings.runs, 50u);
}

TEST(OutOfCore, BitRanges) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 4u, 12u},
                                 {KeyType::f32, 20u, 32u},
                                 {KeyType::i64, 30u, 50u},
                                 {KeyType::f64, 0u, 40u}})
    for (bool descending : {false, true})
      EXPECT_TRUE(check_sort({.key = key,
                              .value_bytes = 8,
                              .descending = descending,
                              .n = 40000,
                              .distribution = Distribution::uniform,
                              .begin_bit = begin,
                              .end_bit = end,
                              .device_memory_limit = limit_for_run(key, 8, 12000)}));
}

// Run splits chosen exactly (the internal entry points): a last run of one key, runs of one key,
// n not a multiple of the run; host arrays and streams.
template <class K, class V>
void check_exact_runs(uint64_t n, uint64_t run, bool streamed) {
  const KeyType type = key_type_of<K>();
  const SortSpec spec = make_sort_spec(type, sizeof(V), true, 0, 0);
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(std::string(to_string(type)) + " n=" + std::to_string(n) +
               " run=" + std::to_string(run) + (streamed ? " streamed" : " arrays") +
               " seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto bits = make_key_bits(type, n, Distribution::few_unique, rng);
  std::vector<K> keys(n);
  std::vector<V> values(n);
  for (uint64_t i = 0; i < n; ++i) std::memcpy(&keys[i], &bits[i], sizeof(K)), values[i] = V(i);
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
    return radix_order(type, bits[a], true) < radix_order(type, bits[b], true);
  });
  std::vector<K> out_keys(n);
  std::vector<V> out_values(n);
  if (streamed) {
    auto stream = [](auto& in, auto& out) {
      return HostStream{[&in](uint64_t at, void* to, uint64_t bytes) {
                          std::memcpy(to, reinterpret_cast<const char*>(in.data()) + at, bytes);
                        },
                        [&out](uint64_t at, const void* from, uint64_t bytes) {
                          std::memcpy(reinterpret_cast<char*>(out.data()) + at, from, bytes);
                        }};
    };
    sort_streamed_out_of_core(context().impl(), spec, Algorithm::automatic, n,
                              stream(keys, out_keys), stream(values, out_values), run, nullptr);
  } else {
    sort_arrays_out_of_core(context().impl(), spec, Algorithm::automatic, n, keys.data(),
                            values.data(), run, nullptr);
    out_keys = keys, out_values = values;
  }
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(std::memcmp(&out_keys[i], &bits[order[i]], sizeof(K)), 0) << "key " << i;
    ASSERT_EQ(out_values[i], V(order[i])) << "value " << i;
  }
  EXPECT_TRUE(no_new_validation_messages());
}

TEST(OutOfCore, AwkwardRunSplits) {
  for (bool streamed : {false, true}) {
    check_exact_runs<uint32_t, uint32_t>(1000, 333, streamed);   // 3 runs of 333, one of 1
    check_exact_runs<double, uint64_t>(40, 1, streamed);         // 40 runs of one key
    check_exact_runs<int64_t, uint32_t>(70001, 7000, streamed);  // the last run of one key
    check_exact_runs<float, uint64_t>(99999, 25000, streamed);
  }
}

TEST(OutOfCore, MergeSortedRunsIsStableAcrossRuns) {
  // Three runs sorted by hand, with ties between them: the earlier run's elements come first.
  const std::vector<int32_t> a{-5, 1, 1, 7}, b{-5, 1, 9}, c{1};
  const std::vector<uint32_t> va{10, 11, 12, 13}, vb{20, 21, 22}, vc{30};
  const std::vector<SortedRun> runs{{a.data(), va.data(), a.size()},
                                    {b.data(), vb.data(), b.size()},
                                    {c.data(), vc.data(), c.size()}};
  std::vector<int32_t> keys(8);
  std::vector<uint32_t> values(8);
  merge_sorted_runs(
      KeyType::i32, 4, runs,
      [&](uint64_t at, const void* from, uint64_t bytes) {
        std::memcpy(reinterpret_cast<char*>(keys.data()) + at, from, bytes);
      },
      [&](uint64_t at, const void* from, uint64_t bytes) {
        std::memcpy(reinterpret_cast<char*>(values.data()) + at, from, bytes);
      });
  EXPECT_EQ(keys, (std::vector<int32_t>{-5, -5, 1, 1, 1, 1, 7, 9}));
  EXPECT_EQ(values, (std::vector<uint32_t>{10, 20, 11, 12, 21, 30, 13, 22}));
  EXPECT_THROW(merge_sorted_runs(KeyType::i32, 4, runs, HostWriter{}, HostWriter{}), Error);
}

// The merge on its own (merge_sorted_runs), for what the loser tree can get wrong: 1 to 33 runs
// (not powers of two: padded leaves), empty runs (first, last, several), lengths far apart, the
// field's largest value (u64 ~0, u32 0xffffffff, the NaNs at either end of the float order,
// whichever the order puts last), ties across many runs, bit ranges. The whole output against
// std::stable_sort of the runs' concatenation, values being the concatenation's indices, so a
// tie taken from the wrong run or an element taken twice shows.
struct MergeCase {
  KeyType key;
  uint32_t value_bytes;
  bool descending;
  uint32_t begin_bit = 0, end_bit = 0;
};

::testing::AssertionResult check_merge(const MergeCase& c, const std::vector<uint64_t>& lengths,
                                       Distribution d, uint64_t seed) {
  const uint32_t key_size = key_bytes(c.key), width = 8 * key_size;
  const uint32_t end = c.end_bit ? c.end_bit : width;
  const uint64_t field_mask = end - c.begin_bit == 64 ? ~0ull : (1ull << (end - c.begin_bit)) - 1;
  auto field = [&](uint64_t bits) {
    return (radix_order(c.key, bits, c.descending) >> c.begin_bit) & field_mask;
  };
  std::mt19937_64 rng(seed);
  // The runs, each sorted, one after another; values: positions in this concatenation.
  std::vector<uint64_t> bits;
  std::vector<uint64_t> starts;
  for (uint64_t length : lengths) {
    auto run = make_key_bits(c.key, length, d, rng);
    // The largest field value, in every other run, somewhere.
    if (length && starts.size() % 2 == 0) {
      for (uint64_t b : {0xffffffffffffffffull, 0x7fffffffffffffffull, 0x8000000000000000ull,
                         0x7fffffffull, 0x80000000ull, 0xffffffffull})
        if (field(b) == field_mask) run[rng() % length] = b & (width == 64 ? ~0ull : 0xffffffffull);
    }
    std::stable_sort(run.begin(), run.end(),
                     [&](uint64_t a, uint64_t b) { return field(a) < field(b); });
    starts.push_back(bits.size());
    bits.insert(bits.end(), run.begin(), run.end());
  }
  const uint64_t n = bits.size();
  std::vector<char> keys(n * key_size), values(n * c.value_bytes);
  for (uint64_t i = 0; i < n; ++i) {
    std::memcpy(&keys[i * key_size], &bits[i], key_size);
    if (c.value_bytes) std::memcpy(&values[i * c.value_bytes], &i, c.value_bytes);
  }
  std::vector<SortedRun> runs;
  for (size_t r = 0; r < lengths.size(); ++r)
    runs.push_back({&keys[starts[r] * key_size],
                    c.value_bytes ? &values[starts[r] * c.value_bytes] : nullptr, lengths[r]});
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint64_t a, uint64_t b) { return field(bits[a]) < field(bits[b]); });
  std::vector<char> out_keys(n * key_size, 0x5a), out_values(n * c.value_bytes, 0x5a);
  SortOptions options;
  options.descending = c.descending;
  options.begin_bit = c.begin_bit;
  options.end_bit = c.end_bit;
  merge_sorted_runs(
      c.key, c.value_bytes, runs,
      [&](uint64_t at, const void* from, uint64_t bytes) {
        std::memcpy(out_keys.data() + at, from, bytes);
      },
      [&](uint64_t at, const void* from, uint64_t bytes) {
        std::memcpy(out_values.data() + at, from, bytes);
      },
      options);
  auto describe = [&] {
    return std::string(to_string(c.key)) + " values " + std::to_string(c.value_bytes) +
           (c.descending ? " descending" : "") + " bits [" + std::to_string(c.begin_bit) + ", " +
           std::to_string(end) + ") " + to_string(d) + " runs " + std::to_string(lengths.size()) +
           " n " + std::to_string(n) + " seed " + std::to_string(seed);
  };
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t key = 0, value = 0;
    std::memcpy(&key, &out_keys[i * key_size], key_size);
    if (c.value_bytes) std::memcpy(&value, &out_values[i * c.value_bytes], c.value_bytes);
    if (key != bits[order[i]] || (c.value_bytes && value != order[i]))
      return ::testing::AssertionFailure()
             << describe() << ": element " << i << " is key " << key << " value " << value
             << ", expected key " << bits[order[i]] << " value " << order[i];
  }
  return ::testing::AssertionSuccess();
}

class OutOfCoreMerge : public ::testing::TestWithParam<Combo> {};

TEST_P(OutOfCoreMerge, MatchesStableSortOfTheRuns) {
  const Combo c = GetParam();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (size_t k : {1, 2, 3, 5, 16, 17, 33}) {
    std::vector<uint64_t> lengths(k);
    for (size_t r = 0; r < k; ++r)
      lengths[r] = r % 4 == 1 || (k > 3 && r == k - 1) ? 0 : rng() % (r % 3 == 0 ? 3000 : 40);
    for (Distribution d : {Distribution::uniform, Distribution::all_equal, Distribution::few_unique,
                           Distribution::special_floats})
      EXPECT_TRUE(check_merge({c.key, c.value_bytes, c.descending}, lengths, d, rng()));
  }
}

INSTANTIATE_TEST_SUITE_P(AllKeyTypes, OutOfCoreMerge, ::testing::ValuesIn(all_combos()),
                         combo_name);

// Larger: several threads' ranges and the writers' pieces (2^16 elements), which the bulk copy
// of equal keys crosses; and bit ranges.
TEST(OutOfCoreMerge, LargeRunsAndBitRanges) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const std::vector<uint64_t> large{90000, 0, 150001, 70000, 1, 120000, 65536, 3};
  for (Distribution d : {Distribution::uniform, Distribution::all_equal, Distribution::few_unique,
                         Distribution::special_floats}) {
    EXPECT_TRUE(check_merge({KeyType::u64, 4, false}, large, d, rng()));
    EXPECT_TRUE(check_merge({KeyType::f32, 8, true}, large, d, rng()));
  }
  for (MergeCase c :
       {MergeCase{KeyType::u32, 4, false, 4, 12}, MergeCase{KeyType::f32, 8, true, 20, 32},
        MergeCase{KeyType::i64, 4, true, 30, 50}, MergeCase{KeyType::f64, 0, false, 0, 40},
        MergeCase{KeyType::u64, 8, false, 63, 64}})
    for (size_t k : {2, 17})
      EXPECT_TRUE(check_merge(c, std::vector<uint64_t>(k, 3000), Distribution::uniform, rng()));
}

TEST(OutOfCore, LimitTooSmallIsOneLineError) {
  std::vector<uint64_t> keys(1 << 20);
  SortOptions options;
  options.device_memory_limit = 4096;
  try {
    sort(context(), std::span<uint64_t>(keys), options);
    ADD_FAILURE() << "a 4096-byte limit was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device memory limit of 4096 bytes is too small"),
              std::string::npos)
        << e.what();
  }
}

// n near 2^64: the run count (n + run - 1) / run wrapped around to a few runs, and the sort went on
// to allocate n * 4 bytes (std::bad_alloc) instead of refusing n. Nothing is read from the array.
TEST(OutOfCore, CountsNear2To64AreRefused) {
  uint32_t key = 0;
  for (uint64_t n : {UINT64_MAX, UINT64_MAX - 1}) {
    auto refused = [n](const auto& call) {
      try {
        call();
        ADD_FAILURE() << "n = " << n << " was accepted";
      } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_TRUE(what.starts_with("a device memory limit of ") &&
                    what.find(" bytes is too small for " + std::to_string(n) +
                              " u32 keys: runs of ") != std::string::npos &&
                    what.ends_with(" fit, at most 65536 runs are merged"))
            << what;
      }
    };
    refused([&] { max_run_elements(context(), KeyType::u32, 0, n); });
    refused([&] { sort_raw(context(), KeyType::u32, &key, n, nullptr, 0); });
  }
}

TEST(OutOfCore, FittingArraysStayInCore) {
  SortTimings timings;
  EXPECT_TRUE(check_sort({.key = KeyType::u32,
                          .n = 10000,
                          .device_memory_limit = limit_for_run(KeyType::u32, 0, 10000),
                          .timings = &timings}));
  EXPECT_EQ(timings.runs, 1u);
  EXPECT_EQ(max_run_elements(context(), KeyType::u32, 0, 10000), 10000u);
}

// Arrays larger than the device's largest allocation (lowered here to 1 MiB): sorted in core in
// sparse buffers bound to several allocations where the device binds them (one run: the GPU
// machine), else out of core in runs (lavapipe); sorted either way, with validation on.
TEST(BeyondOneAllocation, SortsInCoreThroughSparseBuffersElseInRuns) {
  DeviceInfo& info = context().impl().info;
  const DeviceInfo saved = info;
  HostPath& host = context().impl().host_path();
  host.release_cached_memory();  // no buffer of an earlier test may serve the sort
  constexpr uint64_t mib = uint64_t(1) << 20;
  info.max_allocation_bytes = mib;
  info.max_buffer_bytes = info.sparse_binding ? saved.max_buffer_bytes : mib;
  struct Restore {
    DeviceInfo& info;
    const DeviceInfo& saved;
    HostPath& host;
    ~Restore() {
      host.release_cached_memory();  // the sparse buffers go with the lowered limit
      info = saved;
    }
  } restore{info, saved, host};
  for (Combo c :
       {Combo{KeyType::u32, 8, false}, Combo{KeyType::u64, 0, true}, Combo{KeyType::f32, 4, false}})
    for (Distribution d : {Distribution::uniform, Distribution::few_unique}) {
      SortTimings timings;
      EXPECT_TRUE(check_sort({.key = c.key,
                              .value_bytes = c.value_bytes,
                              .descending = c.descending,
                              .n = 3 * (mib / 4) + 77,
                              .distribution = d,
                              .timings = &timings}));
      if (saved.sparse_binding)
        EXPECT_EQ(timings.runs, 1u) << to_string(c.key) << " " << to_string(d);
      else
        EXPECT_GE(timings.runs, 3u) << to_string(c.key) << " " << to_string(d);
    }
}

// Runs near the device's largest allocation: every buffer of a run (keys, values and the scratch,
// which holds the keys' ping-pong copy and more) fits one allocation, whatever the budget. Planned
// only (no allocation): 2^33 u64 keys with a budget of many allocations. A run is also capped at
// the algorithm's element limit (Onesweep's 2^32), which comes first where the largest allocation
// holds more keys than that (an H200's 140 GiB: 2^32 u64 keys, 32 GiB, and their scratch fit it);
// elsewhere (lavapipe's 2 GiB, an H100's 4 GiB) the allocation does.
TEST(OutOfCore, RunsFitTheLargestAllocation) {
  const uint64_t largest = context().device_info().max_buffer_bytes;
  ASSERT_GT(largest, 0u);
  const uint64_t n = uint64_t(1) << 33;
  for (uint32_t value_bytes : {0u, 4u, 8u}) {
    SortOptions options;
    options.device_memory_limit = 64 * largest;
    const uint64_t run = max_run_elements(context(), KeyType::u64, value_bytes, n, options);
    Sorter sorter(context(), {.key = KeyType::u64, .value_bytes = value_bytes});
    const uint64_t cap = std::min(n, sorter.max_elements());
    EXPECT_LE(run, cap) << "values " << value_bytes;
    EXPECT_LE(run * 8, largest);
    EXPECT_LE(run * value_bytes, largest);
    EXPECT_LE(sorter.scratch_bytes(run), largest) << "values " << value_bytes << ", run " << run;
    // Not needlessly small: the cap, or the largest run to within an eighth of the keys.
    const uint64_t by_allocation = (largest / 2 - largest / 8) / 8;
    EXPECT_GT(run, std::min(cap - 1, by_allocation)) << "values " << value_bytes;
  }
}

// A buffer near the largest allocation is allocated at its size, not rounded up past it (the
// H100's largest is 4 GiB - 2 MiB; 2^29 - 2^18 u64 keys rounded up in eighths were 4 GiB).
TEST(OutOfCore, AllocationsRoundUpOnlyBelowTheLargest) {
  const uint64_t h100_largest = 4292870144;
  EXPECT_EQ(rounded_allocation(h100_largest, h100_largest), h100_largest);
  EXPECT_EQ(rounded_allocation(h100_largest - 4096, h100_largest), h100_largest - 4096);
  EXPECT_EQ(rounded_allocation(3 * (uint64_t(1) << 29) + 1, h100_largest), uint64_t(13) << 27);
  EXPECT_EQ(rounded_allocation(h100_largest, 0), uint64_t(1) << 32);  // no limit known
  EXPECT_EQ(rounded_allocation(1000, h100_largest), 4096u);
}

}  // namespace
}  // namespace gpusort::test
