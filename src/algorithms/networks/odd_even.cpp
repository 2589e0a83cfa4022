// Odd-even transposition sort: one workgroup loads the whole array into shared memory
// (odd_even.comp), runs n phases of neighbour compare-exchanges, and writes keys (values
// gathered by origin) back in place. One dispatch, no scratch; stable (only strictly smaller
// right keys swap). O(n^2) work: meant for arrays of a few thousand keys at most, and limited
// to what fits one workgroup's shared memory.
#include "algorithms/networks/constants.h"
#include "algorithms/networks/networks.hpp"
#include "algorithms/networks/push.h"
#include "primitives/tile_shapes.hpp"

namespace gpusort {

namespace {

class OddEven final : public SortAlgorithm {
 public:
  OddEven(Context::Impl& ctx, const SortSpec& spec)
      : ctx_(ctx), spec_(spec), capacity_(odd_even_capacity(ctx, spec)) {}

  uint64_t max_elements() const override { return capacity_; }

  uint64_t scratch_bytes(uint64_t max_n) const override {
    check_fits(max_n);
    return 0;
  }

  void record(Recorder& rec, const SortTargets& t) const override {
    check_fits(t.n);
    if (t.n <= 1) return;
    // A power-of-two tile keeps the number of distinct pipelines small.
    const uint32_t tile = uint32_t(std::min<uint64_t>(ceil_pow2(t.n), capacity_));
    rec.dispatch(Kernel::odd_even,
                 spec_constants(tile_specialization(spec_, clamp_workgroup(ctx_, tile / 2), tile)),
                 1, OddEvenPush{t.keys, t.values, t.count_address, uint32_t(t.n)});
    rec.compute_barrier();
  }

 private:
  void check_fits(uint64_t n) const {
    if (n > capacity_)
      throw Error("odd_even sorts at most " + std::to_string(capacity_) + " " +
                  to_string(spec_.key) + " keys" +
                  (spec_.value_words ? " with values" : std::string()) + " on " + ctx_.info.name +
                  " (one workgroup's " + std::to_string(ctx_.info.shared_memory_bytes) +
                  " bytes of shared memory), not " + std::to_string(n) + ": use another algorithm");
  }

  Context::Impl& ctx_;
  SortSpec spec_;
  uint64_t capacity_;
};

}  // namespace

uint64_t odd_even_capacity(const Context::Impl& ctx, const SortSpec& spec) {
  return max_tile_slots(ctx, spec);
}

std::unique_ptr<SortAlgorithm> make_odd_even(Context::Impl& ctx, const SortSpec& spec) {
  return std::make_unique<OddEven>(ctx, spec);
}

}  // namespace gpusort
