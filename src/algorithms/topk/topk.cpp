// Top-k by radix select (docs/design/topk.md):
//   topk_init       the state block (count, min(k, n)) and the histograms cleared
//   per digit, from the top of the compared bits down, 11 bits at a time:
//     topk_histogram  the select of the digits before (the digit holding the k-th key joins the
//                     prefix; the candidates below it are all in the result: topk_select.glsl),
//                     then the digit's histogram over the candidates (keys whose higher digits are
//                     the prefix selected so far). Pass 1 lists the first digit's candidates when
//                     they fit the list, and the later passes read only those
//   topk_count      the last select (the k-th key), then per tile the keys below it and those
//                   equal to it (from the list, added to pass 1's per-tile counts, where listed)
//   scan            their exclusive scan (u64: both counts at once)
//   topk_write      those below, in input order, then the first keys equal to the k-th (by
//                   position) after them, with their positions
//   sort            the keys below the k-th (a GPU-side count) with their positions, stably; the
//                   equal ones already follow them in position order
//   topk_gather     the values, by position
// Per segment (record_segments): topk_segment_sizes and a scan place each segment's results;
// topk_segment selects and compacts each segment in one workgroup, and for k up to the
// workgroup's width also sorts them; else the segmented sort sorts each segment's results;
// topk_gather.
#include "algorithms/topk/topk.hpp"

#include "algorithms/topk/constants.h"
#include "algorithms/topk/push.h"
#include "primitives/scan.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

namespace gpusort {

namespace {

constexpr uint32_t workgroup = 256;
constexpr uint32_t items = 8;
constexpr uint32_t tile = workgroup * items;
constexpr uint32_t select_workgroup = 256;  // topk_init
static_assert(TOPK_BINS % workgroup == 0);  // topk_select.glsl: TOPK_BINS / workgroup bins each
static_assert(items <= 16);  // topk_write keeps an invocation's flags in 16-bit halves
constexpr uint32_t gather_workgroup = 256;
constexpr uint32_t max_gather_groups = 4096;
constexpr uint64_t max_segment_groups = uint64_t(1) << 20;  // topk_segment: grid-stride beyond
constexpr uint64_t long_segment = uint64_t(1) << 16;
constexpr uint32_t long_segment_workgroup = 1024;  // divides TOPK_BINS (topk_segment's select)
static_assert(TOPK_BINS % long_segment_workgroup == 0);
// topk_scan.glsl: groups of 32 invocations, at most 32 groups.
static_assert(workgroup % 32 == 0 && long_segment_workgroup % 32 == 0 &&
              long_segment_workgroup <= 32 * 32);

// topk_segment's knobs, read once from the environment (for sweeping them on a device; unset:
// the defaults):
//   GPUSORT_TOPK_SEGMENT_SORT=K   the largest k that topk_segment sorts itself (ranking each
//                                 result among the others in shared memory) instead of the
//                                 segmented sort after it; also bounded by the workgroup's width
//                                 and what the select's histogram memory holds (0: the segmented
//                                 sort always);
//   GPUSORT_TOPK_SEGMENT_READS=R  keys an invocation loads at once in a read of a whole segment,
//                                 1 to 16 (default 4 in 256-wide workgroups, 8 in 1024-wide ones);
//   GPUSORT_TOPK_SEGMENT_BOUND=0  no bound from the invocations' least keys before the select (1,
//                                 the default: where k is at most a quarter of the workgroup).
struct SegmentKnobs {
  uint64_t sort_limit = ~uint64_t(0);
  uint32_t reads = 0;  // 0: the default
  uint32_t bound = 1;
};
const SegmentKnobs& segment_knobs() {
  static const SegmentKnobs knobs = [] {
    auto count = [](const char* name, uint64_t unset, uint64_t low, uint64_t high) {
      const char* env = std::getenv(name);
      if (!env || !*env) return unset;
      bool digits = std::strlen(env) <= 20;
      for (const char* c = env; *c; ++c) digits = digits && *c >= '0' && *c <= '9';
      uint64_t v = 0;
      try {
        if (digits) v = std::stoull(env);
      } catch (const std::exception&) {
        digits = false;  // past 2^64 - 1
      }
      if (!digits || v < low || v > high)
        throw Error(std::string(name) + ": not a count in [" + std::to_string(low) + ", " +
                    std::to_string(high) + "]: " + env);
      return v;
    };
    SegmentKnobs k;
    k.sort_limit = count("GPUSORT_TOPK_SEGMENT_SORT", ~uint64_t(0), 0, ~uint64_t(0));
    k.reads = uint32_t(count("GPUSORT_TOPK_SEGMENT_READS", 0, 1, 16));
    k.bound = uint32_t(count("GPUSORT_TOPK_SEGMENT_BOUND", 1, 0, 1));
    return k;
  }();
  return knobs;
}

class RadixSelectTopK final : public TopK {
 public:
  RadixSelectTopK(Context::Impl& ctx, const SortSpec& spec, MakeSort make_sort,
                  uint32_t offset_words, MakeSegmentedSort make_segmented_sort)
      : ctx_(ctx), spec_(spec), offset_words_(offset_words) {
    SortSpec survivors = spec;
    survivors.value_words = 1;  // the positions
    sort_ = make_sort(survivors);
    if (offset_words && make_segmented_sort) {
      SegmentedSpec per_segment;
      per_segment.sort = survivors;
      per_segment.offset_words = 1;  // the results' offsets, u32
      segmented_sort_ = make_segmented_sort(per_segment);
    }
  }

  // The select's passes: the compared bits in digits of at most TOPK_MAX_DIGIT_BITS (the kernels
  // split them evenly: topk_common.glsl's topk_digit).
  uint32_t passes() const {
    return (spec_.end_bit - spec_.begin_bit + TOPK_MAX_DIGIT_BITS - 1) / TOPK_MAX_DIGIT_BITS;
  }

  // The candidate list's capacity: the first digit's bucket is listed (and the later passes read
  // only it) when it holds at most this many keys; spread keys put about n / 2048 there.
  static uint64_t list_capacity(uint64_t max_n) { return max_n / 8 + 1024; }

  struct Layout {
    uint64_t state, tile_counts, tile_offsets, scan_scratch, candidates, positions, sort_scratch,
        total;
  };
  Layout layout(uint64_t max_n, uint64_t k) const {
    const uint64_t tiles = std::max<uint64_t>((max_n + tile - 1) / tile, 1);
    Layout l{};
    l.state = 0;
    l.tile_counts =
        align_up((TOPK_STATE_WORDS + uint64_t(TOPK_MAX_PASSES) * TOPK_BINS) * 4, 256);
    l.tile_offsets = l.tile_counts + align_up(tiles * 8, 256);
    l.scan_scratch = l.tile_offsets + align_up(tiles * 8, 256);
    l.candidates = l.scan_scratch + align_up(scan_scratch_bytes(tiles, {.u64 = true}), 256);
    l.positions = l.candidates + align_up(list_capacity(max_n) * 4, 256);
    l.sort_scratch = l.positions + align_up(std::max<uint64_t>(k, 1) * 4, 256);
    l.total = l.sort_scratch + align_up(sort_->scratch_bytes(std::max<uint64_t>(k, 1)), 256);
    return l;
  }

  // The histogram and count passes' grid: enough workgroups to fill the device several times over,
  // few enough that their flushes (one global atomic per nonzero bin each) and their selects
  // (each reads the histograms before it) stay cheap.
  uint32_t histogram_workgroups() const {
    return std::max<uint32_t>(ctx_.info.compute_units, 32) * 8;
  }

  // topk_segment's shared-memory copy of a segment, or list of positions (8 bytes an entry): what
  // the device's shared memory holds beside the histogram, the scan and a little more, as a power
  // of two (1: none).
  uint32_t segment_cache_keys(uint32_t workgroup_size) const {
    const int64_t left = int64_t(ctx_.info.shared_memory_bytes) - TOPK_BINS * 4 -
                         int64_t(workgroup_size) * 4 - 512;
    uint32_t keys = 1;
    while (int64_t(keys) * 2 * 8 <= left && keys < (1u << 14)) keys *= 2;
    return keys;
  }

  TopKKeySpec key_constants() const {
    return TopKKeySpec{.key = {.workgroup = workgroup,
                               .key_words = spec_.key_words,
                               .key_kind = spec_.key_kind,
                               .descending = spec_.descending ? 1u : 0u,
                               .value_words = 0,
                               .begin_bit = spec_.begin_bit,
                               .end_bit = spec_.end_bit},
                       .items = items};
  }

  void record_gather(Recorder& rec, VkDeviceAddress values, VkDeviceAddress values_out,
                     VkDeviceAddress positions, VkDeviceAddress count, uint64_t k) const {
    const uint32_t groups = uint32_t(
        std::min<uint64_t>((k + gather_workgroup - 1) / gather_workgroup, max_gather_groups));
    rec.dispatch(Kernel::topk_gather,
                 spec_constants(TopKGatherSpec{gather_workgroup, spec_.value_words}), groups,
                 TopKGatherPush{values, values_out, positions, count, uint32_t(k), groups});
    rec.compute_barrier();
  }

  struct SegmentsLayout {
    uint64_t segment_count, sizes, out_offsets, scan_scratch, positions, sort_scratch, total;
  };
  SegmentsLayout segments_layout(uint64_t segments, uint64_t results) const {
    SegmentsLayout l{};
    l.segment_count = 0;
    l.sizes = 256;
    l.out_offsets = l.sizes + align_up((segments + 1) * 4, 256);
    l.scan_scratch = l.out_offsets + align_up((segments + 1) * 4, 256);
    l.positions = l.scan_scratch + align_up(scan_scratch_bytes(segments + 1, {}), 256);
    l.sort_scratch = l.positions + align_up(std::max<uint64_t>(results, 1) * 4, 256);
    l.total = l.sort_scratch +
              align_up(segmented_sort_ ? segmented_sort_->scratch_bytes(std::max<uint64_t>(results, 1),
                                                                        std::max<uint64_t>(segments, 1))
                                       : 0,
                       256);
    return l;
  }

  uint64_t segments_scratch_bytes(uint64_t n, uint64_t segments, uint64_t results) const override {
    (void)n;
    return segments_layout(segments, results).total;
  }

  void record_segments(Recorder& rec, const TopKSegmentsTargets& t) const override {
    if (t.n == 0 || t.k == 0 || t.segments == 0 || t.results == 0) return;
    if (!segmented_sort_) throw Error("top-k: made without the per-segment form");
    const SegmentsLayout l = segments_layout(t.segments, t.results);
    const VkDeviceAddress sizes = t.scratch + l.sizes, out_offsets = t.scratch + l.out_offsets;
    const VkDeviceAddress positions = t.positions ? t.positions : t.scratch + l.positions;
    const uint32_t segments = uint32_t(t.segments), k = uint32_t(std::min<uint64_t>(t.k, t.n));
    const uint32_t size_groups = uint32_t(std::min<uint64_t>(
        (t.segments + 1 + gather_workgroup - 1) / gather_workgroup, max_gather_groups));
    rec.dispatch(Kernel::topk_segment_sizes,
                 spec_constants(TopKSegmentSizesSpec{gather_workgroup, offset_words_}), size_groups,
                 TopKSegmentSizesPush{t.offsets, sizes, t.scratch + l.segment_count, segments, k,
                                      size_groups});
    rec.compute_barrier();
    record_scan(rec, sizes, out_offsets, t.segments + 1, {}, t.scratch + l.scan_scratch);
    rec.compute_barrier();
    const uint32_t groups = uint32_t(std::min<uint64_t>(t.segments, max_segment_groups));
    // Long segments (2^16 keys and more on average) are few: wider workgroups read each faster.
    TopKSegmentSpec segment_spec{key_constants(), offset_words_, 1, 0, 4, segment_knobs().bound};
    if (t.n / t.segments >= long_segment && ctx_.info.max_workgroup_size >= long_segment_workgroup) {
      segment_spec.key.key.workgroup = long_segment_workgroup;
      segment_spec.reads = 8;  // few workgroups, one a row: more loads in flight each
    }
    if (segment_knobs().reads) segment_spec.reads = segment_knobs().reads;
    segment_spec.cached_keys = segment_cache_keys(segment_spec.key.key.workgroup);
    // Up to the workgroup's width (one result an invocation) and what the histogram's memory holds
    // (a position and the key's words each), the kernel sorts the results itself.
    const bool sorted = k <= segment_spec.key.key.workgroup &&
                        k <= TOPK_BINS / (spec_.key_words + 1) && k <= segment_knobs().sort_limit;
    segment_spec.sorted = sorted ? 1 : 0;
    rec.dispatch(Kernel::topk_segment, spec_constants(segment_spec), groups,
                 TopKSegmentPush{t.keys, t.offsets, out_offsets, t.keys_out, positions, segments,
                                 k, groups});
    rec.compute_barrier();
    if (sorted) {
      if (spec_.value_words && t.values && t.values_out)
        record_gather(rec, t.values, t.values_out, positions, out_offsets + t.segments * 4,
                      t.results);
      return;
    }
    SegmentedTargets s;
    s.keys = t.keys_out;
    s.values = positions;
    s.offsets = out_offsets;
    s.scratch = t.scratch + l.sort_scratch;
    s.scratch_buffer = t.scratch_buffer;
    s.scratch_offset = t.scratch_offset + l.sort_scratch;
    // The results' count is on the GPU (out_offsets[S]): the sort reads S, then it.
    s.segment_count_address = t.scratch + l.segment_count;
    s.n = t.results;
    s.segments = t.segments;
    segmented_sort_->record(rec, s);
    if (!rec.ends_with_barrier()) rec.compute_barrier();
    if (spec_.value_words && t.values && t.values_out)
      record_gather(rec, t.values, t.values_out, positions, out_offsets + t.segments * 4,
                    t.results);
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
    const uint32_t passes = this->passes();
    const auto key_spec = spec_constants(key_constants());
    auto histogram = [&](size_t pass) { return state + (TOPK_STATE_WORDS + pass * TOPK_BINS) * 4; };

    rec.dispatch(Kernel::topk_init, spec_constants(WorkgroupSpec{select_workgroup}), 1,
                 TopKInitPush{state, t.count_address, uint32_t(t.n), uint32_t(k),
                              passes * TOPK_BINS});
    rec.compute_barrier();
    // Bounded grids: each workgroup first selects the prefix from the histograms before it.
    const uint32_t groups = std::min(tiles, histogram_workgroups());
    const uint32_t capacity = uint32_t(list_capacity(t.n));
    const VkDeviceAddress candidates = t.scratch + l.candidates;
    for (uint32_t p = 0; p < passes; ++p) {
      rec.dispatch(Kernel::topk_histogram, key_spec, groups,
                   TopKHistogramPush{t.keys, state, histogram(p), candidates,
                                     t.scratch + l.tile_counts, groups, p, capacity, tiles});
      rec.compute_barrier();
    }
    rec.dispatch(Kernel::topk_count, key_spec, groups,
                 TopKCountPush{t.keys, state, t.scratch + l.tile_counts, candidates, groups, tiles,
                               capacity});
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

    if (spec_.value_words && t.values && t.values_out)
      record_gather(rec, t.values, t.values_out, positions, state + TOPK_STATE_K * 4, k);
  }

 private:
  Context::Impl& ctx_;
  SortSpec spec_;
  uint32_t offset_words_ = 0;
  std::unique_ptr<SortAlgorithm> sort_;
  std::unique_ptr<SegmentedSort> segmented_sort_;
};

}  // namespace

std::unique_ptr<TopK> make_topk(Context::Impl& ctx, const SortSpec& spec, MakeSort make_sort,
                                uint32_t offset_words, MakeSegmentedSort make_segmented_sort) {
  return std::make_unique<RadixSelectTopK>(ctx, spec, std::move(make_sort), offset_words,
                                           std::move(make_segmented_sort));
}

}  // namespace gpusort
