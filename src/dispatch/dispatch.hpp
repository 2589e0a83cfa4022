// The dispatch layer: which algorithm object serves a request. registry.cpp is the list of the
// algorithms (the one place, besides the public enum, that names them all); automatic.cpp is the
// policy Algorithm::automatic follows.
#pragma once

#include <gpusort/gpusort.hpp>
#include <memory>
#include <span>

#include "algorithms/segmented_sort/segmented_sort.hpp"
#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

// One registered algorithm: its public enumerator, name, factory and status.
struct AlgorithmEntry {
  Algorithm id;
  const char* name;
  // Stable: part of the C ABI's enum (gpusort_algorithm). Others (reference and experimental
  // algorithms) are reached by name only (gpusort_algorithm_from_name), and may change or go.
  bool stable;
  std::unique_ptr<SortAlgorithm> (*make)(Context::Impl& ctx, const SortSpec& spec);
};
std::span<const AlgorithmEntry> algorithm_registry();
// The entry of `id`; throws gpusort::Error for a value that names none.
const AlgorithmEntry& algorithm_entry(Algorithm id);

// Picks the algorithm for `requested` (automatic: by max_n and device).
std::unique_ptr<SortAlgorithm> make_sort_algorithm(Context::Impl& ctx, const SortSpec& spec,
                                                   Algorithm requested);

// Algorithm::automatic: the small-array sort's bands below, Onesweep above (automatic.cpp).
std::unique_ptr<SortAlgorithm> make_automatic(Context::Impl& ctx, const SortSpec& spec);

// The segmented sort whose inner sorts are `requested` (stable: not bitonic).
std::unique_ptr<SegmentedSort> make_segmented_sort(Context::Impl& ctx, const SegmentedSpec& spec,
                                                   Algorithm requested,
                                                   const SegmentedOptions& options = {});

}  // namespace gpusort
