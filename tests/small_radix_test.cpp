// The small-array radix sort (src/algorithms/small_radix.cpp), run through its internal face,
// against std::stable_sort: every key type x values 0/4/8 x order on every distribution, sizes
// around subgroups, workgroups and the tile, every embedded keys-per-invocation shader, bit
// ranges, keys whose digits are partly constant (skipped passes), a GPU-side count (the rest of
// the array untouched), and the tile limit. Every check compares the whole buffers, guard
// elements past max_n included.
#include "algorithms/small_radix.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <sstream>

#include "test_support.hpp"
#include "vulkan/buffer.hpp"

namespace gpusort::test {
namespace {

struct RadixCase {
  KeyType key = KeyType::u32;
  uint32_t value_bytes = 0;
  bool descending = false;
  uint64_t n = 0;  // max_n, and n where gpu_count is not set
  Distribution distribution = Distribution::uniform;
  uint32_t begin_bit = 0, end_bit = 0;
  uint32_t workgroup = 1024, items = 4;  // the shape asked for (shrunk to the device)
  std::optional<uint32_t> gpu_count;     // n read on the GPU: min(*gpu_count, max_n)
  uint64_t varying = ~0ull;              // key bits outside it are one random constant
};

SortSpec spec_of(const RadixCase& c) {
  return make_sort_spec(c.key, c.value_bytes, c.descending, c.begin_bit, c.end_bit);
}

uint64_t tile_of(const RadixCase& c) {
  return small_radix_max_n(context().impl(), spec_of(c), c.workgroup, c.items);
}

constexpr uint64_t guard = 16;  // elements past max_n in each buffer, which must stay untouched

::testing::AssertionResult check_small_radix(const RadixCase& c) {
  auto& impl = context().impl();
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const SortSpec spec = spec_of(c);
  const uint32_t key_bytes = spec.key_words * 4, value_bytes = c.value_bytes;
  const uint64_t max_n = c.n, n = std::min<uint64_t>(c.gpu_count.value_or(max_n), max_n);
  const uint64_t total = max_n + guard;
  std::ostringstream description;
  description << to_string(c.key) << " values=" << value_bytes
              << (c.descending ? " descending" : " ascending") << " n=" << n;
  if (c.gpu_count) description << " (GPU count " << *c.gpu_count << ", max_n " << max_n << ")";
  description << " " << to_string(c.distribution) << " bits=[" << spec.begin_bit << ","
              << spec.end_bit << ") shape " << c.workgroup << "x" << c.items << " varying=0x"
              << std::hex << c.varying << std::dec << " seed=" << seed
              << " (rerun with GPUSORT_TEST_SEED=" << seed << ")";
  try {
    auto algorithm = make_small_radix(impl, spec, c.workgroup, c.items);
    const uint64_t width_mask = key_bytes == 8 ? ~0ull : 0xffffffffull;
    const uint64_t constant = rng() & ~c.varying & width_mask;
    std::vector<uint64_t> bits = make_key_bits(c.key, total, c.distribution, rng);
    for (auto& b : bits) b = (b & c.varying) | constant;
    std::vector<uint64_t> values(total);
    std::vector<uint8_t> key_data(total * key_bytes), value_data(total * value_bytes);
    for (uint64_t i = 0; i < total; ++i) {
      values[i] = (i ^ 0xA5A5A5A500000000ull) & (value_bytes == 8 ? ~0ull : 0xffffffffull);
      std::memcpy(&key_data[i * key_bytes], &bits[i], key_bytes);
      std::memcpy(&value_data[i * value_bytes], &values[i], value_bytes);
    }
    DeviceBuffer key_buffer(impl, std::max<uint64_t>(key_data.size(), 4), MemoryKind::device_local);
    DeviceBuffer value_buffer(impl, std::max<uint64_t>(value_data.size(), 4),
                              MemoryKind::device_local);
    DeviceBuffer count(impl, 4, MemoryKind::device_local);
    upload(impl, key_buffer, key_data.data(), key_data.size());
    if (value_bytes) upload(impl, value_buffer, value_data.data(), value_data.size());
    if (c.gpu_count) upload(impl, count, &*c.gpu_count, 4);
    if (algorithm->scratch_bytes(max_n) != 0)
      return ::testing::AssertionFailure() << description.str() << ": asks for scratch";
    impl.submit([&](VkCommandBuffer cmd) {
      Recorder rec(impl, cmd);
      algorithm->record(rec, {key_buffer.address(), value_bytes ? value_buffer.address() : 0, 0,
                              VK_NULL_HANDLE, 0, c.gpu_count ? count.address() : 0, max_n});
    });
    download(impl, key_buffer, key_data.data(), key_data.size());
    if (value_bytes) download(impl, value_buffer, value_data.data(), value_data.size());

    const uint64_t field =
        spec.end_bit - spec.begin_bit == 64 ? ~0ull : (1ull << (spec.end_bit - spec.begin_bit)) - 1;
    auto sort_key = [&](uint64_t i) {
      return (radix_order(c.key, bits[i], c.descending) >> spec.begin_bit) & field;
    };
    std::vector<uint64_t> order(total);
    std::iota(order.begin(), order.end(), 0);  // beyond n: untouched
    std::stable_sort(order.begin(), order.begin() + n,
                     [&](uint64_t a, uint64_t b) { return sort_key(a) < sort_key(b); });
    for (uint64_t i = 0; i < total; ++i) {
      uint64_t got_key = 0, got_value = 0;
      std::memcpy(&got_key, &key_data[i * key_bytes], key_bytes);
      std::memcpy(&got_value, &value_data[i * value_bytes], value_bytes);
      const uint64_t want_value = value_bytes ? values[order[i]] : 0;
      if (got_key != bits[order[i]] || got_value != want_value) {
        std::ostringstream what;
        what << ": element " << i << std::hex << " is (0x" << got_key << ", 0x" << got_value
             << "), expected (0x" << bits[order[i]] << ", 0x" << want_value << ")";
        return ::testing::AssertionFailure() << description.str() << what.str();
      }
    }
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << description.str() << ": threw " << e.what();
  }
  return no_new_validation_messages();
}

class SmallRadix : public ::testing::TestWithParam<Combo> {};

// Around a subgroup, a workgroup and the tile, on every distribution, with 4 keys per invocation.
TEST_P(SmallRadix, MatchesStableSortOnEveryDistribution) {
  const Combo c = GetParam();
  RadixCase base{c.key, c.value_bytes, c.descending};
  const uint64_t tile = tile_of(base);
  for (uint64_t n : std::vector<uint64_t>{0, 1, 2, 3, 31, 32, 33, 1000, tile - 1, tile})
    for (Distribution d : all_distributions()) {
      if (n > tile) continue;  // 1000 where the device's tile is smaller (lavapipe at 4 lanes)
      RadixCase r = base;
      r.n = n;
      r.distribution = d;
      EXPECT_TRUE(check_small_radix(r));
    }
}

// Every embedded keys-per-invocation shader, at its largest tile and at a smaller workgroup.
TEST_P(SmallRadix, EveryItemsVariant) {
  const Combo c = GetParam();
  for (uint32_t items : {1u, 2u, 4u, 8u})
    for (uint32_t workgroup : {1024u, 64u}) {
      RadixCase r{c.key, c.value_bytes, c.descending};
      r.items = items;
      r.workgroup = workgroup;
      const uint64_t tile = tile_of(r);
      for (uint64_t n : {tile / 2 + 3, tile})
        for (Distribution d :
             {Distribution::uniform, Distribution::few_unique, Distribution::special_floats}) {
          r.n = n;
          r.distribution = d;
          EXPECT_TRUE(check_small_radix(r));
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllKeyTypes, SmallRadix, ::testing::ValuesIn(all_combos()), combo_name);

TEST(SmallRadixSizes, EveryPowerOfTwoNeighbourUpToTheTile) {
  for (Combo c :
       {Combo{KeyType::u32, 4, false}, Combo{KeyType::i64, 8, true}, Combo{KeyType::f32, 0, false}})
    for (uint32_t items : {1u, 4u, 8u}) {
      RadixCase r{c.key, c.value_bytes, c.descending};
      r.items = items;
      for (uint64_t n : sizes_around_powers_of_two(tile_of(r))) {
        r.n = n;
        r.distribution = Distribution::low_entropy;
        EXPECT_TRUE(check_small_radix(r));
      }
    }
}

TEST(SmallRadixBits, SortsOnlyTheRequestedBitRange) {
  for (auto [key, begin, end] :
       {std::tuple{KeyType::u32, 4u, 20u}, std::tuple{KeyType::u64, 28u, 44u},
        std::tuple{KeyType::f32, 0u, 8u}, std::tuple{KeyType::i64, 40u, 64u},
        std::tuple{KeyType::u32, 3u, 4u}, std::tuple{KeyType::f64, 5u, 64u}})
    for (bool descending : {false, true})
      for (uint32_t value_bytes : {0u, 8u}) {
        RadixCase r{key, value_bytes, descending};
        r.begin_bit = begin;
        r.end_bit = end;
        r.n = tile_of(r) - 5;
        EXPECT_TRUE(check_small_radix(r));
      }
}

// Keys whose bits outside `varying` are constant: the digits made only of those bits are skipped
// (one pass alone, passes on either side of a skipped one, a digit straddling the 64-bit keys'
// words, none at all).
TEST(SmallRadixSkipping, SortsKeysWithConstantDigits) {
  for (auto [key, varying] :
       {std::pair{KeyType::u32, 0x0000ff00ull}, std::pair{KeyType::i32, 0xff00ff00ull},
        std::pair{KeyType::f32, 0x00000001ull}, std::pair{KeyType::u64, 0xfffull},
        std::pair{KeyType::i64, 0x00ff00000000ff00ull}, std::pair{KeyType::f64, 0x80000000ull},
        std::pair{KeyType::u64, 0x0000000f00000000ull}, std::pair{KeyType::u32, 0ull}})
    for (bool descending : {false, true})
      for (uint32_t value_bytes : {0u, 4u}) {
        RadixCase r{key, value_bytes, descending};
        r.varying = varying;
        r.n = tile_of(r) - 1;
        EXPECT_TRUE(check_small_radix(r));
      }
}

// The count read on the GPU: the first min(count, max_n) keys are sorted, the rest (and the guard
// elements) stay as they were.
TEST(SmallRadixIndirectCount, SortsOnlyTheFirstCountKeys) {
  for (Combo c :
       {Combo{KeyType::u32, 4, false}, Combo{KeyType::f64, 8, true}, Combo{KeyType::i32, 0, true}})
    for (uint32_t items : {1u, 4u}) {
      RadixCase r{c.key, c.value_bytes, c.descending};
      r.items = items;
      r.distribution = Distribution::few_unique;
      const uint64_t tile = tile_of(r);
      for (auto [max_n, count] :
           {std::pair{tile, 0u}, std::pair{tile, 1u}, std::pair{tile, 2u},
            std::pair{tile, uint32_t(tile / 3)}, std::pair{tile, uint32_t(tile - 1)},
            std::pair{tile, uint32_t(tile)}, std::pair{tile / 2, uint32_t(tile)},
            std::pair{uint64_t(100), 50u}}) {
        r.n = max_n;
        r.gpu_count = count;
        EXPECT_TRUE(check_small_radix(r));
      }
    }
}

TEST(SmallRadixLimits, RefusesMoreThanATile) {
  auto& impl = context().impl();
  const SortSpec spec = make_sort_spec(KeyType::u64, 8, false, 0, 0);
  auto algorithm = make_small_radix(impl, spec, 1024, 4);
  const uint64_t tile = small_radix_max_n(impl, spec, 1024, 4);
  EXPECT_EQ(algorithm->max_elements(), tile);
  EXPECT_LE(small_radix_shared_bytes(impl, spec, uint32_t(tile / 4), 4),
            impl.info.shared_memory_bytes);
  EXPECT_EQ(algorithm->scratch_bytes(tile), 0u);
  EXPECT_THROW(algorithm->scratch_bytes(tile + 1), Error);
  impl.submit([&](VkCommandBuffer cmd) {
    Recorder rec(impl, cmd);
    EXPECT_THROW(algorithm->record(rec, {0, 0, 0, VK_NULL_HANDLE, 0, 0, tile + 1}), Error);
  });
  EXPECT_THROW(make_small_radix(impl, spec, 1024, 3), Error);
}

}  // namespace
}  // namespace gpusort::test
