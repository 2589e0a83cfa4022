// The convenient face's host path (core/host_path.hpp): the multi-slot staging pipeline, the
// buffers kept between calls, streamed sorts, failures inside a stream, concurrent callers.
#include "host/host_path.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>

#include "host/byte_count.hpp"
#include "test_support.hpp"

namespace gpusort::test {
namespace {

HostPath& host_path() {
  return context().impl().host_path();
}

// Lowers the staging slot size for one test, so that small arrays take many slots (the ring of
// HostPath::slot_count slots wraps several times) and pieces split keys and values.
class SmallSlots {
 public:
  explicit SmallSlots(uint64_t bytes) : saved_(host_path().max_slot_bytes) {
    host_path().max_slot_bytes = bytes;
  }
  ~SmallSlots() { host_path().max_slot_bytes = saved_; }

 private:
  uint64_t saved_;
};

TEST(HostPath, StreamingCopyCopiesEveryByteAtEveryAlignment) {
  // Sizes around the streaming threshold (64 KiB) and its 64-byte blocks, at misaligned
  // source and destination offsets: head, body and tail of the copy all show.
  std::mt19937_64 rng(fresh_seed());
  std::vector<uint8_t> source(70000 + 64), destination(source.size());
  for (auto& b : source) b = uint8_t(rng());
  for (uint64_t bytes : {uint64_t(100), uint64_t(65535), uint64_t(65536), uint64_t(65537),
                         uint64_t(65536 + 63), uint64_t(65536 + 64), uint64_t(70000)})
    for (uint64_t from : {0, 1, 15, 16, 17, 63})
      for (uint64_t to : {0, 3, 16, 40}) {
        std::fill(destination.begin(), destination.end(), 0xEE);
        streaming_copy(destination.data() + to, source.data() + from, bytes);
        ASSERT_TRUE(std::equal(source.begin() + from, source.begin() + from + bytes,
                               destination.begin() + to))
            << bytes << " bytes from +" << from << " to +" << to;
        ASSERT_TRUE(std::all_of(destination.begin(), destination.begin() + to,
                                [](uint8_t b) { return b == 0xEE; }) &&
                    std::all_of(destination.begin() + to + bytes, destination.end(),
                                [](uint8_t b) { return b == 0xEE; }))
            << "wrote outside: " << bytes << " bytes from +" << from << " to +" << to;
      }
}

TEST(HostPath, ManySlotsEveryKeyTypeWithValuesBothOrders) {
  // 4 KiB slots: 3000 u64 keys with 8-byte values are 48 KB, 12+ batches over 4 slots, with
  // pieces of keys and values sharing a slot.
  SmallSlots small(4096);
  for (const Combo& c : all_combos())
    for (uint64_t n : {uint64_t(1000), uint64_t(3001)})
      EXPECT_TRUE(check_sort(
          {Algorithm::automatic, c.key, c.value_bytes, c.descending, n, Distribution::uniform}));
  for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(2), uint64_t(1023), uint64_t(1025)})
    EXPECT_TRUE(
        check_sort({Algorithm::onesweep, KeyType::f32, 4, false, n, Distribution::special_floats}));
}

TEST(HostPath, ShaderCopiesSortLikeTheDma) {
  // The compute-shader copy engine (GPUSORT_COPY_ENGINE=shader), through one slot and many.
  const HostPath::CopyEngine saved = host_path().copy_engine;
  host_path().copy_engine = HostPath::CopyEngine::shader;
  for (uint64_t slot : {uint64_t(32) << 20, uint64_t(4096)}) {
    SmallSlots small(slot);
    for (const Combo& c : {Combo{KeyType::u32, 0, false}, Combo{KeyType::f64, 4, true},
                           Combo{KeyType::i32, 8, false}})
      for (uint64_t n : {uint64_t(1), uint64_t(2999), uint64_t(70001)})
        EXPECT_TRUE(check_sort({Algorithm::automatic, c.key, c.value_bytes, c.descending, n,
                                Distribution::few_unique}))
            << "slot " << slot;
  }
  host_path().copy_engine = saved;
}

TEST(HostPath, SlotSizesThatAreNotPowersOfTwoOfTheData) {
  // Slots of 4 KiB + 256 B and of 6 KiB: pieces end inside elements' natural boundaries of
  // neither stream.
  for (uint64_t slot : {uint64_t(4096 + 256), uint64_t(6144)}) {
    SmallSlots small(slot);
    EXPECT_TRUE(
        check_sort({Algorithm::automatic, KeyType::i64, 4, true, 2999, Distribution::few_unique}));
  }
}

TEST(HostPath, RepeatedSizesAllocateNothingAndReleaseFreesTheCache) {
  std::vector<uint32_t> keys(50000);
  auto fill = [&] {
    std::mt19937 rng{uint32_t(fresh_seed())};
    for (auto& k : keys) k = rng();
  };
  auto sorted = [&] { return std::is_sorted(keys.begin(), keys.end()); };
  fill();
  sort(context(), std::span<uint32_t>(keys));
  ASSERT_TRUE(sorted());
  const uint64_t after_first = host_path().allocations();
  for (int i = 0; i < 3; ++i) {
    fill();
    sort(context(), std::span<uint32_t>(keys));
    ASSERT_TRUE(sorted());
  }
  EXPECT_EQ(host_path().allocations(), after_first) << "a repeated size allocated again";
  // Smaller sorts fit the kept buffers too.
  keys.resize(1000);
  fill();
  sort(context(), std::span<uint32_t>(keys));
  ASSERT_TRUE(sorted());
  EXPECT_EQ(host_path().allocations(), after_first);

  context().release_cached_memory();
  fill();
  sort(context(), std::span<uint32_t>(keys));
  ASSERT_TRUE(sorted());
  EXPECT_GT(host_path().allocations(), after_first) << "nothing was released";
  EXPECT_TRUE(no_new_validation_messages());
}

// A stream over two arrays that records which bytes were read and written.
struct RecordingStream {
  const std::vector<uint8_t>& input;
  std::vector<uint8_t>& output;
  std::vector<std::atomic<uint8_t>> reads, writes;
  std::atomic<bool> wrote_before_reading_all{false};
  std::atomic<uint64_t> bytes_read{0};

  RecordingStream(const std::vector<uint8_t>& in, std::vector<uint8_t>& out)
      : input(in), output(out), reads(in.size()), writes(in.size()) {}

  HostStream stream() {
    return {[this](uint64_t offset, void* to, uint64_t bytes) {
              std::memcpy(to, input.data() + offset, bytes);
              for (uint64_t i = offset; i < offset + bytes; ++i) reads[i]++;
              bytes_read += bytes;
            },
            [this](uint64_t offset, const void* from, uint64_t bytes) {
              if (bytes_read.load() != input.size()) wrote_before_reading_all = true;
              std::memcpy(output.data() + offset, from, bytes);
              for (uint64_t i = offset; i < offset + bytes; ++i) writes[i]++;
            }};
  }
  bool each_byte_once() const {
    for (size_t i = 0; i < input.size(); ++i)
      if (reads[i] != 1 || writes[i] != 1) return false;
    return true;
  }
};

TEST(HostPath, StreamedSortReadsEveryByteOnceBeforeWritingAny) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const uint64_t n = 7001;
  std::vector<uint64_t> key_values(n);
  for (auto& k : key_values) k = rng() % 1000;  // many equal keys: stability shows
  std::vector<uint8_t> keys_in(n * 8), values_in(n * 4), keys_out(n * 8, 0xEE),
      values_out(n * 4, 0xEE);
  std::memcpy(keys_in.data(), key_values.data(), keys_in.size());
  for (uint32_t i = 0; i < n; ++i) std::memcpy(&values_in[i * 4], &i, 4);

  for (uint64_t slot : {uint64_t(32) << 20, uint64_t(8192)}) {
    SmallSlots small(slot);
    std::fill(keys_out.begin(), keys_out.end(), 0xEE);
    std::fill(values_out.begin(), values_out.end(), 0xEE);
    RecordingStream k(keys_in, keys_out), v(values_in, values_out);
    SortTimings timings;
    sort_streamed(context(), KeyType::u64, n, k.stream(), 4, v.stream(),
                  {.descending = true, .timings = &timings});
    EXPECT_TRUE(k.each_byte_once() && v.each_byte_once()) << "slot " << slot;
    EXPECT_FALSE(k.wrote_before_reading_all || v.wrote_before_reading_all) << "slot " << slot;
    EXPECT_EQ(timings.bytes, n * 12);
    EXPECT_GT(timings.total_ms, 0.0);

    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return key_values[a] > key_values[b]; });
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t key;
      uint32_t value;
      std::memcpy(&key, &keys_out[i * 8], 8);
      std::memcpy(&value, &values_out[i * 4], 4);
      ASSERT_EQ(key, key_values[order[i]]) << "key " << i << ", slot " << slot << ", seed " << seed;
      ASSERT_EQ(value, order[i]) << "value " << i << ", slot " << slot << ", seed " << seed;
    }
  }
  EXPECT_TRUE(no_new_validation_messages());
}

struct ReaderFailure {};

TEST(HostPath, AFailingReaderOrWriterThrowsAndLeavesTheContextUsable) {
  SmallSlots small(4096);
  const uint64_t n = 5000;
  std::vector<uint32_t> data(n);
  for (int failing = 0; failing < 2; ++failing) {
    std::atomic<int> calls{0};
    HostStream stream{[&](uint64_t offset, void* to, uint64_t bytes) {
                        if (failing == 0 && ++calls == 3) throw ReaderFailure{};
                        std::memcpy(to, reinterpret_cast<char*>(data.data()) + offset, bytes);
                      },
                      [&](uint64_t offset, const void* from, uint64_t bytes) {
                        if (failing == 1 && ++calls == 2) throw ReaderFailure{};
                        std::memcpy(reinterpret_cast<char*>(data.data()) + offset, from, bytes);
                      }};
    EXPECT_THROW(sort_streamed(context(), KeyType::u32, n, stream, 0, {}), ReaderFailure);
  }
  EXPECT_TRUE(check_sort({Algorithm::automatic, KeyType::u32, 8, false, n, Distribution::uniform}));
  EXPECT_THROW(sort_streamed(context(), KeyType::u32, n, HostStream{}, 0, {}), Error);
}

TEST(HostPath, ConcurrentCallersOnOneContext) {
  // Four threads, each sorting several arrays (some through many slots) on the shared Context.
  SmallSlots small(16384);
  const uint64_t seed = fresh_seed();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(seed + t);
      for (int round = 0; round < 3; ++round) {
        const uint64_t n = 1 + rng() % 20000;
        std::vector<uint64_t> keys(n);
        std::vector<uint32_t> values(n);
        for (uint64_t i = 0; i < n; ++i) keys[i] = rng() % 5000, values[i] = uint32_t(i);
        std::vector<uint32_t> order(values);
        std::stable_sort(order.begin(), order.end(),
                         [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
        std::vector<uint64_t> expected(n);
        for (uint64_t i = 0; i < n; ++i) expected[i] = keys[order[i]];
        sort_by_key(context(), std::span<uint64_t>(keys), std::span<uint32_t>(values));
        if (keys != expected || values != order) failures++;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0) << "seed " << seed;
  EXPECT_TRUE(no_new_validation_messages());
}

// Byte counts as the CLI's options and GPUSORT_STAGING_BYTES take them: one parser for both.
TEST(HostPath, ByteCounts) {
  const std::vector<std::pair<const char*, uint64_t>> valid{{"0", 0},
                                                            {"4096", 4096},
                                                            {"1B", 1},
                                                            {"4K", 4096},
                                                            {"4k", 4096},
                                                            {"4KB", 4096},
                                                            {"4KiB", 4096},
                                                            {"4kib", 4096},
                                                            {"32M", uint64_t(32) << 20},
                                                            {"1G", uint64_t(1) << 30},
                                                            {"2T", uint64_t(2) << 40},
                                                            {"16777215T", uint64_t(16777215) << 40},
                                                            {"18446744073709551615", ~uint64_t(0)}};
  for (const auto& [text, bytes] : valid) EXPECT_EQ(parse_byte_count(text), bytes) << text;
  for (const char* text : {"", "K", "B", "-1", "+1", " 1", "1 ", "1.5M", "1BB", "1IB", "1X", "0x10",
                           "1KK", "16777216T", "18446744073709551616"})
    EXPECT_EQ(parse_byte_count(text), std::nullopt) << text;
}

// GPUSORT_STAGING_BYTES: a byte count from 4 KiB to 1 GiB in the CLI's syntax; unset or set but
// empty: the default; anything else: an error naming the variable.
TEST(HostPath, StagingBytesVariable) {
  EXPECT_EQ(staging_slot_bytes(nullptr), std::nullopt);
  EXPECT_EQ(staging_slot_bytes(""), std::nullopt);
  EXPECT_EQ(staging_slot_bytes("4096"), 4096u);
  EXPECT_EQ(staging_slot_bytes("4K"), 4096u);
  EXPECT_EQ(staging_slot_bytes("1M"), uint64_t(1) << 20);
  EXPECT_EQ(staging_slot_bytes("64KiB"), uint64_t(64) << 10);
  EXPECT_EQ(staging_slot_bytes("1G"), uint64_t(1) << 30);
  for (const char* bad :
       {"4095", "1k", "1025M", "2G", "1T", "abc", " 1M", "1M ", "-4096", "1.5M"}) {
    try {
      staging_slot_bytes(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()),
                "GPUSORT_STAGING_BYTES='" + std::string(bad) +
                    "': expected a byte count from 4096 (4K) to 1073741824 (1G), such as 65536, "
                    "64K or 32M (K, M, G: powers of 1024)");
    }
  }
}

}  // namespace
}  // namespace gpusort::test
