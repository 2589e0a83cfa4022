// The steps every Onesweep sort records (onesweep_steps.hpp).
#include "algorithms/onesweep/onesweep_steps.hpp"

namespace gpusort {

namespace {

constexpr uint32_t dispatch_command_bytes = sizeof(VkDispatchIndirectCommand);
constexpr uint32_t histogram_workgroup = 256;
constexpr uint32_t histogram_keys_per_thread = 8;
constexpr uint32_t histogram_keys_per_round = histogram_workgroup * histogram_keys_per_thread;
constexpr uint32_t histogram_keys_per_group = histogram_keys_per_round * 4;
constexpr uint32_t max_histogram_groups = 2048;
constexpr uint32_t clear_workgroup = 256;
constexpr uint32_t max_clear_groups = 1024;
constexpr uint32_t max_copy_groups = 4096;
static_assert(dispatch_command_bytes == 12);  // launch_planned's stride

uint32_t groups_for(uint64_t items, uint64_t per_group, uint32_t cap) {
  return uint32_t(std::clamp<uint64_t>((items + per_group - 1) / per_group, 1, cap));
}

}  // namespace

OnesweepSteps::OnesweepSteps(Context::Impl& ctx, const SortSpec& spec,
                             const OnesweepOptions& options)
    : ctx_(ctx), spec_(spec), options_(options), tuning_(onesweep_tuning(ctx.info)) {
  if (options_.lookback_window == 0) options_.lookback_window = tuning_.lookback_window;
}

uint64_t OnesweepSteps::scratch_bytes(uint64_t max_n) const {
  planned();
  return layout(max_n).total;
}
uint64_t OnesweepSteps::max_elements() const {
  return max_onesweep_elements;
}
uint64_t OnesweepSteps::fallback_count_offset(uint64_t max_n) const {
  return layout(max_n).control + ONESWEEP_CONTROL_FALLBACKS * 4;
}
uint64_t OnesweepSteps::plan_offset(uint64_t max_n) const {
  return layout(max_n).control + ONESWEEP_CONTROL_PLAN * 4;
}
uint64_t OnesweepSteps::dispatch_offset(uint64_t max_n) const {
  return layout(max_n).dispatch;
}

KeySpec OnesweepSteps::key_spec(uint32_t workgroup) const {
  return KeySpec{.workgroup = workgroup,
                 .key_words = spec_.key_words,
                 .key_kind = spec_.key_kind,
                 .descending = spec_.descending,
                 .value_words = spec_.value_words};
}

void OnesweepSteps::step_barrier(Recorder& rec, uint32_t which, bool indirect) const {
  if ((options_.drop_barriers >> which) & 1u) return;
  if (indirect)
    rec.indirect_barrier();
  else
    rec.compute_barrier();
}

bool OnesweepSteps::histogram_only() const {
#if GPUSORT_PROFILING
  return options_.profiling.histogram_only;
#else
  return false;
#endif
}

// The histogram's grid: four rounds of keys per workgroup, or, where that leaves compute units
// without a workgroup (small n), fewer rounds, so that each unit gets histogram_groups_per_unit
// (the options' where set, else the table's).
uint32_t OnesweepSteps::histogram_groups_for(uint64_t n) const {
  const uint32_t groups = groups_for(n, histogram_keys_per_group, max_histogram_groups);
  const uint32_t per_unit = options_.histogram_groups_per_unit >= 0
                                ? uint32_t(options_.histogram_groups_per_unit)
                                : tuning_.histogram_groups_per_unit;
  const uint32_t spread = per_unit * std::max<uint32_t>(ctx_.info.compute_units, 1);
  if (groups >= spread) return groups;
  return std::min(spread, groups_for(n, histogram_keys_per_round, max_histogram_groups));
}

OnesweepSteps::Steps OnesweepSteps::steps(const SortTargets& t) const {
  Steps s{};
  s.layout = layout(t.n);
  s.keys_alt = t.scratch + s.layout.keys_alt;
  s.values_alt = spec_.value_words ? t.scratch + s.layout.values_alt : 0;
  s.digit_counts = t.scratch + s.layout.digit_counts;
  s.control = t.scratch + s.layout.control;
  s.lookback = t.scratch + s.layout.lookback;
  s.dispatch = t.scratch + s.layout.dispatch;
  s.indirect = t.count_address != 0;
  // Element indices of 2^31 and more are addressed in 64-bit arithmetic, which costs, so only
  // pipelines for such n do it (WIDE_INDICES in src/primitives/glsl/common.glsl).
  s.wide_indices = options_.wide_indices || t.n > (uint64_t(1) << 31) ? 1u : 0u;
  s.pass_count = onesweep_passes(spec_);
  s.histogram_groups = histogram_groups_for(t.n);
  s.copy_groups = groups_for(t.n, copy_workgroup, max_copy_groups);
  return s;
}

// Zeroes the state block (onesweep_clear.comp; with a GPU-side count it also writes the
// histogram's command), then the barrier the histogram needs.
void OnesweepSteps::record_clear(Recorder& rec, const SortTargets& t, const Steps& s) const {
  const uint32_t state_words = uint32_t(s.layout.state_bytes / 4);
  const uint32_t clear_groups = groups_for(state_words, clear_workgroup, max_clear_groups);
  rec.dispatch(Kernel::onesweep_clear, spec_constants(WorkgroupSpec{clear_workgroup}),
               clear_groups,
               OnesweepClearPush{t.scratch + s.layout.state, t.count_address,
                                 s.dispatch + ONESWEEP_DISPATCH_HISTOGRAM * dispatch_command_bytes,
                                 t.n, state_words, clear_groups, s.histogram_groups,
                                 histogram_keys_per_round, ctx_.info.max_workgroup_count_x});
  // With a GPU-side count the clear wrote the histogram's command: it must reach the indirect
  // read (a barrier the NVIDIA driver waits longer at, so only then).
  if (s.indirect)
    rec.indirect_barrier();
  else
    rec.compute_barrier();
}

void OnesweepSteps::record_histogram(Recorder& rec, const SortTargets& t, const Steps& s) const {
  const OnesweepHistogramSpec spec{.key = key_spec(histogram_workgroup),
                                   .keys_per_thread = histogram_keys_per_thread,
                                   .wide_indices = s.wide_indices};
  const OnesweepHistogramPush push{t.keys,           t.count_address, s.digit_counts,
                                   s.control,        s.dispatch,      t.n,
                                   s.histogram_groups, spec_.begin_bit, spec_.end_bit,
                                   s.pass_count,     tile(),          s.copy_groups,
                                   copy_workgroup,   ctx_.info.max_workgroup_count_x,
                                   pass_group_cap(t.n)};
  if (s.indirect)
    launch_planned(rec, t, s, Kernel::onesweep_histogram, spec, ONESWEEP_DISPATCH_HISTOGRAM, push);
  else
    rec.dispatch(Kernel::onesweep_histogram, spec_constants(spec), s.histogram_groups, push);
}

// No workgroup where an even number of passes ran (the plan wrote its command).
void OnesweepSteps::record_copy_back(Recorder& rec, const SortTargets& t, const Steps& s) const {
  const OnesweepCopyBackSpec spec{.key = key_spec(copy_workgroup),
                                  .wide_indices = s.wide_indices};
  launch_planned(rec, t, s, Kernel::onesweep_copy_back, spec, ONESWEEP_DISPATCH_COPY_BACK,
                 OnesweepCopyBackPush{s.keys_alt, t.keys, s.values_alt, t.values, t.count_address,
                                      s.control, t.n, s.copy_groups});
  step_barrier(rec, 1 + max_passes, false);
}

void OnesweepSteps::record_around(
    Recorder& rec, const SortTargets& t,
    const std::function<void(const OnesweepStages&)>& between) const {
  check_runnable();
  if (t.n <= 1 && t.count_address == 0) return;
  const Steps s = steps(t);
  record_clear(rec, t, s);
  record_histogram(rec, t, s);
  // The plan (made by the histogram's last workgroup) wrote every later step's command.
  step_barrier(rec, 0, true);
  if (histogram_only()) return;
  record_passes(rec, t, s, between);
  record_copy_back(rec, t, s);
}

}  // namespace gpusort
