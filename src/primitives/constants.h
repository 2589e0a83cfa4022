// The specialization constants of the kernels in primitives/, written once for the host (C++) and
// the kernels (GLSL): each kernel's own constants after the workgroup (the shared prefix,
// primitives/glsl/spec_constants.h); a kernel declares each constant at the id defined here, and
// the host passes a struct whose fields are the constants in id order (spec_constants,
// vulkan/specialization.hpp), checked field by field below.
#ifndef GPUSORT_PRIMITIVES_CONSTANTS_H
#define GPUSORT_PRIMITIVES_CONSTANTS_H

#ifdef __cplusplus
#include "primitives/glsl/spec_constants.h"
#else
#include "spec_constants.h"
#endif

// scan_blocks.comp, scan_add.comp: elements per invocation, after the workgroup
#define SCAN_ID_ITEMS 1

// copy_elements.comp: 32-bit words per element (1 or 2), after the workgroup
#define COPY_ELEMENTS_ID_WORDS 1

#ifdef __cplusplus

namespace gpusort {

struct ScanKernelSpec {
  uint32_t workgroup, items;
};
GPUSORT_SPEC_AT(ScanKernelSpec, workgroup, SPEC_ID_WORKGROUP);
GPUSORT_SPEC_AT(ScanKernelSpec, items, SCAN_ID_ITEMS);
static_assert(sizeof(ScanKernelSpec) == 4 * (SCAN_ID_ITEMS + 1));

struct CopyElementsSpec {
  uint32_t workgroup, words;
};
GPUSORT_SPEC_AT(CopyElementsSpec, workgroup, SPEC_ID_WORKGROUP);
GPUSORT_SPEC_AT(CopyElementsSpec, words, COPY_ELEMENTS_ID_WORDS);
static_assert(sizeof(CopyElementsSpec) == 4 * (COPY_ELEMENTS_ID_WORDS + 1));

}  // namespace gpusort

#endif  // __cplusplus

#endif  // GPUSORT_PRIMITIVES_CONSTANTS_H
