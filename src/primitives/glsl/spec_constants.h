// Specialization constants, written once for the host (C++) and the kernels (GLSL). Every kernel
// starts with the same prefix, as far as it takes it: the workgroup size (id 0), then the key's
// layout (ids 1-4), then the compared bits (ids 5-6). Its own constants follow, at ids its
// folder's constants.h defines after the part of the prefix it takes; a kernel declares each
// constant at its named id (`layout(constant_id = SPEC_ID_KEY_WORDS)`), never at a number.
//   C++:  the host passes a struct whose uint32_t fields are the constants in id order
//         (spec_constants, vulkan/specialization.hpp), its prefix one of the structs below;
//         GPUSORT_SPEC_AT checks each field against its id.
//   GLSL: the ids, for layout(local_size_x_id = ...) and layout(constant_id = ...); the prefix is
//         declared once, in key_spec.glsl (ids 0-4) and sort_key_spec.glsl (ids 0-6).
#ifndef GPUSORT_SPEC_CONSTANTS_H
#define GPUSORT_SPEC_CONSTANTS_H

// The workgroup size (every kernel; Context::Impl::pipeline reads it as the first constant).
#define SPEC_ID_WORKGROUP 0
// The key's layout: 32-bit words per key, KeyKind, descending order, 32-bit words per value.
#define SPEC_ID_KEY_WORDS 1
#define SPEC_ID_KEY_KIND 2
#define SPEC_ID_DESCENDING 3
#define SPEC_ID_VALUE_WORDS 4
// The compared bits, [BEGIN_BIT, END_BIT).
#define SPEC_ID_BEGIN_BIT 5
#define SPEC_ID_END_BIT 6

#ifdef __cplusplus

#include "vulkan/specialization.hpp"

namespace gpusort {

// Constant 0: kernels with the workgroup alone, or with their own constants after it.
struct WorkgroupSpec {
  uint32_t workgroup;
};
GPUSORT_SPEC_AT(WorkgroupSpec, workgroup, SPEC_ID_WORKGROUP);
static_assert(sizeof(WorkgroupSpec) == 4 * (SPEC_ID_WORKGROUP + 1));

// Constants 0-4: the workgroup and the key's layout (the radix kernels: whole keys).
struct KeySpec {
  uint32_t workgroup, key_words, key_kind, descending, value_words;
};
GPUSORT_SPEC_AT(KeySpec, workgroup, SPEC_ID_WORKGROUP);
GPUSORT_SPEC_AT(KeySpec, key_words, SPEC_ID_KEY_WORDS);
GPUSORT_SPEC_AT(KeySpec, key_kind, SPEC_ID_KEY_KIND);
GPUSORT_SPEC_AT(KeySpec, descending, SPEC_ID_DESCENDING);
GPUSORT_SPEC_AT(KeySpec, value_words, SPEC_ID_VALUE_WORDS);
static_assert(sizeof(KeySpec) == 4 * (SPEC_ID_VALUE_WORDS + 1));

// Constants 0-6: the workgroup, the key's layout and the compared bits (the comparison sorts).
struct SortKeySpec {
  uint32_t workgroup, key_words, key_kind, descending, value_words, begin_bit, end_bit;
};
GPUSORT_SPEC_AT(SortKeySpec, workgroup, SPEC_ID_WORKGROUP);
GPUSORT_SPEC_AT(SortKeySpec, key_words, SPEC_ID_KEY_WORDS);
GPUSORT_SPEC_AT(SortKeySpec, key_kind, SPEC_ID_KEY_KIND);
GPUSORT_SPEC_AT(SortKeySpec, descending, SPEC_ID_DESCENDING);
GPUSORT_SPEC_AT(SortKeySpec, value_words, SPEC_ID_VALUE_WORDS);
GPUSORT_SPEC_AT(SortKeySpec, begin_bit, SPEC_ID_BEGIN_BIT);
GPUSORT_SPEC_AT(SortKeySpec, end_bit, SPEC_ID_END_BIT);
static_assert(sizeof(SortKeySpec) == 4 * (SPEC_ID_END_BIT + 1));

}  // namespace gpusort

#endif  // __cplusplus

#endif  // GPUSORT_SPEC_CONSTANTS_H
