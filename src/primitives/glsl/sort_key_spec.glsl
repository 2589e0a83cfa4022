// Specialization constants 0-6 (SortKeySpec of spec_constants.h): key_spec.glsl's prefix, then the
// compared bits [BEGIN_BIT, END_BIT) of the radix-ordered key.
#include "key_spec.glsl"
layout(constant_id = SPEC_ID_BEGIN_BIT) const uint BEGIN_BIT = 0;
layout(constant_id = SPEC_ID_END_BIT) const uint END_BIT = 32;
