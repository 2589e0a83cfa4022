// Host test of NumPy's float order on the CUDA face (src/primitives/cuda/float_order.cu), built
// with the host compiler: the very kernel code, each block emulated by its threads
// (tests/cuda_emulation/), launched as src/api/cuda_api.cpp's NumpyOrder launches it around a
// sort. In place: count, scan, set_aside, the sort, restore; a sorted copy: count (which writes
// the copy canonical), the sort, restore_copy (the original zeros and NaNs from the source). The
// sort between them is std::stable_sort of the canonical keys in totalOrder, as the GPU's. f32 and
// f64, both orders, keys with and without non-canonical zeros and NaNs, sizes across the chunks,
// GPU-side counts; each output compared whole with NumPy's order (a stable sort that takes -0.0
// as +0.0 and every NaN as equal and last), and the keys past the count left as they were. Needs
// no GPU, no nvcc.
#include "emulated_cuda.hpp"
#include "emulated_keys.hpp"
// clang-format off: the kernels after the built-ins
#include "primitives/cuda/float_order.cu"
// clang-format on

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>

namespace {

using namespace gpusort::cuda;
using u64 = unsigned long long;

int failures = 0, checks = 0;

template <class U>
void run(const char* spread, uint32_t n, uint32_t count, bool descending, bool copy,
         uint64_t seed) {
  ++checks;
  using B = gpusort::FloatKeyBits<U>;
  const std::vector<U> source = cuda_emulation::make_keys<U>(spread, n, seed);
  const uint32_t c = std::min(count, n);
  // The sort's output: in place the keys themselves, for a copy stale before count writes it.
  std::vector<U> keys = copy ? std::vector<U>(n, U(0x5c5c5c5c5c5c5c5cull)) : source;
  std::vector<U> aside(copy ? 0 : n);
  const uint32_t chunks = float_order_chunks(n);
  std::vector<FloatOrderChunk> records(chunks);
  FloatOrderTotals totals{};
  FloatOrderParams p{keys.data(), copy ? source.data() : nullptr, aside.data(), records.data(),
                     &totals,     count < n ? &count : nullptr,   n,           chunks,
                     descending ? 1u : 0u};
  using cuda_emulation::launch;
  const bool wide = sizeof(U) == 8;
  launch(wide ? gpusort_numpy_order_count_f64 : gpusort_numpy_order_count_f32, chunks,
         kFloatOrderThreads, p);
  if (!copy) {
    launch(gpusort_numpy_order_scan, 1, kFloatOrderMaxChunks, p);
    launch(wide ? gpusort_numpy_order_set_aside_f64 : gpusort_numpy_order_set_aside_f32, chunks,
           kFloatOrderThreads, p);
  }
  // The sort: every one of the first c keys canonical now; stably in totalOrder.
  auto ordered = [&](U bits) {
    const U o = gpusort::to_radix_order<U>(bits, gpusort::key_kind_float);
    return descending ? U(~o) : o;
  };
  for (uint32_t i = 0; i < c; ++i)
    if (keys[i] != B::canonical(keys[i])) {
      ++failures;
      std::printf("FAIL %s n=%u count=%u%s%s: key %u is not canonical before the sort\n", spread,
                  n, c, descending ? " descending" : "", copy ? " copy" : " in place", i);
      return;
    }
  std::stable_sort(keys.begin(), keys.begin() + c,
                   [&](U a, U b) { return ordered(a) < ordered(b); });
  if (copy)
    launch(wide ? gpusort_numpy_order_restore_copy_f64 : gpusort_numpy_order_restore_copy_f32,
           chunks, kFloatOrderThreads, p);
  else
    launch(wide ? gpusort_numpy_order_restore_f64 : gpusort_numpy_order_restore_f32,
           std::max<uint32_t>(1, std::min<uint32_t>(chunks, 8)), kFloatOrderThreads, p);

  // NumPy's order: a stable sort of the canonical keys, the original bits kept.
  std::vector<uint32_t> order(c);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return ordered(B::canonical(source[a])) < ordered(B::canonical(source[b]));
  });
  std::vector<U> want = copy ? std::vector<U>(n, U(0x5c5c5c5c5c5c5c5cull)) : source;
  for (uint32_t r = 0; r < c; ++r) want[r] = source[order[r]];
  if (keys != want) {
    uint32_t at = 0;
    while (keys[at] == want[at]) ++at;
    ++failures;
    std::printf("FAIL %u-bit %s n=%u count=%u%s%s: key %u is %llx, not %llx\n",
                unsigned(sizeof(U) * 8), spread, n, c, descending ? " descending" : "",
                copy ? " copy" : " in place", at, u64(keys[at]), u64(want[at]));
  }
}

}  // namespace

int main() {
  uint64_t seed = 1;
  for (bool copy : {true, false})
    for (bool descending : {false, true}) {
      // Sizes across the chunks (2,048 keys at least) and the scans' tiles of 256.
      for (uint32_t n : {1u, 255u, 2048u, 2049u, 5000u, 40000u})
        for (const char* spread : {"specials", "uniform", "equal", "few"}) {
          run<uint32_t>(spread, n, n, descending, copy, ++seed);
          run<u64>(spread, n, n, descending, copy, ++seed);
        }
      // GPU-side counts: the keys past them left alone.
      for (uint32_t count : {0u, 1u, 3000u, 9999u}) {
        run<uint32_t>("specials", 10000, count, descending, copy, ++seed);
        run<u64>("specials", 10000, count, descending, copy, ++seed);
      }
    }
  std::printf("float_order_cuda_emulation: %d of %d checks failed\n", failures, checks);
  return failures == 0 ? 0 : 1;
}
