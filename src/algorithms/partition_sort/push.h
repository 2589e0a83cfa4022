// Push constants of the kernels in algorithms/partition_sort/, written once for the host (C++) and
// the kernels (GLSL): primitives/glsl/push_block.h.
#ifndef GPUSORT_PARTITION_SORT_PUSH_H
#define GPUSORT_PARTITION_SORT_PUSH_H

#ifdef __cplusplus
#include "primitives/glsl/push_block.h"
namespace gpusort {
#else
#include "push_block.h"
#endif

// partition_plan.comp
#if defined(__cplusplus) || defined(PUSH_PARTITION_PLAN)
GPUSORT_PUSH_BEGIN(PartitionPlanPush)
  uint64_t digit_offsets_address;  // every pass's exclusive digit offsets (Onesweep's plan)
  uint64_t control_address;
  uint64_t count_address;
  uint64_t segment_offsets_address;  // RADIX + 1 u32 bucket offsets
  uint64_t segment_count_address;    // one u32
  uint64_t dispatch_address;         // Onesweep's DISPATCH_* commands (onesweep_common.glsl)
  uint n;
  uint pass_count;
  uint begin_bit;
  uint end_bit;
  uint max_bucket;
GPUSORT_PUSH_END(PartitionPlanPush)
#endif

#ifdef __cplusplus
}  // namespace gpusort
#endif

#endif  // GPUSORT_PARTITION_SORT_PUSH_H
