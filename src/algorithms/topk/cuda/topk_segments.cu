// Top-k per segment on the CUDA face (topk_params.hpp, "Per segment"): after the segmented
// argsort, the results' places and the take. Launched by src/api/cuda_topk.cpp.
#include <cstdint>
#include <cub/block/block_scan.cuh>

#include "algorithms/topk/cuda/block_common.cuh"
#include "algorithms/topk/cuda/topk_params.hpp"
#include "primitives/key_order.h"

#ifdef __CUDACC__
extern __shared__ __align__(16) unsigned char gpusort_topk_rows_shared[];
#else  // the host's emulation: one block at a time
alignas(16) static unsigned char gpusort_topk_rows_shared[gpusort::cuda::topk_rows_shared_bytes(
    8, gpusort::cuda::kTopKRowsCapacity)];
#endif

namespace gpusort::cuda::topk_segments {
namespace {

using u64 = unsigned long long;

__device__ __forceinline__ u64 offset_at(const TopKSegmentsParams& p, u64 s) {
  return p.offset_bytes == 4 ? static_cast<const uint32_t*>(p.offsets)[s]
                             : static_cast<const u64*>(p.offsets)[s];
}
// Segment s's first key and its result count (offsets that fall read as empty).
struct Segment {
  u64 begin, results;
};
__device__ __forceinline__ Segment segment(const TopKSegmentsParams& p, u64 s) {
  const u64 begin = offset_at(p, s), end = offset_at(p, s + 1);
  return {begin, end > begin ? min(p.k, end - begin) : 0};
}

template <class T>
__device__ __forceinline__ void copy(void* to, u64 at, const void* from, u64 i) {
  static_cast<T*>(to)[at] = static_cast<const T*>(from)[i];
}

}  // namespace
}  // namespace gpusort::cuda::topk_segments

// One block: result_offsets[s] for s in [0, S], S + 1 entries a block's width at a time.
extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKSegmentOffsetsThreads)
    gpusort_topk_segment_offsets(const gpusort::cuda::TopKSegmentsParams p) {
  using namespace gpusort::cuda;
  using namespace gpusort::cuda::topk_segments;
  using BlockScan = cub::BlockScan<u64, kTopKSegmentOffsetsThreads>;
  __shared__ typename BlockScan::TempStorage scan;
  u64 carry = 0;
  for (u64 first = 0; first <= p.segments; first += kTopKSegmentOffsetsThreads) {
    const u64 s = first + threadIdx.x;
    const u64 results = s < p.segments ? segment(p, s).results : 0;
    u64 before, total;
    BlockScan(scan).ExclusiveSum(results, before, total);
    if (s <= p.segments) p.result_offsets[s] = uint32_t(carry + before);
    carry += total;
    __syncthreads();  // the scan's storage is read before the next chunk's scan
  }
}

// A warp per segment: its results from the sorted order, with their values and positions.
extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKSegmentTakeThreads)
    gpusort_topk_segment_take(const gpusort::cuda::TopKSegmentsParams p) {
  using namespace gpusort::cuda;
  using namespace gpusort::cuda::topk_segments;
  const u64 warps = u64(gridDim.x) * (kTopKSegmentTakeThreads / 32);
  const uint32_t lane = threadIdx.x % 32;
  for (u64 s = u64(blockIdx.x) * (kTopKSegmentTakeThreads / 32) + threadIdx.x / 32; s < p.segments;
       s += warps) {
    const Segment g = segment(p, s);
    const u64 out = p.result_offsets[s];
    for (u64 j = lane; j < g.results; j += 32) {
      const uint32_t i = p.order[g.begin + j];
      if (p.keys_out) {
        if (p.key_bytes == 4)
          copy<uint32_t>(p.keys_out, out + j, p.keys, i);
        else
          copy<u64>(p.keys_out, out + j, p.keys, i);
      }
      if (p.values_out) {
        if (p.value_bytes == 4)
          copy<uint32_t>(p.values_out, out + j, p.values, i);
        else
          copy<u64>(p.values_out, out + j, p.values, i);
      }
      if (p.indices) {
        const u64 position = p.in_segment != 0 ? i - g.begin : i;
        if (p.index_bytes == 4)
          static_cast<uint32_t*>(p.indices)[out + j] = uint32_t(position);
        else
          static_cast<u64*>(p.indices)[out + j] = position;
      }
    }
  }
}

// Rows of one length: offsets[s] = s row_length for s in [0, S] (u64, written into `offsets`).
extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKSegmentTakeThreads)
    gpusort_topk_row_offsets(const gpusort::cuda::TopKSegmentsParams p) {
  using gpusort::cuda::topk_segments::u64;
  u64* offsets = static_cast<u64*>(const_cast<void*>(p.offsets));
  for (u64 s = u64(blockIdx.x) * blockDim.x + threadIdx.x; s <= p.segments;
       s += u64(gridDim.x) * blockDim.x)
    offsets[s] = s * p.row_length;
}

namespace gpusort::cuda::topk_segments {
namespace {

// The key as the select compares it: radix order (NumPy's: of the canonical key), descending
// inverted, the compared bits.
template <class U>
__device__ __forceinline__ U compared(const TopKSegmentsParams& p, U raw) {
  return topk_common::compared_bits<U>(raw, p.key_kind, p.descending, p.numpy, p.mask);
}

// Result r of row `row` (its key at position i of the row) to its place.
template <class U>
__device__ __forceinline__ void write_result(const TopKSegmentsParams& p, u64 row, u64 begin,
                                             uint32_t kept, uint32_t r, uint32_t i) {
  const u64 out = row * kept + r, at = begin + i;
  if (p.keys_out) static_cast<U*>(p.keys_out)[out] = static_cast<const U*>(p.keys)[at];
  if (p.values_out) {
    if (p.value_bytes == 4)
      copy<uint32_t>(p.values_out, out, p.values, at);
    else
      copy<u64>(p.values_out, out, p.values, at);
  }
  if (p.indices) {
    if (p.index_bytes == 4)
      static_cast<uint32_t*>(p.indices)[out] = i;
    else
      static_cast<u64*>(p.indices)[out] = i;
  }
}

using topk_common::before;
using topk_common::sort_padded;
using topk_common::sort_pairs;

// batch: keys a thread loads before it stores any, their loads in flight together.
template <class U, uint32_t batch>
__device__ void rows_select(const TopKSegmentsParams& p) {
  const uint32_t t = threadIdx.x, length = uint32_t(p.row_length);
  const uint32_t padded = topk_rows_padded(length);
  const uint32_t kept = uint32_t(min(p.k, u64(length)));
  U* keys = reinterpret_cast<U*>(gpusort_topk_rows_shared);
  uint32_t* positions = reinterpret_cast<uint32_t*>(keys + padded);
  U* least = reinterpret_cast<U*>(positions + padded);
  U* candidate_keys = least + kTopKRowsThreads;
  uint32_t* candidate_positions = reinterpret_cast<uint32_t*>(candidate_keys + kTopKRowsCandidates);
  uint32_t* counter = candidate_positions + kTopKRowsCandidates;
  U* bound = reinterpret_cast<U*>(counter + 2);
  for (u64 row = blockIdx.x; row < p.segments; row += gridDim.x) {
    const u64 begin = row * length;
    U mine = ~U(0);
    for (uint32_t first = 0; first < padded; first += batch * kTopKRowsThreads) {
      U raw[batch];
#pragma unroll
      for (uint32_t j = 0; j < batch; ++j) {
        const uint32_t i = first + j * kTopKRowsThreads + t;
        raw[j] = i < length ? static_cast<const U*>(p.keys)[begin + i] : U(0);
      }
#pragma unroll
      for (uint32_t j = 0; j < batch; ++j) {
        const uint32_t i = first + j * kTopKRowsThreads + t;
        if (i >= padded) break;
        const U key = i < length ? compared<U>(p, raw[j]) : ~U(0);
        keys[i] = key;
        if (i < length) mine = min(mine, key);
      }
    }
    if (t == 0) *counter = 0;
    bool done = false;
    if (4 * kept <= kTopKRowsThreads) {  // uniform
      // The bound from `entries` (at least 4 k) disjoint sets of the row: entry e is the least
      // key of threads e, e + entries, ...; the k-th least entry has k keys at or below it.
      uint32_t entries = 32;
      while (entries < 4 * kept) entries *= 2;
      least[t] = mine;
      __syncthreads();
      U entry = ~U(0);
      if (t < entries)
        for (uint32_t o = t; o < kTopKRowsThreads; o += entries) entry = min(entry, least[o]);
      __syncthreads();
      if (t < entries) least[t] = entry;
      __syncthreads();
      if (t < entries) {
        uint32_t rank = 0;
        for (uint32_t o = 0; o < entries; ++o) rank += before(least[o], o, entry, t) ? 1u : 0u;
        if (rank == kept - 1) *bound = entry;
      }
      __syncthreads();
      const U b = *bound;
      for (uint32_t i = t; i < length; i += kTopKRowsThreads)
        if (keys[i] <= b) {
          const uint32_t c = atomicAdd(counter, 1u);
          if (c < kTopKRowsCandidates) candidate_keys[c] = keys[i], candidate_positions[c] = i;
        }
      __syncthreads();
      const uint32_t count = *counter;
      if (count <= kTopKRowsCandidates) {  // uniform
        for (uint32_t c = t; c < count; c += kTopKRowsThreads) {
          const U key = candidate_keys[c];
          const uint32_t i = candidate_positions[c];
          uint32_t r = 0;
          for (uint32_t o = 0; o < count; ++o)
            r += before(candidate_keys[o], candidate_positions[o], key, i) ? 1u : 0u;
          if (r < kept) write_result<U>(p, row, begin, kept, r, i);
        }
        done = true;
      }
    }
    if (!done) {
      // The row sorted: a bitonic sort of (key, position) pairs, padding last.
      for (uint32_t i = t; i < padded; i += kTopKRowsThreads) positions[i] = i;
      __syncthreads();
      sort_pairs<U, kTopKRowsThreads>(keys, positions, padded);
      for (uint32_t r = t; r < kept; r += kTopKRowsThreads)
        write_result<U>(p, row, begin, kept, r, positions[r]);
    }
    __syncthreads();  // the row's shared memory read before the next row's
  }
}

// Calls f(key, i) for each of the thread's keys of a long row (compared; i, the position in the
// row): 16 32-bit keys (8 of 64-bit) loaded before any is used, their loads in flight together
// (the same time as 8 at 64 x 2^20).
template <class U, class F>
__device__ __forceinline__ void each_key(const TopKSegmentsParams& p, const U* row, u64 length,
                                         F&& f) {
  constexpr uint32_t batch = sizeof(U) == 4 ? 16 : 8;
  for (u64 first = 0; first < length; first += u64(batch) * kTopKLongRowsThreads) {
    U raw[batch];
#pragma unroll
    for (uint32_t j = 0; j < batch; ++j) {
      const u64 i = first + j * kTopKLongRowsThreads + threadIdx.x;
      raw[j] = i < length ? row[i] : U(0);
    }
#pragma unroll
    for (uint32_t j = 0; j < batch; ++j) {
      const u64 i = first + j * kTopKLongRowsThreads + threadIdx.x;
      if (i < length) f(compared<U>(p, raw[j]), uint32_t(i));
    }
  }
}

// The block's shared memory for long_rows_select.
template <class U>
struct LongRowsShared {
  typename cub::BlockScan<uint32_t, kTopKLongRowsThreads>::TempStorage scan;
  uint32_t histogram[kTopKBins];
  U candidate_keys[kTopKLongRowsCandidates];
  uint32_t candidate_positions[kTopKLongRowsCandidates];
  uint32_t found[3];  // the pass's digit, the rank in it, the keys in it
  uint32_t counter;
};

// The k-th key of a block's keys: `need` is its rank (from 1), visit(f) calls f(key) for each of
// the thread's keys (compared). Digit by digit from the top, a histogram in shared memory each.
template <class U>
struct Kth {
  U key;
  uint32_t need, equal;  // its rank among the keys equal to it, and how many are
};
template <class U, class Visit>
__device__ Kth<U> radix_kth(LongRowsShared<U>& s, uint32_t need, Visit&& visit) {
  constexpr uint32_t width = sizeof(U) * 8;
  const uint32_t t = threadIdx.x;
  U prefix = 0;
  uint32_t equal = 0;
  for (uint32_t pass = 0; pass < topk_passes(0, width); ++pass) {
    const TopKDigit d = topk_digit(0, width, pass);
    const uint32_t above = d.bit + d.bits;
    s.histogram[t] = 0, s.histogram[t + kTopKLongRowsThreads] = 0;
    __syncthreads();
    visit([&](U key) {
      if (above == width || (key >> above) == prefix)
        atomicAdd(&s.histogram[uint32_t(key >> d.bit) & ((1u << d.bits) - 1)], 1u);
    });
    __syncthreads();
    const uint32_t h0 = s.histogram[2 * t], h1 = s.histogram[2 * t + 1];
    uint32_t below;
    cub::BlockScan<uint32_t, kTopKLongRowsThreads>(s.scan).ExclusiveSum(h0 + h1, below);
    if (below < need && need <= below + h0)
      s.found[0] = 2 * t, s.found[1] = need - below, s.found[2] = h0;
    if (below + h0 < need && need <= below + h0 + h1)
      s.found[0] = 2 * t + 1, s.found[1] = need - below - h0, s.found[2] = h1;
    __syncthreads();
    prefix = U(prefix << d.bits) | U(s.found[0]);
    need = s.found[1], equal = s.found[2];
    __syncthreads();  // found[] read before the next pass writes it
  }
  return {prefix, need, equal};
}

// The first `kept` keys of `length` at `in` (k up to kTopKLongRowsK): their positions (from `in`)
// in (key, position) order to s.candidate_positions[0, kept), their keys beside them. A first read
// keeps each thread's 4 least keys; the k-th least of those 4096 entries (at least 4 k) has k keys
// at or below it, and those are the candidates of a second read.
template <class U>
__device__ void select_span(const TopKSegmentsParams& p, const U* in, u64 length, uint32_t kept,
                            LongRowsShared<U>& s) {
  const uint32_t t = threadIdx.x;
  const auto take = [&](U key, uint32_t i) {
    const uint32_t c = atomicAdd(&s.counter, 1u);
    if (c < kTopKLongRowsCandidates) s.candidate_keys[c] = key, s.candidate_positions[c] = i;
  };
  U least[4] = {~U(0), ~U(0), ~U(0), ~U(0)};  // ascending
  each_key<U>(p, in, length, [&](U key, uint32_t) {
    if (key < least[3]) {
      least[3] = key;
#pragma unroll
      for (int r = 3; r > 0; --r)
        if (least[r] < least[r - 1]) {
          const U x = least[r];
          least[r] = least[r - 1], least[r - 1] = x;
        }
    }
  });
  const U bound = radix_kth<U>(s, kept, [&](auto&& f) {
                    for (int r = 0; r < 4; ++r) f(least[r]);
                  }).key;
  if (t == 0) s.counter = 0;
  __syncthreads();
  each_key<U>(p, in, length, [&](U key, uint32_t i) {
    if (key <= bound) take(key, i);
  });
  __syncthreads();
  uint32_t count = s.counter;
  if (count > kTopKLongRowsCandidates) {  // uniform: keys piled at the bound
    // The k-th key itself, digit by digit over the span; then the keys below it, and the first
    // `need` equal to it (all of them where no more are equal: in any order; else by position,
    // a block's width of keys at a time).
    const Kth<U> kth = radix_kth<U>(
        s, kept, [&](auto&& f) { each_key<U>(p, in, length, [&](U key, uint32_t) { f(key); }); });
    __syncthreads();
    if (t == 0) s.counter = 0;
    __syncthreads();
    if (kth.need == kth.equal) {
      each_key<U>(p, in, length, [&](U key, uint32_t i) {
        if (key <= kth.key) take(key, i);
      });
    } else {
      uint32_t taken = 0;  // keys equal to the k-th before this chunk
      for (u64 first = 0; first < length; first += kTopKLongRowsThreads) {
        const u64 i = first + t;
        const U key = i < length ? compared<U>(p, in[i]) : ~U(0);
        if (i < length && key < kth.key) take(key, uint32_t(i));
        const uint32_t is_equal = i < length && key == kth.key ? 1u : 0u;
        uint32_t rank, total;
        cub::BlockScan<uint32_t, kTopKLongRowsThreads>(s.scan).ExclusiveSum(is_equal, rank, total);
        if (is_equal && taken + rank < kth.need) take(key, uint32_t(i));
        taken += total;
        __syncthreads();  // the scan's storage read before the next chunk's scan
      }
    }
    __syncthreads();
    count = kept;
  }
  sort_padded<U, kTopKLongRowsThreads>(s.candidate_keys, s.candidate_positions, count);
}

template <class U>
__device__ void long_rows_select(const TopKSegmentsParams& p) {
  static_assert(kTopKBins == 2 * kTopKLongRowsThreads, "two bins a thread");
  static_assert(kTopKLongRowsK <= kTopKLongRowsThreads && kTopKLongRowsK <= kTopKLongRowsCandidates,
                "4 k entries at most, and the k results fit the candidates");
  __shared__ LongRowsShared<U> s;
  const u64 length = p.row_length;
  const uint32_t kept = uint32_t(min(p.k, length));
  for (u64 row = blockIdx.x; row < p.segments; row += gridDim.x) {
    select_span<U>(p, static_cast<const U*>(p.keys) + row * length, length, kept, s);
    if (threadIdx.x < kept)
      write_result<U>(p, row, row * length, kept, threadIdx.x, s.candidate_positions[threadIdx.x]);
    __syncthreads();  // the candidates read before the next row's
  }
}

// Rows split into p.chunks spans of p.chunk_length (the last shorter), a block a span (a grid
// striding over them): each span's first min(k, its length) positions (in the row) in (key,
// position) order, to p.chunk_positions[(row x chunks + chunk) x k, ...).
template <class U>
__device__ void long_rows_chunks(const TopKSegmentsParams& p) {
  __shared__ LongRowsShared<U> s;
  const u64 length = p.row_length;
  for (u64 span = blockIdx.x; span < p.segments * p.chunks; span += gridDim.x) {
    const u64 row = span / p.chunks, begin = (span % p.chunks) * p.chunk_length;
    const u64 span_length = min(p.chunk_length, length - begin);
    const uint32_t kept = uint32_t(min(p.k, span_length));
    select_span<U>(p, static_cast<const U*>(p.keys) + row * length + begin, span_length, kept, s);
    if (threadIdx.x < kept)
      p.chunk_positions[span * p.k + threadIdx.x] =
          uint32_t(begin) + s.candidate_positions[threadIdx.x];
    __syncthreads();  // the candidates read before the next span's
  }
}

// Then a block a row: its spans' candidates (at most kTopKLongRowsCandidates in all) sorted by
// (key, position), the first min(k, length) written.
template <class U>
__device__ void long_rows_merge(const TopKSegmentsParams& p) {
  __shared__ LongRowsShared<U> s;
  const u64 length = p.row_length;
  const uint32_t kept = uint32_t(min(p.k, length));
  for (u64 row = blockIdx.x; row < p.segments; row += gridDim.x) {
    const U* in = static_cast<const U*>(p.keys) + row * length;
    uint32_t count = 0;
    for (uint32_t chunk = 0; chunk < p.chunks; ++chunk) {
      const u64 begin = chunk * p.chunk_length;
      const uint32_t span_kept = uint32_t(min(p.k, min(p.chunk_length, length - begin)));
      const uint32_t* from = p.chunk_positions + (row * p.chunks + chunk) * p.k;
      for (uint32_t c = threadIdx.x; c < span_kept; c += kTopKLongRowsThreads) {
        s.candidate_positions[count + c] = from[c];
        s.candidate_keys[count + c] = compared<U>(p, in[from[c]]);
      }
      count += span_kept;
    }
    sort_padded<U, kTopKLongRowsThreads>(s.candidate_keys, s.candidate_positions, count);
    if (threadIdx.x < kept)
      write_result<U>(p, row, row * length, kept, threadIdx.x, s.candidate_positions[threadIdx.x]);
    __syncthreads();  // the candidates read before the next row's
  }
}

}  // namespace
}  // namespace gpusort::cuda::topk_segments

// 32 KiB of loads in flight a block where several blocks share an SM; 64 KiB (the whole row of
// 16384 32-bit keys; 48 KiB of 64-bit keys, where 64 spilled) in the "wide" ones, for rows whose
// shared memory leaves room for one block (their registers would halve the others' blocks).
extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKRowsThreads)
    gpusort_topk_rows_select_32(const gpusort::cuda::TopKSegmentsParams p) {
  gpusort::cuda::topk_segments::rows_select<uint32_t, 16>(p);
}
extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKRowsThreads)
    gpusort_topk_rows_select_64(const gpusort::cuda::TopKSegmentsParams p) {
  gpusort::cuda::topk_segments::rows_select<unsigned long long, 8>(p);
}
extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKRowsThreads)
    gpusort_topk_rows_select_wide_32(const gpusort::cuda::TopKSegmentsParams p) {
  gpusort::cuda::topk_segments::rows_select<uint32_t, 32>(p);
}
extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKRowsThreads)
    gpusort_topk_rows_select_wide_64(const gpusort::cuda::TopKSegmentsParams p) {
  gpusort::cuda::topk_segments::rows_select<unsigned long long, 12>(p);
}
extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKLongRowsThreads)
    gpusort_topk_long_rows_select_32(const gpusort::cuda::TopKSegmentsParams p) {
  gpusort::cuda::topk_segments::long_rows_select<uint32_t>(p);
}
extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKLongRowsThreads)
    gpusort_topk_long_rows_select_64(const gpusort::cuda::TopKSegmentsParams p) {
  gpusort::cuda::topk_segments::long_rows_select<unsigned long long>(p);
}
#define GPUSORT_TOPK_LONG_ROWS_SPLIT(suffix, U)                                           \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKLongRowsThreads)       \
      gpusort_topk_long_rows_chunks_##suffix(const gpusort::cuda::TopKSegmentsParams p) { \
    gpusort::cuda::topk_segments::long_rows_chunks<U>(p);                                 \
  }                                                                                       \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKLongRowsThreads)       \
      gpusort_topk_long_rows_merge_##suffix(const gpusort::cuda::TopKSegmentsParams p) {  \
    gpusort::cuda::topk_segments::long_rows_merge<U>(p);                                  \
  }
GPUSORT_TOPK_LONG_ROWS_SPLIT(32, uint32_t)
GPUSORT_TOPK_LONG_ROWS_SPLIT(64, unsigned long long)
#undef GPUSORT_TOPK_LONG_ROWS_SPLIT
