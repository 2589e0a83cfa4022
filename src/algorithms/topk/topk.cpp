// Top-k by radix select (docs/design/topk.md):
//   topk_init       the state block (count, min(k, n)) and the histograms cleared
//   per digit, from the top of the compared bits down, 11 bits at a time:
//     topk_histogram  the digit's histogram over the candidates (keys whose higher digits are the
//                     prefix selected so far)
//     topk_select     the digit holding the k-th key joins the prefix; the candidates below it
//                     are all in the result
//   topk_count      per tile, the keys below the k-th key and those equal to it
//   scan            their exclusive scan (u64: both counts at once)
//   topk_write      those below, in input order, then the first keys equal to the k-th (by
//                   position) after them, with their positions
//   sort            the keys below the k-th (a GPU-side count) with their positions, stably; the
//                   equal ones already follow them in position order
//   topk_gather     the values, by position
#include "algorithms/topk/topk.hpp"

#include "algorithms/topk/constants.h"
#include "algorithms/topk/push.h"
#include "primitives/scan.hpp"

namespace gpusort {

namespace {

constexpr uint32_t workgroup = 256;
constexpr uint32_t items = 8;
constexpr uint32_t tile = workgroup * items;
constexpr uint32_t select_workgroup = 256;  // topk_select: TOPK_BINS / 256 bins per invocation
static_assert(TOPK_BINS % select_workgroup == 0);
constexpr uint32_t gather_workgroup = 256;
constexpr uint32_t max_gather_groups = 4096;

class RadixSelectTopK final : public TopK {
 public:
  RadixSelectTopK(Context::Impl& ctx, const SortSpec& spec, MakeSort make_sort)
      : ctx_(ctx), spec_(spec) {
    SortSpec survivors = spec;
    survivors.value_words = 1;  // the positions
    sort_ = make_sort(survivors);
  }

  // The digits, from the top of the compared bits down: {bit, bits} each.
  std::vector<std::pair<uint32_t, uint32_t>> digits() const {
    std::vector<std::pair<uint32_t, uint32_t>> d;
    const uint32_t width = spec_.end_bit - spec_.begin_bit;
    const uint32_t passes = (width + TOPK_MAX_DIGIT_BITS - 1) / TOPK_MAX_DIGIT_BITS;
    // Even digits (the passes' widths differ by at most one bit).
    uint32_t top = spec_.end_bit;
    for (uint32_t p = 0; p < passes; ++p) {
      const uint32_t bits = (width - (spec_.end_bit - top) + (passes - p) - 1) / (passes - p);
      d.push_back({top - bits, bits});
      top -= bits;
    }
    return d;
  }

  struct Layout {
    uint64_t state, tile_counts, tile_offsets, scan_scratch, positions, sort_scratch, total;
  };
  Layout layout(uint64_t max_n, uint64_t k) const {
    const uint64_t tiles = std::max<uint64_t>((max_n + tile - 1) / tile, 1);
    Layout l{};
    l.state = 0;
    l.tile_counts =
        align_up((TOPK_STATE_WORDS + uint64_t(TOPK_MAX_PASSES) * TOPK_BINS) * 4, 256);
    l.tile_offsets = l.tile_counts + align_up(tiles * 8, 256);
    l.scan_scratch = l.tile_offsets + align_up(tiles * 8, 256);
    l.positions = l.scan_scratch + align_up(scan_scratch_bytes(tiles, {.u64 = true}), 256);
    l.sort_scratch = l.positions + align_up(std::max<uint64_t>(k, 1) * 4, 256);
    l.total = l.sort_scratch + align_up(sort_->scratch_bytes(std::max<uint64_t>(k, 1)), 256);
    return l;
  }

  uint64_t scratch_bytes(uint64_t max_n, uint64_t k) const override {
    return layout(max_n, std::min(k, max_n)).total;
  }

  void record(Recorder& rec, const TopKTargets& t) const override {
    const uint64_t k = std::min(t.k, t.n);
    if (t.n == 0 || k == 0) return;
    const Layout l = layout(t.n, k);
    const VkDeviceAddress state = t.scratch + l.state;
    const VkDeviceAddress positions = t.positions ? t.positions : t.scratch + l.positions;
    const uint32_t tiles = uint32_t((t.n + tile - 1) / tile);
    const auto d = digits();
    const auto key_spec = spec_constants(TopKKeySpec{
        .key = {.workgroup = workgroup,
                .key_words = spec_.key_words,
                .key_kind = spec_.key_kind,
                .descending = spec_.descending ? 1u : 0u,
                .value_words = 0,
                .begin_bit = spec_.begin_bit,
                .end_bit = spec_.end_bit},
        .items = items});
    auto histogram = [&](size_t pass) { return state + (TOPK_STATE_WORDS + pass * TOPK_BINS) * 4; };

    rec.dispatch(Kernel::topk_init, spec_constants(WorkgroupSpec{select_workgroup}), 1,
                 TopKInitPush{state, t.count_address, uint32_t(t.n), uint32_t(k),
                              uint32_t(d.size() * TOPK_BINS)});
    rec.compute_barrier();
    for (size_t p = 0; p < d.size(); ++p) {
      rec.dispatch(Kernel::topk_histogram, key_spec, tiles,
                   TopKHistogramPush{t.keys, state, histogram(p), tiles, d[p].first, d[p].second});
      rec.compute_barrier();
      rec.dispatch(Kernel::topk_select, spec_constants(WorkgroupSpec{select_workgroup}), 1,
                   TopKSelectPush{state, histogram(p), d[p].first});
      rec.compute_barrier();
    }
    rec.dispatch(Kernel::topk_count, key_spec, tiles,
                 TopKCountPush{t.keys, state, t.scratch + l.tile_counts, tiles});
    rec.compute_barrier();
    record_scan(rec, t.scratch + l.tile_counts, t.scratch + l.tile_offsets, tiles,
                {.u64 = true, .inclusive = false}, t.scratch + l.scan_scratch);
    rec.compute_barrier();
    rec.dispatch(Kernel::topk_write, key_spec, tiles,
                 TopKWritePush{t.keys, state, t.scratch + l.tile_counts,
                               t.scratch + l.tile_offsets, t.keys_out, positions, tiles});
    rec.compute_barrier();

    // The keys below the k-th, with their positions, stably (the count is on the GPU).
    SortTargets s;
    s.keys = t.keys_out;
    s.values = positions;
    s.scratch = t.scratch + l.sort_scratch;
    s.scratch_buffer = t.scratch_buffer;
    s.scratch_offset = t.scratch_offset + l.sort_scratch;
    s.count_address = state + TOPK_STATE_BEFORE * 4;
    s.n = k;
    sort_->record(rec, s);
    if (!rec.ends_with_barrier()) rec.compute_barrier();

    if (spec_.value_words && t.values && t.values_out) {
      const uint32_t groups = uint32_t(
          std::min<uint64_t>((k + gather_workgroup - 1) / gather_workgroup, max_gather_groups));
      rec.dispatch(Kernel::topk_gather,
                   spec_constants(TopKGatherSpec{gather_workgroup, spec_.value_words}), groups,
                   TopKGatherPush{t.values, t.values_out, positions, state, uint32_t(k), groups});
      rec.compute_barrier();
    }
  }

 private:
  Context::Impl& ctx_;
  SortSpec spec_;
  std::unique_ptr<SortAlgorithm> sort_;
};

}  // namespace

std::unique_ptr<TopK> make_topk(Context::Impl& ctx, const SortSpec& spec, MakeSort make_sort) {
  return std::make_unique<RadixSelectTopK>(ctx, spec, std::move(make_sort));
}

}  // namespace gpusort
