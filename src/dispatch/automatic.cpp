// Algorithm::automatic: the policy that picks an algorithm by size and device.
#include "algorithms/onesweep/onesweep.hpp"
#include "algorithms/small_sort/small_sort.hpp"
#include "dispatch/dispatch.hpp"

namespace gpusort {

std::unique_ptr<SortAlgorithm> make_automatic(Context::Impl& ctx, const SortSpec& spec) {
  std::unique_ptr<SortAlgorithm> sort = make_onesweep(ctx, spec);
  const std::vector<SmallSortBand> bands = automatic_small_bands(ctx, spec);
  for (auto band = bands.rbegin(); band != bands.rend(); ++band)
    sort = make_size_switch(make_small_sort(ctx, spec, band->shape), band->max_n, std::move(sort));
  return sort;
}

}  // namespace gpusort
