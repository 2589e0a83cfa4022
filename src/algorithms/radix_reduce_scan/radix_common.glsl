// Specialization constants and workgroup ranges shared by the classic radix kernels.
// Each of `group_count` workgroups owns one contiguous range of the input, a whole number of
// workgroup-wide rounds long, so per-(digit, workgroup) counts scanned digit-major give every
// workgroup its global offset per digit.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KEY_WORDS = 1;
layout(constant_id = 2) const uint KEY_KIND = 0;
layout(constant_id = 3) const uint DESCENDING = 0;
layout(constant_id = 4) const uint VALUE_WORDS = 0;
layout(constant_id = 5) const uint MIN_SUBGROUP_SIZE = 8;

const uint RADIX = 256;

#include "keys.glsl"

uvec2 workgroup_range(uint group, uint group_count, uint n) {
  uint span = div_ceil(div_ceil(n, group_count), gl_WorkGroupSize.x) * gl_WorkGroupSize.x;
  uint begin = min(group * span, n);
  return uvec2(begin, min(begin + span, n));
}
