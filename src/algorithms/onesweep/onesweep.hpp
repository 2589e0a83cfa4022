// Onesweep's tuning knobs, exposed for tests that force rare paths
// (src/algorithms/onesweep/onesweep.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "algorithms/onesweep/constants.h"  // OnesweepPassSpec
#include "algorithms/onesweep/push.h"       // OnesweepPassPush, for a sort that dispatches the pass
#include "algorithms/onesweep/state.h"
#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

struct OnesweepOptions {
  uint32_t lookback_slots = 1024;       // circular look-back table length in tiles (rounded down
                                        // to a power of two)
  uint32_t spin_limit = 64;             // look-back rounds on an unpublished predecessor before
                                        // counting its keys itself (the decoupled fallback)
  uint32_t publish_refusal_period = 0;  // testing: partitions p % period == period - 1 never
                                        // publish their counts, so successors must fall back
  uint32_t lookback_window = 0;         // predecessors read at once per look-back round (0: the
                                        // tuning table's)
  uint32_t workgroup = 0;               // tuning experiments: tile shape (0: the tuning table's)
  uint32_t keys_per_thread = 0;
  // Tuning experiments and tests: each of the following overrides one value of the device's
  // tuning table (tuning.hpp in this folder, OnesweepTuning); -1 keeps the table's.
  int32_t guess_tile = -1;  // request the keys of the workgroup id's tile before the claim
                            // returns: 0 off, 1 on
  int32_t counters_in_exchange = -1;  // per-subgroup counters in the exchange array: 0 off, 1 on
  int32_t claim_by_id = -1;           // workgroup i sorts tile i instead of claiming one from the
                                      // pass's counter: 0 off, 1 on
  int32_t full_tile_copy = -1;        // a bounds-check-free copy of the tile code for full tiles:
                                      // 0 off, 1 on
  int32_t persistent_groups = -1;     // at most this many workgroups per pass, each sorting tile
                                      // after tile: 0 one per tile
  int32_t prefetch_next = -1;         // persistent workgroups request the next tile's keys after
                                      // the look-back: 0 off, 1 on
  int32_t histogram_groups_per_unit = -1;  // small n: the histogram's grid spread to this many
                                           // workgroups per compute unit
  int32_t cuda_prefetch_tiles = -1;  // the CUDA pass: prefetch ahead by this many tiles (0 off;
                                     // -1: GPUSORT_CUDA_PREFETCH, else the tuning table's)
  bool wide_indices = false;         // testing: 64-bit element addressing at every n (else only
                                     // beyond 2^31 elements, where it is needed)
  // Which kernels run the passes (KernelPath; automatic: the sort's SortSpec::kernels, else
  // GPUSORT_KERNELS, else the device's tuning): src/algorithms/onesweep/cuda/cuda_pass.hpp. On the
  // CUDA path the tile is the CUDA kernel's and its look-back reads 16 predecessors a round (as
  // compiled); lookback_slots, spin_limit, publish_refusal_period and claim_by_id apply, the
  // SPIR-V pass's switches (lookback_window, workgroup, keys_per_thread, guess_tile,
  // counters_in_exchange, full_tile_copy, persistent_groups, prefetch_next, wide_indices) do not.
  KernelPath kernels = KernelPath::automatic;
  // Testing the ordering of the steps (tests fail without their barrier): each bit set leaves out
  // one barrier: bit 0 the one after the histogram (the plan before pass 0), bit 1 + p the one
  // after pass p (before the next pass or the copy-back), bit 1 + max_passes the closing one
  // (after the copy-back: before the caller's next command). 0: every barrier.
  uint32_t drop_barriers = 0;
#if GPUSORT_PROFILING
  // Development profiling only: these exist in the gpusort_profiling library that dev/'s timing
  // tools link (dev/CMakeLists.txt), never in the product library.
  struct Profiling {
    bool histogram_only = false;  // record only the clear and histogram steps (the histogram's
                                  // last workgroup makes the plan)
    uint32_t profile_omit = 0;    // (wrong results) steps the pass leaves out: PROFILE_OMIT_*
                                  // of onesweep_pass.comp
    // dev/onesweep/onesweep_clock.cpp, keys alone: the pass's clock variant, embedded with
    // GPUSORT_ONESWEEP_VARIANTS, writes its per-tile records to this address.
    VkDeviceAddress clock_profile = 0;
  } profiling;
#endif
};

// Where one recorded Onesweep sort keeps its state, for a sort built on its steps
// (src/algorithms/partition_sort/partition_sort.cpp). Layout of the words:
// src/algorithms/onesweep/onesweep_common.glsl.
struct OnesweepStages {
  VkDeviceAddress keys_alt = 0, values_alt = 0;  // the scratch copies (values_alt 0 without values)
  VkDeviceAddress digit_offsets = 0;  // max_passes x 256 u32: every pass's exclusive offsets
  VkDeviceAddress control = 0, lookback = 0;
  // The passes' and the copy-back's indirect commands (DISPATCH_* in onesweep_common.glsl): a sort
  // built on the steps may zero them to switch Onesweep's passes off.
  VkDeviceAddress dispatch = 0;
  OnesweepPassSpec pass_spec{};  // onesweep_pass's specialization constants
  uint64_t tiles = 0;            // onesweep_pass's workgroups
  uint32_t lookback_slot_mask = 0;
  uint32_t pass_count = 0;
};

class OnesweepSort : public SortAlgorithm {
 public:
  // Records the sort with `between` recorded after the histogram step, whose last workgroup
  // made the plan (histograms turned into exclusive offsets, plan words written), and its
  // barrier, and before the passes; the recording that `between` adds must end with a compute
  // barrier.
  virtual void record_around(Recorder& rec, const SortTargets& targets,
                             const std::function<void(const OnesweepStages&)>& between) const = 0;
  // Where in scratch the u32 counting look-back fallbacks of the last sort lies.
  virtual uint64_t fallback_count_offset(uint64_t max_n) const = 0;
  // Where in scratch the last sort's plan lies: one u32 per possible pass (max_passes), bit 0 set
  // where that pass ran (clear where its digit was the same for every key, so it was skipped),
  // then one u32 that is 1 where the result was copied back from the scratch keys.
  virtual uint64_t plan_offset(uint64_t max_n) const = 0;
  // Where in scratch the indirect commands lie (VkDispatchIndirectCommand each): the histogram's,
  // one per possible pass (max_passes), then the copy-back's.
  virtual uint64_t dispatch_offset(uint64_t max_n) const = 0;
  // Keys per tile, i.e. per onesweep_pass workgroup (for tests of counts around a tile).
  virtual uint32_t tile_keys() const = 0;
  // The kernels that run the passes: "cuda <variant>" or "spirv".
  virtual std::string pass_kernels() const = 0;
  static constexpr uint32_t max_passes = ONESWEEP_MAX_PASSES;
  // The control word (u32 index) holding the partition sort's chosen pass + 1, 0 for Onesweep's.
  static constexpr uint32_t control_partition_digit = ONESWEEP_CONTROL_PARTITION_DIGIT;
};

std::unique_ptr<OnesweepSort> make_onesweep(Context::Impl& ctx, const SortSpec& spec,
                                            const OnesweepOptions& options);
// Onesweep as Algorithm::onesweep and automatic use it: the tile shape by n from the device's
// tuning (src/tuning).
std::unique_ptr<SortAlgorithm> make_onesweep(Context::Impl& ctx, const SortSpec& spec);

}  // namespace gpusort
