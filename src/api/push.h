// Push constants of the kernels in api/, written once for the host (C++) and the
// kernels (GLSL): primitives/glsl/push_block.h.
#ifndef GPUSORT_API_PUSH_H
#define GPUSORT_API_PUSH_H

#ifdef __cplusplus
#include "primitives/glsl/push_block.h"
namespace gpusort {
#else
#include "push_block.h"
#endif

// count_narrow.comp
#if defined(__cplusplus) || defined(PUSH_COUNT_NARROW)
GPUSORT_PUSH_BEGIN(CountNarrowPush)
  uint64_t count_address;   // the caller's u64
  uint64_t narrow_address;  // the u32 slot in scratch
  uint max_n;
GPUSORT_PUSH_END(CountNarrowPush)
#endif

#ifdef __cplusplus
}  // namespace gpusort
#endif

#endif  // GPUSORT_API_PUSH_H
