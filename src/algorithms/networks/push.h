// Push constants of the kernels in algorithms/networks/, written once for the host (C++) and the
// kernels (GLSL): primitives/glsl/push_block.h.
#ifndef GPUSORT_NETWORKS_PUSH_H
#define GPUSORT_NETWORKS_PUSH_H

#ifdef __cplusplus
#include "primitives/glsl/push_block.h"
namespace gpusort {
#else
#include "push_block.h"
#endif

// bitonic_global.comp
#if defined(__cplusplus) || defined(PUSH_BITONIC_GLOBAL)
GPUSORT_PUSH_BEGIN(BitonicGlobalPush)
  uint64_t keys_address;
  uint64_t values_address;
  uint64_t count_address;
  uint n;
  uint pair_count;
  uint log2_half_block;  // pair distance (disperse) or half the block (flip) is 2^this
  uint flip;
GPUSORT_PUSH_END(BitonicGlobalPush)
#endif

// bitonic_local.comp, bitonic_local_disperse.comp
#if defined(__cplusplus) || defined(PUSH_BITONIC_LOCAL)
GPUSORT_PUSH_BEGIN(BitonicLocalPush)
  uint64_t keys_address;
  uint64_t values_address;
  uint64_t count_address;
  uint n;
  uint tile_count;
  uint output_raw;
GPUSORT_PUSH_END(BitonicLocalPush)
#endif

// odd_even.comp
#if defined(__cplusplus) || defined(PUSH_ODD_EVEN)
GPUSORT_PUSH_BEGIN(OddEvenPush)
  uint64_t keys_address;
  uint64_t values_address;
  uint64_t count_address;
  uint n;
GPUSORT_PUSH_END(OddEvenPush)
#endif

#ifdef __cplusplus
}  // namespace gpusort
#endif

#endif  // GPUSORT_NETWORKS_PUSH_H
