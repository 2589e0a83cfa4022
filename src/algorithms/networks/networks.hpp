// The classic sorting networks, kept as reference algorithms: bitonic (any n, unstable) and
// odd-even transposition (one workgroup, stable). Both sort in the shared-memory tile of
// tile_sort.glsl (this folder): keys in radix order (plus each key's origin slot when values are
// sorted), compared on the spec's bit range.
#pragma once

#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

// Bitonic sort (flip/disperse form), any n, unstable.
std::unique_ptr<SortAlgorithm> make_bitonic(Context::Impl& ctx, const SortSpec& spec);
// Odd-even transposition sort in one workgroup; stable; refuses n above odd_even_capacity().
std::unique_ptr<SortAlgorithm> make_odd_even(Context::Impl& ctx, const SortSpec& spec);
uint64_t odd_even_capacity(const Context::Impl& ctx, const SortSpec& spec);

}  // namespace gpusort
