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
// min(1024, tiles) look-back slots of 2 KiB: 2,105,600 B at most.
#include "algorithms/onesweep/onesweep.hpp"

#include <array>
#include <bit>
#include <cstdlib>

#include "algorithms/onesweep/cuda/cuda_pass.hpp"
#include "algorithms/onesweep/state.h"
#include "algorithms/small_sort/small_sort.hpp"
#include "tuning/tuning.hpp"

namespace gpusort {

namespace {

constexpr uint32_t radix = ONESWEEP_RADIX;
constexpr uint32_t digit_bits = ONESWEEP_DIGIT_BITS;
constexpr uint32_t max_passes = OnesweepSort::max_passes;
// The state block's words and commands: state.h.
constexpr uint32_t control_words = ONESWEEP_CONTROL_WORDS;
constexpr uint32_t control_plan = ONESWEEP_CONTROL_PLAN;  // then the copy-back flag
constexpr uint32_t control_fallbacks = ONESWEEP_CONTROL_FALLBACKS;
constexpr uint32_t lookback_entry_bytes = ONESWEEP_LOOKBACK_ENTRY_BYTES;
constexpr uint32_t dispatch_histogram = ONESWEEP_DISPATCH_HISTOGRAM;
constexpr uint32_t dispatch_pass = ONESWEEP_DISPATCH_PASS;  // + the pass
constexpr uint32_t dispatch_copy_back = ONESWEEP_DISPATCH_COPY_BACK;
constexpr uint32_t dispatch_commands = ONESWEEP_DISPATCH_COMMANDS;
constexpr uint32_t dispatch_command_bytes = sizeof(VkDispatchIndirectCommand);
constexpr uint32_t histogram_workgroup = 256;
constexpr uint32_t histogram_keys_per_thread = 8;
constexpr uint32_t histogram_keys_per_round = histogram_workgroup * histogram_keys_per_thread;
constexpr uint32_t histogram_keys_per_group = histogram_keys_per_round * 4;
constexpr uint32_t max_histogram_groups = 2048;
constexpr uint32_t clear_workgroup = 256;
constexpr uint32_t max_clear_groups = 1024;
constexpr uint32_t copy_workgroup = 256;
constexpr uint32_t max_copy_groups = 4096;

uint32_t groups_for(uint64_t items, uint64_t per_group, uint32_t cap) {
  return uint32_t(std::clamp<uint64_t>((items + per_group - 1) / per_group, 1, cap));
}

class Onesweep final : public OnesweepSort {
 public:
  Onesweep(Context::Impl& ctx, const SortSpec& spec, const OnesweepOptions& options)
      : ctx_(ctx),
        spec_(spec),
        options_(options),
        tuning_(tuning_for(ctx.info).onesweep),
        keys_(onesweep_keys(tuning_, spec.key_words, spec.value_words)) {
    const auto& info = ctx.info;
    if (options_.lookback_window == 0) options_.lookback_window = tuning_.lookback_window;
    // The CUDA pass (src/algorithms/onesweep/cuda): its kernel's tile, fixed when it was built.
    cuda_ = choose_cuda_pass(
        ctx, spec,
        requested_kernel_path(options.kernels != KernelPath::automatic ? options.kernels
                                                                       : spec.kernels),
        &cuda_function_);
    if (cuda_) {
      workgroup_ = cuda_->threads;
      keys_per_thread_ = cuda_->items;
      // The histogram kernel: the v-th row of cuda::kCudaHistogramShapes for the key width.
      const CudaEnvironment environment = cuda_environment();
      const uint32_t variant = environment.histogram.value_or(tuning_.cuda_histogram);
      for (uint32_t row = 0, seen = 0; variant != 0 && row < cuda::kCudaHistogramShapeCount; ++row)
        if (cuda::kCudaHistogramShapes[row].key_words == spec.key_words && ++seen == variant)
          cuda_histogram_ = &cuda::kCudaHistogramShapes[row];
      if (variant != 0 && !cuda_histogram_)
        throw Error("onesweep: no CUDA histogram kernel " + std::to_string(variant) + " for " +
                    std::to_string(spec.key_words * 32) + "-bit keys");
      const uint32_t key_class = cuda::cuda_key_class(spec.key_words, spec.value_words);
      cuda_prefetch_tiles_ =
          environment.prefetch_tiles.value_or(tuning_.cuda_prefetch_tiles[key_class]);
      if (options_.cuda_prefetch_tiles >= 0)
        cuda_prefetch_tiles_ = uint32_t(options_.cuda_prefetch_tiles);
      // Tiles by id or from the pass's counter, per key class (the tuning table; the option wins).
      cuda_tiles_by_id_ = options_.claim_by_id >= 0 ? uint32_t(options_.claim_by_id != 0)
                                                    : tuning_.cuda_tiles_by_id[key_class];
      return;
    }
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

  uint32_t shared_bytes() const {
    const uint32_t counter_words = workgroup_ / ctx_.info.min_subgroup_size * radix / 2;
    const uint32_t exchange_words = workgroup_ * keys_per_thread_;
    const uint32_t words = counters_in_exchange() ? std::max(exchange_words, counter_words)
                                                  : exchange_words + counter_words;
    return words * 4 + 5 * radix * 4 + 256;
  }
  uint32_t tile() const { return workgroup_ * keys_per_thread_; }
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
    return tiles(max_n) >= tuning_.persistent_min_rounds * groups ? groups : 0;
  }
  // The next tile's keys requested after the look-back (persistent workgroups).
  uint32_t prefetch_next() const {
    if (options_.prefetch_next >= 0) return uint32_t(options_.prefetch_next);
    return keys_.prefetch_next ? 1u : 0u;
  }
  // The histogram's grid: four rounds of keys per workgroup, or, where that leaves compute units
  // without a workgroup (small n), fewer rounds, so that each unit gets histogram_groups_per_unit
  // (the options' where set, else the table's).
  uint32_t histogram_groups_for(uint64_t n) const {
    const uint32_t groups = groups_for(n, histogram_keys_per_group, max_histogram_groups);
    const uint32_t per_unit = options_.histogram_groups_per_unit >= 0
                                  ? uint32_t(options_.histogram_groups_per_unit)
                                  : tuning_.histogram_groups_per_unit;
    const uint32_t spread = per_unit * std::max<uint32_t>(ctx_.info.compute_units, 1);
    if (groups >= spread) return groups;
    return std::min(spread, groups_for(n, histogram_keys_per_round, max_histogram_groups));
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
  bool histogram_only() const {
    return options_.profiling.histogram_only;
  }
  uint32_t profile_omit() const {
    return options_.profiling.profile_omit;
  }
  VkDeviceAddress clock_profile() const {
    return options_.profiling.clock_profile;
  }
#else
  static constexpr bool histogram_only() {
    return false;
  }
  static constexpr uint32_t profile_omit() {
    return 0;
  }
  static constexpr VkDeviceAddress clock_profile() {
    return 0;
  }
#endif
  uint32_t passes() const {
    return (spec_.end_bit - spec_.begin_bit + digit_bits - 1) / digit_bits;
  }
  uint64_t tiles(uint64_t max_n) const {
    return std::max<uint64_t>(1, (max_n + tile() - 1) / tile());
  }
  // A power of two (the shader indexes slots with a mask), at most the option, at most the
  // tiles' count rounded up.
  uint32_t lookback_slots(uint64_t max_n) const {
    const uint64_t cap = std::bit_floor(std::max<uint32_t>(options_.lookback_slots, 1));
    return uint32_t(std::min<uint64_t>(cap, std::bit_ceil(tiles(max_n))));
  }

  // After the copies: the dispatch commands, then the state block that the clear zeroes (it
  // starts with the histograms). Commands, histograms and control words (8408 B) fit below the
  // look-back table's 256-B alignment (8448 B), so the commands add nothing to scratch_bytes.
  struct Layout {
    uint64_t keys_alt, values_alt, dispatch, state, digit_counts, control, lookback, state_bytes,
        total;
  };
  Layout layout(uint64_t max_n) const {
    Layout l{};
    l.keys_alt = 0;
    l.values_alt = align_up(max_n * spec_.key_words * 4, 256);
    l.dispatch = l.values_alt + align_up(max_n * spec_.value_words * 4, 256);
    l.state = l.dispatch + align_up(dispatch_commands * dispatch_command_bytes, 16);
    l.digit_counts = l.state;
    l.control = l.digit_counts + max_passes * radix * 4;
    l.lookback = align_up(l.control + control_words * 4, 256);
    l.total = l.lookback + uint64_t(lookback_slots(max_n)) * radix * lookback_entry_bytes;
    l.state_bytes = l.total - l.state;
    return l;
  }

  // Zeroes the state block (onesweep_clear.comp; with a GPU-side count it also writes the
  // histogram's command), then the barrier the histogram needs.
  void record_clear(Recorder& rec, const SortTargets& t, const Layout& l,
                    uint32_t histogram_groups) const {
    const bool indirect = t.count_address != 0;
    const uint32_t state_words = uint32_t(l.state_bytes / 4);
    const uint32_t clear_groups = groups_for(state_words, clear_workgroup, max_clear_groups);
    rec.dispatch(
        Kernel::onesweep_clear, spec_constants(WorkgroupSpec{clear_workgroup}), clear_groups,
        OnesweepClearPush{t.scratch + l.state, t.count_address,
                          t.scratch + l.dispatch + dispatch_histogram * dispatch_command_bytes, t.n,
                          state_words, clear_groups, histogram_groups, histogram_keys_per_round,
                          ctx_.info.max_workgroup_count_x});
    // With a GPU-side count the clear wrote the histogram's command: it must reach the indirect
    // read (a barrier the NVIDIA driver waits longer at, so only then).
    if (indirect)
      rec.indirect_barrier();
    else
      rec.compute_barrier();
  }

  uint64_t scratch_bytes(uint64_t max_n) const override {
    // A sort of the CUDA pass is planned: its kernels load while the caller uploads.
    if (cuda_) start_loading_cuda_kernels(ctx_);
    return layout(max_n).total;
  }
  uint64_t max_elements() const override {
    return max_onesweep_elements;
  }
  uint64_t fallback_count_offset(uint64_t max_n) const override {
    return layout(max_n).control + control_fallbacks * 4;
  }
  uint64_t plan_offset(uint64_t max_n) const override {
    return layout(max_n).control + control_plan * 4;
  }
  uint64_t dispatch_offset(uint64_t max_n) const override {
    return layout(max_n).dispatch;
  }
  uint32_t tile_keys() const override {
    return tile();
  }
  std::string kernel_path(uint64_t) const override {
    return pass_kernels();
  }
  std::string pass_kernels() const override {
    if (!cuda_) return "spirv";
    return std::string("cuda ") + cuda_->variant +
           (cuda_histogram_
                ? std::string(cuda_histogram_->copies > 1 ? " +histogram c2" : " +histogram")
                : "") +
           (cuda_prefetch_tiles_ != 0 ? " +prefetch " + std::to_string(cuda_prefetch_tiles_) : "") +
           (cuda_tiles_by_id_ != 0 ? " +by id" : "");
  }
  // Records a barrier unless the test switch drop_barriers names it.
  void step_barrier(Recorder& rec, uint32_t which, bool indirect) const {
    if ((options_.drop_barriers >> which) & 1u) return;
    if (indirect)
      rec.indirect_barrier();
    else
      rec.compute_barrier();
  }

  void record(Recorder& rec, const SortTargets& t) const override {
    record_around(rec, t, nullptr);
  }

  void record_around(Recorder& rec, const SortTargets& t,
                     const std::function<void(const OnesweepStages&)>& between) const override {
    if (cuda_ && !cuda_kernels_loaded(ctx_))
      throw Error("the CUDA kernels (kernels=cuda) cannot run on " + ctx_.info.name + ": " +
                  ctx_.cuda_unavailable_why());
    if (t.n <= 1 && t.count_address == 0) return;
    const Layout l = layout(t.n);
    const bool indirect = t.count_address != 0;
    const uint32_t pass_count = passes();
    const VkDeviceAddress counts = t.scratch + l.digit_counts, control = t.scratch + l.control,
                          lookback = t.scratch + l.lookback;
    const VkDeviceAddress keys_alt = t.scratch + l.keys_alt;
    const VkDeviceAddress values_alt = spec_.value_words ? t.scratch + l.values_alt : 0;
    // The specialization constants every step starts with: the workgroup size and the key's
    // (constants.h).
    auto key_spec = [&](uint32_t workgroup) {
      return KeySpec{.workgroup = workgroup,
                     .key_words = spec_.key_words,
                     .key_kind = spec_.key_kind,
                     .descending = spec_.descending,
                     .value_words = spec_.value_words};
    };
    // Where the plan writes the dispatches of the passes and the copy-back, and with a GPU-side
    // count the clear the histogram's.
    const VkDeviceAddress dispatch = t.scratch + l.dispatch;
    // A step sized on the GPU by its command (dispatch_*).
    auto launch_planned = [&](Kernel kernel, const auto& specialization, uint32_t command,
                              const auto& push) {
      rec.dispatch_indirect(kernel, spec_constants(specialization), t.scratch_buffer,
                            t.scratch_offset + l.dispatch + command * dispatch_command_bytes, push);
    };
    // Element indices of 2^31 and more are addressed in 64-bit arithmetic, which costs, so only
    // pipelines for such n do it (WIDE_INDICES in src/primitives/glsl/common.glsl).
    const uint32_t wide_indices = options_.wide_indices || t.n > (uint64_t(1) << 31) ? 1u : 0u;
    const uint32_t histogram_groups = histogram_groups_for(t.n);
    const uint32_t copy_groups = groups_for(t.n, copy_workgroup, max_copy_groups);
    const uint32_t max_groups_x = ctx_.info.max_workgroup_count_x;

    record_clear(rec, t, l, histogram_groups);

    const OnesweepHistogramSpec histogram_spec{.key = key_spec(histogram_workgroup),
                                               .keys_per_thread = histogram_keys_per_thread,
                                               .wide_indices = wide_indices};
    const uint32_t persistent_groups_per_pass = persistent_groups(t.n);
    const OnesweepHistogramPush histogram_push{
        t.keys, t.count_address,  counts,          control,       dispatch,
        t.n,    histogram_groups, spec_.begin_bit, spec_.end_bit, pass_count,
        tile(), copy_groups,      copy_workgroup,  max_groups_x,  persistent_groups_per_pass};
    if (cuda_histogram_)
      record_cuda_histogram(rec, t, l, copy_groups, persistent_groups_per_pass);
    else if (indirect)
      launch_planned(Kernel::onesweep_histogram, histogram_spec, dispatch_histogram,
                     histogram_push);
    else
      rec.dispatch(Kernel::onesweep_histogram, spec_constants(histogram_spec), histogram_groups,
                   histogram_push);
    // The plan (made by the histogram's last workgroup) wrote every later step's command.
    step_barrier(rec, 0, true);
    if (histogram_only()) return;

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
                                     .wide_indices = wide_indices,
                                     .claim_by_id = claim_by_id(t.n),
                                     .persistent = persistent_groups_per_pass ? 1u : 0u,
                                     .prefetch_next = prefetch_next()};
    const uint64_t pass_tiles = tiles(t.n);
    if (between && cuda_)
      throw Error("onesweep: a sort built on Onesweep's steps needs its SPIR-V pass");
    if (between)
      between(OnesweepStages{keys_alt, values_alt, counts, control, lookback, dispatch, pass_spec,
                             pass_tiles, lookback_slots(t.n) - 1, pass_count});
    for (uint32_t pass = 0; pass < pass_count; ++pass) {
      const uint32_t bit = spec_.begin_bit + pass * digit_bits;
      if (cuda_) {
        record_cuda_pass(rec, t, l, pass, bit, pass_tiles);
        step_barrier(rec, 1 + pass, false);
        continue;
      }
      // A skipped pass runs no workgroup.
      launch_planned(pass_kernel(), pass_spec, dispatch_pass + pass,
                     OnesweepPassPush{t.keys, keys_alt, t.values,
                                      clock_profile() ? clock_profile() : values_alt,
                                      t.count_address, counts + pass * radix * 4, control, lookback,
                                      t.n, pass, bit, std::min(digit_bits, spec_.end_bit - bit),
                                      uint32_t(1 + pass * pass_tiles), lookback_slots(t.n) - 1});
      step_barrier(rec, 1 + pass, false);
    }

    const OnesweepCopyBackSpec copy_spec{.key = key_spec(copy_workgroup),
                                         .wide_indices = wide_indices};
    // No workgroup where an even number of passes ran.
    launch_planned(Kernel::onesweep_copy_back, copy_spec, dispatch_copy_back,
                   OnesweepCopyBackPush{keys_alt, t.keys, values_alt, t.values, t.count_address,
                                        control, t.n, copy_groups});
    step_barrier(rec, 1 + max_passes, false);
  }

 private:
  // The histogram and plan as one CUDA launch (onesweep_pass.cu, HistogramAndPlan): the grid of
  // the CUDA laboratory (max_n's rounds, at most 8 blocks per SM); it writes what
  // onesweep_histogram.comp's plan does.
  void record_cuda_histogram(Recorder& rec, const SortTargets& t, const Layout& l,
                             uint32_t copy_groups, uint32_t pass_group_cap) const {
    const cuda::CudaHistogramShape& shape = *cuda_histogram_;
    const uint32_t grid =
        groups_for(t.n, uint64_t(shape.threads) * shape.vectors * (4 / shape.key_words),
                   shape.blocks_per_sm * std::max<uint32_t>(ctx_.info.compute_units, 16));
    const cuda::OnesweepHistogramParams params{
        .keys = reinterpret_cast<const void*>(t.keys),
        .count = reinterpret_cast<const uint32_t*>(t.count_address),
        .n = t.n,
        .digit_counts = reinterpret_cast<uint32_t*>(t.scratch + l.digit_counts),
        .control = reinterpret_cast<uint32_t*>(t.scratch + l.control),
        .dispatch = reinterpret_cast<uint32_t*>(t.scratch + l.dispatch),
        .begin_bit = spec_.begin_bit,
        .end_bit = spec_.end_bit,
        .pass_count = passes(),
        .key_kind = spec_.key_kind,
        .descending = spec_.descending ? 1u : 0u,
        .copy_group_count = copy_groups,
        .copy_keys_per_round = copy_workgroup,
        .max_groups_x = ctx_.info.max_workgroup_count_x,
        .tile = tile(),
        .pass_group_cap = pass_group_cap};
    rec.cuda_launch(ctx_.nvx.functions.at(cuda::cuda_histogram_function(
                        uint32_t(&shape - cuda::kCudaHistogramShapes))),
                    grid, shape.threads, {&params});
  }

  // One pass as a CUDA launch (onesweep_pass.cu): the grid for max_n's tiles, since a launch
  // cannot be indirect; blocks beyond the count's tiles, and every block of a skipped pass, return
  // at once. The kernel reads the plan word, the offsets, the counter and the table that the SPIR-V
  // pass would.
  void record_cuda_pass(Recorder& rec, const SortTargets& t, const Layout& l, uint32_t pass,
                        uint32_t bit, uint64_t pass_tiles) const {
    const cuda::OnesweepPassParams params{
        .keys_a = reinterpret_cast<void*>(t.keys),
        .keys_b = reinterpret_cast<void*>(t.scratch + l.keys_alt),
        .values_a = reinterpret_cast<void*>(t.values),
        .values_b = reinterpret_cast<void*>(spec_.value_words ? t.scratch + l.values_alt : 0),
        .count = reinterpret_cast<const uint32_t*>(t.count_address),
        .digit_offsets =
            reinterpret_cast<const uint32_t*>(t.scratch + l.digit_counts + pass * radix * 4),
        .control = reinterpret_cast<uint32_t*>(t.scratch + l.control),
        .lookback = reinterpret_cast<unsigned long long*>(t.scratch + l.lookback),
        .n = t.n,
        .pass = pass,
        .bit = bit,
        .digit_bits = std::min(digit_bits, spec_.end_bit - bit),
        .first_tag = uint32_t(1 + pass * pass_tiles),
        .slot_mask = lookback_slots(t.n) - 1,
        .key_kind = spec_.key_kind,
        .descending = spec_.descending ? 1u : 0u,
        .spin_limit = options_.spin_limit,
        .refusal_period = options_.publish_refusal_period,
        .claim_by_id = cuda_tiles_by_id_,
        .prefetch_tiles = cuda_prefetch_tiles_};
    rec.cuda_launch(ctx_.nvx.functions.at(cuda_function_), uint32_t(pass_tiles), cuda_->threads,
                    {&params});
  }

  Context::Impl& ctx_;
  SortSpec spec_;
  OnesweepOptions options_;
  const OnesweepTuning& tuning_;
  const OnesweepKeyTuning& keys_;
  uint32_t workgroup_ = 0;
  uint32_t keys_per_thread_ = 0;
  const cuda::CudaPassShape* cuda_ = nullptr;  // the CUDA pass, or null: the SPIR-V pass
  uint32_t cuda_function_ = 0;                 // its function in ctx_.nvx.functions
  // The histogram and plan as a CUDA kernel too (its row of cuda::kCudaHistogramShapes), or null.
  const cuda::CudaHistogramShape* cuda_histogram_ = nullptr;
  uint32_t cuda_prefetch_tiles_ = 0;  // prefetch ahead by this many tiles (0: off)
  uint32_t cuda_tiles_by_id_ = 0;     // 1: each block sorts the tile its id names
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

std::unique_ptr<OnesweepSort> make_onesweep(Context::Impl& ctx, const SortSpec& spec,
                                            const OnesweepOptions& options) {
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
    cuda_from_n = tuning_for(ctx.info)
                      .onesweep.cuda_from_n[cuda::cuda_key_class(spec.key_words, spec.value_words)];
    if (requested == KernelPath::cuda || cuda_from_n <= 1) return cuda_sort;
  }
  OnesweepOptions spirv;
  spirv.kernels = KernelPath::spirv;
  auto large = make_onesweep(ctx, spec, spirv);
  const OnesweepKeyTuning& keys =
      onesweep_keys(tuning_for(ctx.info).onesweep, spec.key_words, spec.value_words);
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
