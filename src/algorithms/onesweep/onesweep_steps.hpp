// The steps every Onesweep sort records, whichever kernels run its passes: the clear, the
// histogram and plan, the passes, the copy-back (onesweep.cpp's top comment), over one scratch
// layout (layout.hpp). The passes are the launcher's: the SPIR-V onesweep_pass (onesweep.cpp) or
// the CUDA pass through VK_NVX_binary_import (cuda/nvx_sort.cpp).
#pragma once

#include "algorithms/onesweep/layout.hpp"
#include "algorithms/onesweep/onesweep.hpp"
#include "algorithms/onesweep/tuning.hpp"

namespace gpusort {

class OnesweepSteps : public OnesweepSort {
 public:
  OnesweepSteps(Context::Impl& ctx, const SortSpec& spec, const OnesweepOptions& options);

  uint64_t scratch_bytes(uint64_t max_n) const override;
  uint64_t max_elements() const override;
  uint64_t fallback_count_offset(uint64_t max_n) const override;
  uint64_t plan_offset(uint64_t max_n) const override;
  uint64_t dispatch_offset(uint64_t max_n) const override;
  uint32_t tile_keys() const override { return tile(); }
  std::string kernel_path(uint64_t) const override { return pass_kernels(); }
  void record(Recorder& rec, const SortTargets& targets) const override {
    record_around(rec, targets, nullptr);
  }
  // The clear, the histogram, its barrier, `between`, the passes and the copy-back.
  void record_around(Recorder& rec, const SortTargets& targets,
                     const std::function<void(const OnesweepStages&)>& between) const override;

 protected:
  // What one recording works on: the layout for its n and the addresses in its scratch.
  struct Steps {
    OnesweepLayout layout;
    VkDeviceAddress keys_alt, values_alt, digit_counts, control, lookback, dispatch;
    bool indirect;              // a GPU-side count
    uint32_t wide_indices;      // 64-bit element addressing (n beyond 2^31, or the option)
    uint32_t pass_count;
    uint32_t histogram_groups;  // the SPIR-V histogram's grid
    uint32_t copy_groups;       // the copy-back's grid at most (the plan writes its command)
  };

  // The copy-back's workgroup (keys per round), which the plan sizes its command by.
  static constexpr uint32_t copy_workgroup = 256;

  // Keys per tile of the passes.
  virtual uint32_t tile() const = 0;
  // Called when a sort is planned (scratch_bytes) and before it is recorded.
  virtual void planned() const {}
  virtual void check_runnable() const {}
  // The histogram and plan; the SPIR-V onesweep_histogram unless the launcher has its own.
  virtual void record_histogram(Recorder& rec, const SortTargets& t, const Steps& s) const;
  // The passes, each followed by its step_barrier(rec, 1 + pass, ...); `between` (may be empty)
  // is the launcher's to call before them, or to refuse.
  virtual void record_passes(Recorder& rec, const SortTargets& t, const Steps& s,
                             const std::function<void(const OnesweepStages&)>& between) const = 0;
  // At most this many workgroups per pass (0: one per tile), written into the pass commands.
  virtual uint32_t pass_group_cap(uint64_t) const { return 0; }

  OnesweepLayout layout(uint64_t max_n) const {
    return onesweep_layout(spec_, max_n, tile(), options_.lookback_slots);
  }
  // The specialization constants every step starts with: the workgroup size and the key's.
  KeySpec key_spec(uint32_t workgroup) const;
  // A step sized on the GPU by its command (ONESWEEP_DISPATCH_*).
  template <class Spec, class Push>
  void launch_planned(Recorder& rec, const SortTargets& t, const Steps& s, Kernel kernel,
                      const Spec& specialization, uint32_t command, const Push& push) const {
    rec.dispatch_indirect(kernel, spec_constants(specialization), t.scratch_buffer,
                          t.scratch_offset + s.layout.dispatch + command * 12, push);
  }
  // Records a barrier unless the test switch drop_barriers names it.
  void step_barrier(Recorder& rec, uint32_t which, bool indirect) const;
  // The profiling build's switch (OnesweepOptions::profiling): record only up to the histogram.
  bool histogram_only() const;

  Context::Impl& ctx_;
  SortSpec spec_;
  OnesweepOptions options_;
  const OnesweepTuning& tuning_;

 private:
  Steps steps(const SortTargets& t) const;
  uint32_t histogram_groups_for(uint64_t n) const;
  void record_clear(Recorder& rec, const SortTargets& t, const Steps& s) const;
  void record_copy_back(Recorder& rec, const SortTargets& t, const Steps& s) const;
};

}  // namespace gpusort
