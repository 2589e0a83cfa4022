// The small-array sort on the CUDA face (block_sort.hpp): one block loads the whole array, maps
// the keys to radix order (descending inverted), pads the tile with all-ones keys (which sort
// after every key, equal ones included: the sort is stable and they come last), sorts with CUB's
// BlockRadixSort (stable) on the bit range, and stores the keys mapped back (and their values).
#include <cstdint>
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>
#include <type_traits>

#include "algorithms/small_sort/cuda/block_sort.hpp"
#include "primitives/key_order.h"

namespace gpusort::cuda::block_sort {
namespace {

template <class K, bool VALUES, int THREADS, int ITEMS, int RADIX_BITS>
struct BlockSort {
  using Value = typename std::conditional<VALUES, uint32_t, cub::NullType>::type;
  using Sort = cub::BlockRadixSort<K, THREADS, ITEMS, Value, RADIX_BITS>;
  using LoadKeys = cub::BlockLoad<K, THREADS, ITEMS, cub::BLOCK_LOAD_TRANSPOSE>;
  using LoadValues = cub::BlockLoad<uint32_t, THREADS, ITEMS, cub::BLOCK_LOAD_TRANSPOSE>;
  union Shared {
    typename Sort::TempStorage sort;
    typename LoadKeys::TempStorage load_keys;
    typename LoadValues::TempStorage load_values;
  };

  static __device__ __forceinline__ void run(const BlockSortParams& p) {
    __shared__ Shared shared;
    const uint32_t n = p.count != nullptr ? min(*p.count, p.n) : p.n;
    if (n <= 1) return;
    K* keys = static_cast<K*>(p.keys);
    const K invert = p.descending != 0 ? ~K(0) : K(0);
    K k[ITEMS];
    // Blocked: thread t holds elements [t x ITEMS, (t + 1) x ITEMS), the order the sort keeps.
    LoadKeys(shared.load_keys).Load(keys, k, int(n), ~K(0));
#pragma unroll
    for (int u = 0; u < ITEMS; ++u)
      if (threadIdx.x * ITEMS + u < n) k[u] = to_radix_order<K>(k[u], p.key_kind) ^ invert;
    __syncthreads();
    const int begin = int(p.begin_bit), end = int(p.end_bit);
    if constexpr (VALUES) {
      uint32_t* values = static_cast<uint32_t*>(p.values);
      uint32_t v[ITEMS];
      LoadValues(shared.load_values).Load(values, v, int(n), 0u);
      __syncthreads();
      Sort(shared.sort).SortBlockedToStriped(k, v, begin, end);
#pragma unroll
      for (int u = 0; u < ITEMS; ++u) {
        const uint32_t i = uint32_t(u * THREADS) + threadIdx.x;
        if (i < n) {
          keys[i] = from_radix_order<K>(k[u] ^ invert, p.key_kind);
          values[i] = v[u];
        }
      }
    } else {
      Sort(shared.sort).SortBlockedToStriped(k, begin, end);
#pragma unroll
      for (int u = 0; u < ITEMS; ++u) {
        const uint32_t i = uint32_t(u * THREADS) + threadIdx.x;
        if (i < n) keys[i] = from_radix_order<K>(k[u] ^ invert, p.key_kind);
      }
    }
  }
};

}  // namespace
}  // namespace gpusort::cuda::block_sort

// One kernel per row of kBlockSortShapes, its shape from the row.
#define GPUSORT_BLOCK_SORT_KERNEL(name, K, VALUES, ROW)                                          \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kBlockSortShapes[ROW].threads)     \
      name(const gpusort::cuda::BlockSortParams p) {                                             \
    static_assert(gpusort::cuda::kBlockSortShapes[ROW].key_words * 4 == sizeof(K), "key width"); \
    static_assert((gpusort::cuda::kBlockSortShapes[ROW].value_words != 0) == VALUES, "values");  \
    const gpusort::cuda::BlockSortParams params = p;                                             \
    gpusort::cuda::block_sort::BlockSort<K, VALUES,                                              \
                                         int(gpusort::cuda::kBlockSortShapes[ROW].threads),      \
                                         int(gpusort::cuda::kBlockSortShapes[ROW].items),        \
                                         int(gpusort::cuda::kBlockSortShapes[ROW].radix_bits)>::run( \
        params);                                                                                 \
  }
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k32_128x8, uint32_t, false, 0)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k32_256x8, uint32_t, false, 1)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k32_256x16, uint32_t, false, 2)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k32_512x16, uint32_t, false, 3)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k32_v32_128x8, uint32_t, true, 4)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k32_v32_256x8, uint32_t, true, 5)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k32_v32_256x16, uint32_t, true, 6)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k32_v32_512x12, uint32_t, true, 7)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k64_128x8, unsigned long long, false, 8)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k64_256x8, unsigned long long, false, 9)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k64_512x8, unsigned long long, false, 10)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k64_v32_128x8, unsigned long long, true, 11)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k64_v32_256x8, unsigned long long, true, 12)
GPUSORT_BLOCK_SORT_KERNEL(gpusort_block_sort_k64_v32_512x6, unsigned long long, true, 13)
