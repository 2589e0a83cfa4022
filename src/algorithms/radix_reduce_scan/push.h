// Push constants of the kernels in algorithms/radix_reduce_scan/, written once for the host (C++)
// and the kernels (GLSL): primitives/glsl/push_block.h.
#ifndef GPUSORT_RADIX_REDUCE_SCAN_PUSH_H
#define GPUSORT_RADIX_REDUCE_SCAN_PUSH_H

#ifdef __cplusplus
#include "primitives/glsl/push_block.h"
namespace gpusort {
#else
#include "push_block.h"
#endif

// radix_count.comp
#if defined(__cplusplus) || defined(PUSH_RADIX_COUNT)
GPUSORT_PUSH_BEGIN(RadixCountPush)
  uint64_t keys_address;
  uint64_t count_address;
  uint64_t digit_counts_address;
  uint n;
  uint group_count;
  uint bit;
  uint digit_bits;
  uint input_raw;  // keys not yet in radix order (first pass)
GPUSORT_PUSH_END(RadixCountPush)
#endif

// radix_scatter.comp
#if defined(__cplusplus) || defined(PUSH_RADIX_SCATTER)
GPUSORT_PUSH_BEGIN(RadixScatterPush)
  uint64_t keys_in_address;
  uint64_t keys_out_address;
  uint64_t values_in_address;
  uint64_t values_out_address;
  uint64_t count_address;
  uint64_t digit_offsets_address;  // digit_counts after an exclusive scan
  uint n;
  uint group_count;
  uint bit;
  uint digit_bits;
  uint input_raw;   // map keys to radix order on read (first pass)
  uint output_raw;  // map keys back on write (last pass)
GPUSORT_PUSH_END(RadixScatterPush)
#endif

#ifdef __cplusplus
}  // namespace gpusort
#endif

#endif  // GPUSORT_RADIX_REDUCE_SCAN_PUSH_H
