// Onesweep LSD radix sort (Adinets & Merrill), 8-bit digits, single-pass scatter per digit:
//   onesweep_clear      zeroes the state block (histograms, control words, look-back table)
//   onesweep_histogram  one read of the keys builds every pass's digit histogram; its last
//                       workgroup to finish then makes the plan
//                       (src/algorithms/onesweep/onesweep_plan.glsl): exclusive digit offsets per
//                       pass, passes whose digit is the same for all keys are skipped, the rest
//                       ping-pong from the caller's buffer
//   onesweep_pass       per digit: tiles ranked in shared memory, decoupled look-back over a
//                       fixed-size circular table (with a fallback that needs no forward
//                       progress), coalesced scatter of keys and values
//   onesweep_copy_back  when the plan ran an odd number of passes: scratch -> caller's buffers
// Every decision that depends on the keys (skips, buffer roles, n itself when indirect) is made
// on the GPU, so the same recording serves any count. The passes and the copy-back are sized on
// the GPU too (indirect dispatches whose commands the plan writes): a skipped pass, or a
// copy-back after an even number of passes, launches no workgroup. With a GPU-side count the
// clear also writes the histogram's dispatch, so a count far below max_n (often 0 in the
// segmented sort's global path) launches no workgroups that would only read it and exit.
// Scratch: the key/value ping-pong copies plus a block independent of n: 120 B of dispatch
// commands, 8 KiB of histograms, 88 B of control words (padded to 8448 B together) and
// min(1024, tiles) look-back slots of 2 KiB: 2,105,600 B at most (layout.hpp).
// The steps are recorded by OnesweepSteps (onesweep_steps.hpp); the passes by this file's
// Onesweep (SPIR-V) or by the CUDA pass (cuda/nvx_sort.cpp), which make_onesweep chooses.
#include "algorithms/onesweep/onesweep.hpp"

#include "algorithms/onesweep/cuda/cuda_pass.hpp"
#include "algorithms/onesweep/cuda/nvx_sort.hpp"
#include "algorithms/onesweep/onesweep_steps.hpp"

namespace gpusort {

namespace {

constexpr uint32_t radix = ONESWEEP_RADIX;
constexpr uint32_t digit_bits = ONESWEEP_DIGIT_BITS;

// Onesweep with the SPIR-V onesweep_pass.
class Onesweep final : public OnesweepSteps {
 public:
  Onesweep(Context::Impl& ctx, const SortSpec& spec, const OnesweepOptions& options)
      : OnesweepSteps(ctx, spec, options),
        keys_(onesweep_keys(tuning_, spec.key_words, spec.value_words)) {
    const auto& info = ctx.info;
    // The tile shapes per device family and key class: src/tuning.
    const OnesweepTile shape = onesweep_tile_on(info, keys_.large);
    workgroup_ = shape.workgroup;
    keys_per_thread_ = shape.keys_per_thread;
    if (options.workgroup) workgroup_ = options.workgroup;
    if (options.keys_per_thread) keys_per_thread_ = options.keys_per_thread;
    while (keys_per_thread_ > 1 && shared_bytes() > info.shared_memory_bytes) --keys_per_thread_;
    // Per-subgroup digit counters are 16-bit.
    if (tile() >= 65536) throw Error("onesweep: tiles must hold fewer than 65536 keys");
    if (shared_bytes() > info.shared_memory_bytes)
      throw Error("onesweep: shared memory (" + std::to_string(info.shared_memory_bytes) +
                  " bytes) is too small for one tile");
  }

  std::string pass_kernels() const override { return "spirv"; }

 protected:
  uint32_t tile() const override { return workgroup_ * keys_per_thread_; }
  uint32_t pass_group_cap(uint64_t max_n) const override { return persistent_groups(max_n); }

  void record_passes(Recorder& rec, const SortTargets& t, const Steps& s,
                     const std::function<void(const OnesweepStages&)>& between) const override {
    const OnesweepPassSpec pass_spec{.key = key_spec(workgroup_),
                                     .min_subgroup_size = ctx_.info.min_subgroup_size,
                                     .max_subgroup_size = ctx_.info.max_subgroup_size,
                                     .keys_per_thread = keys_per_thread_,
                                     .spin_limit = options_.spin_limit,
                                     .publish_refusal_period = options_.publish_refusal_period,
                                     .lookback_window = options_.lookback_window,
                                     .profile_omit = profile_omit(),
                                     .full_tile_copy = full_tile_copy(),
                                     .guess_tile = guess_tile(),
                                     .counters_in_exchange = counters_in_exchange(),
                                     .partition_pass = 0,  // Onesweep's own passes
                                     .wide_indices = s.wide_indices,
                                     .claim_by_id = claim_by_id(t.n),
                                     .persistent = persistent_groups(t.n) ? 1u : 0u,
                                     .prefetch_next = prefetch_next()};
    const uint64_t pass_tiles = s.layout.tiles;
    const uint32_t slot_mask = s.layout.lookback_slots - 1;
    if (between)
      between(OnesweepStages{s.keys_alt, s.values_alt, s.digit_counts, s.control, s.lookback,
                             s.dispatch, pass_spec, pass_tiles, slot_mask, s.pass_count});
    for (uint32_t pass = 0; pass < s.pass_count; ++pass) {
      const uint32_t bit = spec_.begin_bit + pass * digit_bits;
      // A skipped pass runs no workgroup.
      launch_planned(rec, t, s, pass_kernel(), pass_spec, ONESWEEP_DISPATCH_PASS + pass,
                     OnesweepPassPush{t.keys, s.keys_alt, t.values,
                                      clock_profile() ? clock_profile() : s.values_alt,
                                      t.count_address, s.digit_counts + pass * radix * 4,
                                      s.control, s.lookback, t.n, pass, bit,
                                      std::min(digit_bits, spec_.end_bit - bit),
                                      uint32_t(1 + pass * pass_tiles), slot_mask});
      step_barrier(rec, 1 + pass, false);
    }
  }

 private:
  uint32_t shared_bytes() const {
    const uint32_t counter_words = workgroup_ / ctx_.info.min_subgroup_size * radix / 2;
    const uint32_t exchange_words = workgroup_ * keys_per_thread_;
    const uint32_t words = counters_in_exchange() ? std::max(exchange_words, counter_words)
                                                  : exchange_words + counter_words;
    return words * 4 + 5 * radix * 4 + 256;
  }
  // The pass's switches: the options' where set (>= 0), else the device's tuning table.
  uint32_t counters_in_exchange() const {
    if (options_.counters_in_exchange >= 0) return uint32_t(options_.counters_in_exchange);
    return keys_.counters_in_exchange ? 1u : 0u;
  }
  uint32_t full_tile_copy() const {
    if (options_.full_tile_copy >= 0) return uint32_t(options_.full_tile_copy);
    return keys_.full_tile_copy ? 1u : 0u;
  }
  uint32_t guess_tile() const {
    if (options_.guess_tile >= 0) return uint32_t(options_.guess_tile);
    return keys_.guess_tile ? 1u : 0u;
  }
  uint32_t claim_by_id(uint64_t max_n) const {
    if (options_.claim_by_id >= 0) return uint32_t(options_.claim_by_id);
    // Persistent workgroups sort the tile of their id first and then claim: with every tile by id,
    // one workgroup that runs late (a fallback's recount, an SM shared with other work) would hold
    // back every round of the pass. All by id measured 1-2 % faster on an idle H100
    // (docs/design/onesweep.md).
    if (persistent_groups(max_n) != 0) return 0;
    return tuning_.tiles_by_id ? 1u : 0u;
  }
  // Workgroups per pass where they are persistent (0: one per tile), for a recording of max_n
  // keys: the table's per compute unit, where each gets persistent_min_rounds tiles or more.
  uint32_t persistent_groups(uint64_t max_n) const {
    if (options_.persistent_groups >= 0) return uint32_t(options_.persistent_groups);
    const uint32_t groups = keys_.persistent_groups_per_unit * ctx_.info.compute_units;
    return layout(max_n).tiles >= tuning_.persistent_min_rounds * groups ? groups : 0;
  }
  // The next tile's keys requested after the look-back (persistent workgroups).
  uint32_t prefetch_next() const {
    if (options_.prefetch_next >= 0) return uint32_t(options_.prefetch_next);
    return keys_.prefetch_next ? 1u : 0u;
  }
  // onesweep_pass, or in the profiling build with OnesweepOptions::profiling.clock_profile its
  // clock variant.
  Kernel pass_kernel() const {
#if GPUSORT_PROFILING
    if (options_.profiling.clock_profile) {
#ifdef GPUSORT_ONESWEEP_VARIANTS
      return Kernel::onesweep_pass_clock;
#else
      throw Error("onesweep: clock_profile needs the library built with GPUSORT_ONESWEEP_VARIANTS");
#endif
    }
#endif
    return Kernel::onesweep_pass;
  }
  // The profiling build's switches (OnesweepOptions::profiling); constants in the product.
#if GPUSORT_PROFILING
  uint32_t profile_omit() const { return options_.profiling.profile_omit; }
  VkDeviceAddress clock_profile() const { return options_.profiling.clock_profile; }
#else
  static constexpr uint32_t profile_omit() { return 0; }
  static constexpr VkDeviceAddress clock_profile() { return 0; }
#endif

  const OnesweepKeyTuning& keys_;
  uint32_t workgroup_ = 0;
  uint32_t keys_per_thread_ = 0;
};

// The automatic choice above the key class's cuda_from_n: the CUDA pass where its kernels load
// (Context::Impl::cuda_kernels_loaded, at the first sort of such a size), else the SPIR-V sort
// that takes the sizes below. Scratch is sized for either.
class CudaAbove final : public SortAlgorithm {
 public:
  CudaAbove(Context::Impl& ctx, std::unique_ptr<SortAlgorithm> spirv, uint64_t spirv_max_n,
            std::unique_ptr<SortAlgorithm> cuda)
      : ctx_(ctx), spirv_(std::move(spirv)), spirv_max_n_(spirv_max_n), cuda_(std::move(cuda)) {}

  uint64_t scratch_bytes(uint64_t max_n) const override {
    const uint64_t spirv = spirv_->scratch_bytes(max_n);
    return max_n <= spirv_max_n_ ? spirv : std::max(spirv, cuda_->scratch_bytes(max_n));
  }
  void record(Recorder& rec, const SortTargets& t) const override { choose(t.n).record(rec, t); }
  uint64_t max_elements() const override {
    return std::min(spirv_->max_elements(), cuda_->max_elements());
  }
  std::string kernel_path(uint64_t max_n) const override {
    return choose(max_n).kernel_path(max_n);
  }

 private:
  const SortAlgorithm& choose(uint64_t max_n) const {
    return max_n > spirv_max_n_ && cuda_kernels_loaded(ctx_) ? *cuda_ : *spirv_;
  }

  Context::Impl& ctx_;
  std::unique_ptr<SortAlgorithm> spirv_;
  uint64_t spirv_max_n_;
  std::unique_ptr<SortAlgorithm> cuda_;
};

}  // namespace

// The one place that picks the launcher of the passes (cuda/cuda_pass.hpp: the CUDA pass where
// asked for or chosen, else SPIR-V).
std::unique_ptr<OnesweepSort> make_onesweep(Context::Impl& ctx, const SortSpec& spec,
                                            const OnesweepOptions& options) {
  const KernelPath requested = requested_kernel_path(
      options.kernels != KernelPath::automatic ? options.kernels : spec.kernels);
  uint32_t function = 0;
  if (const cuda::CudaPassShape* shape = choose_cuda_pass(ctx, spec, requested, &function))
    return make_onesweep_nvx(ctx, spec, options, *shape, function);
  return std::make_unique<Onesweep>(ctx, spec, options);
}

std::unique_ptr<SortAlgorithm> make_onesweep(Context::Impl& ctx, const SortSpec& spec) {
  // The CUDA pass (src/algorithms/onesweep/cuda/cuda_pass.hpp): asked for, it sorts every size;
  // chosen by itself, the sizes from the device's cuda_from_n for the key class, the SPIR-V bands
  // below.
  const KernelPath requested = requested_kernel_path(spec.kernels);
  std::unique_ptr<SortAlgorithm> cuda_sort;
  uint64_t cuda_from_n = 0;
  uint32_t shape = 0;
  if (choose_cuda_pass(ctx, spec, requested, &shape)) {
    OnesweepOptions cuda_options;
    cuda_options.kernels = KernelPath::cuda;
    cuda_sort = make_onesweep(ctx, spec, cuda_options);
    cuda_from_n = onesweep_tuning(ctx.info).cuda_from_n[cuda::cuda_key_class(spec.key_words, spec.value_words)];
    if (requested == KernelPath::cuda || cuda_from_n <= 1) return cuda_sort;
  }
  OnesweepOptions spirv;
  spirv.kernels = KernelPath::spirv;
  auto large = make_onesweep(ctx, spec, spirv);
  const OnesweepKeyTuning& keys =
      onesweep_keys(onesweep_tuning(ctx.info), spec.key_words, spec.value_words);
  // Each band, from the largest down, takes the sizes up to its max_n from the ones above it
  // (onesweep_tile_for). Bands run one workgroup per tile, as they were measured: persistent
  // workgroups with their small tiles were 35 % slower on the H100 (docs/design/onesweep.md), and
  // on a device with fewer compute units a band's size could reach the persistent threshold.
  std::unique_ptr<SortAlgorithm> sort = std::move(large);
  for (auto band = keys.bands.rbegin(); band != keys.bands.rend(); ++band) {
    if (band->max_n == 0) continue;
    const OnesweepTile tile = onesweep_tile_on(ctx.info, band->tile);
    OnesweepOptions options = spirv;
    options.workgroup = tile.workgroup;
    options.keys_per_thread = tile.keys_per_thread;
    options.persistent_groups = 0;
    sort = make_size_switch(make_onesweep(ctx, spec, options), band->max_n, std::move(sort));
  }
  if (cuda_sort)
    sort = std::make_unique<CudaAbove>(ctx, std::move(sort), cuda_from_n - 1, std::move(cuda_sort));
  return sort;
}

}  // namespace gpusort
