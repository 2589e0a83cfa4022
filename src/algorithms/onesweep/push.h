// Push constants of the kernels in algorithms/onesweep/, written once for the host (C++) and the
// kernels (GLSL): primitives/glsl/push_block.h.
#ifndef GPUSORT_ONESWEEP_PUSH_H
#define GPUSORT_ONESWEEP_PUSH_H

#ifdef __cplusplus
#include "primitives/glsl/push_block.h"
namespace gpusort {
#else
#include "push_block.h"
#endif

// onesweep_clear.comp
#if defined(__cplusplus) || defined(PUSH_ONESWEEP_CLEAR)
GPUSORT_PUSH_BEGIN(OnesweepClearPush)
  uint64_t state_address;
  uint64_t count_address;       // 0: n from the host, and no dispatch is written
  uint64_t histogram_dispatch;  // a VkDispatchIndirectCommand, outside the state block
  uint64_t n;                   // up to 2^32
  uint words;
  uint group_count;
  uint histogram_group_count;  // the histogram's grid for max_n (onesweep_histogram.comp)
  uint histogram_keys_per_round;
  uint max_groups_x;
GPUSORT_PUSH_END(OnesweepClearPush)
#endif

// onesweep_copy_back.comp
#if defined(__cplusplus) || defined(PUSH_ONESWEEP_COPY_BACK)
GPUSORT_PUSH_BEGIN(OnesweepCopyBackPush)
  uint64_t keys_from;
  uint64_t keys_to;
  uint64_t values_from;
  uint64_t values_to;
  uint64_t count_address;
  uint64_t control_address;
  uint64_t n;  // up to 2^32
  uint group_count;
GPUSORT_PUSH_END(OnesweepCopyBackPush)
#endif

// onesweep_histogram.comp
#if defined(__cplusplus) || defined(PUSH_ONESWEEP_HISTOGRAM)
GPUSORT_PUSH_BEGIN(OnesweepHistogramPush)
  uint64_t keys_address;
  uint64_t count_address;
  uint64_t digit_counts_address;
  uint64_t control_address;
  uint64_t dispatch_address;  // the DISPATCH_* commands
  uint64_t n;                 // up to 2^32
  uint group_count;           // the grid for max_n (with a GPU-side count, its first groups run)
  uint begin_bit;
  uint end_bit;
  uint pass_count;
  uint tile;              // keys per onesweep_pass workgroup
  uint copy_group_count;  // the copy-back's grid for max_n (onesweep_copy_back.comp)
  uint copy_keys_per_round;
  uint max_groups_x;
  uint pass_group_cap;  // at most this many workgroups per pass (0: one per tile)
GPUSORT_PUSH_END(OnesweepHistogramPush)
#endif

// onesweep_pass.comp
#if defined(__cplusplus) || defined(PUSH_ONESWEEP_PASS)
GPUSORT_PUSH_BEGIN(OnesweepPassPush)
  uint64_t keys_a;  // the caller's keys
  uint64_t keys_b;  // scratch copy
  uint64_t values_a;
  uint64_t values_b;
  uint64_t count_address;
  // This pass's RADIX exclusive digit offsets; pass 0's where PARTITION_PASS is 1.
  uint64_t recorded_digit_offsets;
  uint64_t control_address;
  uint64_t lookback_address;
  uint64_t n;          // up to 2^32 (max_onesweep_elements)
  uint recorded_pass;  // the next three: ignored where PARTITION_PASS is 1
  uint recorded_bit;
  uint recorded_digit_bits;
  uint first_tag;  // tag of tile 0 in this pass; tile p has first_tag + p
  // Circular look-back table length in tiles (a power of two) minus one: a push constant (not a
  // specialization constant) so that one pipeline serves every n.
  uint lookback_slot_mask;
GPUSORT_PUSH_END(OnesweepPassPush)
#endif

#ifdef __cplusplus
}  // namespace gpusort
#endif

#endif  // GPUSORT_ONESWEEP_PUSH_H
