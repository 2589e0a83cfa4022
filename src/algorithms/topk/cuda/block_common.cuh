// What the top-k kernels (topk_select.cu, topk_segments.cu) share: a key as they compare it, and
// a block's sort of (key, position) pairs in shared memory.
#ifndef GPUSORT_ALGORITHMS_TOPK_CUDA_BLOCK_COMMON_CUH
#define GPUSORT_ALGORITHMS_TOPK_CUDA_BLOCK_COMMON_CUH

#include <cstdint>

#include "primitives/key_order.h"

namespace gpusort::cuda::topk_common {

// The key as the select compares it: radix order (NumPy's order: of the canonical key),
// descending inverted, only the compared bits (mask).
template <class U>
__device__ __forceinline__ U compared_bits(U raw, uint32_t key_kind, uint32_t descending,
                                           uint32_t numpy, unsigned long long mask) {
  if (numpy != 0) raw = FloatKeyBits<U>::canonical(raw);
  U o = to_radix_order<U>(raw, key_kind);
  if (descending != 0) o = ~o;
  return o & U(mask);
}

// (a, i) before (b, j): by key, then position.
template <class U>
__device__ __forceinline__ bool before(U a, uint32_t i, U b, uint32_t j) {
  return a < b || (a == b && i < j);
}

// Sorts `padded` (a power of two) (key, position) pairs in shared memory by key, then position,
// `threads` a block: a bitonic sort, stable as the pairs are unique.
template <class U, uint32_t threads>
__device__ void sort_pairs(U* keys, uint32_t* positions, uint32_t padded) {
  for (uint32_t size = 2; size <= padded; size *= 2)
    for (uint32_t stride = size / 2; stride > 0; stride /= 2) {
      for (uint32_t j = threadIdx.x; j < padded / 2; j += threads) {
        const uint32_t lo = 2 * j - (j & (stride - 1)), hi = lo + stride;
        const bool up = (lo & size) == 0;
        if (before(keys[hi], positions[hi], keys[lo], positions[lo]) == up) {
          const U key = keys[lo];
          keys[lo] = keys[hi], keys[hi] = key;
          const uint32_t position = positions[lo];
          positions[lo] = positions[hi], positions[hi] = position;
        }
      }
      __syncthreads();
    }
}

// The first `count` pairs sorted so, after padding (all-ones keys and positions, last) up to a
// power of two: `keys` and `positions` hold that many.
template <class U, uint32_t threads>
__device__ void sort_padded(U* keys, uint32_t* positions, uint32_t count) {
  uint32_t padded = 1;
  while (padded < count) padded *= 2;
  for (uint32_t c = count + threadIdx.x; c < padded; c += threads)
    keys[c] = ~U(0), positions[c] = ~0u;
  __syncthreads();
  sort_pairs<U, threads>(keys, positions, padded);
}

}  // namespace gpusort::cuda::topk_common

#endif  // GPUSORT_ALGORITHMS_TOPK_CUDA_BLOCK_COMMON_CUH
