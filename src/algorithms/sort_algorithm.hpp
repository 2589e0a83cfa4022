// What every sorting algorithm implements: scratch sizing and recording onto addresses.
#pragma once

#include "primitives/sort_spec.hpp"
#include "vulkan/recorder.hpp"

#include <functional>
#include <memory>
#include <string>

namespace gpusort {

class SortAlgorithm {
 public:
  virtual ~SortAlgorithm() = default;
  virtual uint64_t scratch_bytes(uint64_t max_n) const = 0;
  // The largest n this algorithm sorts on this device (odd-even: one workgroup's shared memory).
  virtual uint64_t max_elements() const { return gpusort::max_elements; }
  // Whether equal keys keep their input order.
  virtual bool stable() const { return true; }
  // The kernels a recording of max_n runs (Sorter::kernel_path): "spirv", or for Onesweep's CUDA
  // pass "cuda <tile variant>".
  virtual std::string kernel_path(uint64_t max_n) const {
    (void)max_n;
    return "spirv";
  }
  // Records the whole sort; the result ends in targets.keys / targets.values.
  virtual void record(Recorder& rec, const SortTargets& targets) const = 0;
};

// Makes the sort of a spec: how an algorithm that sorts by others (the segmented sort) is given
// them by the layer above, which chooses (src/dispatch).
using MakeSort = std::function<std::unique_ptr<SortAlgorithm>(const SortSpec&)>;

// Records with `small` while max_n <= small_max_n, else with `large` (size_switch.cpp).
std::unique_ptr<SortAlgorithm> make_size_switch(std::unique_ptr<SortAlgorithm> small,
                                                uint64_t small_max_n,
                                                std::unique_ptr<SortAlgorithm> large);

}  // namespace gpusort
