// The specialization constants of the comparison sorts' tile kernels (tile_sort.glsl,
// bitonic_global, small_sort_tile / small_sort_merge, segment_sort_tile / segment_merge), written
// once for the host (C++) and the kernels (GLSL): a kernel declares each constant at the id
// defined here, and the host passes a struct whose fields are the constants in id order
// (spec_constants, vulkan/specialization.hpp), checked field by field below.
#ifndef GPUSORT_TILE_CONSTANTS_H
#define GPUSORT_TILE_CONSTANTS_H

// The key, compared bits and workgroup size (bitonic_global has these alone).
#define TILE_ID_WORKGROUP 0
#define TILE_ID_KEY_WORDS 1
#define TILE_ID_KEY_KIND 2
#define TILE_ID_DESCENDING 3
#define TILE_ID_VALUE_WORDS 4
#define TILE_ID_BEGIN_BIT 5
#define TILE_ID_END_BIT 6

// The tile: keys sorted together by one workgroup.
#define TILE_ID_TILE 7

#ifdef __cplusplus

#include "vulkan/specialization.hpp"

namespace gpusort {

// Constants 0-6 of every tile kernel.
struct SortKeySpec {
  uint32_t workgroup, key_words, key_kind, descending, value_words, begin_bit, end_bit;
};
GPUSORT_SPEC_AT(SortKeySpec, workgroup, TILE_ID_WORKGROUP);
GPUSORT_SPEC_AT(SortKeySpec, key_words, TILE_ID_KEY_WORDS);
GPUSORT_SPEC_AT(SortKeySpec, key_kind, TILE_ID_KEY_KIND);
GPUSORT_SPEC_AT(SortKeySpec, descending, TILE_ID_DESCENDING);
GPUSORT_SPEC_AT(SortKeySpec, value_words, TILE_ID_VALUE_WORDS);
GPUSORT_SPEC_AT(SortKeySpec, begin_bit, TILE_ID_BEGIN_BIT);
GPUSORT_SPEC_AT(SortKeySpec, end_bit, TILE_ID_END_BIT);
static_assert(sizeof(SortKeySpec) == 4 * (TILE_ID_END_BIT + 1));

// Constants 0-7 of every tile kernel but bitonic_global (tile_specialization).
struct TileSpec {
  SortKeySpec key;
  uint32_t tile;
};
GPUSORT_SPEC_AT(TileSpec, tile, TILE_ID_TILE);
static_assert(sizeof(TileSpec) == 4 * (TILE_ID_TILE + 1));

}  // namespace gpusort

#endif  // __cplusplus

#endif  // GPUSORT_TILE_CONSTANTS_H
