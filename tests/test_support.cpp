#include "test_support.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <sstream>

#include "algorithms/sort_algorithm.hpp"
#include "vulkan/buffer.hpp"

namespace gpusort::test {

Context& context() {
  static Context ctx = [] {
    ContextOptions options;
    const char* v = std::getenv("GPUSORT_TEST_VALIDATION");
    options.validation = v && std::string(v) != "0";
    options.synchronization_validation = options.validation;
    if (!std::getenv("GPUSORT_DEVICE")) options.device = "llvmpipe";
    Context created = Context::create(options);
    if (created.validation_messages() != 0)
      throw Error("creating the test context raised Vulkan validation messages (printed above)");
    return created;
  }();
  return ctx;
}

void download_range(const DeviceBuffer& from, uint64_t offset, void* to, uint64_t bytes) {
  auto& impl = context().impl();
  DeviceBuffer staging(impl, bytes, MemoryKind::device_local);
  impl.submit([&](VkCommandBuffer cmd) {
    VkBufferCopy c{offset, 0, bytes};
    vkCmdCopyBuffer(cmd, from.buffer(), staging.buffer(), 1, &c);
  });
  download(impl, staging, to, bytes);
}

namespace {

// Fails the running test when it caused a validation message.
class ValidationListener : public ::testing::EmptyTestEventListener {
  uint64_t before_ = 0;
  void OnTestStart(const ::testing::TestInfo&) override { before_ = messages(); }

 public:
  static uint64_t messages() { return context().validation_messages(); }
  uint64_t before() const { return before_; }
};

ValidationListener* listener = nullptr;

class ValidationCheck : public ::testing::Environment {
 public:
  void SetUp() override {
    listener = new ValidationListener;
    ::testing::UnitTest::GetInstance()->listeners().Append(listener);
  }
};

[[maybe_unused]] auto* environment = ::testing::AddGlobalTestEnvironment(new ValidationCheck);

uint32_t width_bits(KeyType t) { return key_bytes(t) * 8; }

bool is_float(KeyType t) { return t == KeyType::f32 || t == KeyType::f64; }

}  // namespace

// Checked at the end of every check_* helper.
::testing::AssertionResult no_new_validation_messages() {
  if (listener && ValidationListener::messages() != listener->before())
    return ::testing::AssertionFailure()
           << (ValidationListener::messages() - listener->before())
           << " Vulkan validation message(s) (printed above)";
  return ::testing::AssertionSuccess();
}

const char* to_string(Distribution d) {
  switch (d) {
    case Distribution::uniform: return "uniform";
    case Distribution::all_equal: return "all_equal";
    case Distribution::sorted: return "sorted";
    case Distribution::reversed: return "reversed";
    case Distribution::few_unique: return "few_unique";
    case Distribution::low_entropy: return "low_entropy";
    case Distribution::special_floats: return "special_values";
  }
  return "?";
}

const std::vector<Distribution>& all_distributions() {
  static const std::vector<Distribution> all{
      Distribution::uniform,    Distribution::all_equal,   Distribution::sorted,
      Distribution::reversed,   Distribution::few_unique,  Distribution::low_entropy,
      Distribution::special_floats};
  return all;
}

uint64_t fresh_seed() {
  if (const char* s = std::getenv("GPUSORT_TEST_SEED")) return std::strtoull(s, nullptr, 0);
  static std::random_device device;
  return (uint64_t(device()) << 32) ^ device() ^
         uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
}

std::vector<uint64_t> sizes_around_powers_of_two(uint64_t max) {
  std::vector<uint64_t> sizes{0};
  for (uint64_t p = 1; p <= max; p *= 2)
    for (uint64_t n : {p - 1, p, p + 1})
      if (n <= max && n > sizes.back()) sizes.push_back(n);
  return sizes;
}

uint64_t radix_order(KeyType type, uint64_t bits, bool descending) {
  const uint32_t width = width_bits(type);
  const uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1;
  const uint64_t sign = 1ull << (width - 1);
  bits &= mask;
  uint64_t ordered = bits;
  if (is_float(type)) ordered = (bits & sign) ? ~bits : bits | sign;
  else if (type == KeyType::i32 || type == KeyType::i64) ordered = bits ^ sign;
  if (descending) ordered = ~ordered;
  return ordered & mask;
}

std::vector<uint64_t> make_key_bits(KeyType type, uint64_t n, Distribution d, std::mt19937_64& rng) {
  const uint32_t width = width_bits(type);
  const uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1;
  std::vector<uint64_t> bits(n);
  auto random = [&] { return rng() & mask; };
  switch (d) {
    case Distribution::uniform:
      for (auto& b : bits) b = random();
      break;
    case Distribution::all_equal: {
      uint64_t v = random();
      std::fill(bits.begin(), bits.end(), v);
      break;
    }
    case Distribution::sorted:
    case Distribution::reversed: {
      for (auto& b : bits) b = random();
      auto less = [&](uint64_t a, uint64_t b) { return radix_order(type, a, false) < radix_order(type, b, false); };
      std::sort(bits.begin(), bits.end(), less);
      if (d == Distribution::reversed) std::reverse(bits.begin(), bits.end());
      break;
    }
    case Distribution::few_unique: {
      uint64_t pool[5];
      for (auto& p : pool) p = random();
      for (auto& b : bits) b = pool[rng() % 5];
      break;
    }
    case Distribution::low_entropy:
      for (auto& b : bits) b = random() & random() & random();
      break;
    case Distribution::special_floats: {
      std::vector<uint64_t> specials;
      if (type == KeyType::f32) {
        specials = {0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fffffff, 0xffffffff,
                    0x7f800000, 0xff800000, 0x00000000, 0x80000000, 0x00000001, 0x80000001,
                    0x007fffff, 0x807fffff, 0x3f800000, 0xbf800000};
      } else if (type == KeyType::f64) {
        specials = {0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001,
                    0xfff0000000000001, 0x7fffffffffffffff, 0xffffffffffffffff,
                    0x7ff0000000000000, 0xfff0000000000000, 0, 0x8000000000000000, 1,
                    0x8000000000000001, 0x000fffffffffffff, 0x800fffffffffffff,
                    0x3ff0000000000000, 0xbff0000000000000};
      } else {
        const uint64_t sign = 1ull << (width - 1);
        specials = {0, 1, mask, mask - 1, sign, sign - 1, sign + 1};
      }
      for (auto& b : bits) b = (rng() % 3 == 0) ? random() : specials[rng() % specials.size()];
      break;
    }
  }
  return bits;
}

std::vector<Combo> all_combos() {
  std::vector<Combo> combos;
  for (KeyType key : {KeyType::u32, KeyType::i32, KeyType::f32, KeyType::u64, KeyType::i64, KeyType::f64})
    for (uint32_t value_bytes : {0u, 4u, 8u})
      for (bool descending : {false, true}) combos.push_back({key, value_bytes, descending});
  return combos;
}

std::string combo_name(const ::testing::TestParamInfo<Combo>& info) {
  const Combo& c = info.param;
  return std::string(gpusort::to_string(c.key)) + "_values" + std::to_string(c.value_bytes) +
         (c.descending ? "_descending" : "_ascending");
}

std::string SortCase::describe(uint64_t seed) const {
  std::ostringstream s;
  s << to_string(algorithm) << " " << gpusort::to_string(key) << " values=" << value_bytes
    << (descending ? " descending" : " ascending") << " n=" << n << " " << to_string(distribution)
    << " bits=[" << begin_bit << "," << end_bit << ")"
    << (device_memory_limit ? " device_memory_limit=" + std::to_string(device_memory_limit) : "")
    << " kernels=" << gpusort::to_string(kernels) << " seed=" << seed
    << " (rerun with GPUSORT_TEST_SEED=" << seed << ")";
  return s.str();
}

namespace {

template <class K, class V>
::testing::AssertionResult check_typed(const SortCase& c, uint64_t seed, bool stable) {
  std::mt19937_64 rng(seed);
  auto bits = make_key_bits(c.key, c.n, c.distribution, rng);
  std::vector<K> keys(c.n);
  for (uint64_t i = 0; i < c.n; ++i) std::memcpy(&keys[i], &bits[i], sizeof(K));
  const uint32_t width = sizeof(K) * 8;
  const uint32_t end = c.end_bit ? c.end_bit : width;
  const uint64_t field = (end - c.begin_bit == 64) ? ~0ull : ((1ull << (end - c.begin_bit)) - 1);
  auto sort_key = [&](uint64_t i) { return (radix_order(c.key, bits[i], c.descending) >> c.begin_bit) & field; };

  std::vector<uint64_t> order(c.n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) { return sort_key(a) < sort_key(b); });

  SortOptions options{c.descending, c.algorithm, c.begin_bit, c.end_bit};
  options.device_memory_limit = c.device_memory_limit;
  options.timings = c.timings;
  options.kernels = c.kernels;
  using Value = std::conditional_t<std::is_void_v<V>, uint32_t, V>;
  std::vector<Value> values;
  if constexpr (!std::is_void_v<V>) {
    values.resize(c.n);
    // Values are the input positions with their high bits scrambled, so a moved or lost
    // element and an instability both show.
    for (uint64_t i = 0; i < c.n; ++i) values[i] = V(i) ^ (V(~V(0)) & V(0xA5A5A5A500000000ull) );
    sort_by_key(context(), std::span<K>(keys), std::span<V>(values), options);
  } else {
    sort(context(), std::span<K>(keys), options);
  }
  auto expected_value_of = [](uint64_t position) {
    using W = std::conditional_t<std::is_void_v<V>, uint64_t, V>;
    return uint64_t(W(position) ^ (W(~W(0)) & W(0xA5A5A5A500000000ull)));
  };
  if (!stable) {
    // Runs of equal sort keys: compare the multisets of (key bits, value) pairs.
    using Pair = std::pair<uint64_t, uint64_t>;
    std::vector<Pair> got, want;
    for (uint64_t begin = 0, end = 0; begin < c.n; begin = end) {
      end = begin + 1;
      while (end < c.n && sort_key(order[end]) == sort_key(order[begin])) ++end;
      got.clear();
      want.clear();
      for (uint64_t i = begin; i < end; ++i) {
        uint64_t key_bits = 0;
        std::memcpy(&key_bits, &keys[i], sizeof(K));
        uint64_t value = 0;
        if constexpr (!std::is_void_v<V>) value = uint64_t(values[i]);
        got.emplace_back(key_bits, value);
        want.emplace_back(bits[order[i]], std::is_void_v<V> ? 0 : expected_value_of(order[i]));
      }
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      for (size_t k = 0; k < got.size(); ++k)
        if (got[k] != want[k])
          return ::testing::AssertionFailure()
                 << c.describe(seed) << ": the run of equal keys at [" << begin << ", " << end
                 << ") holds (key 0x" << std::hex << got[k].first << ", value 0x" << got[k].second
                 << "), expected (0x" << want[k].first << ", 0x" << want[k].second
                 << ") as its smallest pair #" << std::dec << k;
    }
    return no_new_validation_messages();
  }
  for (uint64_t i = 0; i < c.n; ++i) {
    K expected;
    std::memcpy(&expected, &bits[order[i]], sizeof(K));
    if (std::memcmp(&expected, &keys[i], sizeof(K)) != 0) {
      uint64_t got = 0;
      std::memcpy(&got, &keys[i], sizeof(K));
      return ::testing::AssertionFailure() << c.describe(seed) << ": key " << i << " is 0x" << std::hex
                                           << got << ", expected 0x" << bits[order[i]];
    }
    if constexpr (!std::is_void_v<V>) {
      V expected_value = V(order[i]) ^ (V(~V(0)) & V(0xA5A5A5A500000000ull));
      if (values[i] != expected_value)
        return ::testing::AssertionFailure() << c.describe(seed) << ": value " << i << " is "
                                             << uint64_t(values[i]) << ", expected " << uint64_t(expected_value);
    }
  }
  return no_new_validation_messages();
}

template <class K>
::testing::AssertionResult check_key(const SortCase& c, uint64_t seed, bool stable) {
  switch (c.value_bytes) {
    case 0: return check_typed<K, void>(c, seed, stable);
    case 4: return check_typed<K, uint32_t>(c, seed, stable);
    case 8: return check_typed<K, uint64_t>(c, seed, stable);
  }
  return ::testing::AssertionFailure() << "bad value_bytes " << c.value_bytes;
}

}  // namespace

namespace {

::testing::AssertionResult check_any_sort(const SortCase& c, bool stable) {
  uint64_t seed = fresh_seed();
  try {
    switch (c.key) {
      case KeyType::u32: return check_key<uint32_t>(c, seed, stable);
      case KeyType::i32: return check_key<int32_t>(c, seed, stable);
      case KeyType::f32: return check_key<float>(c, seed, stable);
      case KeyType::u64: return check_key<uint64_t>(c, seed, stable);
      case KeyType::i64: return check_key<int64_t>(c, seed, stable);
      case KeyType::f64: return check_key<double>(c, seed, stable);
    }
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << c.describe(seed) << ": threw " << e.what();
  }
  return ::testing::AssertionFailure() << "bad key type";
}

}  // namespace

::testing::AssertionResult check_sort(const SortCase& c) { return check_any_sort(c, true); }
::testing::AssertionResult check_unstable_sort(const SortCase& c) { return check_any_sort(c, false); }

::testing::AssertionResult check_u32_pairs(
    const SortAlgorithm& algorithm, const std::vector<uint32_t>& keys, uint64_t n, bool indirect,
    bool descending, const std::string& what, int repeats,
    const std::function<::testing::AssertionResult(const DeviceBuffer& scratch)>& after) {
  auto& impl = context().impl();
  const uint64_t max_n = keys.size();
  std::vector<uint32_t> values(max_n);
  std::iota(values.begin(), values.end(), 0u);
  DeviceBuffer key_buffer(impl, max_n * 4, MemoryKind::device_local);
  DeviceBuffer value_buffer(impl, max_n * 4, MemoryKind::device_local);
  DeviceBuffer scratch(impl, std::max<uint64_t>(algorithm.scratch_bytes(max_n), 16),
                       MemoryKind::device_local);
  DeviceBuffer count(impl, 4, MemoryKind::device_local);
  const uint32_t n32 = uint32_t(n);
  upload(impl, key_buffer, keys.data(), max_n * 4);
  upload(impl, value_buffer, values.data(), max_n * 4);
  upload(impl, count, &n32, 4);
  for (int repeat = 0; repeat < repeats; ++repeat)
    impl.submit([&](VkCommandBuffer cmd) {
      Recorder rec(impl, cmd);
      algorithm.record(rec, SortTargets{key_buffer.address(), value_buffer.address(),
                                        scratch.address(), scratch.buffer(), 0,
                                        indirect ? count.address() : 0, indirect ? max_n : n});
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
    const uint32_t want_value = i < n ? order[i] : uint32_t(i);
    if (got_keys[i] != keys[want_value] || got_values[i] != want_value)
      return ::testing::AssertionFailure()
             << what << " n " << n << " max_n " << max_n << ": element " << i << " is ("
             << got_keys[i] << ", " << got_values[i] << "), expected (" << keys[want_value] << ", "
             << want_value << ")";
  }
  if (after) {
    ::testing::AssertionResult inspected = after(scratch);
    if (!inspected) return inspected;
  }
  return no_new_validation_messages();
}

}  // namespace gpusort::test
