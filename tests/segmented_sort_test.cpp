// Segmented sort and argsort (src/algorithms/segmented_sort/segmented_sort.cpp, src/api/segmented_api.cpp):
// every key type, with and without values, both orders, bit ranges, segment mixes from one
// segment to all-of-size-one, large segments among small ones, argsort whole and per segment
// (u32 and u64 indices), the refusals, and the engine face (direct, indirect, separate outputs)
// on poisoned buffers. Each output is compared in full against std::stable_sort of each segment.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

#include "algorithms/segmented_sort/segmented_sort.hpp"
#include "dispatch/dispatch.hpp"
#include "host/host_path.hpp"
#include "test_support.hpp"
#include "vulkan/buffer.hpp"

namespace gpusort::test {
namespace {

enum class Mix { one, all_empty_but_one, all_size_one, uniform_small, uniform_large, power_law,
                 empty_at_ends, class_boundaries, boundaries_and_large, listed };
const char* to_string(Mix m) {
  switch (m) {
    case Mix::one: return "one";
    case Mix::all_empty_but_one: return "all_empty_but_one";
    case Mix::all_size_one: return "all_size_one";
    case Mix::uniform_small: return "uniform_small";
    case Mix::uniform_large: return "uniform_large";
    case Mix::power_law: return "power_law";
    case Mix::empty_at_ends: return "empty_at_ends";
    case Mix::class_boundaries: return "class_boundaries";
    case Mix::boundaries_and_large: return "boundaries_and_large";
    case Mix::listed: return "listed";
  }
  return "?";
}
const std::vector<Mix> all_mixes{Mix::one,           Mix::all_empty_but_one, Mix::all_size_one,
                                 Mix::uniform_small, Mix::uniform_large,     Mix::power_law,
                                 Mix::empty_at_ends};

// CSR offsets of n elements (S + 1 entries, 0 to n) in the given mix.
// Mix::listed: the given sizes in random order, repeated to n.
std::vector<uint64_t> make_offsets(uint64_t n, Mix mix, std::mt19937_64& rng,
                                   std::vector<uint64_t> sizes = {}) {
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
    case Mix::listed:
      while (offsets.back() < n) {
        std::shuffle(sizes.begin(), sizes.end(), rng);
        for (uint64_t size : sizes) offsets.push_back(std::min(n, offsets.back() + size));
      }
      break;
    case Mix::class_boundaries:
    case Mix::boundaries_and_large: {
      // Sizes on both sides of every power of two to 2048 (the fast path's size classes; its
      // largest on lavapipe: 2048 keys, or 1024 at 4-wide subgroups), in random order,
      // repeated to n (about 12300 keys cover each once); with segments of 2049 and 3000 keys
      // among them: too large for any tile class (the global path before the medium classes;
      // now a medium class everywhere, beside the tile classes. MediumClasses runs the global
      // path, with segments beyond the largest medium class).
      std::vector<uint64_t> sizes{0, 1, 2, 3};
      for (uint64_t p = 4; p < 2048; p *= 2) sizes.insert(sizes.end(), {p - 1, p, p + 1});
      sizes.insert(sizes.end(), {2047, 2048});
      if (mix == Mix::boundaries_and_large) sizes.insert(sizes.end(), {2049, 3000});
      while (offsets.back() < n) {
        std::shuffle(sizes.begin(), sizes.end(), rng);
        for (uint64_t size : sizes) offsets.push_back(std::min(n, offsets.back() + size));
      }
      break;
    }
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
  std::vector<uint64_t> sizes;  // Mix::listed's
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
    const auto offsets = c.segmented ? make_offsets(c.n, c.mix, rng, c.sizes) : std::vector<uint64_t>{0, c.n};
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

// The fast path's size classes: every key type, values, both orders, indices, on segments sized
// on both sides of each class boundary (tests n below the largest class too: fast path only).
TEST_P(SegmentedAllKeyTypes, ClassBoundaries) {
  const Combo& p = GetParam();
  for (Mix mix : {Mix::class_boundaries, Mix::boundaries_and_large})
    EXPECT_TRUE(check_segmented({.key = p.key, .value_bytes = p.value_bytes,
                                 .descending = p.descending, .n = 13000, .mix = mix,
                                 .distribution = Distribution::few_unique, .index_bytes = 4}));
  EXPECT_TRUE(check_segmented({.key = p.key, .value_bytes = p.value_bytes,
                               .descending = p.descending, .n = 1500, .mix = Mix::class_boundaries,
                               .offset_bytes = 8}));
}

// Segment sizes for Mix::listed, with their sum (a case's n: each size once, in random order).
struct ListedSizes {
  std::vector<uint64_t> sizes;
  uint64_t n = 0;
  void add(uint64_t size) {
    sizes.push_back(size);
    n += size;
  }
};

// The fast path's class table on this device (it differs from the H100's: lavapipe's largest
// tile is smaller).
SegmentedClassTable class_table(KeyType key, uint32_t value_bytes, uint32_t begin_bit = 0,
                                uint32_t end_bit = 0) {
  return segmented_class_table(context().impl(),
                               make_sort_spec(key, value_bytes, false, begin_bit, end_bit));
}

// Segment sizes around the fast path's medium classes on this device: the largest tile, one
// more (the first medium class), 2x, 4x - 1, 4x, the largest medium class; with `large`, one
// more than that too (a large segment: the global path sorts it).
ListedSizes medium_sizes(KeyType key, uint32_t value_bytes, bool large, uint32_t begin_bit = 0,
                         uint32_t end_bit = 0) {
  const SegmentedClassTable table = class_table(key, value_bytes, begin_bit, end_bit);
  const uint64_t tile = table.largest_tile, largest = table.class_slots.back();
  EXPECT_GT(largest, 2 * tile) << "no medium class on this device";
  ListedSizes m;
  for (uint64_t size :
       {tile, tile + 1, 2 * tile, 4 * tile - 1, 4 * tile, largest, uint64_t(3), uint64_t(700)})
    m.add(size);
  if (large) m.add(largest + 1);
  return m;
}

// Large segments (more keys than the largest class: the global path sorts their elements alone,
// compacted) among many small and medium ones, which the classes sort beside them: `large`
// large ones (the smallest possible, one more, about twice that, and so on, cycling), a
// medium one on each side of the largest tile, the largest class, and 200 small ones of 0 to 36
// keys (empty and lone ones among them).
ListedSizes large_among_small_sizes(KeyType key, uint32_t value_bytes, uint64_t large = 3,
                                    uint32_t begin_bit = 0, uint32_t end_bit = 0) {
  const SegmentedClassTable table = class_table(key, value_bytes, begin_bit, end_bit);
  const uint64_t tile = table.largest_tile, largest = table.class_slots.back();
  ListedSizes m;
  const uint64_t large_sizes[] = {largest + 1, largest + 2, 2 * largest + 3};
  for (uint64_t i = 0; i < large; ++i) m.add(large_sizes[i % 3]);
  for (uint64_t size : {tile, tile + 1, 3 * tile + 5, largest}) m.add(size);
  for (uint64_t i = 0; i < 200; ++i) m.add(i % 37);
  return m;
}

// The medium classes: every key type, values, both orders; with indices (sorted blocks merged)
// and without (scattered into buckets by segment_bucket, whose pieces a second level sorts);
// and one segment too large for them (the global path).
TEST_P(SegmentedAllKeyTypes, MediumClasses) {
  const Combo& p = GetParam();
  for (bool large : {false, true}) {
    if (large && p.value_bytes != 4) continue;  // the global path is tested enough elsewhere
    const ListedSizes m = medium_sizes(p.key, p.value_bytes, large);
    for (uint32_t index_bytes : {4u, 0u})
      EXPECT_TRUE(check_segmented({.key = p.key, .value_bytes = p.value_bytes,
                                   .descending = p.descending, .n = m.n, .mix = Mix::listed,
                                   .distribution = Distribution::few_unique,
                                   .offset_bytes = p.descending ? 8u : 4u,
                                   .index_bytes = index_bytes, .sizes = m.sizes}));
  }
}

// The bucketed medium path on every distribution: spread keys (small pieces), all equal and
// low entropy (one bucket holds most or all of a segment: a medium piece, merged), few unique
// (stability across the scatter), sorted, reversed, special floats.
TEST(SegmentedMediumBuckets, EveryDistribution) {
  for (auto [key, value_bytes, descending] :
       {std::tuple{KeyType::u32, 4u, false}, {KeyType::f32, 0u, true}, {KeyType::u64, 8u, false},
        {KeyType::f64, 4u, true}}) {
    const ListedSizes m = medium_sizes(key, value_bytes, false);
    for (Distribution d : all_distributions())
      EXPECT_TRUE(check_segmented({.key = key, .value_bytes = value_bytes,
                                   .descending = descending, .n = m.n, .mix = Mix::listed,
                                   .distribution = d, .sizes = m.sizes}));
  }
}

// Large segments among many small and medium ones: every key type, values, both orders,
// indices; the classes sort the small and medium segments, the global path the large ones'
// elements alone (compacted, then written back to their places). Without values also argsort
// per segment (the keys only read, u64 indices).
TEST_P(SegmentedAllKeyTypes, LargeAmongSmall) {
  const Combo& p = GetParam();
  const ListedSizes m = large_among_small_sizes(p.key, p.value_bytes);
  // With indices the medium segments' sorted blocks are merged, without them bucketed.
  for (uint32_t index_bytes : {4u, 0u})
    EXPECT_TRUE(check_segmented({.key = p.key, .value_bytes = p.value_bytes,
                                 .descending = p.descending, .n = m.n, .mix = Mix::listed,
                                 .distribution = Distribution::few_unique,
                                 .offset_bytes = p.descending ? 8u : 4u,
                                 .index_bytes = index_bytes, .sizes = m.sizes}));
  if (p.value_bytes == 0)
    EXPECT_TRUE(check_segmented({.key = p.key, .descending = p.descending, .n = m.n,
                                 .mix = Mix::listed, .distribution = Distribution::special_floats,
                                 .offset_bytes = p.descending ? 4u : 8u, .write_keys = false,
                                 .index_bytes = 8, .sizes = m.sizes}));
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

TEST(SegmentedBits, BitRangesOnTheFastPath) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 4u, 12u}, {KeyType::i64, 20u, 52u},
                                 {KeyType::f64, 0u, 63u}})
    EXPECT_TRUE(check_segmented({.key = key, .value_bytes = 4, .descending = true, .n = 13000,
                                 .mix = Mix::class_boundaries, .index_bytes = 4,
                                 .begin_bit = begin, .end_bit = end}));
}

TEST(SegmentedBits, BitRangesOnTheMediumClasses) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 4u, 12u}, {KeyType::f64, 0u, 63u}}) {
    const ListedSizes m = medium_sizes(key, 4, false, begin, end);
    for (uint32_t index_bytes : {4u, 0u})
      EXPECT_TRUE(check_segmented({.key = key, .value_bytes = 4, .descending = true, .n = m.n,
                                   .mix = Mix::listed, .index_bytes = index_bytes,
                                   .begin_bit = begin, .end_bit = end, .sizes = m.sizes}));
  }
}

TEST(SegmentedBits, BitRangesWithLargeSegments) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 4u, 12u}, {KeyType::f64, 0u, 63u}}) {
    const ListedSizes m = large_among_small_sizes(key, 4, 3, begin, end);
    EXPECT_TRUE(check_segmented({.key = key, .value_bytes = 4, .descending = true, .n = m.n,
                                 .mix = Mix::listed, .index_bytes = 4, .begin_bit = begin,
                                 .end_bit = end, .sizes = m.sizes}));
  }
}

TEST(SegmentedSizes, ManyLargeSegments) {
  // More large segments than segment_large_scan's workgroup (it loops over the list), and sort 2
  // over two digits of list positions.
  const ListedSizes m = large_among_small_sizes(KeyType::u32, 0, 260);
  EXPECT_TRUE(check_segmented({.key = KeyType::u32, .n = m.n, .mix = Mix::listed,
                               .distribution = Distribution::few_unique, .index_bytes = 4,
                               .sizes = m.sizes}));
}

TEST(SegmentedSizes, AllSizeOneMany) {
  // n segments of one key: nothing to sort, only indices to write.
  EXPECT_TRUE(check_segmented({.key = KeyType::u32, .value_bytes = 4, .n = 20000,
                               .mix = Mix::all_size_one, .index_bytes = 4}));
}

TEST(SegmentedAlgorithms, StableAlgorithmsInside) {
  for (Algorithm a : {Algorithm::onesweep, Algorithm::radix_reduce_scan})
    EXPECT_TRUE(check_segmented({.key = KeyType::u64, .value_bytes = 4, .descending = true,
                                 .n = 5000, .mix = Mix::power_law, .index_bytes = 4,
                                 .algorithm = a}));
  EXPECT_TRUE(check_segmented({.key = KeyType::f32, .value_bytes = 4, .n = 500,
                               .mix = Mix::uniform_small, .algorithm = Algorithm::odd_even}));
  const ListedSizes large = large_among_small_sizes(KeyType::i32, 8);
  EXPECT_TRUE(check_segmented({.key = KeyType::i32, .value_bytes = 8, .n = large.n,
                               .mix = Mix::listed, .index_bytes = 4,
                               .algorithm = Algorithm::radix_reduce_scan, .sizes = large.sizes}));
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


// ---- Through many staging slots (HostPath::run's pipelined path) ----

TEST(SegmentedHostPath, ManyStagingSlots) {
  HostPath& host_path = context().impl().host_path();
  const uint64_t saved = host_path.max_slot_bytes;
  host_path.max_slot_bytes = 4096;  // tens of KB of keys take many slots, the ring wraps
  EXPECT_TRUE(check_segmented({.key = KeyType::u64, .value_bytes = 4, .n = 20000,
                               .mix = Mix::power_law, .offset_bytes = 8, .index_bytes = 8}));
  EXPECT_TRUE(check_segmented({.key = KeyType::f32, .n = 30000, .segmented = false,
                               .write_keys = false, .index_bytes = 8}));
  EXPECT_TRUE(check_segmented({.key = KeyType::i32, .value_bytes = 8, .n = 9000,
                               .mix = Mix::all_size_one, .index_bytes = 4}));
  // A repeated call allocates nothing more.
  const uint64_t before = host_path.allocations();
  EXPECT_TRUE(check_segmented({.key = KeyType::i32, .value_bytes = 8, .n = 9000,
                               .mix = Mix::uniform_small, .index_bytes = 4}));
  EXPECT_EQ(host_path.allocations(), before);
  host_path.max_slot_bytes = saved;
}

TEST(SegmentedHostPath, ReaderFailureIsThrown) {
  const std::vector<uint32_t> offsets{0, 5000, 10000};
  auto failing = [](uint64_t, void*, uint64_t) { throw Error("the reader failed"); };
  std::vector<uint32_t> indices(10000);
  EXPECT_EQ(error_of([&] {
              sort_segments_streamed(
                  context(), KeyType::u32, 10000, HostStream{failing, {}}, 0, {},
                  {offsets.data(), 4, offsets.size()},
                  [&](uint64_t offset, const void* from, uint64_t bytes) {
                    std::memcpy(reinterpret_cast<char*>(indices.data()) + offset, from, bytes);
                  },
                  4);
            }),
            "the reader failed");
  // The context still works.
  EXPECT_TRUE(check_segmented({.key = KeyType::u32, .n = 1000, .mix = Mix::uniform_small,
                               .index_bytes = 4}));
}

// ---- Engine face: SegmentedSorter on poisoned buffers ----

constexpr uint32_t engine_poison = 0xDEADBEEF;
constexpr uint64_t guard = 256;  // poisoned bytes before and after each range

std::vector<uint8_t> poisoned(uint64_t bytes) {
  std::vector<uint8_t> v(align_up(bytes, 4));
  for (uint64_t i = 0; i < v.size(); i += 4) std::memcpy(&v[i], &engine_poison, 4);
  return v;
}

struct EngineCase {
  KeyType key = KeyType::u32;
  uint32_t value_bytes = 0;
  bool descending = false;
  uint64_t n = 0;
  Mix mix = Mix::uniform_small;
  uint32_t offset_bytes = 4;
  bool indirect = false;
  uint64_t spare = 100;  // indirect: elements the buffers hold beyond n (max_n - n)
  bool indices = true;
  std::vector<uint64_t> sizes;  // Mix::listed's
};

::testing::AssertionResult check_engine(const EngineCase& c) {
  const uint64_t seed = fresh_seed();
  auto fail = [&]() {
    return ::testing::AssertionFailure()
           << to_string(c.key) << " values=" << c.value_bytes << " n=" << c.n
           << " mix=" << to_string(c.mix) << (c.indirect ? " indirect" : " direct")
           << " seed=" << seed << ": ";
  };
  try {
    auto& impl = context().impl();
    std::mt19937_64 rng(seed);
    const uint32_t kb = key_bytes(c.key), vb = c.value_bytes, ob = c.offset_bytes;
    // Indirect: the buffers hold more (max_n, max_segments) than the GPU count selects.
    const uint64_t max_n = c.indirect ? c.n + c.spare : c.n;
    const auto bits = make_key_bits(c.key, max_n, Distribution::few_unique, rng);
    const auto offsets = make_offsets(c.n, c.mix, rng, c.sizes);
    const uint64_t segments = offsets.size() - 1;
    const uint64_t max_segments = c.indirect ? segments + 5 : segments;

    SegmentedSorter sorter(context(), {.key = c.key, .value_bytes = vb, .offset_bytes = ob,
                                       .descending = c.descending});
    const uint64_t scratch_bytes = sorter.scratch_bytes(max_n, max_segments);

    auto image = [&](uint64_t bytes) { return poisoned(guard + bytes + guard); };
    auto keys = image(max_n * kb), values = image(max_n * vb), indices = image(max_n * 4),
         offset_image = image((max_segments + 1) * ob);
    for (uint64_t i = 0; i < max_n; ++i) {
      std::memcpy(&keys[guard + i * kb], &bits[i], kb);
      const uint64_t v = scrambled(i, vb);
      if (vb) std::memcpy(&values[guard + i * vb], &v, vb);
    }
    for (uint64_t s = 0; s <= segments; ++s)
      std::memcpy(&offset_image[guard + s * ob], &offsets[s], ob);
    const auto scratch = poisoned(scratch_bytes);
    std::vector<uint8_t> count(16, 0);
    const uint32_t segment_count = uint32_t(segments);
    std::memcpy(count.data(), &segment_count, 4);

    auto buffer = [&](const std::vector<uint8_t>& data) {
      DeviceBuffer b(impl, data.size(), MemoryKind::device_local);
      upload(impl, b, data.data(), data.size());
      return b;
    };
    DeviceBuffer keys_buffer = buffer(keys), values_buffer = buffer(values),
                 indices_buffer = buffer(indices), offsets_buffer = buffer(offset_image),
                 scratch_buffer = buffer(scratch), count_buffer = buffer(count);
    const BufferRef values_ref = vb ? values_buffer.ref(guard) : BufferRef{};
    const BufferRef indices_ref = c.indices ? indices_buffer.ref(guard) : BufferRef{};
    impl.submit([&](VkCommandBuffer cmd) {
      Recorder::full_barrier(cmd);  // the uploads before the sort
      if (c.indirect)
        sorter.record_indirect(cmd, keys_buffer.ref(guard), values_ref, offsets_buffer.ref(guard),
                               indices_ref, scratch_buffer.ref(), count_buffer.ref(), max_n,
                               max_segments);
      else
        sorter.record(cmd, keys_buffer.ref(guard), values_ref, offsets_buffer.ref(guard),
                      indices_ref, scratch_buffer.ref(), c.n, segments);
      Recorder::full_barrier(cmd);
    });
    auto read_back = [&](const DeviceBuffer& b, uint64_t bytes) {
      std::vector<uint8_t> v(bytes);
      download(impl, b, v.data(), bytes);
      return v;
    };
    const auto keys_out = read_back(keys_buffer, keys.size());
    const auto values_out = read_back(values_buffer, values.size());
    const auto indices_out = read_back(indices_buffer, indices.size());
    const auto offsets_out = read_back(offsets_buffer, offset_image.size());

    std::vector<uint64_t> order(max_n);
    std::iota(order.begin(), order.end(), 0);  // beyond n: untouched
    auto sort_key = [&](uint64_t i) { return radix_order(c.key, bits[i], c.descending); };
    for (uint64_t s = 0; s < segments; ++s)
      std::stable_sort(order.begin() + offsets[s], order.begin() + offsets[s + 1],
                       [&](uint64_t a, uint64_t b) { return sort_key(a) < sort_key(b); });
    auto expected = keys, expected_values = values, expected_indices = indices;
    for (uint64_t i = 0; i < max_n; ++i) {
      std::memcpy(&expected[guard + i * kb], &bits[order[i]], kb);
      const uint64_t v = scrambled(order[i], vb);
      if (vb) std::memcpy(&expected_values[guard + i * vb], &v, vb);
      if (c.indices && i < c.n) {
        const uint32_t index = uint32_t(order[i]);
        std::memcpy(&expected_indices[guard + i * 4], &index, 4);
      }
    }
    auto first_difference = [](const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
      return uint64_t(std::mismatch(a.begin(), a.end(), b.begin()).first - a.begin());
    };
    if (keys_out != expected)
      return fail() << "keys differ at byte " << first_difference(keys_out, expected)
                    << " (guard " << guard << ")";
    if (values_out != expected_values)
      return fail() << "values differ at byte " << first_difference(values_out, expected_values);
    if (indices_out != expected_indices)
      return fail() << "indices differ at byte " << first_difference(indices_out, expected_indices);
    if (offsets_out != offset_image) return fail() << "the offsets were written";
    return no_new_validation_messages();
  } catch (const std::exception& e) {
    return fail() << "threw " << e.what();
  }
}

TEST(SegmentedEngine, Direct) {
  for (Mix mix : all_mixes) {
    EXPECT_TRUE(check_engine({.key = KeyType::u32, .value_bytes = 4, .n = 3000, .mix = mix}));
    EXPECT_TRUE(check_engine({.key = KeyType::f64, .value_bytes = 8, .descending = true,
                              .n = 2000, .mix = mix, .offset_bytes = 8, .indices = false}));
  }
  EXPECT_TRUE(check_engine({.key = KeyType::i32, .n = 70000, .mix = Mix::power_law}));
  const ListedSizes large = large_among_small_sizes(KeyType::u32, 4);
  EXPECT_TRUE(check_engine({.key = KeyType::u32, .value_bytes = 4, .n = large.n,
                            .mix = Mix::listed, .sizes = large.sizes}));
  const ListedSizes wide = large_among_small_sizes(KeyType::f64, 8);
  EXPECT_TRUE(check_engine({.key = KeyType::f64, .value_bytes = 8, .descending = true,
                            .n = wide.n, .mix = Mix::listed, .offset_bytes = 8,
                            .indices = false, .sizes = wide.sizes}));
  EXPECT_TRUE(check_engine({.key = KeyType::u32, .n = 1, .mix = Mix::one}));
  EXPECT_TRUE(check_engine({.key = KeyType::u32, .n = 0, .mix = Mix::one}));
}

TEST(SegmentedEngine, Indirect) {
  for (Mix mix : all_mixes) {
    EXPECT_TRUE(check_engine({.key = KeyType::i64, .value_bytes = 4, .n = 2500, .mix = mix,
                              .indirect = true}));
    EXPECT_TRUE(check_engine({.key = KeyType::f32, .descending = true, .n = 1500, .mix = mix,
                              .offset_bytes = 8, .indirect = true}));
  }
  EXPECT_TRUE(check_engine({.key = KeyType::u32, .value_bytes = 8, .n = 70000,
                            .mix = Mix::uniform_small, .indirect = true}));
  EXPECT_TRUE(check_engine({.key = KeyType::u32, .n = 0, .mix = Mix::one, .indirect = true}));
  for (Mix mix : {Mix::class_boundaries, Mix::boundaries_and_large}) {
    EXPECT_TRUE(check_engine({.key = KeyType::u32, .value_bytes = 4, .n = 13000, .mix = mix,
                              .indirect = true}));
    EXPECT_TRUE(check_engine({.key = KeyType::u64, .value_bytes = 8, .descending = true,
                              .n = 13000, .mix = mix, .offset_bytes = 8, .indirect = true}));
  }
  EXPECT_TRUE(check_engine({.key = KeyType::f32, .value_bytes = 4, .n = 1800,
                            .mix = Mix::class_boundaries, .indirect = true}));
  for (bool large : {false, true}) {
    const ListedSizes m = medium_sizes(KeyType::u32, 4, large);
    EXPECT_TRUE(check_engine({.key = KeyType::u32, .value_bytes = 4, .n = m.n,
                              .mix = Mix::listed, .indirect = true, .sizes = m.sizes}));
  }
  const ListedSizes m = medium_sizes(KeyType::i64, 8, false);
  EXPECT_TRUE(check_engine({.key = KeyType::i64, .value_bytes = 8, .descending = true, .n = m.n,
                            .mix = Mix::listed, .offset_bytes = 8, .indirect = true,
                            .sizes = m.sizes}));
  // Large segments among small ones, with the counts read on the GPU.
  for (uint32_t value_bytes : {0u, 8u}) {
    const ListedSizes large = large_among_small_sizes(KeyType::i64, value_bytes);
    EXPECT_TRUE(check_engine({.key = KeyType::i64, .value_bytes = value_bytes, .n = large.n,
                              .mix = Mix::listed, .offset_bytes = value_bytes ? 8u : 4u,
                              .indirect = true, .sizes = large.sizes}));
  }
}

// Separate outputs (SegmentedTargets::keys_out / values_out, as the partition sort uses them):
// the sorted keys, values and indices land in poisoned buffers (one guard element past n stays
// poisoned); checked whole against std::stable_sort per segment.
::testing::AssertionResult check_separate_outputs(KeyType key, uint32_t value_bytes,
                                                  bool descending, const ListedSizes& m) {
  const uint64_t seed = fresh_seed();
  auto fail = [&]() {
    return ::testing::AssertionFailure() << to_string(key) << " values=" << value_bytes
                                         << " n=" << m.n << " seed=" << seed << ": ";
  };
  try {
    auto& impl = context().impl();
    std::mt19937_64 rng(seed);
    const uint32_t kb = key_bytes(key), vb = value_bytes;
    const uint64_t n = m.n;
    const auto bits = make_key_bits(key, n, Distribution::few_unique, rng);
    const auto offsets = make_offsets(n, Mix::listed, rng, m.sizes);
    const uint64_t segments = offsets.size() - 1;
    const SegmentedSpec spec{make_sort_spec(key, vb, descending, 0, 0), 1, true};
    const auto sort = make_segmented_sort(impl, spec, Algorithm::automatic);

    std::vector<uint8_t> keys(n * kb), values(std::max<uint64_t>(n * vb, 4));
    for (uint64_t i = 0; i < n; ++i) {
      std::memcpy(&keys[i * kb], &bits[i], kb);
      const uint64_t v = scrambled(i, vb);
      if (vb) std::memcpy(&values[i * vb], &v, vb);
    }
    std::vector<uint32_t> offset_words(offsets.begin(), offsets.end());
    auto buffer = [&](const void* data, uint64_t bytes) {
      DeviceBuffer b(impl, bytes, MemoryKind::device_local);
      upload(impl, b, data, bytes);
      return b;
    };
    const auto out_image = poisoned((n + 1) * 8);
    DeviceBuffer keys_buffer = buffer(keys.data(), keys.size()),
                 values_buffer = buffer(values.data(), values.size()),
                 offsets_buffer = buffer(offset_words.data(), offset_words.size() * 4),
                 keys_out = buffer(out_image.data(), out_image.size()),
                 values_out = buffer(out_image.data(), out_image.size()),
                 indices = buffer(out_image.data(), out_image.size());
    const auto scratch_image = poisoned(sort->scratch_bytes(n, segments));
    DeviceBuffer scratch = buffer(scratch_image.data(), scratch_image.size());
    impl.submit([&](VkCommandBuffer cmd) {
      Recorder::full_barrier(cmd);  // the uploads before the sort
      Recorder rec(impl, cmd);
      SegmentedTargets t;
      t.keys = keys_buffer.address();
      t.values = vb ? values_buffer.address() : 0;
      t.offsets = offsets_buffer.address();
      t.indices = indices.address();
      t.scratch = scratch.address();
      t.keys_out = keys_out.address();
      t.values_out = vb ? values_out.address() : 0;
      t.scratch_buffer = scratch.buffer();
      t.n = n;
      t.segments = segments;
      sort->record(rec, t);
      Recorder::full_barrier(cmd);
    });
    auto read_back = [&](const DeviceBuffer& b) {
      std::vector<uint8_t> v(out_image.size());
      download(impl, b, v.data(), v.size());
      return v;
    };
    const auto got_keys = read_back(keys_out), got_values = read_back(values_out),
               got_indices = read_back(indices);

    std::vector<uint64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    auto sort_key = [&](uint64_t i) { return radix_order(key, bits[i], descending); };
    for (uint64_t s = 0; s < segments; ++s)
      std::stable_sort(order.begin() + offsets[s], order.begin() + offsets[s + 1],
                       [&](uint64_t a, uint64_t b) { return sort_key(a) < sort_key(b); });
    auto expected_keys = out_image, expected_values = out_image, expected_indices = out_image;
    for (uint64_t i = 0; i < n; ++i) {
      std::memcpy(&expected_keys[i * kb], &bits[order[i]], kb);
      const uint64_t v = scrambled(order[i], vb);
      if (vb) std::memcpy(&expected_values[i * vb], &v, vb);
      const uint32_t index = uint32_t(order[i]);
      std::memcpy(&expected_indices[i * 4], &index, 4);
    }
    auto first_difference = [](const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
      return uint64_t(std::mismatch(a.begin(), a.end(), b.begin()).first - a.begin());
    };
    if (got_keys != expected_keys)
      return fail() << "keys differ at byte " << first_difference(got_keys, expected_keys);
    if (got_values != expected_values)
      return fail() << "values differ at byte " << first_difference(got_values, expected_values);
    if (got_indices != expected_indices)
      return fail() << "indices differ at byte " << first_difference(got_indices, expected_indices);
    return no_new_validation_messages();
  } catch (const std::exception& e) {
    return fail() << "threw " << e.what();
  }
}

TEST(SegmentedEngine, SeparateOutputs) {
  for (auto [key, value_bytes, descending] :
       {std::tuple{KeyType::u32, 4u, false}, {KeyType::i64, 8u, true}, {KeyType::f32, 0u, true}}) {
    EXPECT_TRUE(check_separate_outputs(key, value_bytes, descending,
                                       large_among_small_sizes(key, value_bytes)));
    EXPECT_TRUE(check_separate_outputs(key, value_bytes, descending,
                                       medium_sizes(key, value_bytes, false)));
  }
}

// n from the GPU far below max_n: the global path's step kernels and inner sorts are dispatched
// for n, not for max_n (one workgroup too few leaves elements unsorted). Its n is all of n with a
// segment too large for the fast path's classes (one, or four of n / 4: beyond the largest medium
// class, 16 Ki keys on lavapipe), else 0.
TEST(SegmentedEngine, IndirectCountFarBelowMaxN) {
  const uint64_t spare = 70000;
  for (uint64_t n : {0, 3, 20000}) {
    EXPECT_TRUE(check_engine({.key = KeyType::u32, .value_bytes = 4, .n = n, .mix = Mix::one,
                              .indirect = true, .spare = spare}));
    EXPECT_TRUE(check_engine({.key = KeyType::f32, .descending = true, .n = n,
                              .mix = Mix::uniform_small, .indirect = true, .spare = spare}));
  }
  EXPECT_TRUE(check_engine({.key = KeyType::i64, .value_bytes = 8, .descending = true, .n = 80000,
                            .mix = Mix::uniform_large, .offset_bytes = 8, .indirect = true,
                            .spare = spare}));
}

TEST(SegmentedEngine, Refusals) {
  auto& impl = context().impl();
  DeviceBuffer a(impl, 1 << 16, MemoryKind::device_local), b(impl, 1 << 16, MemoryKind::device_local);
  SegmentedSorter sorter(context(), {.key = KeyType::u32});
  SegmentedSorter with_values(context(), {.key = KeyType::u32, .value_bytes = 4});
  auto record = [&](const SegmentedSorter& s, BufferRef values, BufferRef offsets, BufferRef scratch,
                    uint64_t n, uint64_t segments) {
    return error_of([&] {
      impl.record_unsubmitted([&](VkCommandBuffer cmd) {
        s.record(cmd, a.ref(), values, offsets, {}, scratch, n, segments);
      });
    });
  };
  EXPECT_EQ(record(sorter, {}, b.ref(0), b.ref(256), 100, 0),
            "SegmentedSorter::record: 0 segments but n = 100 (offsets[S] must be n)");
  EXPECT_EQ(record(sorter, {}, b.ref(2), b.ref(256), 100, 1),
            "SegmentedSorter::record: offsets.offset 2 is not a multiple of 4");
  EXPECT_EQ(record(sorter, {}, b.ref(0), b.ref(0), 100, 1),
            "SegmentedSorter::record: offsets and scratch overlap (for 100 elements and 1 segments)");
  EXPECT_EQ(record(with_values, {}, b.ref(0), b.ref(256), 100, 1),
            "SegmentedSorter::record: values.buffer is VK_NULL_HANDLE, but the SegmentedSorter was "
            "configured with value_bytes = 4");
  EXPECT_EQ(error_of([&] { SegmentedSorter(context(), {.offset_bytes = 2}); }),
            "SegmentedSorter: offsets are 4 or 8 bytes wide, not 2");
  EXPECT_EQ(error_of([&] { SegmentedSorter(context(), {.algorithm = Algorithm::bitonic}); }),
            "segmented sort and argsort need a stable sort: bitonic is not stable");
}

}  // namespace
}  // namespace gpusort::test
