#version 460
// The engine face's 64-bit count (SorterConfig::count_bytes = 8), before the sort, one workgroup
// (invocation 0 works: pipelines take whole subgroups): min(count, max_n) as the u32 that every
// kernel's element_count() reads, in a slot of scratch. A count of 2^32 or more is clamped like
// any count above max_n, never wrapped.
#include "common.glsl"

#include "spec_constants.h"
layout(local_size_x_id = SPEC_ID_WORKGROUP) in;

#define PUSH_COUNT_NARROW
#include "push.h"

void main() {
  if (gl_LocalInvocationID.x == 0)
    U32Array(narrow_address).v[0] = uint(min(U64Array(count_address).v[0], uint64_t(max_n)));
}
