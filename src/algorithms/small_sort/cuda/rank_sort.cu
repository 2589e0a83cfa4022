// The rank sort on the CUDA face (rank_sort.hpp). Block b ranks keys [32 b, 32 b + 32), lane l
// key i = 32 b + l: every block first holds the whole array in shared memory, its keys mapped to
// radix order (descending inverted) and masked to the bit range, padded with all-ones keys to a
// multiple of 4; warp w then counts over its sixteenth [lo, hi) of the array the keys that go
// before key i: those below it, and the equal ones at positions j < i. Before the block's 32 keys
// (j < 32 b) that is every key at most key i, after them (j >= 32 b + 32) every key below it (the
// padding is below none), and over the block's own 32 both tests; four keys a shared-memory read.
// The sixteen counts summed are key i's place, where it is written (mapped back from the input
// as it was) with its value. In place (IN_PLACE, a cooperative launch), each block also holds its
// own keys as they were and their values, and the blocks meet at a grid barrier before writing:
// every block has then read every key.
#ifdef __CUDACC__
#include <cooperative_groups.h>  // the host's emulation (tests/cuda_emulation) has its own
#endif
#include <cstdint>

#include "algorithms/small_sort/cuda/rank_sort.hpp"
#include "primitives/key_order.h"

namespace gpusort::cuda::rank_sort {
namespace {

template <class K>
struct alignas(4 * sizeof(K)) Four {
  K k[4];
};

// Keys in [j, end) that `before(c)` counts, four at a time (j and end multiples of 4).
template <class K, class Before>
__device__ __forceinline__ uint32_t count_fours(const K* s, uint32_t j, uint32_t end,
                                                Before before) {
  uint32_t count = 0;
  const Four<K>* fours = reinterpret_cast<const Four<K>*>(s);
#pragma unroll 4
  for (; j < end; j += 4) {
    const Four<K> f = fours[j / 4];
    count += uint32_t(before(f.k[0])) + uint32_t(before(f.k[1])) + uint32_t(before(f.k[2])) +
             uint32_t(before(f.k[3]));
  }
  return count;
}

template <class K, bool VALUES, uint32_t CAPACITY, bool IN_PLACE>
__device__ __forceinline__ void rank_sort(const RankSortParams& p) {
  __shared__ Four<K> held[CAPACITY / 4];
  __shared__ uint32_t partial[kRankSortWarps][32];
  K* s = reinterpret_cast<K*>(held);
  const uint32_t n = p.count != nullptr ? min(*p.count, p.n) : p.n;
  const uint32_t base = blockIdx.x * kRankSortKeysPerBlock;
  if (!IN_PLACE && base >= n) return;  // in place every block meets the others at the barrier
  constexpr uint32_t width = sizeof(K) * 8;
  const uint32_t bits = p.end_bit - p.begin_bit;
  const K mask = bits == 0 ? K(0) : (~K(0) >> (width - bits)) << p.begin_bit;
  const K invert = p.descending != 0 ? ~K(0) : K(0);
  const K* keys_in = static_cast<const K*>(p.keys_in);
  const uint32_t n4 = (n + 3) & ~3u;
  for (uint32_t j = threadIdx.x; j < n4; j += kRankSortThreads)
    s[j] = j < n ? (to_radix_order<K>(keys_in[j], p.key_kind) ^ invert) & mask : ~K(0);
  __syncthreads();

  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const uint32_t i = base + lane;
  // In place: the block's own keys as they were and their values, read before any block writes.
  K original = 0;
  uint32_t value = i;
  if (IN_PLACE && warp == 0 && i < n) {
    original = keys_in[i];
    if (VALUES && p.values_iota == 0) value = static_cast<const uint32_t*>(p.values_in)[i];
  }
  if (base < n) {
    const K key = s[min(i, n - 1)];  // lanes past n rank some key and write nothing
    const uint32_t chunk = ((n4 / 4 + kRankSortWarps - 1) / kRankSortWarps) * 4;
    const uint32_t lo = min(warp * chunk, n4), hi = min(lo + chunk, n4);
    const uint32_t mine = base + kRankSortKeysPerBlock;
    uint32_t rank = count_fours(s, lo, min(hi, base), [key](K c) { return c <= key; });
    for (uint32_t j = max(lo, base); j < min(hi, mine); ++j)
      rank += uint32_t(s[j] < key || (s[j] == key && j < i));
    rank += count_fours(s, max(lo, mine), hi, [key](K c) { return c < key; });
    partial[warp][lane] = rank;
  }
  __syncthreads();
  if constexpr (IN_PLACE) cooperative_groups::this_grid().sync();
  if (warp != 0 || i >= n) return;
  uint32_t rank = 0;
#pragma unroll
  for (uint32_t w = 0; w < kRankSortWarps; ++w) rank += partial[w][lane];
  static_cast<K*>(p.keys_out)[rank] = IN_PLACE ? original : keys_in[i];
  if constexpr (VALUES) {
    if (!IN_PLACE && p.values_iota == 0) value = static_cast<const uint32_t*>(p.values_in)[i];
    if (p.values_wide != nullptr)
      p.values_wide[rank] = value;
    else
      static_cast<uint32_t*>(p.values_out)[rank] = value;
  }
}

// The first launch of a sort with values given (rank_sort.hpp, kRankSortCopySuffix): the count's
// keys (where keys_in is set) and values copied to the scratch the sort reads.
template <class K>
__device__ __forceinline__ void copy_in(const RankSortParams& p) {
  const uint32_t n = p.count != nullptr ? min(*p.count, p.n) : p.n;
  const uint32_t i = blockIdx.x * kRankSortCopyThreads + threadIdx.x;
  if (i >= n) return;
  if (p.keys_in != nullptr)
    const_cast<K*>(static_cast<const K*>(p.keys_in))[i] = static_cast<const K*>(p.keys_out)[i];
  const_cast<uint32_t*>(static_cast<const uint32_t*>(p.values_in))[i] =
      static_cast<const uint32_t*>(p.values_out)[i];
}

}  // namespace
}  // namespace gpusort::cuda::rank_sort

// Two kernels per row of kRankSortShapes, reading a copy (name) and in place (name_in_place),
// and for the rows with values their copy in place (name_copy).
#define GPUSORT_RANK_SORT_KERNEL_WITH(name, K, VALUES, ROW, IN_PLACE)                            \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kRankSortThreads)                \
      name(const gpusort::cuda::RankSortParams p) {                                             \
    static_assert(gpusort::cuda::kRankSortShapes[ROW].key_words * 4 == sizeof(K), "key width"); \
    static_assert((gpusort::cuda::kRankSortShapes[ROW].value_words != 0) == VALUES, "values");  \
    const gpusort::cuda::RankSortParams params = p;                                             \
    gpusort::cuda::rank_sort::rank_sort<K, VALUES, gpusort::cuda::kRankSortShapes[ROW].capacity, \
                                        IN_PLACE>(params);                                      \
  }
#define GPUSORT_RANK_SORT_KERNEL(name, K, VALUES, ROW)          \
  GPUSORT_RANK_SORT_KERNEL_WITH(name, K, VALUES, ROW, false)    \
  GPUSORT_RANK_SORT_KERNEL_WITH(name##_in_place, K, VALUES, ROW, true)
#define GPUSORT_RANK_SORT_COPY_KERNEL(name, K)                                                  \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kRankSortCopyThreads)            \
      name(const gpusort::cuda::RankSortParams p) {                                             \
    const gpusort::cuda::RankSortParams params = p;                                             \
    gpusort::cuda::rank_sort::copy_in<K>(params);                                               \
  }
GPUSORT_RANK_SORT_KERNEL(gpusort_rank_sort_k32, uint32_t, false, 0)
GPUSORT_RANK_SORT_KERNEL(gpusort_rank_sort_k32_v32, uint32_t, true, 1)
GPUSORT_RANK_SORT_KERNEL(gpusort_rank_sort_k64, unsigned long long, false, 2)
GPUSORT_RANK_SORT_KERNEL(gpusort_rank_sort_k64_v32, unsigned long long, true, 3)
GPUSORT_RANK_SORT_COPY_KERNEL(gpusort_rank_sort_k32_v32_copy, uint32_t)
GPUSORT_RANK_SORT_COPY_KERNEL(gpusort_rank_sort_k64_v32_copy, unsigned long long)
