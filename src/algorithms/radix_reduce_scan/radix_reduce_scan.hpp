// LSD radix sort, reduce-then-scan: per 8-bit digit a count, a scan of the counts and a stable
// scatter (radix_count.comp, primitives' scan, radix_scatter.comp). A reference algorithm: slower
// than Onesweep everywhere measured, never chosen by Algorithm::automatic.
#pragma once

#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

std::unique_ptr<SortAlgorithm> make_radix_reduce_scan(Context::Impl& ctx, const SortSpec& spec);

}  // namespace gpusort
