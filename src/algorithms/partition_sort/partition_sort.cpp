// Partition sort: for 2^17-2^23 keys, where an LSD sort's four to eight full passes
// cost more in dispatches, barriers and look-back than in memory traffic. One MSD partition pass,
// then every bucket sorted on its own:
//   Onesweep's clear and histogram steps (src/algorithms/onesweep/onesweep.cpp; the histogram's last
//                      workgroup makes Onesweep's plan)
//   partition_plan     chooses the highest digit that is not the same for every key; when its
//                      largest bucket holds at most max_bucket keys: partition (its buckets become
//                      the segments, Onesweep's passes are switched off), else Onesweep
//   onesweep_pass      (PARTITION_PASS) one stable scatter by that digit, caller's buffers ->
//                      scratch, with Onesweep's decoupled look-back
//   segmented sort     every bucket sorted by the whole bit range (the digits above the chosen one
//                      are equal in a bucket, the chosen one too), scratch -> caller's buffers
//                      (SegmentedTargets::keys_out / values_out)
//   Onesweep's passes and copy-back: where the plan took Onesweep, the whole sort; else they
//                      return at once
// Every choice is made on the GPU, so one recording serves any input and the indirect count;
// skewed input (all keys equal, a bucket holding 99 %) costs Onesweep plus the three early-exit
// dispatches of the path not taken. Stable: the scatter and the segmented sort both are.
// Scratch: Onesweep's, then 257 bucket offsets and the segment count, then the segmented sort's.
#include "algorithms/partition_sort/partition_sort.hpp"

#include "algorithms/onesweep/onesweep.hpp"
#include "algorithms/partition_sort/push.h"
#include "algorithms/segmented_sort/segmented_sort.hpp"
#include "algorithms/partition_sort/tuning.hpp"

namespace gpusort {

namespace {

constexpr uint32_t radix = 256;

// The largest bucket the segmented sort takes faster than Onesweep's remaining passes would, per
// device family: PartitionTuning (tuning.cpp). Bucket sizes of uniform keys: n / 256 (2^18: 1 Ki,
// 2^20: 4 Ki, 2^22: 16 Ki, whose largest bucket is ~16.9 Ki).
uint32_t tuned_max_bucket(const Context::Impl& ctx) {
  return partition_tuning(ctx.info).max_bucket;
}

class PartitionSort final : public SortAlgorithm {
 public:
  PartitionSort(Context::Impl& ctx, const SortSpec& spec, uint32_t max_bucket)
      : spec_(spec), max_bucket_(max_bucket ? max_bucket : tuned_max_bucket(ctx)) {
    // Its steps run between Onesweep's (record_around): the SPIR-V pass.
    onesweep_ = make_onesweep(ctx, spec, OnesweepOptions{.kernels = KernelPath::spirv});
    // The buckets' inner sort is Onesweep, named (not automatic) so that automatic may later
    // pick this algorithm without constructing itself again.
    segmented_ = make_segmented_sort(ctx, SegmentedSpec{spec, 1, true}, [&ctx](const SortSpec& s) {
      return std::unique_ptr<SortAlgorithm>(make_onesweep(ctx, s));
    });
  }

  struct Layout {
    uint64_t segment_offsets, segment_count, segmented, total;
  };
  Layout layout(uint64_t max_n) const {
    Layout l{};
    l.segment_offsets = align_up(onesweep_->scratch_bytes(max_n), 256);
    l.segment_count = l.segment_offsets + (radix + 1) * 4;
    l.segmented = align_up(l.segment_count + 4, 256);
    l.total = l.segmented + segmented_->scratch_bytes(max_n, radix);
    return l;
  }
  uint64_t scratch_bytes(uint64_t max_n) const override { return layout(max_n).total; }

  void record(Recorder& rec, const SortTargets& t) const override {
    if (t.n <= 1 && t.count_address == 0) return;
    const Layout l = layout(t.n);
    const VkDeviceAddress segment_offsets = t.scratch + l.segment_offsets;
    const VkDeviceAddress segment_count = t.scratch + l.segment_count;
    onesweep_->record_around(rec, t, [&](const OnesweepStages& s) {
      rec.dispatch(Kernel::partition_plan,
                   spec_constants(KeySpec{.workgroup = radix,
                                          .key_words = spec_.key_words,
                                          .key_kind = spec_.key_kind,
                                          .descending = spec_.descending,
                                          .value_words = spec_.value_words}),
                   1,
                   PartitionPlanPush{s.digit_offsets, s.control, t.count_address, segment_offsets,
                                     segment_count, s.dispatch, uint32_t(t.n), s.pass_count,
                                     spec_.begin_bit, spec_.end_bit, max_bucket_});
      // Where it partitions, the plan zeroed Onesweep's pass and copy-back commands.
      rec.indirect_barrier();
      // onesweep_pass reads its pass and digit from the control words (the partition pass).
      OnesweepPassSpec pass_spec = s.pass_spec;
      pass_spec.partition_pass = 1;
      // Tags after every tag Onesweep's own passes would use; only one of the two ever runs.
      const uint32_t first_tag = uint32_t(1 + s.pass_count * s.tiles);
      rec.dispatch(Kernel::onesweep_pass, spec_constants(pass_spec), s.tiles,
                   OnesweepPassPush{t.keys, s.keys_alt, t.values, s.values_alt, t.count_address,
                                    s.digit_offsets, s.control, s.lookback, t.n, 0, 0, 0, first_tag,
                                    s.lookback_slot_mask});
      rec.compute_barrier();
      SegmentedTargets seg;
      seg.keys = s.keys_alt;
      seg.values = s.values_alt;
      seg.keys_out = t.keys;
      seg.values_out = t.values;
      seg.offsets = segment_offsets;
      seg.scratch = t.scratch + l.segmented;
      seg.scratch_buffer = t.scratch_buffer;
      seg.scratch_offset = t.scratch_offset + l.segmented;
      seg.segment_count_address = segment_count;
      seg.n = t.n;
      seg.segments = radix;
      segmented_->record(rec, seg);
      if (!rec.ends_with_barrier()) rec.compute_barrier();
    });
  }

 private:
  SortSpec spec_;
  uint32_t max_bucket_;
  std::unique_ptr<OnesweepSort> onesweep_;
  std::unique_ptr<SegmentedSort> segmented_;
};

}  // namespace

std::unique_ptr<SortAlgorithm> make_partition_sort(Context::Impl& ctx, const SortSpec& spec,
                                                   uint32_t max_bucket) {
  return std::make_unique<PartitionSort>(ctx, spec, max_bucket);
}

std::unique_ptr<SortAlgorithm> make_partition_sort(Context::Impl& ctx, const SortSpec& spec) {
  return make_partition_sort(ctx, spec, 0);
}

}  // namespace gpusort
