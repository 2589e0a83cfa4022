// The algorithms gpusort has. A new algorithm is its own folder under src/algorithms/ (host code,
// kernels.cmake, shaders) plus two registration points: its enumerator in the public
// gpusort::Algorithm (include/gpusort/gpusort.hpp) and its row here. Everything else that lists
// algorithms (names, parsing, the C API's check, the CLI's help, Python's ALGORITHMS, the
// benchmark's rows) reads this table.
#include <array>

#include "algorithms/networks/networks.hpp"
#include "algorithms/onesweep/onesweep.hpp"
#include "algorithms/partition_sort/partition_sort.hpp"
#include "algorithms/radix_reduce_scan/radix_reduce_scan.hpp"
#include "dispatch/dispatch.hpp"

namespace gpusort {

namespace {

std::unique_ptr<SortAlgorithm> make_partition_default(Context::Impl& ctx, const SortSpec& spec) {
  return make_partition_sort(ctx, spec);
}

// In enumerator order (checked below).
constexpr std::array<AlgorithmEntry, 6> registry{{
    {Algorithm::automatic, "automatic", true, make_automatic},
    {Algorithm::onesweep, "onesweep", true, make_onesweep},
    {Algorithm::radix_reduce_scan, "radix_reduce_scan", false, make_radix_reduce_scan},
    {Algorithm::bitonic, "bitonic", false, make_bitonic},
    {Algorithm::odd_even, "odd_even", false, make_odd_even},
    {Algorithm::partition, "partition", false, make_partition_default},
}};

constexpr bool in_enumerator_order() {
  for (size_t i = 0; i < registry.size(); ++i)
    if (uint32_t(registry[i].id) != i) return false;
  return true;
}
static_assert(in_enumerator_order(), "registry rows follow gpusort::Algorithm's order");

}  // namespace

std::span<const AlgorithmEntry> algorithm_registry() {
  return registry;
}

const AlgorithmEntry& algorithm_entry(Algorithm id) {
  if (uint32_t(id) >= registry.size())
    throw Error("invalid Algorithm value " + std::to_string(uint32_t(id)));
  return registry[uint32_t(id)];
}

std::unique_ptr<SortAlgorithm> make_sort_algorithm(Context::Impl& ctx, const SortSpec& spec,
                                                   Algorithm requested) {
  return algorithm_entry(requested).make(ctx, spec);
}

std::unique_ptr<SegmentedSort> make_segmented_sort(Context::Impl& ctx, const SegmentedSpec& spec,
                                                   Algorithm requested,
                                                   const SegmentedOptions& options) {
  if (requested == Algorithm::bitonic)
    throw Error("segmented sort and argsort need a stable sort: bitonic is not stable");
  return make_segmented_sort(
      ctx, spec,
      [&ctx, requested](const SortSpec& s) { return make_sort_algorithm(ctx, s, requested); },
      options);
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const AlgorithmEntry& e : registry) names.emplace_back(e.name);
  return names;
}

const char* to_string(Algorithm algorithm) {
  return algorithm_entry(algorithm).name;
}

Algorithm parse_algorithm(const std::string& text) {
  std::string expected;
  for (const AlgorithmEntry& e : registry) {
    if (text == e.name) return e.id;
    expected += (expected.empty() ? "" : ", ") + std::string(e.name);
  }
  throw Error("unknown algorithm '" + text + "' (expected one of " + expected + ")");
}

}  // namespace gpusort
