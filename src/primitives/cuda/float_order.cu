// NumPy's float order on the CUDA face (float_order.hpp): the set-aside around the sort, the
// canonical copy and the fix of argsort's sorted keys.
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "primitives/cuda/elementwise.hpp"
#include "primitives/cuda/float_order.hpp"
#include "primitives/key_order.h"

namespace gpusort::cuda::float_order {
namespace {

// The bits of a float key as an unsigned integer U (uint32_t for f32, unsigned long long for f64).
template <class U> using Bits = FloatKeyBits<U>;

__device__ __forceinline__ unsigned long long count_of(const uint32_t* count,
                                                       unsigned long long n) {
  return count != nullptr ? min((unsigned long long)(*count), n) : n;
}

// The elements [begin, end) of this block's chunk.
struct Chunk {
  unsigned long long begin, end;
};
__device__ __forceinline__ Chunk chunk_of(const FloatOrderParams& p) {
  const unsigned long long c = count_of(p.count, p.n);
  const unsigned long long size = (c + p.chunk_count - 1) / p.chunk_count;
  const unsigned long long begin = min(c, (unsigned long long)blockIdx.x * size);
  return {begin, min(c, begin + size)};
}

template <class U>
__device__ __forceinline__ void count(const FloatOrderParams& p) {
  using B = Bits<U>;
  const Chunk chunk = chunk_of(p);
  U* keys = static_cast<U*>(p.keys);
  const U* source = static_cast<const U*>(p.source);
  uint32_t zeros = 0, nans = 0, negatives = 0, odd = 0;
#pragma unroll 4
  for (unsigned long long i = chunk.begin + threadIdx.x; i < chunk.end; i += kFloatOrderThreads) {
    const U bits = source != nullptr ? source[i] : keys[i];
    if (source != nullptr) keys[i] = B::canonical(bits);
    const bool nan = B::is_nan(bits), zero = B::is_zero(bits);
    zeros += zero;
    nans += nan;
    negatives += !nan && !zero && (bits >> (B::width - 1)) != 0;
    odd |= uint32_t(bits == B::sign) | uint32_t(nan && bits != B::canonical_nan);
  }
  using Reduce = cub::BlockReduce<uint32_t, kFloatOrderThreads>;
  __shared__ typename Reduce::TempStorage temp[4];
  zeros = Reduce(temp[0]).Sum(zeros);
  nans = Reduce(temp[1]).Sum(nans);
  negatives = Reduce(temp[2]).Sum(negatives);
  odd = Reduce(temp[3]).Sum(odd);
  if (threadIdx.x == 0) p.chunks[blockIdx.x] = {zeros, nans, negatives, odd};
}

__device__ __forceinline__ void scan(const FloatOrderParams& p) {
  using Scan = cub::BlockScan<uint32_t, kFloatOrderMaxChunks>;
  using Reduce = cub::BlockReduce<uint32_t, kFloatOrderMaxChunks>;
  __shared__ typename Scan::TempStorage scan_temp[2];
  __shared__ typename Reduce::TempStorage reduce_temp[2];
  const uint32_t t = threadIdx.x;
  FloatOrderChunk r{0, 0, 0, 0};
  if (t < p.chunk_count) r = p.chunks[t];
  uint32_t zero_offset, nan_offset, zeros, nans;
  Scan(scan_temp[0]).ExclusiveSum(r.zeros, zero_offset, zeros);
  Scan(scan_temp[1]).ExclusiveSum(r.nans, nan_offset, nans);
  const uint32_t negatives = Reduce(reduce_temp[0]).Sum(r.negatives);
  const uint32_t odd = Reduce(reduce_temp[1]).Sum(r.odd);
  if (t < p.chunk_count) {
    p.chunks[t].zeros = zero_offset;
    p.chunks[t].nans = nan_offset;
  }
  if (t == 0) *p.totals = {odd != 0 ? 1u : 0u, zeros, nans, negatives};
}

// The zeros and NaNs of this block's chunk of `keys`, in input order: zero(rank, i, bits) and
// nan(rank, i, bits) with each one's rank among the chunk's zeros (NaNs). A stable compaction, a
// tile of the block's threads at a time.
template <class U, class Zero, class Nan>
__device__ __forceinline__ void each_zero_and_nan(const Chunk& chunk, const U* keys, Zero zero,
                                                  Nan nan) {
  using B = Bits<U>;
  using Scan = cub::BlockScan<uint32_t, kFloatOrderThreads>;
  __shared__ typename Scan::TempStorage temp;
  uint32_t zero_next = 0, nan_next = 0;
  for (unsigned long long tile = chunk.begin; tile < chunk.end; tile += kFloatOrderThreads) {
    const unsigned long long i = tile + threadIdx.x;
    const bool in = i < chunk.end;
    const U bits = in ? keys[i] : U(1);
    const bool is_zero = in && B::is_zero(bits), is_nan = in && B::is_nan(bits);
    // Ranks within the tile: zeros in the low half, NaNs in the high half (at most 256 each).
    uint32_t rank, total;
    Scan(temp).ExclusiveSum(uint32_t(is_zero) | (uint32_t(is_nan) << 16), rank, total);
    if (is_zero)
      zero(zero_next + (rank & 0xffffu), i, bits);
    else if (is_nan)
      nan(nan_next + (rank >> 16), i, bits);
    zero_next += total & 0xffffu;
    nan_next += total >> 16;
    __syncthreads();  // temp is used again
  }
}

// Sorting in place: the zeros and NaNs copied aside in input order, the keys made canonical.
template <class U>
__device__ __forceinline__ void set_aside(const FloatOrderParams& p) {
  using B = Bits<U>;
  if (p.totals->odd == 0) return;
  U* keys = static_cast<U*>(p.keys);
  U* aside = static_cast<U*>(p.aside);
  const uint32_t zero_base = p.chunks[blockIdx.x].zeros;
  const uint32_t nan_base = p.totals->zeros + p.chunks[blockIdx.x].nans;
  each_zero_and_nan<U>(
      chunk_of(p), keys,
      [&](uint32_t rank, unsigned long long i, U bits) {
        aside[zero_base + rank] = bits;
        if (bits != 0) keys[i] = 0;
      },
      [&](uint32_t rank, unsigned long long i, U bits) {
        aside[nan_base + rank] = bits;
        if (bits != B::canonical_nan) keys[i] = B::canonical_nan;
      });
}

// Where the zero and NaN runs start in the sorted keys. Ascending: negatives, zeros, positives,
// NaNs; descending: NaNs, positives, zeros, negatives.
struct Runs {
  unsigned long long zero_start, nan_start;
};
__device__ __forceinline__ Runs runs_of(const FloatOrderParams& p, const FloatOrderTotals& t) {
  const unsigned long long c = count_of(p.count, p.n);
  const unsigned long long positives = c - t.negatives - t.zeros - t.nans;
  return {p.descending ? t.nans + positives : t.negatives, p.descending ? 0 : c - t.nans};
}

template <class U>
__device__ __forceinline__ void restore(const FloatOrderParams& p) {
  const FloatOrderTotals t = *p.totals;
  if (t.odd == 0) return;
  const auto [zero_start, nan_start] = runs_of(p, t);
  U* keys = static_cast<U*>(p.keys);
  const U* aside = static_cast<const U*>(p.aside);
  const unsigned long long set = (unsigned long long)t.zeros + t.nans;
  for (unsigned long long j = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; j < set;
       j += (unsigned long long)gridDim.x * blockDim.x)
    keys[j < t.zeros ? zero_start + j : nan_start + (j - t.zeros)] = aside[j];
}

// A sorted copy (count read the source, wrote it canonical): the source's zeros and NaNs written
// over their runs directly, a chunk a block, each block finding its chunk's offsets and the totals
// from the chunks' counts itself (no scan, no set-aside).
template <class U>
__device__ __forceinline__ void restore_copy(const FloatOrderParams& p) {
  __shared__ uint32_t sums[6];  // zeros, NaNs, negatives, odd; zeros and NaNs in earlier chunks
  if (threadIdx.x < 6) sums[threadIdx.x] = 0;
  __syncthreads();
  uint32_t part[6] = {0, 0, 0, 0, 0, 0};
  for (uint32_t j = threadIdx.x; j < p.chunk_count; j += kFloatOrderThreads) {
    const FloatOrderChunk r = p.chunks[j];
    part[0] += r.zeros;
    part[1] += r.nans;
    part[2] += r.negatives;
    part[3] += r.odd;
    if (j < blockIdx.x) {
      part[4] += r.zeros;
      part[5] += r.nans;
    }
  }
  for (int v = 0; v < 6; ++v)
    if (part[v] != 0) atomicAdd(&sums[v], part[v]);
  __syncthreads();
  if (sums[3] == 0) return;
  const auto [zero_start, nan_start] =
      runs_of(p, FloatOrderTotals{sums[3], sums[0], sums[1], sums[2]});
  U* keys = static_cast<U*>(p.keys);
  const unsigned long long zero_base = zero_start + sums[4], nan_base = nan_start + sums[5];
  each_zero_and_nan<U>(
      chunk_of(p), static_cast<const U*>(p.source),
      [&](uint32_t rank, unsigned long long, U bits) { keys[zero_base + rank] = bits; },
      [&](uint32_t rank, unsigned long long, U bits) { keys[nan_base + rank] = bits; });
}

template <class U>
__device__ __forceinline__ void canonical_copy(const ElementwiseParams& p) {
  const unsigned long long c = count_of(p.count, p.n);
  U* out = static_cast<U*>(p.out);
  const U* in = static_cast<const U*>(p.in);
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < c;
       i += (unsigned long long)gridDim.x * blockDim.x)
    out[i] = Bits<U>::canonical(in[i]);
}

template <class U>
__device__ __forceinline__ void fix_sorted(const ElementwiseParams& p) {
  const unsigned long long c = count_of(p.count, p.n);
  U* out = static_cast<U*>(p.out);
  const U* in = static_cast<const U*>(p.in);
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < c;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    const U bits = out[i];
    if (bits == 0 || bits == Bits<U>::canonical_nan)
      out[i] = in[p.index != nullptr ? (unsigned long long)p.index[i] : p.index64[i]];
  }
}

}  // namespace
}  // namespace gpusort::cuda::float_order

#define GPUSORT_FLOAT_ORDER_KERNELS(suffix, U)                                          \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kFloatOrderThreads)       \
      gpusort_numpy_order_count_##suffix(const gpusort::cuda::FloatOrderParams p) {     \
    gpusort::cuda::float_order::count<U>(p);                                            \
  }                                                                                     \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kFloatOrderThreads)       \
      gpusort_numpy_order_set_aside_##suffix(const gpusort::cuda::FloatOrderParams p) { \
    gpusort::cuda::float_order::set_aside<U>(p);                                        \
  }                                                                                     \
  extern "C" __global__ void gpusort_numpy_order_restore_##suffix(                      \
      const gpusort::cuda::FloatOrderParams p) {                                        \
    gpusort::cuda::float_order::restore<U>(p);                                          \
  }                                                                                     \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kFloatOrderThreads)       \
      gpusort_numpy_order_restore_copy_##suffix(                                        \
          const gpusort::cuda::FloatOrderParams p) {                                    \
    gpusort::cuda::float_order::restore_copy<U>(p);                                     \
  }                                                                                     \
  extern "C" __global__ void gpusort_canonical_copy_##suffix(                           \
      const gpusort::cuda::ElementwiseParams p) {                                       \
    gpusort::cuda::float_order::canonical_copy<U>(p);                                   \
  }                                                                                     \
  extern "C" __global__ void gpusort_numpy_order_fix_sorted_##suffix(                   \
      const gpusort::cuda::ElementwiseParams p) {                                       \
    gpusort::cuda::float_order::fix_sorted<U>(p);                                       \
  }

GPUSORT_FLOAT_ORDER_KERNELS(f32, uint32_t)
GPUSORT_FLOAT_ORDER_KERNELS(f64, unsigned long long)
#undef GPUSORT_FLOAT_ORDER_KERNELS

extern "C" __global__ void __launch_bounds__(gpusort::cuda::kFloatOrderMaxChunks)
    gpusort_numpy_order_scan(const gpusort::cuda::FloatOrderParams p) {
  gpusort::cuda::float_order::scan(p);
}
