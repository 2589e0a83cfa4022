// Small-array radix sort in one dispatch of one workgroup (shaders/small_radix.comp): LSD, 8-bit
// digits over the bit range, keys in registers, ranked by subgroup ballots and per-subgroup digit
// counters, scattered through shared memory each pass; passes whose digit is the same for every
// key are skipped (decided on the GPU from the keys' AND / OR); values follow their keys' origins
// once, at the end. Sorts in place: no scratch. n is at most one tile (workgroup x items keys).
#include "algorithms/small_radix.hpp"

#include "algorithms/comparison_sorts.hpp"

namespace gpusort {

namespace {

struct Push {
  VkDeviceAddress keys, values, count_address;
  uint32_t n;
};

// The smallest workgroup: 64 invocations, and at least one subgroup of the largest size.
uint32_t min_workgroup(const Context::Impl& ctx) {
  return std::max<uint32_t>(64, ctx.info.max_subgroup_size);
}

class SmallRadix final : public SortAlgorithm {
 public:
  SmallRadix(Context::Impl& ctx, const SortSpec& spec, SmallRadixShape shape)
      : ctx_(ctx), spec_(spec), shape_(shape) {}

  uint64_t scratch_bytes(uint64_t max_n) const override {
    check_fits(max_n);
    return 0;
  }
  uint64_t max_elements() const override { return shape_.tile(); }

  void record(Recorder& rec, const SortTargets& t) const override {
    check_fits(t.n);
    if (t.n <= 1) return;
    // Fewer absent slots to rank: the smallest workgroup whose tile covers max_n.
    uint32_t workgroup = shape_.workgroup;
    while (workgroup / 2 >= min_workgroup(ctx_) && uint64_t(workgroup / 2) * shape_.items >= t.n)
      workgroup /= 2;
    rec.dispatch(
        "small_radix_i" + std::to_string(shape_.items),
        {workgroup, spec_.key_words, spec_.key_kind, uint32_t(spec_.descending), spec_.value_words,
         spec_.begin_bit, spec_.end_bit, ctx_.info.min_subgroup_size, ctx_.info.max_subgroup_size},
        1, Push{t.keys, t.values, t.count_address, uint32_t(t.n)});
    rec.compute_barrier();
  }

 private:
  void check_fits(uint64_t n) const {
    if (n > shape_.tile())
      throw Error("the small-array radix sort takes at most " + std::to_string(shape_.tile()) +
                  " keys (" + std::to_string(shape_.workgroup) + " x " +
                  std::to_string(shape_.items) + "), not " + std::to_string(n));
  }

  Context::Impl& ctx_;
  SortSpec spec_;
  SmallRadixShape shape_;
};

}  // namespace

uint64_t small_radix_shared_bytes(const Context::Impl& ctx, const SortSpec& spec,
                                  uint32_t workgroup, uint32_t items) {
  constexpr uint64_t radix = 256;
  const uint64_t tile_words =
      uint64_t(workgroup) * items * (spec.key_words + (spec.value_words ? 1 : 0));
  const uint64_t counter_words =
      workgroup / std::max<uint32_t>(1, ctx.info.min_subgroup_size) * radix / 2;
  return 4 * (tile_words + counter_words);
}

SmallRadixShape small_radix_shape(const Context::Impl& ctx, const SortSpec& spec,
                                  uint32_t workgroup, uint32_t items) {
  if (items != 1 && items != 2 && items != 4 && items != 8)
    throw Error("small-array radix sort: " + std::to_string(items) +
                " keys per invocation (1, 2, 4 or 8)");
  if (ctx.info.min_subgroup_size < 4 || ctx.info.max_subgroup_size > 128)
    throw Error("small-array radix sort: subgroups of " +
                std::to_string(ctx.info.min_subgroup_size) + " to " +
                std::to_string(ctx.info.max_subgroup_size) + " lanes (4 to 128 supported)");
  workgroup = std::clamp(std::bit_floor(std::max<uint32_t>(workgroup, 1)), min_workgroup(ctx),
                         max_comparison_workgroup(ctx));
  while (workgroup > min_workgroup(ctx) &&
         small_radix_shared_bytes(ctx, spec, workgroup, items) > ctx.info.shared_memory_bytes)
    workgroup /= 2;
  if (small_radix_shared_bytes(ctx, spec, workgroup, items) > ctx.info.shared_memory_bytes)
    throw Error("small-array radix sort: a tile of " + std::to_string(workgroup * items) +
                " keys does not fit " + std::to_string(ctx.info.shared_memory_bytes) +
                " bytes of shared memory");
  return {workgroup, items};
}

uint64_t small_radix_max_n(const Context::Impl& ctx, const SortSpec& spec, uint32_t workgroup,
                           uint32_t items) {
  return small_radix_shape(ctx, spec, workgroup, items).tile();
}

std::unique_ptr<SortAlgorithm> make_small_radix(Context::Impl& ctx, const SortSpec& spec,
                                                uint32_t workgroup, uint32_t items) {
  return std::make_unique<SmallRadix>(ctx, spec, small_radix_shape(ctx, spec, workgroup, items));
}

}  // namespace gpusort
