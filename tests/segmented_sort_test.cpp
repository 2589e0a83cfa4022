// Segmented sort and argsort (src/algorithms/segmented_sort.cpp, src/core/segmented_api.cpp):
// every key type, with and without values, both orders, bit ranges, segment mixes from one
// segment to all-of-size-one, argsort whole and per segment (u32 and u64 indices), the
// refusals, and the engine face (direct and indirect) on poisoned buffers. Each output is
// compared in full against std::stable_sort of each segment.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

#include "algorithms/segmented_sort.hpp"
#include "test_support.hpp"
#include "vulkan/buffer.hpp"

namespace gpusort::test {
namespace {

enum class Mix { one, all_empty_but_one, all_size_one, uniform_small, uniform_large, power_law,
                 empty_at_ends };
const char* to_string(Mix m) {
  switch (m) {
    case Mix::one: return "one";
    case Mix::all_empty_but_one: return "all_empty_but_one";
    case Mix::all_size_one: return "all_size_one";
    case Mix::uniform_small: return "uniform_small";
    case Mix::uniform_large: return "uniform_large";
    case Mix::power_law: return "power_law";
    case Mix::empty_at_ends: return "empty_at_ends";
  }
  return "?";
}
const std::vector<Mix> all_mixes{Mix::one,           Mix::all_empty_but_one, Mix::all_size_one,
                                 Mix::uniform_small, Mix::uniform_large,     Mix::power_law,
                                 Mix::empty_at_ends};

// CSR offsets of n elements (S + 1 entries, 0 to n) in the given mix.
std::vector<uint64_t> make_offsets(uint64_t n, Mix mix, std::mt19937_64& rng) {
  std::vector<uint64_t> offsets{0};
  auto fill_random = [&](auto size_of) {
    while (offsets.back() < n) offsets.push_back(std::min(n, offsets.back() + size_of()));
  };
  switch (mix) {
    case Mix::one: offsets.push_back(n); break;
    case Mix::all_empty_but_one: {
      const uint64_t segments = 50, full = rng() % segments;
      for (uint64_t s = 1; s <= segments; ++s) offsets.push_back(s > full ? n : 0);
      break;
    }
    case Mix::all_size_one:
      for (uint64_t i = 1; i <= n; ++i) offsets.push_back(i);
      break;
    case Mix::uniform_small: fill_random([&] { return rng() % 33; }); break;
    case Mix::uniform_large:
      for (uint64_t s = 1; s <= 4; ++s) offsets.push_back(n * s / 4);
      break;
    case Mix::power_law: {
      std::uniform_real_distribution<double> u(1e-9, 1.0);
      fill_random([&] { return uint64_t(std::pow(u(rng), -2.0)) - 1; });
      break;
    }
    case Mix::empty_at_ends:
      offsets.insert(offsets.end(), {0, 0, 0});
      fill_random([&] { return 1 + rng() % 200; });
      offsets.insert(offsets.end(), {n, n, n});
      break;
  }
  if (offsets.size() == 1) offsets.push_back(n);  // n == 0: one empty segment
  return offsets;
}

struct SegmentedCase {
  KeyType key = KeyType::u32;
  uint32_t value_bytes = 0;
  bool descending = false;
  uint64_t n = 0;
  Mix mix = Mix::one;
  Distribution distribution = Distribution::uniform;
  uint32_t offset_bytes = 4;
  bool segmented = true;      // false: no offsets at all (whole-array argsort)
  bool write_keys = true;     // false: keys only read (argsort)
  uint32_t index_bytes = 0;   // 0: no indices
  uint32_t begin_bit = 0, end_bit = 0;
  Algorithm algorithm = Algorithm::automatic;
  std::string describe(uint64_t seed) const {
    std::ostringstream s;
    s << gpusort::to_string(algorithm) << " " << gpusort::to_string(key)
      << " values=" << value_bytes << (descending ? " descending" : " ascending") << " n=" << n
      << " mix=" << (segmented ? to_string(mix) : "none") << " offsets=u" << offset_bytes * 8
      << " " << test::to_string(distribution) << " keys " << (write_keys ? "written" : "read")
      << " indices=" << index_bytes << " bits=[" << begin_bit << "," << end_bit << ") seed=" << seed
      << " (rerun with GPUSORT_TEST_SEED=" << seed << ")";
    return s.str();
  }
};

uint64_t scrambled(uint64_t position, uint32_t bytes) {
  const uint64_t v = position ^ 0xA5A5A5A500000000ull;
  return bytes == 4 ? uint32_t(position) : v;
}

// Runs the case through sort_segments_raw and compares everything with std::stable_sort per
// segment.
::testing::AssertionResult check_segmented(const SegmentedCase& c) {
  const uint64_t seed = fresh_seed();
  try {
    std::mt19937_64 rng(seed);
    const uint32_t kb = key_bytes(c.key);
    const auto bits = make_key_bits(c.key, c.n, c.distribution, rng);
    const auto offsets = c.segmented ? make_offsets(c.n, c.mix, rng) : std::vector<uint64_t>{0, c.n};
    std::vector<uint8_t> keys(c.n * kb), input(c.n * kb);
    for (uint64_t i = 0; i < c.n; ++i) std::memcpy(&input[i * kb], &bits[i], kb);
    keys = input;
    std::vector<uint8_t> values(c.n * c.value_bytes);
    for (uint64_t i = 0; i < c.n; ++i) {
      const uint64_t v = scrambled(i, c.value_bytes);
      std::memcpy(&values[i * c.value_bytes], &v, c.value_bytes);
    }
    std::vector<uint8_t> offset_bytes(offsets.size() * c.offset_bytes);
    for (size_t s = 0; s < offsets.size(); ++s)
      std::memcpy(&offset_bytes[s * c.offset_bytes], &offsets[s], c.offset_bytes);
    constexpr uint8_t poison = 0xCD;
    std::vector<uint8_t> indices(c.n * c.index_bytes, poison);

    // Reference: positions stably sorted by the compared key bits inside each segment.
    const uint32_t width = kb * 8, end = c.end_bit ? c.end_bit : width;
    const uint64_t field = end - c.begin_bit == 64 ? ~0ull : (1ull << (end - c.begin_bit)) - 1;
    auto sort_key = [&](uint64_t i) {
      return (radix_order(c.key, bits[i], c.descending) >> c.begin_bit) & field;
    };
    std::vector<uint64_t> order(c.n);
    std::iota(order.begin(), order.end(), 0);
    for (size_t s = 0; s + 1 < offsets.size(); ++s)
      std::stable_sort(order.begin() + offsets[s], order.begin() + offsets[s + 1],
                       [&](uint64_t a, uint64_t b) { return sort_key(a) < sort_key(b); });

    SortOptions options{c.descending, c.algorithm, c.begin_bit, c.end_bit};
    SegmentOffsets segment_offsets;
    if (c.segmented) segment_offsets = {offset_bytes.data(), c.offset_bytes, offsets.size()};
    sort_segments_raw(context(), c.key, c.n, keys.data(), c.write_keys ? keys.data() : nullptr,
                      c.value_bytes, c.value_bytes ? values.data() : nullptr, segment_offsets,
                      c.index_bytes ? indices.data() : nullptr, c.index_bytes, options);

    for (uint64_t i = 0; i < c.n; ++i) {
      const uint64_t from = order[i];
      const uint64_t want_key = c.write_keys ? from : i;  // unwritten keys stay as they were
      if (std::memcmp(&keys[i * kb], &input[want_key * kb], kb) != 0) {
        uint64_t got = 0;
        std::memcpy(&got, &keys[i * kb], kb);
        return ::testing::AssertionFailure()
               << c.describe(seed) << ": key " << i << " is 0x" << std::hex << got
               << ", expected 0x" << bits[want_key];
      }
      if (c.value_bytes) {
        uint64_t got = 0;
        std::memcpy(&got, &values[i * c.value_bytes], c.value_bytes);
        if (got != scrambled(from, c.value_bytes))
          return ::testing::AssertionFailure() << c.describe(seed) << ": value " << i << " is "
                                               << got << ", expected " << scrambled(from, c.value_bytes);
      }
      if (c.index_bytes) {
        uint64_t got = 0;
        std::memcpy(&got, &indices[i * c.index_bytes], c.index_bytes);
        if (got != from)
          return ::testing::AssertionFailure() << c.describe(seed) << ": index " << i << " is "
                                               << got << ", expected " << from;
      }
    }
    return no_new_validation_messages();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << c.describe(seed) << ": threw " << e.what();
  }
}

// ---- Every key type x values x order, every segment mix ----

class SegmentedAllKeyTypes : public ::testing::TestWithParam<Combo> {};

TEST_P(SegmentedAllKeyTypes, EveryMix) {
  const Combo& p = GetParam();
  for (Mix mix : all_mixes) {
    SegmentedCase c{.key = p.key, .value_bytes = p.value_bytes, .descending = p.descending,
                    .n = 3000, .mix = mix, .distribution = Distribution::few_unique};
    EXPECT_TRUE(check_segmented(c));
  }
}

TEST_P(SegmentedAllKeyTypes, ArgsortSegmentedWithValuesAndKeys) {
  const Combo& p = GetParam();
  SegmentedCase c{.key = p.key, .value_bytes = p.value_bytes, .descending = p.descending,
                  .n = 2500, .mix = Mix::power_law, .distribution = Distribution::special_floats,
                  .offset_bytes = 8, .index_bytes = 4};
  EXPECT_TRUE(check_segmented(c));
}

TEST_P(SegmentedAllKeyTypes, Argsort) {
  const Combo& p = GetParam();
  // The keys are only read; the values, when given, are sorted too.
  for (uint64_t n : {0, 1, 2, 777}) {
    SegmentedCase c{.key = p.key, .value_bytes = p.value_bytes, .descending = p.descending,
                    .n = n, .distribution = Distribution::few_unique, .segmented = false,
                    .write_keys = false, .index_bytes = p.value_bytes == 8 ? 8u : 4u};
    EXPECT_TRUE(check_segmented(c));
  }
}

INSTANTIATE_TEST_SUITE_P(All, SegmentedAllKeyTypes, ::testing::ValuesIn(all_combos()), combo_name);

// ---- Sizes and shapes beyond one workgroup ----

TEST(SegmentedSizes, LargeMixesThroughOnesweep) {
  // 100k elements: the automatic inner sorts are Onesweep; a mix of huge and tiny segments.
  for (Mix mix : {Mix::power_law, Mix::uniform_small, Mix::uniform_large, Mix::all_size_one}) {
    EXPECT_TRUE(check_segmented({.key = KeyType::u32, .value_bytes = 4, .n = 100000, .mix = mix}));
    EXPECT_TRUE(check_segmented({.key = KeyType::f64, .descending = true, .n = 60000, .mix = mix,
                                 .offset_bytes = 8, .index_bytes = 8}));
  }
}

TEST(SegmentedSizes, SmallCounts) {
  for (uint64_t n : {0, 1, 2, 3, 31, 64, 65})
    for (Mix mix : all_mixes)
      EXPECT_TRUE(check_segmented({.key = KeyType::i32, .value_bytes = 8, .n = n, .mix = mix,
                                   .index_bytes = 4}));
}

TEST(SegmentedSizes, ArgsortLarge) {
  EXPECT_TRUE(check_segmented({.key = KeyType::u32, .n = 100000, .segmented = false,
                               .write_keys = false, .index_bytes = 4}));
  EXPECT_TRUE(check_segmented({.key = KeyType::f32, .descending = true, .n = 70000,
                               .distribution = Distribution::special_floats, .segmented = false,
                               .write_keys = false, .index_bytes = 8}));
}

TEST(SegmentedBits, BitRanges) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 4u, 12u}, {KeyType::i64, 20u, 52u},
                                 {KeyType::f32, 0u, 31u}, {KeyType::u64, 40u, 64u}})
    for (bool descending : {false, true}) {
      EXPECT_TRUE(check_segmented({.key = key, .value_bytes = 4, .descending = descending,
                                   .n = 3000, .mix = Mix::uniform_small, .index_bytes = 4,
                                   .begin_bit = begin, .end_bit = end}));
      EXPECT_TRUE(check_segmented({.key = key, .descending = descending, .n = 2000,
                                   .segmented = false, .write_keys = false, .index_bytes = 4,
                                   .begin_bit = begin, .end_bit = end}));
    }
}

TEST(SegmentedAlgorithms, StableAlgorithmsInside) {
  for (Algorithm a : {Algorithm::onesweep, Algorithm::radix_reduce_scan})
    EXPECT_TRUE(check_segmented({.key = KeyType::u64, .value_bytes = 4, .descending = true,
                                 .n = 5000, .mix = Mix::power_law, .index_bytes = 4,
                                 .algorithm = a}));
  EXPECT_TRUE(check_segmented({.key = KeyType::f32, .value_bytes = 4, .n = 500,
                               .mix = Mix::uniform_small, .algorithm = Algorithm::odd_even}));
}

// ---- Convenient-face templates ----

TEST(SegmentedApi, Templates) {
  std::vector<float> keys{3, 1, 2, 9, 8, 7, 5};
  const std::vector<float> input = keys;
  std::vector<uint32_t> offsets{0, 3, 3, 7};
  std::vector<uint64_t> values{0, 1, 2, 3, 4, 5, 6};
  sort_segments_by_key(context(), std::span<float>(keys), std::span<uint64_t>(values),
                       std::span<const uint32_t>(offsets));
  EXPECT_EQ(keys, (std::vector<float>{1, 2, 3, 5, 7, 8, 9}));
  EXPECT_EQ(values, (std::vector<uint64_t>{1, 2, 0, 6, 5, 4, 3}));

  keys = input;
  std::vector<uint64_t> offsets64{0, 3, 3, 7};
  sort_segments(context(), std::span<float>(keys), std::span<uint64_t>(offsets64),
                {.descending = true});
  EXPECT_EQ(keys, (std::vector<float>{3, 2, 1, 9, 8, 7, 5}));

  std::vector<uint32_t> indices(7);
  argsort(context(), std::span<const float>(input), std::span<uint32_t>(indices));
  EXPECT_EQ(indices, (std::vector<uint32_t>{1, 2, 0, 6, 5, 4, 3}));
  std::vector<uint64_t> wide(7);
  argsort_segments(context(), std::span<const float>(input), std::span<uint32_t>(offsets),
                   std::span<uint64_t>(wide), {.descending = true});
  EXPECT_EQ(wide, (std::vector<uint64_t>{0, 2, 1, 3, 4, 5, 6}));
  EXPECT_TRUE(no_new_validation_messages());
}

// ---- Refusals ----

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SegmentedRefusals, BadOffsets) {
  std::vector<uint32_t> keys(10, 1);
  auto sort_with = [&](std::vector<uint32_t> offsets) {
    return error_of([&] {
      sort_segments(context(), std::span<uint32_t>(keys), std::span<uint32_t>(offsets));
    });
  };
  EXPECT_EQ(sort_with({}), "segment offsets: none given (S segments need S + 1 offsets, from 0 to "
                           "n = 10)");
  EXPECT_EQ(sort_with({1, 10}), "segment offsets: the first is 1, not 0");
  EXPECT_EQ(sort_with({0, 4, 9}), "segment offsets: the last is 9, not n = 10 (the number of keys)");
  EXPECT_EQ(sort_with({0, 4, 3, 10}),
            "segment offsets decrease at index 2: offsets[1] = 4 > offsets[2] = 3");
  std::vector<uint64_t> wide{0, 5, 2, 10};
  EXPECT_EQ(error_of([&] {
              sort_segments(context(), std::span<uint32_t>(keys), std::span<uint64_t>(wide));
            }),
            "segment offsets decrease at index 2: offsets[1] = 5 > offsets[2] = 2");
  std::vector<uint64_t> beyond{0, 10, uint64_t(1) << 40};
  EXPECT_EQ(error_of([&] {
              sort_segments(context(), std::span<uint32_t>(keys), std::span<uint64_t>(beyond));
            }),
            "segment offsets: the last is 1099511627776, not n = 10 (the number of keys)");
  // Nothing was sorted by the refused calls.
  EXPECT_EQ(keys, std::vector<uint32_t>(10, 1));
}

TEST(SegmentedRefusals, BadArguments) {
  std::vector<uint32_t> keys{3, 2, 1}, offsets{0, 3}, indices(3), short_indices(2);
  EXPECT_EQ(error_of([&] {
              sort_segments(context(), std::span<uint32_t>(keys), std::span<uint32_t>(offsets),
                            {.algorithm = Algorithm::bitonic});
            }),
            "segmented sort and argsort need a stable sort: bitonic is not stable");
  EXPECT_EQ(error_of([&] {
              argsort(context(), std::span<uint32_t>(keys), std::span<uint32_t>(indices),
                      {.algorithm = Algorithm::bitonic});
            }),
            "segmented sort and argsort need a stable sort: bitonic is not stable");
  EXPECT_EQ(error_of([&] {
              argsort(context(), std::span<uint32_t>(keys), std::span<uint32_t>(short_indices));
            }),
            "argsort: 3 keys but 2 indices");
  EXPECT_EQ(error_of([&] {
              sort_segments_raw(context(), KeyType::u32, 3, keys.data(), nullptr, 0, nullptr, {},
                                indices.data(), 2);
            }),
            "argsort indices are 4 or 8 bytes wide, not 2");
  EXPECT_EQ(error_of([&] {
              sort_segments_raw(context(), KeyType::u32, 3, keys.data(), keys.data(), 0, nullptr,
                                {offsets.data(), 2, 2}, nullptr, 0);
            }),
            "segment offsets are 4 or 8 bytes wide, not 2");
  EXPECT_EQ(keys, (std::vector<uint32_t>{3, 2, 1}));
}

}  // namespace
}  // namespace gpusort::test
