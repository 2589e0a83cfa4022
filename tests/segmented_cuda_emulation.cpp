// Host test of the CUDA face's segmented sort (src/api/cuda_segmented.cpp) as it composes its
// kernels: the element-wise kernels (src/primitives/cuda/elementwise.cu: the segment of each
// sorted position, the gathers) built with the host compiler and each block emulated by its
// threads (tests/cuda_emulation/), the face's two argsorts by a stand-in (std::stable_sort of the
// compared bits: the argsort is tested on the GPU by tests/cuda/cuda_face_test.cu). Layouts with
// empty segments first, last and between, segments of one key, one segment of all; every output
// compared whole with std::stable_sort of each segment. Offsets that are not CSR (falling, past
// n) give a permutation and segments within [0, S). Needs no GPU, no nvcc.
#include "emulated_cuda.hpp"
#include "emulated_keys.hpp"
// clang-format off: the kernels after the built-ins
#include "primitives/cuda/elementwise.cu"
// clang-format on

#include <cstdio>
#include <numeric>
#include <random>
#include <string>

namespace {

using namespace gpusort::cuda;

int failures = 0, checks = 0;

void fail(const std::string& what) {
  if (++failures <= 20) std::fprintf(stderr, "FAIL %s\n", what.c_str());
}

// The face's argsort on the bits [0, bits) of u32 keys, stably (the stand-in).
std::vector<uint32_t> argsort(const std::vector<uint32_t>& keys, uint32_t bits) {
  const uint32_t mask = bits >= 32 ? ~0u : (1u << bits) - 1;
  std::vector<uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return (keys[a] & mask) < (keys[b] & mask); });
  return order;
}

// What segmented_sort_by_key composes: the permutation (positions in the whole array) and the
// keys in segment order. offsets: S + 1 of OffsetT.
template <class OffsetT>
void compose(const std::vector<uint32_t>& keys, const std::vector<OffsetT>& offsets,
             std::vector<uint32_t>& permutation, std::vector<uint32_t>& sorted,
             std::vector<uint32_t>& segment) {
  const uint32_t n = uint32_t(keys.size());
  const uint64_t segments = offsets.size() - 1;
  const std::vector<uint32_t> positions = argsort(keys, 32);
  std::vector<uint32_t> sorted_keys(n);
  for (uint32_t i = 0; i < n; ++i) sorted_keys[i] = keys[positions[i]];
  segment.assign(n, 0xdeadbeef);
  const SegmentOfParams of{segment.data(), offsets.data(), positions.data(), n, segments,
                           uint32_t(sizeof(OffsetT))};
  cuda_emulation::launch(gpusort_segment_of, 3, 64, of);
  const std::vector<uint32_t> order = argsort(segment, segment_bits(segments));
  permutation.assign(n, 0xdeadbeef);
  cuda_emulation::launch(gpusort_gather_u32, 2, 128,
                         ElementwiseParams{permutation.data(), positions.data(), order.data(),
                                           nullptr, n, nullptr});
  sorted.assign(n, 0xdeadbeef);
  cuda_emulation::launch(gpusort_gather_u32, 2, 128,
                         ElementwiseParams{sorted.data(), sorted_keys.data(), order.data(),
                                           nullptr, n, nullptr});
}

template <class OffsetT>
void check_csr(const std::string& name, const std::vector<uint32_t>& keys,
               const std::vector<OffsetT>& offsets) {
  ++checks;
  std::vector<uint32_t> permutation, sorted, segment;
  compose(keys, offsets, permutation, sorted, segment);
  const uint32_t n = uint32_t(keys.size());
  std::vector<uint32_t> segment_of(n), expected(n);
  for (size_t s = 0; s + 1 < offsets.size(); ++s)
    for (uint64_t i = offsets[s]; i < offsets[s + 1]; ++i) segment_of[i] = uint32_t(s);
  std::iota(expected.begin(), expected.end(), 0u);
  std::stable_sort(expected.begin(), expected.end(), [&](uint32_t a, uint32_t b) {
    return segment_of[a] != segment_of[b] ? segment_of[a] < segment_of[b] : keys[a] < keys[b];
  });
  for (uint32_t i = 0; i < n; ++i) {
    if (permutation[i] != expected[i])
      return fail(name + ": position " + std::to_string(i) + " is " +
                  std::to_string(permutation[i]) + ", expected " + std::to_string(expected[i]));
    if (sorted[i] != keys[expected[i]]) return fail(name + ": key " + std::to_string(i));
  }
}

// Offsets that are not CSR: still a permutation, segments in [0, S).
void check_not_csr(const std::string& name, const std::vector<uint32_t>& keys,
                   const std::vector<uint32_t>& offsets) {
  ++checks;
  std::vector<uint32_t> permutation, sorted, segment;
  compose(keys, offsets, permutation, sorted, segment);
  std::vector<uint32_t> seen = permutation;
  std::sort(seen.begin(), seen.end());
  for (uint32_t i = 0; i < seen.size(); ++i)
    if (seen[i] != i) return fail(name + ": not a permutation");
  for (uint32_t s : segment)
    if (s >= offsets.size() - 1) return fail(name + ": segment " + std::to_string(s));
}

}  // namespace

int main() {
  std::mt19937_64 rng(20261129);
  static_assert(segment_bits(1) == 1 && segment_bits(2) == 1 && segment_bits(3) == 2 &&
                segment_bits(1u << 14) == 14 && segment_bits((1u << 14) + 1) == 15);
  for (uint32_t n : {1u, 2u, 7u, 100u, 1000u, 5000u})
    for (const char* spread : {"uniform", "few", "equal", "sorted", "reversed"}) {
      const std::vector<uint32_t> keys = cuda_emulation::make_keys<uint32_t>(spread, n, rng());
      const std::string name = std::string(spread) + " n=" + std::to_string(n);
      // Random lengths, an empty segment first, some between and one last.
      std::vector<uint32_t> offsets = {0, 0};
      for (uint32_t at = 0; at < n;) {
        at = std::min<uint32_t>(n, at + uint32_t(rng() % (n / 4 + 2)));
        offsets.push_back(at);
        if (rng() % 3 == 0) offsets.push_back(at);
      }
      offsets.push_back(n);
      check_csr(name + " random lengths", keys, offsets);
      check_csr(name + " random lengths, u64 offsets",
                keys, std::vector<unsigned long long>(offsets.begin(), offsets.end()));
      std::vector<uint32_t> singles(n + 1);
      std::iota(singles.begin(), singles.end(), 0u);
      check_csr(name + " one key a segment", keys, singles);
      check_csr(name + " two segments", keys, std::vector<uint32_t>{0, n / 2, n});
      check_csr(name + " all in the last of three", keys, std::vector<uint32_t>{0, 0, 0, n});
      check_not_csr(name + " falling offsets", keys, std::vector<uint32_t>{0, n, n / 2, 0, n});
      check_not_csr(name + " offsets past n", keys, std::vector<uint32_t>{0, n + 5, 3 * n, n});
    }
  std::printf("segmented_cuda_emulation: %d of %d checks failed\n", failures, checks);
  return failures == 0 ? 0 : 1;
}
