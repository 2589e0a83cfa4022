// Specialization constants and workgroup ranges shared by the classic radix kernels.
// Each of `group_count` workgroups owns one contiguous range of the input, a whole number of
// workgroup-wide rounds long, so per-(digit, workgroup) counts scanned digit-major give every
// workgroup its global offset per digit.
#include "constants.h"
#include "key_spec.glsl"
layout(constant_id = RADIX_ID_MIN_SUBGROUP_SIZE) const uint MIN_SUBGROUP_SIZE = 8;

const uint RADIX = 256;

#include "keys.glsl"

uvec2 workgroup_range(uint group, uint group_count, uint n) {
  uint span = div_ceil(div_ceil(n, group_count), gl_WorkGroupSize.x) * gl_WorkGroupSize.x;
  uint begin = min(group * span, n);
  return uvec2(begin, min(begin + span, n));
}
