// Host test of the CUDA face's segmented sort (src/api/cuda_segmented.cpp) as it composes its
// kernels: the element-wise kernels (src/primitives/cuda/elementwise.cu: the segment of each
// sorted position, the gathers) built with the host compiler and each block emulated by its
// threads (tests/cuda_emulation/), the face's two argsorts by a stand-in (std::stable_sort of the
// compared bits: the argsort is tested on the GPU by tests/cuda/cuda_face_test.cu). Layouts with
// empty segments first, last and between, segments of one key, one segment of all; every output
// compared whole with std::stable_sort of each segment. Offsets that are not CSR (falling, past
// n) give a permutation and segments within [0, S). Top-k per segment (topk_segments_raw): the
// results' places and the take after the same composition (src/algorithms/topk/cuda/
// topk_segments.cu), k below, at and past the segments' lengths, 4- and 8-byte values and
// indices, outputs past the results checked untouched. Needs no GPU, no nvcc.
#include "emulated_cuda.hpp"
#include "emulated_keys.hpp"
// clang-format off: the kernels after the built-ins
#include "algorithms/topk/cuda/topk_segments.cu"
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
  const SegmentOfParams of{segment.data(), offsets.data(),           positions.data(), n,
                           segments,       uint32_t(sizeof(OffsetT))};
  cuda_emulation::launch(gpusort_segment_of, 3, 64, of);
  const std::vector<uint32_t> order = argsort(segment, segment_bits(segments));
  permutation.assign(n, 0xdeadbeef);
  cuda_emulation::launch(
      gpusort_gather_u32, 2, 128,
      ElementwiseParams{permutation.data(), positions.data(), order.data(), nullptr, n, nullptr});
  sorted.assign(n, 0xdeadbeef);
  cuda_emulation::launch(
      gpusort_gather_u32, 2, 128,
      ElementwiseParams{sorted.data(), sorted_keys.data(), order.data(), nullptr, n, nullptr});
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

// Top-k per segment: the first min(k, length) of each segment's stable order, one segment after
// another, with values (8 bytes where wide, else 4) and positions (index_bytes).
template <class OffsetT>
void check_topk(const std::string& name, const std::vector<uint32_t>& keys,
                const std::vector<OffsetT>& offsets, uint64_t k, bool wide,
                bool in_segment = false) {
  ++checks;
  std::vector<uint32_t> permutation, sorted, segment;
  compose(keys, offsets, permutation, sorted, segment);  // the segmented argsort
  const uint64_t n = keys.size(), segments = offsets.size() - 1;
  const uint64_t capacity = std::min<uint64_t>(n, segments * k);
  std::vector<unsigned long long> values(n);
  for (uint64_t i = 0; i < n; ++i) values[i] = 0x9e3779b97f4a7c15ull * (i + 1);
  // One slot past the capacity, poisoned: never written.
  const uint32_t poison = 0x5c5c5c5c;
  std::vector<uint32_t> keys_out(capacity + 1, poison), result_offsets(segments + 2, poison),
      indices32(capacity + 1, poison);
  std::vector<unsigned long long> values_out(capacity + 1, poison), indices64(capacity + 1, poison);
  std::vector<uint32_t> values32(n), values32_out(capacity + 1, poison);
  for (uint64_t i = 0; i < n; ++i) values32[i] = uint32_t(values[i]);
  TopKSegmentsParams p{};
  p.keys = keys.data();
  p.keys_out = keys_out.data();
  p.values = wide ? static_cast<const void*>(values.data()) : values32.data();
  p.values_out = wide ? static_cast<void*>(values_out.data()) : values32_out.data();
  p.indices = wide ? static_cast<void*>(indices64.data()) : indices32.data();
  p.order = permutation.data();
  p.offsets = offsets.data();
  p.result_offsets = result_offsets.data();
  p.segments = segments;
  p.k = k;
  p.key_bytes = 4;
  p.value_bytes = p.index_bytes = wide ? 8 : 4;
  p.offset_bytes = sizeof(OffsetT);
  p.in_segment = in_segment;
  cuda_emulation::launch(gpusort_topk_segment_offsets, 1, kTopKSegmentOffsetsThreads, p);
  cuda_emulation::launch(gpusort_topk_segment_take, 2, kTopKSegmentTakeThreads, p);

  std::vector<uint32_t> want_offsets(segments + 2, poison), want_keys(capacity + 1, poison),
      want_indices(capacity + 1, poison);
  std::vector<unsigned long long> want_values(capacity + 1, poison);
  uint32_t at = 0;
  for (uint64_t s = 0; s < segments; ++s) {
    want_offsets[s] = at;
    std::vector<uint32_t> order(offsets[s + 1] - offsets[s]);
    std::iota(order.begin(), order.end(), uint32_t(offsets[s]));
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
    for (uint64_t j = 0; j < std::min<uint64_t>(k, order.size()); ++j, ++at) {
      want_keys[at] = keys[order[j]];
      want_indices[at] = order[j] - (in_segment ? uint32_t(offsets[s]) : 0u);
      want_values[at] = wide ? values[order[j]] : uint32_t(values[order[j]]);
    }
  }
  want_offsets[segments] = at;
  std::vector<unsigned long long> got_values(capacity + 1), got_indices(capacity + 1);
  for (uint64_t i = 0; i <= capacity; ++i) {
    got_values[i] = wide ? values_out[i] : values32_out[i];
    got_indices[i] = wide ? indices64[i] : indices32[i];
  }
  const std::string what =
      name + " k=" + std::to_string(k) + (wide ? " wide" : "") + (in_segment ? " in segment" : "");
  if (result_offsets != want_offsets) return fail(what + ": result offsets");
  if (keys_out != want_keys) return fail(what + ": keys");
  if (got_values != want_values) return fail(what + ": values");
  if (!std::equal(got_indices.begin(), got_indices.end(), want_indices.begin()))
    return fail(what + ": indices");
}

// Rows of one length: the offsets made on the GPU (topk_rows_raw), then their top-k with
// positions within the row.
void check_rows(const std::string& name, const std::vector<uint32_t>& keys, uint64_t rows,
                uint64_t k) {
  ++checks;
  const uint64_t length = keys.size() / rows;
  std::vector<unsigned long long> offsets(rows + 2, 0x5c5c5c5c5c5c5c5cull);
  TopKSegmentsParams p{};
  p.offsets = offsets.data();
  p.segments = rows;
  p.row_length = length;
  cuda_emulation::launch(gpusort_topk_row_offsets, 2, kTopKSegmentTakeThreads, p);
  for (uint64_t s = 0; s <= rows; ++s)
    if (offsets[s] != s * length) return fail(name + ": row offset " + std::to_string(s));
  if (offsets[rows + 1] != 0x5c5c5c5c5c5c5c5cull) return fail(name + ": past the row offsets");
  offsets.pop_back();
  check_topk(name + " rows", keys, offsets, k, k % 2 == 0, true);
}

// Rows a block each, against each row's stable order: up to kTopKRowsCapacity keys in shared
// memory (rows_select: the bound from the threads' least keys, or the row sorted there; its wide
// kernel with more loads a thread at once), or any length (long_rows_select: the bound from the
// threads' 4 least keys, else the radix select within the block).
// Or split: each row's chunks (of `chunk` keys) a block each, then a block a row.
enum class RowsKernel { shared, wide, long_rows, split };
void check_rows_select(const std::string& name, const std::vector<uint32_t>& keys, uint64_t rows,
                       uint64_t k, bool descending, RowsKernel kernel = RowsKernel::shared,
                       uint64_t chunk = 0) {
  ++checks;
  const uint64_t length = keys.size() / rows, kept = std::min(k, length);
  const uint32_t poison = 0x5c5c5c5c;
  std::vector<uint32_t> keys_out(rows * kept + 1, poison), indices(rows * kept + 1, poison);
  std::vector<unsigned long long> values(keys.size()), values_out(rows * kept + 1, poison);
  for (uint64_t i = 0; i < values.size(); ++i) values[i] = 0x9e3779b97f4a7c15ull * (i + 1);
  TopKSegmentsParams p{};
  p.keys = keys.data();
  p.keys_out = keys_out.data();
  p.values = values.data();
  p.values_out = values_out.data();
  p.indices = indices.data();
  p.segments = rows;
  p.k = k;
  p.key_bytes = 4;
  p.value_bytes = 8;
  p.index_bytes = 4;
  p.in_segment = 1;
  p.row_length = length;
  p.mask = 0xffffffffull;
  p.descending = descending;
  const uint64_t chunks = chunk ? (length + chunk - 1) / chunk : 0;
  std::vector<uint32_t> chunk_positions(rows * chunks * k + 1, poison);
  if (kernel == RowsKernel::split) {
    p.chunk_positions = chunk_positions.data();
    p.chunks = uint32_t(chunks);
    p.chunk_length = chunk;
    cuda_emulation::launch(gpusort_topk_long_rows_chunks_32, 2, kTopKLongRowsThreads, p);
    cuda_emulation::launch(gpusort_topk_long_rows_merge_32, 2, kTopKLongRowsThreads, p);
  } else if (kernel == RowsKernel::long_rows)
    cuda_emulation::launch(gpusort_topk_long_rows_select_32, 2, kTopKLongRowsThreads, p);
  else
    cuda_emulation::launch(
        kernel == RowsKernel::wide ? gpusort_topk_rows_select_wide_32 : gpusort_topk_rows_select_32,
        3, kTopKRowsThreads, p);
  std::vector<uint32_t> want_keys(rows * kept + 1, poison), want_indices(rows * kept + 1, poison);
  std::vector<unsigned long long> want_values(rows * kept + 1, poison);
  for (uint64_t r = 0; r < rows; ++r) {
    std::vector<uint32_t> order(length);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const uint32_t x = keys[r * length + a], y = keys[r * length + b];
      return descending ? x > y : x < y;
    });
    for (uint64_t j = 0; j < kept; ++j) {
      want_keys[r * kept + j] = keys[r * length + order[j]];
      want_indices[r * kept + j] = order[j];
      want_values[r * kept + j] = values[r * length + order[j]];
    }
  }
  const char* kernels[] = {"", " wide", " long", " split"};
  const std::string what = name + kernels[int(kernel)] + " rows " + std::to_string(rows) +
                           " k=" + std::to_string(k) + (descending ? " descending" : "");
  if (keys_out != want_keys) return fail(what + ": keys");
  if (indices != want_indices) return fail(what + ": indices");
  if (values_out != want_values) return fail(what + ": values");
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
      check_csr(name + " random lengths, u64 offsets", keys,
                std::vector<unsigned long long>(offsets.begin(), offsets.end()));
      std::vector<uint32_t> singles(n + 1);
      std::iota(singles.begin(), singles.end(), 0u);
      check_csr(name + " one key a segment", keys, singles);
      check_csr(name + " two segments", keys, std::vector<uint32_t>{0, n / 2, n});
      check_csr(name + " all in the last of three", keys, std::vector<uint32_t>{0, 0, 0, n});
      for (uint64_t k :
           {uint64_t(1), uint64_t(3), uint64_t(n / 3 + 1), uint64_t(n), uint64_t(n + 9)}) {
        check_topk(name + " top-k, random lengths", keys, offsets, k, k % 2 == 1);
        check_topk(name + " top-k, one key a segment", keys,
                   std::vector<unsigned long long>(singles.begin(), singles.end()), k, k % 2 == 0);
      }
      for (uint64_t rows : {uint64_t(1), uint64_t(n % 7 == 0 ? 7 : 1), uint64_t(n)})
        for (uint64_t k : {uint64_t(1), uint64_t(n / rows / 2 + 1), uint64_t(n + 1)})
          check_rows(name + " " + std::to_string(rows),
                     std::vector<uint32_t>(keys.begin(), keys.begin() + n / rows * rows), rows, k);
      // (512 emulated threads a block: a few rows each.)
      for (uint64_t rows : {uint64_t(1), uint64_t(7)})
        for (uint64_t k :
             {uint64_t(1), uint64_t(100), uint64_t(128), uint64_t(129), uint64_t(n + 1)})
          if (n <= 1000 && n >= rows)
            check_rows_select(name,
                              std::vector<uint32_t>(keys.begin(), keys.begin() + n / rows * rows),
                              rows, k, k % 2 == 0);
      check_not_csr(name + " falling offsets", keys, std::vector<uint32_t>{0, n, n / 2, 0, n});
      check_not_csr(name + " offsets past n", keys, std::vector<uint32_t>{0, n + 5, 3 * n, n});
    }
  // The longest rows: two batches of a thread's loads (16 keys of 512 threads) and in the wide
  // kernel (which the face takes for them) a whole batch (32 keys) and one key short of it; the
  // bound's entries fewer than the threads (each the least of several threads' keys).
  for (const char* spread : {"uniform", "few", "sorted", "reversed"})
    for (uint64_t length : {uint64_t(kTopKRowsCapacity), uint64_t(16383)}) {
      const std::vector<uint32_t> keys =
          cuda_emulation::make_keys<uint32_t>(spread, 2 * length, rng());
      for (uint64_t k : {uint64_t(1), uint64_t(8), uint64_t(33), uint64_t(64)})
        for (RowsKernel kernel : {RowsKernel::shared, RowsKernel::wide})
          check_rows_select(std::string(spread) + " " + std::to_string(length), keys, 2, k, k == 8,
                            kernel);
    }
  // Rows of any length for k up to kTopKLongRowsK, a block each: two load batches (16 keys of
  // 1024 threads), the bound from the threads' 4 least keys, and where keys pile at it (equal) the
  // radix select within the block with the ties at the k-th key taken by position; k past the
  // row; three rows over a grid of two.
  for (const char* spread : {"uniform", "few", "equal", "sorted", "reversed"})
    for (uint64_t length : {uint64_t(100), uint64_t(17000)}) {
      const std::vector<uint32_t> keys =
          cuda_emulation::make_keys<uint32_t>(spread, 3 * length, rng());
      for (uint64_t k : {uint64_t(1), uint64_t(100), uint64_t(kTopKLongRowsK)})
        check_rows_select(std::string(spread) + " " + std::to_string(length), keys, 3, k, k == 100,
                          RowsKernel::long_rows);
    }
  // The long rows split into chunks, a shorter one last (3 rows of 17000 keys in chunks of 6000,
  // 5000 and 17000: one chunk), the chunks' candidates merged: k up to kTopKLongRowsCandidates
  // in all, as the face splits them.
  for (const char* spread : {"uniform", "few", "equal", "sorted", "reversed"}) {
    const std::vector<uint32_t> keys =
        cuda_emulation::make_keys<uint32_t>(spread, 3 * 17000, rng());
    for (uint64_t chunk : {uint64_t(6000), uint64_t(5000), uint64_t(17000)})
      for (uint64_t k : {uint64_t(1), uint64_t(100),
                         std::min<uint64_t>(kTopKLongRowsK, kTopKLongRowsCandidates /
                                                                ((17000 + chunk - 1) / chunk))})
        check_rows_select(std::string(spread) + " chunks of " + std::to_string(chunk), keys, 3, k,
                          k == 100, RowsKernel::split, chunk);
  }
  std::printf("segmented_cuda_emulation: %d of %d checks failed\n", failures, checks);
  return failures == 0 ? 0 : 1;
}
