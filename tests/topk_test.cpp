// Top-k (src/algorithms/topk/, src/api/topk_api.cpp): every key type, with values and with
// indices (u32, u64), both orders, bit ranges, every distribution, k at 1, at the digit and tile
// boundaries, at n - 1 and n; per segment with empty and short segments; the engine face, direct
// and with a GPU-side count; the refusals. Each output is compared in full against the first k
// of std::stable_sort under the same order (the reference).
#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <sstream>

#include "host/key_order.hpp"
#include "test_support.hpp"
#include "vulkan/buffer.hpp"
#include "vulkan/context_impl.hpp"
#include "vulkan/recorder.hpp"

namespace gpusort::test {
namespace {

// The field a sort compares, for key bits of `type`.
uint64_t compared(KeyType type, const SortSpec& spec, uint64_t bits) {
  const KeyField field(spec);
  switch (type) {
    case KeyType::u32: return field(uint32_t(bits));
    case KeyType::i32: return field(int32_t(uint32_t(bits)));
    case KeyType::f32: { float f; uint32_t b = uint32_t(bits); std::memcpy(&f, &b, 4); return field(f); }
    case KeyType::u64: return field(bits);
    case KeyType::i64: return field(int64_t(bits));
    case KeyType::f64: { double f; std::memcpy(&f, &bits, 8); return field(f); }
  }
  return 0;
}

// The positions of the first k of the stable sort of `bits` (within [begin, end) of them).
std::vector<uint64_t> reference_positions(KeyType type, const SortSpec& spec,
                                          const std::vector<uint64_t>& bits, uint64_t begin,
                                          uint64_t end, uint64_t k) {
  std::vector<uint64_t> order(end - begin);
  std::iota(order.begin(), order.end(), begin);
  std::vector<uint64_t> field(bits.size());
  for (uint64_t i = begin; i < end; ++i) field[i] = compared(type, spec, bits[i]);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint64_t a, uint64_t b) { return field[a] < field[b]; });
  order.resize(std::min<uint64_t>(k, order.size()));
  return order;
}

struct TopKCase {
  KeyType key = KeyType::u32;
  uint32_t value_bytes = 0;  // 0, 4, 8
  uint32_t index_bytes = 0;  // 0, 4, 8
  bool largest = false;
  uint64_t n = 0, k = 0;
  Distribution distribution = Distribution::uniform;
  uint32_t begin_bit = 0, end_bit = 0;
  std::string describe(uint64_t seed) const {
    std::ostringstream s;
    s << to_string(key) << " values" << value_bytes << " indices" << index_bytes
      << (largest ? " largest" : " smallest") << " n=" << n << " k=" << k << " "
      << to_string(distribution) << " bits [" << begin_bit << ", " << end_bit << ") seed " << seed;
    return s.str();
  }
};

void store(std::vector<char>& bytes, uint32_t width, uint64_t i, uint64_t v) {
  std::memcpy(&bytes[i * width], &v, width);  // little-endian: the low bytes
}
uint64_t load(const std::vector<char>& bytes, uint32_t width, uint64_t i) {
  uint64_t v = 0;
  std::memcpy(&v, &bytes[i * width], width);
  return v;
}

// `given`: the keys' bits (c.distribution ignored), else drawn from c.distribution.
::testing::AssertionResult check_topk(const TopKCase& c,
                                      const std::vector<uint64_t>* given = nullptr) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const auto bits = given ? *given : make_key_bits(c.key, c.n, c.distribution, rng);
  const uint32_t kb = key_bytes(c.key);
  std::vector<char> keys(c.n * kb), values(c.n * c.value_bytes);
  for (uint64_t i = 0; i < c.n; ++i) {
    store(keys, kb, i, bits[i]);
    if (c.value_bytes) store(values, c.value_bytes, i, (i * 0x9e3779b97f4a7c15ull) ^ 7);
  }
  const SortSpec spec = make_sort_spec(c.key, 0, c.largest, c.begin_bit, c.end_bit);
  const auto expected = reference_positions(c.key, spec, bits, 0, c.n, c.k);
  // Outputs poisoned, one slot beyond k too (nothing may be written there).
  std::vector<char> keys_out((c.k + 1) * kb, char(0x5a)), values_out((c.k + 1) * c.value_bytes, char(0x5a)),
      indices((c.k + 1) * c.index_bytes, char(0x5a));
  SortOptions options;
  options.descending = c.largest;
  options.begin_bit = c.begin_bit;
  options.end_bit = c.end_bit;
  topk_raw(context(), c.key, c.n, keys.data(), c.k, keys_out.data(), c.value_bytes,
           c.value_bytes ? values.data() : nullptr, c.value_bytes ? values_out.data() : nullptr,
           c.index_bytes ? indices.data() : nullptr, c.index_bytes, options);
  for (uint64_t i = 0; i < c.k; ++i) {
    const uint64_t from = expected[i];
    if (load(keys_out, kb, i) != bits[from])
      return ::testing::AssertionFailure()
             << c.describe(seed) << ": key " << i << " is 0x" << std::hex << load(keys_out, kb, i)
             << ", expected 0x" << bits[from] << " (from position " << std::dec << from << ")";
    if (c.value_bytes && load(values_out, c.value_bytes, i) != load(values, c.value_bytes, from))
      return ::testing::AssertionFailure() << c.describe(seed) << ": value " << i << " is not position "
                                           << from << "'s";
    if (c.index_bytes && load(indices, c.index_bytes, i) != from)
      return ::testing::AssertionFailure() << c.describe(seed) << ": index " << i << " is "
                                           << load(indices, c.index_bytes, i) << ", expected " << from;
  }
  const std::vector<char> poison(8, char(0x5a));
  if (std::memcmp(&keys_out[c.k * kb], poison.data(), kb) ||
      (c.value_bytes && std::memcmp(&values_out[c.k * c.value_bytes], poison.data(), c.value_bytes)) ||
      (c.index_bytes && std::memcmp(&indices[c.k * c.index_bytes], poison.data(), c.index_bytes)))
    return ::testing::AssertionFailure() << c.describe(seed) << ": written past k";
  return no_new_validation_messages();
}

const std::vector<KeyType> all_key_types{KeyType::u32, KeyType::i32, KeyType::f32,
                                         KeyType::u64, KeyType::i64, KeyType::f64};

TEST(TopK, EveryKeyTypeAndDistribution) {
  for (KeyType key : all_key_types)
    for (Distribution d : all_distributions())
      for (bool largest : {false, true})
        for (uint64_t k : {uint64_t(1), uint64_t(37), uint64_t(1000)})
          EXPECT_TRUE(check_topk({.key = key, .value_bytes = 4, .index_bytes = 4, .largest = largest,
                                  .n = 5000, .k = k, .distribution = d}));
}

TEST(TopK, ValuesAndIndicesWidths) {
  for (KeyType key : {KeyType::u32, KeyType::f64})
    for (uint32_t vb : {0u, 4u, 8u})
      for (uint32_t ib : {0u, 4u, 8u})
        EXPECT_TRUE(check_topk({.key = key, .value_bytes = vb, .index_bytes = ib, .n = 3001, .k = 129}));
}

TEST(TopK, BoundariesOfK) {
  // k at 1, around the tile (2048 keys) and the digits' bins (2048), at n - 1 and n.
  const uint64_t n = 4097;
  for (uint64_t k : {uint64_t(1), uint64_t(2), uint64_t(2047), uint64_t(2048), uint64_t(2049),
                     n - 1, n})
    for (Distribution d : {Distribution::uniform, Distribution::all_equal, Distribution::few_unique})
      EXPECT_TRUE(check_topk({.key = KeyType::i32, .value_bytes = 8, .index_bytes = 4, .n = n, .k = k,
                              .distribution = d}));
}

TEST(TopK, Sizes) {
  for (uint64_t n : {uint64_t(1), uint64_t(2), uint64_t(255), uint64_t(2048), uint64_t(2049),
                     uint64_t(100000)})
    for (uint64_t k : {uint64_t(1), n / 2 + 1, n})
      EXPECT_TRUE(check_topk({.key = KeyType::f32, .index_bytes = 4, .largest = n % 2 == 0, .n = n,
                              .k = k, .distribution = Distribution::special_floats}));
}

TEST(TopK, LargeK) {
  // The survivors beyond the small-array sort's sizes: Onesweep sorts them from a GPU-side count.
  EXPECT_TRUE(check_topk({.key = KeyType::u32, .value_bytes = 4, .index_bytes = 4, .n = 300000,
                          .k = 200000, .distribution = Distribution::few_unique}));
  // More tiles than the histogram passes' workgroups: each takes several.
  EXPECT_TRUE(check_topk({.key = KeyType::f32, .index_bytes = 4, .largest = true, .n = 700001,
                          .k = 1000, .distribution = Distribution::low_entropy}));
}

// Keys piled into the first digit's buckets (floats in [0.5, 1): a quarter of f32 keys, all of
// f64 keys share the largest's first digit) overflow the candidate list (n / 8 + 1024) at the
// first digit: a later pass lists the candidates (the second for f32, whose count then reads only
// them; for f64 the passes after it too). Ties at the k-th key and NaNs among them.
TEST(TopK, ListedAfterTheFirstDigit) {
  std::mt19937_64 rng(fresh_seed());
  const uint64_t n = 50000;
  for (KeyType key : {KeyType::f32, KeyType::f64}) {
    std::vector<uint64_t> bits(n);
    for (uint64_t i = 0; i < n; ++i) {
      const double x = 0.5 + double(rng() >> 11) * 0x1p-54;  // in [0.5, 1)
      bits[i] = key == KeyType::f32 ? std::bit_cast<uint32_t>(float(x)) : std::bit_cast<uint64_t>(x);
    }
    for (bool largest : {true, false})
      for (uint64_t k : {uint64_t(1), uint64_t(1000), uint64_t(20000)})
        EXPECT_TRUE(check_topk({.key = key, .value_bytes = 4, .index_bytes = 4, .largest = largest,
                                .n = n, .k = k},
                               &bits));
    // Few distinct values (ties at the k-th key), one in 64 a NaN.
    std::vector<uint64_t> ties = bits;
    for (uint64_t i = 0; i < n; ++i) {
      ties[i] = bits[i % 97];
      if (i % 64 == 5)
        ties[i] = key == KeyType::f32 ? 0x7fc00000u : 0x7ff8000000000000ull;
    }
    for (bool largest : {true, false})
      EXPECT_TRUE(check_topk({.key = key, .index_bytes = 4, .largest = largest, .n = n, .k = 3000},
                             &ties));
  }
}

TEST(TopK, Bits) {
  for (auto [key, begin, end] : {std::tuple{KeyType::u32, 0u, 8u}, std::tuple{KeyType::u32, 4u, 13u},
                                 std::tuple{KeyType::f32, 16u, 32u}, std::tuple{KeyType::u64, 20u, 50u},
                                 std::tuple{KeyType::i64, 0u, 64u}, std::tuple{KeyType::u64, 63u, 64u}})
    for (bool largest : {false, true})
      EXPECT_TRUE(check_topk({.key = key, .value_bytes = 4, .index_bytes = 8, .largest = largest,
                              .n = 3000, .k = 300, .begin_bit = begin, .end_bit = end}));
}

TEST(TopK, EmptyAndZero) {
  std::vector<float> none;
  std::vector<float> out;
  topk(context(), std::span<const float>(none), std::span<float>(out));
  std::vector<float> some{3, 1, 2};
  topk(context(), std::span<const float>(some), std::span<float>(out));
  EXPECT_EQ(topk(context(), std::span<const float>(some), 2), (std::vector<float>{1, 2}));
  SortOptions largest;
  largest.descending = true;
  EXPECT_EQ(topk(context(), std::span<const float>(some), 2, largest), (std::vector<float>{3, 2}));
}

TEST(TopK, Refusals) {
  std::vector<uint32_t> keys{5, 4, 3}, out(4);
  auto message = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { topk(context(), std::span<const uint32_t>(keys), std::span<uint32_t>(out)); }),
            "topk: k = 4 is more than the 3 keys");
  std::vector<uint32_t> values(2), values_out(1), keys_out(1);
  EXPECT_EQ(message([&] {
              topk_by_key(context(), std::span<const uint32_t>(keys), std::span<const uint32_t>(values),
                          std::span<uint32_t>(keys_out), std::span<uint32_t>(values_out));
            }),
            "topk_by_key: 3 keys but 2 values");
  SortOptions bitonic;
  bitonic.algorithm = Algorithm::bitonic;
  EXPECT_EQ(message([&] {
              topk(context(), std::span<const uint32_t>(keys), std::span<uint32_t>(keys_out), bitonic);
            }),
            "topk: top-k needs a stable sort: bitonic is not stable");
  std::vector<uint32_t> bad_offsets{0, 2, 1, 3};
  EXPECT_EQ(message([&] {
              topk_segments_raw(context(), KeyType::u32, 3, keys.data(),
                                segment_offsets(std::span<uint32_t>(bad_offsets)), 1, out.data(), 0,
                                nullptr, nullptr, nullptr, 0);
            }),
            "segment offsets decrease at index 2: offsets[1] = 2 > offsets[2] = 1");
}

// Every segment's results against the first k of its stable sort.
void check_segment_bits(KeyType key, bool largest, uint64_t k, const std::vector<uint64_t>& offsets,
                        const std::vector<uint64_t>& bits, uint32_t index_bytes = 4,
                        uint32_t begin_bit = 0, uint32_t end_bit = 0) {
  const uint64_t n = offsets.back();
  const uint32_t kb = key_bytes(key);
  std::vector<char> keys(n * kb), values(n * 8);
  for (uint64_t i = 0; i < n; ++i) {
    store(keys, kb, i, bits[i]);
    store(values, 8, i, i * 7 + 1);
  }
  const SegmentOffsets o = segment_offsets(std::span<const uint64_t>(offsets));
  const uint64_t total = topk_segments_count(o, k);
  std::vector<char> keys_out(total * kb), values_out(total * 8), indices(total * index_bytes);
  SortOptions options;
  options.descending = largest;
  options.begin_bit = begin_bit;
  options.end_bit = end_bit;
  topk_segments_raw(context(), key, n, keys.data(), o, k, keys_out.data(), 8, values.data(),
                    values_out.data(), indices.data(), index_bytes, options);
  const SortSpec spec = make_sort_spec(key, 0, largest, begin_bit, end_bit);
  uint64_t at = 0;
  for (size_t s = 0; s + 1 < offsets.size(); ++s)
    for (uint64_t p : reference_positions(key, spec, bits, offsets[s], offsets[s + 1], k)) {
      ASSERT_EQ(load(indices, index_bytes, at), p)
          << to_string(key) << " segment " << s << " k " << k << " output " << at;
      ASSERT_EQ(load(keys_out, kb, at), bits[p]);
      ASSERT_EQ(load(values_out, 8, at), p * 7 + 1);
      ++at;
    }
  ASSERT_EQ(at, total);
  EXPECT_TRUE(no_new_validation_messages());
}
void check_segments(KeyType key, bool largest, uint64_t k, const std::vector<uint64_t>& offsets,
                    Distribution d, std::mt19937_64& rng, uint32_t index_bytes = 4,
                    uint32_t begin_bit = 0, uint32_t end_bit = 0) {
  check_segment_bits(key, largest, k, offsets, make_key_bits(key, offsets.back(), d, rng),
                     index_bytes, begin_bit, end_bit);
}

TEST(TopK, Segments) {
  std::mt19937_64 rng(fresh_seed());
  // Empty, short and long segments.
  const std::vector<uint64_t> mixed{0, 0, 3, 3, 70, 71, 400, 400};
  for (KeyType key : {KeyType::u32, KeyType::f32, KeyType::i64, KeyType::f64})
    for (bool largest : {false, true})
      for (uint64_t k : {uint64_t(1), uint64_t(5), uint64_t(64)})
        check_segments(key, largest, k, mixed, Distribution::few_unique, rng, largest ? 8 : 4);
  // Rows of one length, every distribution.
  std::vector<uint64_t> rows{0};
  while (rows.size() <= 100) rows.push_back(rows.back() + 1000);
  for (Distribution d : all_distributions())
    check_segments(KeyType::f32, d == Distribution::sorted, 100, rows, d, rng);
  // A long segment (many workgroup widths) with a k past the select's bins, and bit ranges.
  check_segments(KeyType::u32, false, 3000, {0, 20000, 20001}, Distribution::low_entropy, rng);
  check_segments(KeyType::u64, true, 50, {0, 5000, 9000}, Distribution::uniform, rng, 4, 20, 50);
  // Long segments (2^16 keys and more on average): wider workgroups; their keys listed in shared
  // memory after the first digit (spread keys), or read per digit (few distinct keys).
  check_segments(KeyType::f32, true, 1500, {0, 70000, 140001}, Distribution::few_unique, rng);
  check_segments(KeyType::i32, false, 100, {0, 70000, 140001}, Distribution::uniform, rng);
}

// topk_segment sorts the results itself for k up to its workgroup's width (256; 1024 for rows of
// 2^16 keys and more on average) and what its histogram's memory holds (1024 results of 32-bit
// keys, 682 of 64-bit ones); beyond, the segmented sort does. The k on both sides of each bound,
// cached rows (all in shared memory), rows listed after the first digit or a later one, rows read
// whole per digit, ties at the k-th key (all equal, few distinct) and NaN-laden rows.
TEST(TopK, SegmentsSortedInTheWorkgroup) {
  std::mt19937_64 rng(fresh_seed());
  auto rows = [](uint64_t count, uint64_t length) {
    std::vector<uint64_t> offsets{0};
    while (offsets.size() <= count) offsets.push_back(offsets.back() + length);
    return offsets;
  };
  // Short rows (cached), k around the 256-wide workgroup, every distribution.
  for (Distribution d : all_distributions())
    for (uint64_t k : {uint64_t(1), uint64_t(32), uint64_t(256), uint64_t(257)})
      check_segments(KeyType::f32, true, k, rows(5, 700), d, rng);
  check_segments(KeyType::f64, false, 256, rows(5, 600), Distribution::few_unique, rng, 8);
  // Rows longer than the cache: listed, or read per digit where keys pile up.
  for (Distribution d : {Distribution::uniform, Distribution::all_equal, Distribution::few_unique,
                         Distribution::special_floats})
    check_segments(KeyType::f32, false, 64, rows(3, 9000), d, rng);
  // f32 keys uniform in [0, 1) (the benchmark's): an eighth of a row shares the first digit of the
  // largest, so a row of 2^15 keys is listed after the second digit.
  {
    const std::vector<uint64_t> offsets = rows(2, uint64_t(1) << 15);
    std::vector<uint64_t> bits(offsets.back());
    for (auto& b : bits) b = std::bit_cast<uint32_t>(float(rng() >> 40) * 0x1p-24f);
    for (uint64_t k : {uint64_t(1), uint64_t(100), uint64_t(256), uint64_t(300)})
      check_segment_bits(KeyType::f32, true, k, offsets, bits);
  }
  // k at most a quarter of the workgroup: the bound from the invocations' least keys first, its
  // candidates taken (spread keys, ties at the bound) or too many (keys piled at the bound: the
  // select after it); 64-bit keys, bit ranges, and 1024-wide workgroups too.
  for (Distribution d : {Distribution::uniform, Distribution::all_equal, Distribution::few_unique,
                         Distribution::sorted, Distribution::reversed})
    for (uint64_t k : {uint64_t(1), uint64_t(63), uint64_t(64)})
      check_segments(KeyType::i64, k == 63, k, rows(4, 3000), d, rng);
  check_segments(KeyType::u64, false, 16, rows(6, 5000), Distribution::uniform, rng, 4, 3, 40);
  for (Distribution d : {Distribution::uniform, Distribution::few_unique, Distribution::special_floats})
    for (uint64_t k : {uint64_t(1), uint64_t(256)})
      check_segments(KeyType::f32, k == 1, k, rows(2, (1 << 16) + 5), d, rng);
  // Long rows (1024-wide workgroups): k around 1024 for 32-bit keys, around 682 for 64-bit ones.
  for (uint64_t k : {uint64_t(1024), uint64_t(1025)})
    check_segments(KeyType::u32, false, k, rows(1, 1 << 16), Distribution::uniform, rng);
  check_segments(KeyType::u32, false, 1024, rows(1, 1 << 16), Distribution::all_equal, rng);
  check_segments(KeyType::u64, true, 682, rows(1, 1 << 16), Distribution::few_unique, rng);
}

// ---- Engine face: TopKSelector on device buffers, outputs poisoned ----

TEST(TopK, EngineFace) {
  auto& ctx = context().impl();
  std::mt19937_64 rng(fresh_seed());
  for (bool indirect : {false, true})
    for (bool largest : {false, true}) {
      const uint64_t max_n = 7000, n = indirect ? 6001 : max_n, k = 500;
      const auto bits = make_key_bits(KeyType::f32, max_n, Distribution::few_unique, rng);
      std::vector<uint32_t> keys(max_n), values(max_n);
      for (uint64_t i = 0; i < max_n; ++i) {
        keys[i] = uint32_t(bits[i]);
        values[i] = uint32_t(i * 3 + 1);
      }
      TopKSelector selector(context(), {.key = KeyType::f32, .value_bytes = 4, .largest = largest});
      DeviceBuffer keys_d(ctx, max_n * 4, MemoryKind::device_local),
          values_d(ctx, max_n * 4, MemoryKind::device_local),
          out_d(ctx, (k + 1) * 4, MemoryKind::device_local),
          values_out_d(ctx, (k + 1) * 4, MemoryKind::device_local),
          indices_d(ctx, (k + 1) * 4, MemoryKind::device_local),
          scratch(ctx, selector.scratch_bytes(max_n, k), MemoryKind::device_local),
          count(ctx, 16, MemoryKind::device_local);
      upload(ctx, keys_d, keys.data(), max_n * 4);
      upload(ctx, values_d, values.data(), max_n * 4);
      const std::vector<uint32_t> poison(k + 1, 0x5a5a5a5au);
      for (auto* b : {&out_d, &values_out_d, &indices_d}) upload(ctx, *b, poison.data(), (k + 1) * 4);
      const uint32_t count_value = uint32_t(n);
      upload(ctx, count, &count_value, 4);
      ctx.submit([&](VkCommandBuffer cmd) {
        Recorder::full_barrier(cmd);
        if (indirect)
          selector.record_indirect(cmd, keys_d.ref(), values_d.ref(), out_d.ref(), values_out_d.ref(),
                                   indices_d.ref(), scratch.ref(), count.ref(), max_n, k);
        else
          selector.record(cmd, keys_d.ref(), values_d.ref(), out_d.ref(), values_out_d.ref(),
                          indices_d.ref(), scratch.ref(), n, k);
        Recorder::full_barrier(cmd);
      });
      std::vector<uint32_t> out(k + 1), values_out(k + 1), indices(k + 1);
      download(ctx, out_d, out.data(), (k + 1) * 4);
      download(ctx, values_out_d, values_out.data(), (k + 1) * 4);
      download(ctx, indices_d, indices.data(), (k + 1) * 4);
      std::vector<uint64_t> head(bits.begin(), bits.begin() + n);
      const auto expected = reference_positions(
          KeyType::f32, make_sort_spec(KeyType::f32, 0, largest, 0, 0), head, 0, n, k);
      for (uint64_t i = 0; i < k; ++i) {
        ASSERT_EQ(indices[i], expected[i]) << "output " << i << (indirect ? " indirect" : "");
        ASSERT_EQ(out[i], keys[expected[i]]);
        ASSERT_EQ(values_out[i], values[expected[i]]);
      }
      EXPECT_EQ(out[k], 0x5a5a5a5au);
      EXPECT_EQ(values_out[k], 0x5a5a5a5au);
      EXPECT_EQ(indices[k], 0x5a5a5a5au);
    }
  EXPECT_TRUE(no_new_validation_messages());
}

TEST(TopK, EngineFaceSegments) {
  auto& ctx = context().impl();
  std::mt19937_64 rng(fresh_seed());
  const std::vector<uint64_t> offsets{0, 0, 3, 3, 70, 71, 2000, 2000, 6000};
  const uint64_t n = offsets.back(), segments = offsets.size() - 1, k = 40;
  const auto bits = make_key_bits(KeyType::u64, n, Distribution::few_unique, rng);
  TopKSelector selector(context(), {.key = KeyType::u64, .value_bytes = 4, .offset_bytes = 8});
  const uint64_t capacity = std::min(n, segments * k);  // what the outputs must hold
  std::vector<uint32_t> values(n);
  for (uint64_t i = 0; i < n; ++i) values[i] = uint32_t(i * 5 + 3);
  DeviceBuffer keys_d(ctx, n * 8, MemoryKind::device_local), values_d(ctx, n * 4, MemoryKind::device_local),
      offsets_d(ctx, offsets.size() * 8, MemoryKind::device_local),
      out_d(ctx, capacity * 8, MemoryKind::device_local),
      values_out_d(ctx, capacity * 4, MemoryKind::device_local),
      indices_d(ctx, capacity * 4, MemoryKind::device_local),
      scratch(ctx, selector.segments_scratch_bytes(n, segments, k), MemoryKind::device_local);
  upload(ctx, keys_d, bits.data(), n * 8);
  upload(ctx, values_d, values.data(), n * 4);
  upload(ctx, offsets_d, offsets.data(), offsets.size() * 8);
  const std::vector<uint64_t> poison(capacity, 0x5a5a5a5a5a5a5a5aull);
  upload(ctx, out_d, poison.data(), capacity * 8);
  upload(ctx, values_out_d, poison.data(), capacity * 4);
  upload(ctx, indices_d, poison.data(), capacity * 4);
  ctx.submit([&](VkCommandBuffer cmd) {
    Recorder::full_barrier(cmd);
    selector.record_segments(cmd, keys_d.ref(), values_d.ref(), offsets_d.ref(), out_d.ref(),
                             values_out_d.ref(), indices_d.ref(), scratch.ref(), n, segments, k);
    Recorder::full_barrier(cmd);
  });
  std::vector<uint64_t> out(capacity);
  std::vector<uint32_t> values_out(capacity), indices(capacity);
  download(ctx, out_d, out.data(), capacity * 8);
  download(ctx, values_out_d, values_out.data(), capacity * 4);
  download(ctx, indices_d, indices.data(), capacity * 4);
  const SortSpec spec = make_sort_spec(KeyType::u64, 0, false, 0, 0);
  uint64_t at = 0;
  for (size_t s = 0; s + 1 < offsets.size(); ++s)
    for (uint64_t p : reference_positions(KeyType::u64, spec, bits, offsets[s], offsets[s + 1], k)) {
      ASSERT_EQ(indices[at], p) << "segment " << s << " output " << at;
      ASSERT_EQ(out[at], bits[p]);
      ASSERT_EQ(values_out[at], values[p]);
      ++at;
    }
  ASSERT_EQ(at, topk_segments_count(segment_offsets(std::span<const uint64_t>(offsets)), k));
  for (; at < capacity; ++at) ASSERT_EQ(indices[at], 0x5a5a5a5au) << "written past the results";
  EXPECT_TRUE(no_new_validation_messages());
}

TEST(TopK, EngineFaceRefusals) {
  TopKSelector selector(context(), {.key = KeyType::u32});
  auto& ctx = context().impl();
  DeviceBuffer b(ctx, 4096, MemoryKind::device_local);
  std::string what;
  ctx.record_unsubmitted([&](VkCommandBuffer cmd) {
    try {
      selector.record(cmd, b.ref(), {}, b.ref(1024), {}, {}, b.ref(2048), 10, 11);
    } catch (const Error& e) {
      what = e.what();
    }
  });
  EXPECT_EQ(what, "TopKSelector::record: k = 11 is more than the 10 keys");
  ctx.record_unsubmitted([&](VkCommandBuffer cmd) {
    try {
      selector.record(cmd, b.ref(), {}, b.ref(16), {}, {}, b.ref(2048), 10, 5);
    } catch (const Error& e) {
      what = e.what();
    }
  });
  EXPECT_EQ(what, "TopKSelector::record: keys and keys_out overlap (for 10 keys and k = 5)");
}

}  // namespace
}  // namespace gpusort::test
