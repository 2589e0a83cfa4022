// The specialization constants of the sorting networks' kernels: the tile kernels' (TileSpec,
// primitives/glsl/tile_constants.h; bitonic_local, bitonic_local_disperse and odd_even through
// tile_sort.glsl), and bitonic_global's, the shared prefix alone (SortKeySpec,
// primitives/glsl/spec_constants.h). No constant of their own.
#ifndef GPUSORT_NETWORKS_CONSTANTS_H
#define GPUSORT_NETWORKS_CONSTANTS_H

#ifdef __cplusplus
#include "primitives/glsl/tile_constants.h"
#else
#include "tile_constants.h"
#endif

#endif  // GPUSORT_NETWORKS_CONSTANTS_H
