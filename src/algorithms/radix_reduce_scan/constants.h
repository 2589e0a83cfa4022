// The specialization constants of the reduce-then-scan radix kernels (radix_count, radix_scatter:
// radix_common.glsl), written once for the host (C++) and the kernels (GLSL): their own constants
// after the workgroup and the key's layout (the shared prefix, primitives/glsl/spec_constants.h),
// checked field by field below.
#ifndef GPUSORT_RADIX_REDUCE_SCAN_CONSTANTS_H
#define GPUSORT_RADIX_REDUCE_SCAN_CONSTANTS_H

#ifdef __cplusplus
#include "primitives/glsl/spec_constants.h"
#else
#include "spec_constants.h"
#endif

// The device's smallest subgroup size (radix_scatter's per-subgroup counts).
#define RADIX_ID_MIN_SUBGROUP_SIZE 5

#ifdef __cplusplus

namespace gpusort {

struct RadixSpec {
  KeySpec key;
  uint32_t min_subgroup_size;
};
GPUSORT_SPEC_AT(RadixSpec, min_subgroup_size, RADIX_ID_MIN_SUBGROUP_SIZE);
static_assert(sizeof(RadixSpec) == 4 * (RADIX_ID_MIN_SUBGROUP_SIZE + 1));

}  // namespace gpusort

#endif  // __cplusplus

#endif  // GPUSORT_RADIX_REDUCE_SCAN_CONSTANTS_H
