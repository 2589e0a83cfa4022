// Push constants of the kernels in primitives/, written once for the host (C++) and the
// kernels (GLSL): primitives/glsl/push_block.h.
#ifndef GPUSORT_PRIMITIVES_PUSH_H
#define GPUSORT_PRIMITIVES_PUSH_H

#ifdef __cplusplus
#include "primitives/glsl/push_block.h"
namespace gpusort {
#else
#include "push_block.h"
#endif

// copy_elements.comp
#if defined(__cplusplus) || defined(PUSH_COPY_ELEMENTS)
GPUSORT_PUSH_BEGIN(CopyElementsPush)
  uint64_t src_address;
  uint64_t dst_address;
  uint64_t count_address;
  uint n;
  uint group_count;
GPUSORT_PUSH_END(CopyElementsPush)
#endif

// scan_add.comp
#if defined(__cplusplus) || defined(PUSH_SCAN_ADD)
GPUSORT_PUSH_BEGIN(ScanAddPush)
  uint64_t out_address;
  uint64_t block_prefixes_address;
  uint n;
  uint block_count;
GPUSORT_PUSH_END(ScanAddPush)
#endif

// scan_blocks.comp
#if defined(__cplusplus) || defined(PUSH_SCAN_BLOCKS)
GPUSORT_PUSH_BEGIN(ScanBlocksPush)
  uint64_t in_address;
  uint64_t out_address;
  uint64_t block_totals_address;  // 0: single block, no totals
  uint n;
  uint inclusive;
  uint block_count;
GPUSORT_PUSH_END(ScanBlocksPush)
#endif

#ifdef __cplusplus
}  // namespace gpusort
#endif

#endif  // GPUSORT_PRIMITIVES_PUSH_H
