// Host test of the CUDA face's rank sort (src/algorithms/small_sort/cuda/rank_sort.cu), built with
// the host compiler: the very kernel code, each block emulated by its threads, blocks one after
// another (tests/cuda_emulation/), launched as src/algorithms/small_sort/cuda/stream_sort.cpp
// launches it (one block per 32 keys of the capacity n, the count read on the device; every
// other case in place, after the copy kernel where values are given). Every
// kernel row, key kind, spread, both orders, bit ranges, values (4 bytes, positions, positions
// widened to 8 bytes) and GPU-side counts; each output compared whole with std::stable_sort's,
// and the outputs past the count left as they were. Needs no GPU, no nvcc.
#include "emulated_cuda.hpp"
#include "emulated_keys.hpp"
// clang-format off: the kernels after the built-ins
#include "algorithms/small_sort/cuda/rank_sort.cu"
// clang-format on

#include <cstdio>
#include <numeric>
#include <random>
#include <string>

namespace {

using namespace gpusort::cuda;
using u64 = unsigned long long;

int failures = 0, checks = 0;

enum class Values { none, given, positions, wide_positions };

struct Case {
  uint32_t key_bytes, kind;  // kind: 0 unsigned, 1 signed, 2 float
  const char* spread;  // "uniform", "few", "equal", "sorted", "reversed", "specials"
  uint32_t n;
  Values values = Values::none;
  bool descending = false;
  uint32_t begin_bit = 0, end_bit = 0;  // end 0: the full key
  uint32_t count = ~0u;                 // below n: the GPU-side count
  bool in_place = false;  // the copy kernel first: keys (and values) read from scratch copies
  bool one_launch = false;  // in place, the _in_place kernel alone (one block: n <= 32)
};

template <class U>
void run(const Case& c, uint64_t seed) {
  ++checks;
  const std::vector<U> keys = cuda_emulation::make_keys<U>(c.spread, c.n, seed);
  const uint32_t width = sizeof(U) * 8, end = c.end_bit ? c.end_bit : width;
  const u64 mask = cuda_emulation::range_mask(c.begin_bit, end);
  const uint32_t n = std::min(c.count, c.n);
  std::vector<uint32_t> values(c.n);
  for (uint32_t i = 0; i < c.n; ++i) values[i] = 0x9e3779b9u * (i + 1);

  // The outputs, stale where nothing is written.
  std::vector<U> keys_out(c.n, U(0x5c5c5c5c5c5c5c5cull));
  std::vector<uint32_t> values_out(c.n, 0x5c5c5c5cu);
  std::vector<u64> wide_out(c.n, 0x5c5c5c5c5c5c5c5cull);
  RankSortParams p{};
  p.keys_in = keys.data();
  p.keys_out = keys_out.data();
  const bool with_values = c.values != Values::none;
  // Given values are sorted in place (read from a copy); in place, the keys too. The scratch
  // copies stale.
  std::vector<U> key_copy(c.n, U(0x3a3a3a3a3a3a3a3aull));
  std::vector<uint32_t> value_copy(c.n, 0x3a3a3a3au);
  if (c.values == Values::given) {
    values_out = values;
    p.values_in = value_copy.data();
  }
  if (c.in_place) {
    keys_out = keys;
    p.keys_in = key_copy.data();
  }
  if (c.one_launch) {  // the keys and given values read where they are written
    p.keys_in = keys_out.data();
    if (c.values == Values::given) p.values_in = values_out.data();
  }
  if (with_values && c.values != Values::wide_positions) p.values_out = values_out.data();
  if (c.values == Values::wide_positions) p.values_wide = wide_out.data();
  p.values_iota = c.values == Values::positions || c.values == Values::wide_positions;
  const uint32_t count32 = c.count;
  p.count = c.count < c.n ? &count32 : nullptr;
  p.n = c.n;
  p.key_kind = c.kind;
  p.descending = c.descending;
  p.begin_bit = c.begin_bit;
  p.end_bit = end;
  const uint32_t blocks = (c.n + kRankSortKeysPerBlock - 1) / kRankSortKeysPerBlock;
  const bool wide = sizeof(U) == 8;
  auto kernel = wide ? (with_values ? gpusort_rank_sort_k64_v32 : gpusort_rank_sort_k64)
                     : (with_values ? gpusort_rank_sort_k32_v32 : gpusort_rank_sort_k32);
  if (c.one_launch) {
    kernel = wide ? (with_values ? gpusort_rank_sort_k64_v32_in_place : gpusort_rank_sort_k64_in_place)
                  : (with_values ? gpusort_rank_sort_k32_v32_in_place : gpusort_rank_sort_k32_in_place);
  } else if (c.values == Values::given) {
    RankSortParams copy = p;
    if (!c.in_place) copy.keys_in = nullptr;
    cuda_emulation::launch(wide ? gpusort_rank_sort_k64_v32_copy : gpusort_rank_sort_k32_v32_copy,
                           (c.n + kRankSortCopyThreads - 1) / kRankSortCopyThreads,
                           kRankSortCopyThreads, copy);
  } else if (c.in_place) {
    key_copy = keys;  // the driver's copy
  }
  cuda_emulation::launch(kernel, blocks, kRankSortThreads, p);

  // The reference: the stable order of the first n keys.
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  auto compared = [&](U raw) {
    U o = gpusort::to_radix_order<U>(raw, c.kind);
    if (c.descending) o = ~o;
    return u64(o) & mask;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return compared(keys[a]) < compared(keys[b]); });
  std::vector<U> want_keys(c.n, U(0x5c5c5c5c5c5c5c5cull));
  std::vector<uint32_t> want_values(c.n, 0x5c5c5c5cu);
  if (c.in_place) want_keys = keys;
  if (c.values == Values::given) want_values = values;
  std::vector<u64> want_wide(c.n, 0x5c5c5c5c5c5c5c5cull);
  for (uint32_t r = 0; r < n; ++r) {
    want_keys[r] = keys[order[r]];
    const uint32_t value = c.values == Values::given ? values[order[r]] : order[r];
    if (c.values == Values::wide_positions)
      want_wide[r] = value;
    else if (with_values)
      want_values[r] = value;
  }
  if (keys_out != want_keys || values_out != want_values || wide_out != want_wide) {
    ++failures;
    std::printf("FAIL %u-bit kind %u %s n=%u count=%d values %d %s bits [%u,%u)%s: %s\n", width,
                c.kind, c.spread, c.n, c.count < c.n ? int(c.count) : -1, int(c.values),
                c.descending ? "descending" : "ascending", c.begin_bit, end,
                c.one_launch ? " in place, one launch" : c.in_place ? " in place" : "",
                keys_out != want_keys ? "keys" : "values");
  }
}

// Every other case in place; in one launch where one block holds it, every third of those.
void run_case(Case c, uint64_t seed) {
  c.in_place = seed % 2 == 0;
  c.one_launch = c.in_place && c.n <= kRankSortKeysPerBlock && seed % 3 != 0;
  if (c.key_bytes == 4)
    run<uint32_t>(c, seed);
  else
    run<unsigned long long>(c, seed);
}

}  // namespace

int main() {
  uint64_t seed = 1;
  for (uint32_t bytes : {4u, 8u}) {
    const uint32_t capacity = kRankSortShapes[bytes == 4 ? 0 : 2].capacity;
    for (uint32_t kind : {0u, 1u, 2u}) {
      // Sizes around the blocks' 32 keys, the padding to 4 and the warps' sixteenths.
      for (uint32_t n : {1u, 2u, 3u, 5u, 31u, 32u, 33u, 100u, 511u, 1000u, 2049u})
        for (const char* spread : {"uniform", "few"})
          run_case({bytes, kind, spread, n, Values(n % 4), n % 3 == 1}, ++seed);
      for (const char* spread : {"equal", "sorted", "reversed", "specials"})
        for (bool desc : {false, true})
          run_case({bytes, kind, spread, 777, Values((seed + desc) % 4), desc}, ++seed);
      run_case({bytes, kind, "few", capacity, Values::given, kind == 1}, ++seed);
      run_case({bytes, kind, "uniform", capacity - 3, Values::wide_positions, kind == 2}, ++seed);
      // Bit ranges.
      const uint32_t w = bytes * 8;
      for (auto [b, e] : {std::pair<uint32_t, uint32_t>{3, 5}, {0, 11}, {8, w - 8}, {w - 20, 0}})
        run_case({bytes, kind, "uniform", 900, Values(b % 4), b % 2 == 1, b, e}, ++seed);
      // GPU-side counts.
      for (uint32_t count : {0u, 1u, 70u, 899u})
        run_case({bytes, kind, "few", 900, Values(count % 4), count == 70, 0, 0, count}, ++seed);
      // In place in one launch (one block): every kind of values, counts, equal keys.
      for (uint32_t v = 0; v < 4; ++v)
        for (uint32_t n : {1u, 17u, 32u}) {
          Case c{bytes, kind, n == 17 ? "equal" : "uniform", n, Values(v), v % 2 == 1};
          c.in_place = c.one_launch = true;
          if (n == 32) c.count = 20;
          if (bytes == 4)
            run<uint32_t>(c, ++seed);
          else
            run<unsigned long long>(c, ++seed);
        }
    }
  }
  std::printf("small_sort_cuda_emulation: %d of %d checks failed\n", failures, checks);
  return failures == 0 ? 0 : 1;
}
