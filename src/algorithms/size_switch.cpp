// A sort that records with one algorithm up to a size and another above (sort_algorithm.hpp).
#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

namespace {

class SizeSwitch final : public SortAlgorithm {
 public:
  SizeSwitch(std::unique_ptr<SortAlgorithm> small, uint64_t small_max_n,
             std::unique_ptr<SortAlgorithm> large)
      : small_(std::move(small)), small_max_n_(small_max_n), large_(std::move(large)) {}

  const SortAlgorithm& choose(uint64_t max_n) const {
    return max_n <= small_max_n_ ? *small_ : *large_;
  }
  uint64_t scratch_bytes(uint64_t max_n) const override {
    return choose(max_n).scratch_bytes(max_n);
  }
  void record(Recorder& rec, const SortTargets& t) const override { choose(t.n).record(rec, t); }
  uint64_t max_elements() const override { return large_->max_elements(); }
  std::string kernel_path(uint64_t max_n) const override {
    return choose(max_n).kernel_path(max_n);
  }

 private:
  std::unique_ptr<SortAlgorithm> small_;
  uint64_t small_max_n_;
  std::unique_ptr<SortAlgorithm> large_;
};

}  // namespace

std::unique_ptr<SortAlgorithm> make_size_switch(std::unique_ptr<SortAlgorithm> small,
                                                uint64_t small_max_n,
                                                std::unique_ptr<SortAlgorithm> large) {
  return std::make_unique<SizeSwitch>(std::move(small), small_max_n, std::move(large));
}

// automatic: a size switch, decided per recording from max_n. The small-array sort takes n up to
// 2^17 in the bands of automatic_small_bands: one workgroup sorts up to 1024 keys (2048 without
// values) in one dispatch; above, tiles are sorted by one workgroup each and merged by rank in one
// or two more.
// Larger arrays take Onesweep, which beats radix_reduce_scan at every size measured on the H100
// (docs/design/onesweep.md). Every branch is stable.
}  // namespace gpusort
