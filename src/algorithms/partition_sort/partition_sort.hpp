// The partition sort: one MSD partition pass by the top digit (onesweep_pass in its
// PARTITION_PASS mode), then every bucket sorted on its own by the segmented sort. Experimental:
// Algorithm::automatic does not choose it.
#pragma once

#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

std::unique_ptr<SortAlgorithm> make_partition_sort(Context::Impl& ctx, const SortSpec& spec);
// max_bucket: the largest bucket the partition path takes (0: the device's tuned value); tests
// lower it to reach the Onesweep path.
std::unique_ptr<SortAlgorithm> make_partition_sort(Context::Impl& ctx, const SortSpec& spec,
                                                   uint32_t max_bucket);

}  // namespace gpusort
