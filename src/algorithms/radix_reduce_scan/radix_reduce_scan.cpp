// Classic LSD radix sort (reduce-then-scan), 8-bit digits, one pass per digit:
//   radix_count   each of G workgroups histograms the digit over its contiguous range
//   scan          exclusive scan of the G x 256 counts, digit-major: (digit, group) -> offset
//   radix_scatter each workgroup re-reads its range and writes keys (and values) stably to their
//                 digit's offset plus their rank, ping-ponging between the caller's buffers and
//                 scratch. G is bounded, so scratch beyond the key/value copies is O(G).
// The first pass maps keys to radix order on read and the last maps them back on write; an odd
// pass count ends with one copy back into the caller's buffers.
#include "algorithms/radix_reduce_scan/radix_reduce_scan.hpp"

#include "algorithms/radix_reduce_scan/constants.h"
#include "algorithms/radix_reduce_scan/push.h"
#include "algorithms/sort_algorithm.hpp"
#include "primitives/constants.h"
#include "primitives/push.h"
#include "primitives/scan.hpp"

namespace gpusort {

namespace {

constexpr uint32_t radix = 256;
constexpr uint32_t digit_bits = 8;
constexpr uint64_t min_keys_per_group = 4096;
constexpr uint32_t max_groups = 1024;
constexpr uint32_t copy_workgroup = 256;

class RadixReduceScan final : public SortAlgorithm {
 public:
  RadixReduceScan(Context::Impl& ctx, const SortSpec& spec) : ctx_(ctx), spec_(spec) {
    const auto& info = ctx.info;
    // Shared memory holds one 256-bin row per subgroup; halve the workgroup until it fits.
    workgroup_ = 256;
    while (workgroup_ > 64 &&
           (workgroup_ / info.min_subgroup_size + 1) * radix * 4 > info.shared_memory_bytes / 2)
      workgroup_ /= 2;
  }

  uint32_t passes() const {
    return (spec_.end_bit - spec_.begin_bit + digit_bits - 1) / digit_bits;
  }

  uint32_t group_count(uint64_t max_n) const {
    uint64_t g = (max_n + min_keys_per_group - 1) / min_keys_per_group;
    return uint32_t(std::clamp<uint64_t>(g, 1, max_groups));
  }

  struct Layout {
    uint64_t keys_alt, values_alt, digit_counts, scan_scratch, total;
  };
  Layout layout(uint64_t max_n) const {
    Layout l{};
    uint64_t g = group_count(max_n);
    l.keys_alt = 0;
    l.values_alt = align_up(max_n * spec_.key_words * 4, 256);
    l.digit_counts = l.values_alt + align_up(max_n * spec_.value_words * 4, 256);
    l.scan_scratch = l.digit_counts + align_up(g * radix * 4, 256);
    l.total = l.scan_scratch + align_up(scan_scratch_bytes(g * radix, {}), 256);
    return l;
  }

  uint64_t scratch_bytes(uint64_t max_n) const override { return layout(max_n).total; }

  void record(Recorder& rec, const SortTargets& t) const override {
    if (t.n <= 1 && t.count_address == 0) return;
    const Layout l = layout(t.n);
    const uint32_t groups = group_count(t.n);
    const std::vector<uint32_t> specialization =
        spec_constants(RadixSpec{.key = {.workgroup = workgroup_,
                                         .key_words = spec_.key_words,
                                         .key_kind = spec_.key_kind,
                                         .descending = uint32_t(spec_.descending),
                                         .value_words = spec_.value_words},
                                 .min_subgroup_size = ctx_.info.min_subgroup_size});
    VkDeviceAddress keys[2] = {t.keys, t.scratch + l.keys_alt};
    VkDeviceAddress values[2] = {t.values, t.scratch + l.values_alt};
    const VkDeviceAddress counts = t.scratch + l.digit_counts;
    const uint32_t pass_count = passes();
    for (uint32_t pass = 0; pass < pass_count; ++pass) {
      uint32_t bit = spec_.begin_bit + pass * digit_bits;
      uint32_t bits = std::min(digit_bits, spec_.end_bit - bit);
      uint32_t first = pass == 0, last = pass + 1 == pass_count;
      VkDeviceAddress in = keys[pass % 2], out = keys[(pass + 1) % 2];
      rec.dispatch(
          Kernel::radix_count, specialization, groups,
          RadixCountPush{in, t.count_address, counts, uint32_t(t.n), groups, bit, bits, first});
      rec.compute_barrier();
      record_scan(rec, counts, counts, uint64_t(groups) * radix, {}, t.scratch + l.scan_scratch);
      rec.compute_barrier();
      rec.dispatch(
          Kernel::radix_scatter, specialization, groups,
          RadixScatterPush{in, out, values[pass % 2], values[(pass + 1) % 2], t.count_address,
                           counts, uint32_t(t.n), groups, bit, bits, first, last});
      rec.compute_barrier();
    }
    if (pass_count % 2 == 1) record_copy_back(rec, t, keys[1], values[1]);
  }

  void record_copy_back(Recorder& rec, const SortTargets& t, VkDeviceAddress keys,
                        VkDeviceAddress values) const {
    uint32_t groups =
        uint32_t(std::min<uint64_t>((t.n + copy_workgroup - 1) / copy_workgroup, 4096));
    rec.dispatch(Kernel::copy_elements,
                 spec_constants(CopyElementsSpec{copy_workgroup, spec_.key_words}), groups,
                 CopyElementsPush{keys, t.keys, t.count_address, uint32_t(t.n), groups});
    if (spec_.value_words)
      rec.dispatch(Kernel::copy_elements,
                   spec_constants(CopyElementsSpec{copy_workgroup, spec_.value_words}), groups,
                   CopyElementsPush{values, t.values, t.count_address, uint32_t(t.n), groups});
    rec.compute_barrier();
  }

 private:
  Context::Impl& ctx_;
  SortSpec spec_;
  uint32_t workgroup_;
};

}  // namespace

std::unique_ptr<SortAlgorithm> make_radix_reduce_scan(Context::Impl& ctx, const SortSpec& spec) {
  return std::make_unique<RadixReduceScan>(ctx, spec);
}

}  // namespace gpusort
