// The specialization constants of the comparison sorts' tile kernels (tile_sort.glsl,
// small_sort_tile / small_sort_merge, segment_sort_tile / segment_merge; bitonic_global takes the
// prefix alone), written once for the host (C++) and the kernels (GLSL): the shared prefix
// (spec_constants.h: workgroup, key layout, compared bits), then the tile.
#ifndef GPUSORT_TILE_CONSTANTS_H
#define GPUSORT_TILE_CONSTANTS_H

#ifdef __cplusplus
#include "primitives/glsl/spec_constants.h"
#else
#include "spec_constants.h"
#endif

// The tile: keys sorted together by one workgroup.
#define TILE_ID_TILE 7

#ifdef __cplusplus

namespace gpusort {

// Constants 0-7 of every tile kernel (tile_specialization).
struct TileSpec {
  SortKeySpec key;
  uint32_t tile;
};
GPUSORT_SPEC_AT(TileSpec, tile, TILE_ID_TILE);
static_assert(sizeof(TileSpec) == 4 * (TILE_ID_TILE + 1));

}  // namespace gpusort

#endif  // __cplusplus

#endif  // GPUSORT_TILE_CONSTANTS_H
