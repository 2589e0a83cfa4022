// Segmented sort and argsort. Two paths:
// The fast path (more than one segment): the GPU sizes every segment and deals it to a method
// in one pass over the offsets, nothing read back to the host:
//   segment_plan (clear)  zero the class counters
//   segment_classify      0-1 keys: done (a lone key's index written); 2..max_class_slots keys:
//                         appended to its size class's list (class c: segments of up to
//                         2^(first + c) keys); more: appended to the large list
//   segment_plan          each class's indirect dispatch (the classes dispatch whether or not
//                         a segment is large)
//   segment_large_scan    (a large segment possible) beside segment_plan: each large segment's
//                         compacted position, a scan of their sizes in list order; their total
//                         is the global path's n (0 without one: its steps then do nothing)
//   segment_sort_tile     one indirect dispatch per class: each workgroup sorts a tile of its
//                         class's segments on chip (several small ones packed a workgroup, a
//                         larger one alone), in place: the small-array sort's bitonic network.
//                         The medium classes (2, 4, 8 x the largest tile): each block of a
//                         segment, one workgroup each, sorted to scratch
//   segment_large_compact beside the classes (the large segments are none of theirs): the
//                         large segments' elements to scratch, compacted
//   segment_merge         one indirect dispatch per medium class: each key's place in its
//                         segment from its block and binary searches of the segment's other
//                         blocks (the small-array sort's merge), written there
// When max_n exceeds the largest class (a large segment is possible) the global path below
// follows on the large segments' elements alone, compacted: segment_large_compact stands for
// segment_iota and the copies (the origins are compacted positions, and sort 1 sorts a compacted
// copy of the keys in scratch), segment_ids searches the compacted positions, so a segment's id
// is its entry in the large list (sort 2 compares bit_width(max_n / (largest class + 1)) bits),
// and segment_large_gather stands for segment_gather (each element back to its segment's place,
// with its index). The small and medium segments cost the classes what they would cost without
// a large one beside them.
// The global path: a global stable sort by (segment, key), built from the stable sorts the
// library already has, so that any mix of segments (a million of one key, one of a billion,
// empty ones anywhere) costs O(n):
//   segment_count   (indirect only) n = offsets[S], S read on the GPU
//   segment_iota    origins[i] = i; the keys (segmented) and values are copied to scratch
//   sort 1          the keys, stably, with the origins as their values (the caller's order,
//                   bit range and algorithm): origins now lists the elements by key
//   segment_ids     ids[i] = the segment of origins[i] (binary search over the offsets)
//   sort 2          the ids, stably, by their low bit_width(S - 1) bits (in whole 8-bit
//                   digits), origins as values: an LSD
//                   radix sort's last digit, so every segment ends contiguous and in key order
//   segment_gather  keys[i] = key copy[origins[i]], values[i] = value copy[origins[i]]
// With n from the GPU (indirect, or the large segments' total) segment_count or
// segment_large_scan writes beside n the step kernels' indirect dispatch, sized from n: n = 0
// launches none of their workgroups (and Onesweep, the inner sorts' usual algorithm, sizes its
// own steps from n the same way).
// Without segments (argsort) only segment_iota, sort 1 and the values' gather run: the cost of
// sort_by_key with u32 values plus one write of the indices. With one segment at most the keys are
// sorted in place by sort 1 and no key copy is taken.
#include "algorithms/segmented_sort/segmented_sort.hpp"

#include <algorithm>
#include <bit>

#include "algorithms/segmented_sort/constants.h"
#include "algorithms/segmented_sort/push.h"
#include "algorithms/small_sort/small_sort.hpp"
#include "primitives/constants.h"
#include "primitives/push.h"
#include "algorithms/segmented_sort/tuning.hpp"

namespace gpusort {

namespace {

constexpr uint32_t step_workgroup = 256;
constexpr uint32_t max_step_groups = 4096;
// A slot holding the global path's n when it comes from the GPU: the u32 n, then the step
// kernels' VkDispatchIndirectCommand sized from it (written together by segment_count or
// segment_large_scan).
constexpr uint64_t count_slot_bytes = 256;
constexpr uint64_t step_dispatch_offset = 4;

// segment_bucket: piece table entries per medium segment (256 bucket starts and the end), keys
// per invocation per round, and the workgroup it would like (16 subgroups at most: its counters
// take 1 KiB of shared memory per subgroup).
constexpr uint32_t piece_stride = 257;

// The fast path's size classes, per device family (SegmentedTuning, tuning.cpp): class c sorts
// segments of up to 2^(log2_first_class + c) keys in blocks of that many slots; the classes below
// min_tile slots pack min_tile / slots segments into one workgroup of min_tile / 2^log2_items
// invocations. The largest class is the largest tile the device's workgroup and shared memory hold
// (fast_path_classes); a block's padding costs at most 2x.
// The medium classes: segments of up to 2^log2_max_blocks largest tiles, each tile sorted alone
// then merged (segment_merge searches every other block of the segment for every key, so its
// work per key grows with the blocks).
struct SegmentClassShape {
  uint32_t log2_first_class = 0;
  uint32_t log2_min_tile = 0;
  uint32_t log2_items = 0;
  uint32_t log2_max_blocks = 0;
};
SegmentClassShape segment_class_shape(const Context::Impl& ctx) {
  const SegmentedTuning& t = segmented_tuning(ctx.info);
  return {t.log2_first_class, t.log2_min_tile, t.log2_items, t.log2_max_blocks};
}

// One size class: its block (segment_slots, a power of two) and how segment_sort_tile runs it;
// a medium class (blocks > 1) sorts blocks of tile() = segment_slots / blocks slots.
struct SegmentClass {
  uint32_t segment_slots, workgroup, items, blocks = 1;
  uint32_t tile() const { return workgroup * items; }
};

std::vector<SegmentClass> fast_path_classes(const Context::Impl& ctx, const SortSpec& spec,
                                            const SegmentClassShape& shape) {
  std::vector<SegmentClass> classes;
  const uint32_t max_workgroup = max_comparison_workgroup(ctx);
  const uint32_t min_tile = 1u << shape.log2_min_tile;
  for (uint32_t slots = 1u << shape.log2_first_class;; slots *= 2) {
    const uint32_t items = std::min(1u << shape.log2_items, slots);
    SegmentClass c{slots, std::max(1u, min_tile / items), items};
    if (slots > min_tile) {
      while (slots / c.items > max_workgroup && c.items < 8) c.items *= 2;
      c.workgroup = slots / c.items;
    }
    if (c.workgroup > max_workgroup ||
        small_tile_shared_bytes(spec, c.tile()) > ctx.info.shared_memory_bytes)
      break;
    classes.push_back(c);
  }
  if (classes.empty() || classes.back().segment_slots <= min_tile) return classes;
  const SegmentClass largest = classes.back();
  for (uint32_t blocks = 2; blocks <= 1u << shape.log2_max_blocks; blocks *= 2)
    classes.push_back({largest.segment_slots * blocks, largest.workgroup, largest.items, blocks});
  return classes;
}

// Mirrors class_list_capacity() of src/algorithms/segmented_sort/segment_classes.glsl.
uint64_t class_list_capacity(const std::vector<SegmentClass>& classes, size_t c, uint64_t max_n,
                             uint64_t max_segments) {
  const uint64_t min_size = c == 0 ? 2 : classes[c - 1].segment_slots + 1;
  return std::min(max_segments, max_n / min_size);
}

// segment_sort_tile's kernels by keys per invocation.
struct SegmentTileKernel {
  uint32_t items;
  Kernel kernel;
};
constexpr SegmentTileKernel segment_tile_kernels[] = {{2, Kernel::segment_sort_tile_i2},
                                                      {4, Kernel::segment_sort_tile_i4},
                                                      {8, Kernel::segment_sort_tile_i8}};
Kernel segment_sort_tile_kernel(uint32_t items) {
  for (const SegmentTileKernel& k : segment_tile_kernels)
    if (k.items == items) return k.kernel;
  throw Error("segmented sort: no tile kernel for " + std::to_string(items) +
              " keys per invocation (2, 4 or 8)");
}

uint32_t step_groups(uint64_t n) {
  return uint32_t(
      std::clamp<uint64_t>((n + step_workgroup - 1) / step_workgroup, 1, max_step_groups));
}

class Segmented final : public SegmentedSort {
 public:
  Segmented(Context::Impl& ctx, const SegmentedSpec& spec, MakeSort make_sort,
            const SegmentedOptions& options)
      : ctx_(ctx), spec_(spec), make_sort_(std::move(make_sort)) {
    SortSpec by_key = spec.sort;
    by_key.value_words = 1;  // the origins
    by_key_ = make_sort_(by_key);
    const SegmentedTuning& tuning = segmented_tuning(ctx.info);
    shape_ = segment_class_shape(ctx);
    if (options.log2_min_tile) shape_.log2_min_tile = options.log2_min_tile;
    if (options.log2_items) shape_.log2_items = options.log2_items;
    classes_ = fast_path_classes(ctx, spec.sort, shape_);
    merge_workgroup_ = clamp_workgroup(ctx, tuning.merge_workgroup);
    bucket_workgroup_ =
        std::min(clamp_workgroup(ctx, options.bucket_workgroup ? options.bucket_workgroup
                                                               : tuning.bucket_workgroup),
                 clamp_workgroup(ctx, tuning.bucket_max_subgroups * ctx.info.min_subgroup_size));
    bucket_keys_per_thread_ = options.bucket_keys_per_thread ? options.bucket_keys_per_thread
                                                             : tuning.bucket_keys_per_thread;
  }

  // Whether the fast path runs (more than one segment, and a class fits this device).
  bool fast(uint64_t max_segments) const { return segmented(max_segments) && !classes_.empty(); }
  uint64_t max_class_slots() const { return classes_.empty() ? 0 : classes_.back().segment_slots; }
  // Whether the global path runs: without the fast path, or where a segment may be large.
  bool global(uint64_t max_n, uint64_t max_segments) const {
    return !fast(max_segments) || max_n > max_class_slots();
  }
  // The most large segments (more keys than the largest class) the fast path may list: they are
  // disjoint. 0 without the fast path or where none fits max_n. Mirrors class_list_capacity() of
  // src/algorithms/segmented_sort/segment_classes.glsl for the class above the largest.
  uint64_t large_capacity(uint64_t max_n, uint64_t max_segments) const {
    if (!fast(max_segments)) return 0;
    return std::min(max_segments, max_n / (max_class_slots() + 1));
  }

  uint32_t tile_classes() const {
    return uint32_t(std::count_if(classes_.begin(), classes_.end(),
                                  [](const SegmentClass& c) { return c.blocks == 1; }));
  }
  // Whether a medium segment is possible: max_n exceeds the largest tile class.
  bool medium(uint64_t max_n) const {
    const uint32_t tiles = tile_classes();
    return tiles < classes_.size() && max_n > classes_[tiles - 1].segment_slots;
  }

  // The fast path's scratch, after the global path's: counters (class sizes, the large count,
  // the piece table's slot counter), the classes' VkDispatchIndirectCommands
  // (then the medium classes' merges'), the global path's count slot (segment_large_scan's n
  // and step dispatch), the class lists; the large list (each large segment's first position,
  // size and compacted position); when a medium segment is possible, the sorted blocks (keys in
  // radix order, values, input positions), each element at its own position, and for the
  // bucketed medium path (segment_bucket) the bucketed keys and values, the piece table and the
  // second level's own counters, dispatches and lists (its medium pieces reuse the sorted
  // blocks; the second level has no large list).
  struct LevelLayout {
    uint64_t counters, dispatch, global_count, lists, end;
  };
  struct FastLayout {
    LevelLayout first, second;
    uint64_t large_begins, large_sizes, large_bases;
    uint64_t sorted_keys, sorted_values, sorted_origins, bucket_keys, bucket_values, pieces, total;
  };
  LevelLayout level_layout(uint64_t begin, uint64_t max_n, uint64_t max_segments) const {
    LevelLayout l{};
    l.counters = begin;
    l.dispatch = l.counters + align_up((classes_.size() + 2) * 4, 256);
    l.global_count = l.dispatch + align_up((2 * classes_.size() - tile_classes()) * 12, 256);
    l.lists = l.global_count + count_slot_bytes;
    uint64_t entries = 0;
    for (size_t c = 0; c < classes_.size(); ++c)
      entries += class_list_capacity(classes_, c, max_n, max_segments);
    l.end = l.lists + align_up(entries * 4, 256);
    return l;
  }
  // The counter after the class sizes and the large count (segment_plan, segment_bucket):
  // segment_bucket's next piece table slot.
  uint64_t piece_counter(const LevelLayout& l) const {
    return l.counters + 4 * (classes_.size() + 1);
  }
  // Medium segments at most (the piece table's slots), and the pieces of the second level.
  uint64_t medium_capacity(uint64_t max_n, uint64_t max_segments) const {
    uint64_t slots = 0;
    for (size_t c = tile_classes(); c < classes_.size(); ++c)
      slots += class_list_capacity(classes_, c, max_n, max_segments);
    return slots;
  }
  FastLayout fast_layout(uint64_t max_n, uint64_t max_segments) const {
    if (!fast(max_segments)) return {};
    FastLayout f{};
    f.first = level_layout(0, max_n, max_segments);
    const uint64_t large_list = align_up(large_capacity(max_n, max_segments) * 4, 256);
    f.large_begins = f.first.end;
    f.large_sizes = f.large_begins + large_list;
    f.large_bases = f.large_sizes + large_list;
    f.sorted_keys = f.large_bases + large_list;
    const uint64_t m = medium(max_n) ? max_n : 0;
    f.sorted_values = f.sorted_keys + align_up(m * spec_.sort.key_words * 4, 256);
    f.sorted_origins = f.sorted_values + align_up(m * spec_.sort.value_words * 4, 256);
    f.bucket_keys = f.sorted_origins + align_up(m * 4, 256);
    f.bucket_values = f.bucket_keys + align_up(m * spec_.sort.key_words * 4, 256);
    f.pieces = f.bucket_values + align_up(m * spec_.sort.value_words * 4, 256);
    const uint64_t slots = m ? medium_capacity(max_n, max_segments) : 0;
    f.second = level_layout(f.pieces + align_up((slots * piece_stride + 1) * 4, 256), max_n,
                            slots * piece_stride);
    f.total = m ? f.second.end : f.pieces;
    return f;
  }

  // Whether the ids pass (and sort 2) runs: more than one segment possible.
  bool segmented(uint64_t max_segments) const {
    return spec_.offset_words != 0 && max_segments > 1;
  }
  // Sort 2 compares the ids' bits [0, bit_width(S - 1)) rounded up to whole 8-bit digits (at
  // least one): the radix sorts make a pass per digit either way, and only four bit ranges
  // (pipelines) exist. With the fast path the ids count the large list's entries instead.
  std::unique_ptr<SortAlgorithm> by_segment(uint64_t max_segments) const {
    const uint32_t bits =
        uint32_t(align_up(std::max<uint64_t>(1, std::bit_width(max_segments - 1)), 8));
    return make_sort_(make_sort_spec(KeyType::u32, 4, false, 0, bits));
  }
  // How many segment ids sort 2 tells apart.
  uint64_t sorted_segments(uint64_t max_n, uint64_t max_segments) const {
    return fast(max_segments) ? large_capacity(max_n, max_segments) : max_segments;
  }

  // The global path's scratch. With the fast path the ids' place first holds the compacted keys
  // that sort 1 sorts (sort 1 is done with them before segment_ids writes the ids; they are not
  // read again: the gather reads the key copy), so it is key-sized.
  struct Layout {
    uint64_t origins, ids, key_copy, value_copy, count, inner, total;
  };
  Layout layout(uint64_t max_n, uint64_t max_segments) const {
    const bool seg = segmented(max_segments);
    const uint64_t id_words = fast(max_segments) ? spec_.sort.key_words : 1;
    Layout l{};
    l.origins = 0;
    l.ids = align_up(max_n * 4, 256);
    l.key_copy = l.ids + (seg ? align_up(max_n * id_words * 4, 256) : 0);
    l.value_copy = l.key_copy +
                   (seg && spec_.write_keys ? align_up(max_n * spec_.sort.key_words * 4, 256) : 0);
    l.count = l.value_copy + align_up(max_n * spec_.sort.value_words * 4, 256);
    l.inner = l.count + count_slot_bytes;
    uint64_t inner = by_key_->scratch_bytes(max_n);
    if (seg)
      inner =
          std::max(inner, by_segment(sorted_segments(max_n, max_segments))->scratch_bytes(max_n));
    l.total = l.inner + inner;
    return l;
  }
  // Where the fast path's scratch begins: after the global path's when that runs too.
  uint64_t fast_begin(uint64_t max_n, uint64_t max_segments) const {
    return global(max_n, max_segments) ? align_up(layout(max_n, max_segments).total, 256) : 0;
  }

  // Sort 2 (u32 ids with u32 origins) fits wherever sort 1 (the keys with u32 origins) does.
  uint64_t max_elements() const override { return by_key_->max_elements(); }

  uint64_t scratch_bytes(uint64_t max_n, uint64_t max_segments) const override {
    return fast_begin(max_n, max_segments) + fast_layout(max_n, max_segments).total;
  }

  // The large list in scratch, and where the global path finds its arrays with the fast path.
  // count_slot: the scratch offset of the global path's count slot (the first level's, which
  // segment_large_scan fills with n and the step kernels' dispatch).
  struct LargeTargets {
    VkDeviceAddress begins, sizes, bases, large_count, count;
    uint64_t capacity, count_slot;
    Layout global;
  };

  void record(Recorder& rec, const SegmentedTargets& t) const override {
    const bool indirect = t.segment_count_address != 0;
    if (t.n == 0 && !indirect) return;
    if (!fast(t.segments)) return record_global(rec, t);
    if ((t.keys_out || t.values_out) && !spec_.write_keys)
      throw Error("segmented sort: separate outputs need offsets, several segments and the keys");
    const uint64_t begin = fast_begin(t.n, t.segments);
    const FastLayout f = fast_layout(t.n, t.segments);
    const VkDeviceAddress base = t.scratch + begin;
    Level first{t.keys,
                t.values,
                t.offsets,
                t.indices,
                t.keys_out ? t.keys_out : t.keys,
                t.values_out ? t.values_out : t.values,
                t.segment_count_address,
                spec_.offset_words,
                t.n,
                t.segments,
                base,
                t.scratch_buffer,
                t.scratch_offset + begin,
                f.first,
                f};
    // Medium segments are scattered into buckets (segment_bucket), except with indices
    // (segment_bucket does not carry input positions): then sorted blocks are merged.
    first.bucketed = medium(t.n) && t.indices == 0;
    const uint32_t class_count = uint32_t(classes_.size());
    const uint64_t large_fits = large_capacity(t.n, t.segments);
    const LargeTargets large{
        base + f.large_begins,        base + f.large_sizes,
        base + f.large_bases,         base + f.first.counters + 4 * class_count,
        base + f.first.global_count,  large_fits,
        begin + f.first.global_count, large_fits ? layout(t.n, t.segments) : Layout{}};
    record_level(rec, first, t, large_fits ? &large : nullptr);
    if (first.bucketed) {
      // The second level: the pieces (buckets) of the medium segments, read from the piece
      // table, sorted from the bucketed scratch copy to the outputs. A piece is at most a
      // medium segment: no large list.
      const uint64_t pieces = medium_capacity(t.n, t.segments) * piece_stride;
      Level second{base + f.bucket_keys,
                   spec_.sort.value_words ? base + f.bucket_values : 0,
                   base + f.pieces,
                   0,
                   first.keys_out,
                   first.values_out,
                   0,
                   1,
                   t.n,
                   pieces,
                   base,
                   t.scratch_buffer,
                   t.scratch_offset + begin,
                   f.second,
                   f};
      second.listed_by_bucket = true;
      record_level(rec, second, t);
    }
    if (large.capacity) record_large_sort(rec, t, large);
  }

  // One run of the fast path over a list of segments: the caller's, or the second level's
  // pieces (the piece table: piece_stride entries per medium segment; segment_bucket lists only
  // its own buckets, never the piece that spans two medium segments).
  struct Level {
    VkDeviceAddress keys, values, offsets, indices, keys_out, values_out, segment_count_address;
    uint32_t offset_words;
    uint64_t n, segments;
    VkDeviceAddress base;  // the fast path's scratch (FastLayout's offsets are relative to it)
    VkBuffer buffer;
    VkDeviceSize buffer_offset;  // of base in buffer
    LevelLayout layout;
    FastLayout fast;
    bool bucketed = false;
    // The second level: segment_bucket filled its class lists (its counters were zeroed beside
    // the first level's), so it has no clear or segment_classify of its own.
    bool listed_by_bucket = false;
  };

  // Classify, plan, the classes' sorts (and merges or bucket scatters); ends with a barrier.
  // large (the first level where a segment may be large): the large list, segment_large_scan
  // beside the plan and segment_large_compact beside the classes.
  void record_level(Recorder& rec, const Level& v, const SegmentedTargets& t,
                    const LargeTargets* large = nullptr) const {
    const LevelLayout& l = v.layout;
    const FastLayout& f = v.fast;
    // Lone keys (and values) are copied to separate outputs by segment_classify.
    const VkDeviceAddress copy_keys_to = v.keys_out != v.keys ? v.keys_out : 0;
    const VkDeviceAddress copy_values_to =
        spec_.sort.value_words && v.values_out != v.values ? v.values_out : 0;
    const uint32_t class_count = uint32_t(classes_.size());
    const uint32_t tile_class_count = tile_classes();
    auto plan_spec = [&](uint32_t clear) {
      return spec_constants(SegmentPlanSpec{.workgroup = 64,
                                            .offset_words = v.offset_words,
                                            .log2_first_class_slots = shape_.log2_first_class,
                                            .class_count = class_count,
                                            .log2_min_tile = shape_.log2_min_tile,
                                            .clear = clear,
                                            .tile_classes = tile_class_count,
                                            .merge_workgroup = merge_workgroup_,
                                            .bucketed = uint32_t(v.bucketed)});
    };
    auto plan_push = [&] {
      return SegmentPlanPush{v.base + l.counters, v.base + l.dispatch, uint32_t(v.n),
                             uint32_t(v.segments), ctx_.info.max_workgroup_count_x};
    };
    if (!v.listed_by_bucket) {
      rec.dispatch(Kernel::segment_plan, plan_spec(1), 1, plan_push());
      if (v.bucketed)  // the second level's counters, for segment_bucket
        rec.dispatch(Kernel::segment_plan, plan_spec(1), 1,
                     SegmentPlanPush{v.base + f.second.counters, 0, uint32_t(v.n), 0,
                                     ctx_.info.max_workgroup_count_x});
      rec.compute_barrier();
      const uint32_t classify_groups = step_groups(v.segments);
      rec.dispatch(
          Kernel::segment_classify,
          spec_constants(SegmentClassifySpec{.workgroup = step_workgroup,
                                             .offset_words = v.offset_words,
                                             .log2_first_class_slots = shape_.log2_first_class,
                                             .class_count = class_count,
                                             .key_words = spec_.sort.key_words,
                                             .value_words = spec_.sort.value_words}),
          classify_groups,
          SegmentClassifyPush{v.offsets, v.segment_count_address, v.base + l.counters,
                              v.base + l.lists, v.indices, v.keys, v.values, copy_keys_to,
                              copy_values_to, uint32_t(v.n), uint32_t(v.segments), classify_groups,
                              large ? large->begins : 0, large ? large->sizes : 0,
                              large ? uint32_t(large->capacity) : 0u});
      rec.compute_barrier();
    }
    rec.dispatch(Kernel::segment_plan, plan_spec(0), 1, plan_push());
    if (large)
      rec.dispatch(Kernel::segment_large_scan, spec_constants(WorkgroupSpec{step_workgroup}), 1,
                   SegmentLargeScanPush{large->large_count, large->sizes, large->bases,
                                        large->count, large->count + step_dispatch_offset,
                                        uint32_t(t.n), uint32_t(large->capacity), step_groups(t.n),
                                        step_workgroup, ctx_.info.max_workgroup_count_x});
    rec.indirect_barrier();
    // The classes sort disjoint segments: no barrier between them.
    const uint32_t lanes = uint32_t(std::countr_zero(subgroup_sort_lanes(ctx_)));
    // The medium classes' blocks go to scratch: segment_merge, after a barrier, places them.
    const VkDeviceAddress sorted_keys = v.base + f.sorted_keys,
                          sorted_values = spec_.sort.value_words ? v.base + f.sorted_values : 0,
                          sorted_origins = v.indices ? v.base + f.sorted_origins : 0;
    std::vector<uint64_t> lists;
    uint64_t list = v.base + l.lists;
    for (uint32_t c = 0; c < class_count; ++c) {
      lists.push_back(list);
      const uint64_t capacity = class_list_capacity(classes_, c, v.n, v.segments);
      list += capacity * 4;
      if (capacity == 0) continue;  // no segment of this class fits max_n
      const SegmentClass& k = classes_[c];
      const VkDeviceSize dispatch = v.buffer_offset + l.dispatch + 12 * c;
      if (v.bucketed && k.blocks > 1) {
        record_bucket_scatter(rec, v, c, lists[c], capacity, dispatch);
        continue;
      }
      const SegmentSortTileSpec tile_spec{
          .tile = tile_specialization(spec_.sort, k.workgroup, k.tile()),
          .log2_subgroup_lanes = lanes,
          .log2_segment_slots = uint32_t(std::countr_zero(k.segment_slots / k.blocks)),
          .offset_words = v.offset_words,
          .log2_blocks = uint32_t(std::countr_zero(k.blocks))};
      rec.dispatch_indirect(segment_sort_tile_kernel(k.items), spec_constants(tile_spec), v.buffer,
                            dispatch,
                            SegmentSortTilePush{v.keys, v.values, v.indices, v.offsets, lists[c],
                                                v.base + l.counters + 4 * c, sorted_keys,
                                                sorted_values, sorted_origins, v.keys_out,
                                                v.values_out, uint32_t(v.n), uint32_t(capacity)});
    }
    if (large) record_large_compact(rec, t, *large);
    if (medium(v.n) && !v.bucketed) {
      rec.compute_barrier();
      for (uint32_t c = tile_class_count; c < class_count; ++c) {
        const uint64_t capacity = class_list_capacity(classes_, c, v.n, v.segments);
        if (capacity == 0) continue;
        const SegmentClass& k = classes_[c];
        const SegmentMergeSpec merge_spec{
            .tile = tile_specialization(spec_.sort, merge_workgroup_, k.tile()),
            .log2_segment_slots = uint32_t(std::countr_zero(k.segment_slots)),
            .offset_words = v.offset_words};
        const uint64_t dispatch = l.dispatch + 12 * (class_count + c - tile_class_count);
        rec.dispatch_indirect(
            k.blocks <= 4 ? Kernel::segment_merge_r4 : Kernel::segment_merge_r8,
            spec_constants(merge_spec), v.buffer, v.buffer_offset + dispatch,
            SegmentMergePush{sorted_keys, sorted_values, sorted_origins, v.keys_out, v.values_out,
                             v.indices, v.offsets, lists[c], v.base + l.counters + 4 * c,
                             uint32_t(v.n), uint32_t(capacity)});
      }
    }
    rec.compute_barrier();
  }

  // The global path's step 1 on the large segments: their keys (to sort, and a copy to gather
  // from when the keys are written), values and compacted positions (the origins).
  void record_large_compact(Recorder& rec, const SegmentedTargets& t,
                            const LargeTargets& large) const {
    const Layout& l = large.global;
    const uint32_t groups = step_groups(t.n);
    record_step(rec, t, true, large.count_slot, Kernel::segment_large_compact,
                spec_constants(
                    SegmentLargeSpec{step_workgroup, spec_.sort.key_words, spec_.sort.value_words}),
                SegmentLargeCompactPush{t.keys, t.values, t.scratch + l.ids,
                                        spec_.write_keys ? t.scratch + l.key_copy : 0,
                                        spec_.sort.value_words ? t.scratch + l.value_copy : 0,
                                        t.scratch + l.origins, large.begins, large.bases,
                                        large.count, large.large_count, uint32_t(t.n),
                                        uint32_t(large.capacity), groups});
  }

  // The rest of the global path on the large segments' compacted elements (after a barrier):
  // sort 1, the ids (places in the large list), sort 2, and each element back to its segment.
  void record_large_sort(Recorder& rec, const SegmentedTargets& t,
                         const LargeTargets& large) const {
    const Layout& l = large.global;
    // The compacted keys share the ids' place (Layout).
    const VkDeviceAddress origins = t.scratch + l.origins, sort_keys = t.scratch + l.ids,
                          ids = t.scratch + l.ids;
    const uint32_t n = uint32_t(t.n), groups = step_groups(t.n);
    record_inner(rec, *by_key_, sort_keys, origins, t, l, large.count);
    record_step(rec, t, true, large.count_slot, Kernel::segment_ids,
                spec_constants(SegmentOffsetsSpec{step_workgroup, 1}),
                SegmentIdsPush{origins, ids, large.bases, large.count, large.large_count, n,
                               uint32_t(large.capacity), groups});
    rec.compute_barrier();
    record_inner(rec, *by_segment(large.capacity), ids, origins, t, l, large.count);
    record_step(rec, t, true, large.count_slot, Kernel::segment_large_gather,
                spec_constants(
                    SegmentLargeSpec{step_workgroup, spec_.sort.key_words, spec_.sort.value_words}),
                SegmentLargeGatherPush{spec_.write_keys ? t.scratch + l.key_copy : 0,
                                       t.keys_out ? t.keys_out : t.keys,
                                       spec_.sort.value_words ? t.scratch + l.value_copy : 0,
                                       t.values_out ? t.values_out : t.values, t.indices, origins,
                                       ids, large.begins, large.bases, large.count, n, groups});
    rec.compute_barrier();
  }

  // A step kernel of the global path: the host's grid for max_n, or with n from the GPU
  // (gpu_count; count_slot: the scratch offset of the slot holding it) the part of that grid
  // that finds elements, dispatched indirectly from the command written beside n.
  template <typename Push>
  void record_step(Recorder& rec, const SegmentedTargets& t, bool gpu_count, uint64_t count_slot,
                   Kernel kernel, const std::vector<uint32_t>& specialization,
                   const Push& push) const {
    if (gpu_count)
      rec.dispatch_indirect(kernel, specialization, t.scratch_buffer,
                            t.scratch_offset + count_slot + step_dispatch_offset, push);
    else
      rec.dispatch(kernel, specialization, step_groups(t.n), push);
  }

  // One of the global path's stable sorts: `keys` with the origins as values, count elements.
  void record_inner(Recorder& rec, const SortAlgorithm& sort, VkDeviceAddress keys,
                    VkDeviceAddress origins, const SegmentedTargets& t, const Layout& l,
                    VkDeviceAddress count) const {
    sort.record(rec, SortTargets{keys, origins, t.scratch + l.inner, t.scratch_buffer,
                                 t.scratch_offset + l.inner, count, t.n});
    if (!rec.ends_with_barrier()) rec.compute_barrier();
  }

  // segment_bucket for medium class c: one workgroup per listed segment.
  void record_bucket_scatter(Recorder& rec, const Level& v, uint32_t c, VkDeviceAddress list,
                             uint64_t capacity, VkDeviceSize dispatch) const {
    const FastLayout& f = v.fast;
    rec.dispatch_indirect(
        Kernel::segment_bucket,
        spec_constants(SegmentBucketSpec{
            .key = {.workgroup = bucket_workgroup_,
                    .key_words = spec_.sort.key_words,
                    .key_kind = spec_.sort.key_kind,
                    .descending = uint32_t(spec_.sort.descending),
                    .value_words = spec_.sort.value_words,
                    .begin_bit = spec_.sort.begin_bit,
                    .end_bit = spec_.sort.end_bit},
            .min_subgroup_size = ctx_.info.min_subgroup_size,
            .max_subgroup_size = ctx_.info.max_subgroup_size,
            .keys_per_thread = bucket_keys_per_thread_,
            .log2_segment_slots = uint32_t(std::countr_zero(classes_[c].segment_slots)),
            .offset_words = v.offset_words,
            .log2_first_class_slots = shape_.log2_first_class,
            .class_count = uint32_t(classes_.size())}),
        v.buffer, dispatch,
        SegmentBucketPush{v.keys, v.values, v.base + f.bucket_keys,
                          spec_.sort.value_words ? v.base + f.bucket_values : 0, v.offsets, list,
                          v.base + v.layout.counters + 4 * c, v.base + f.pieces,
                          v.base + piece_counter(v.layout), v.base + f.second.counters,
                          v.base + f.second.lists, v.keys_out,
                          spec_.sort.value_words ? v.values_out : 0, uint32_t(v.n),
                          uint32_t(capacity), uint32_t(medium_capacity(v.n, v.segments)),
                          uint32_t(medium_capacity(v.n, v.segments) * piece_stride)});
  }

  // The global path without the fast path: one segment, argsort, or no class on this device.
  void record_global(Recorder& rec, const SegmentedTargets& t) const {
    const bool seg = segmented(t.segments);
    const Layout l = layout(t.n, t.segments);
    const VkDeviceAddress origins = t.indices ? t.indices : t.scratch + l.origins;
    const VkDeviceAddress ids = t.scratch + l.ids, key_copy = t.scratch + l.key_copy,
                          value_copy = t.scratch + l.value_copy;
    const bool gpu_count = t.segment_count_address != 0;
    const VkDeviceAddress count = gpu_count ? t.scratch + l.count : 0;
    const bool copy_keys = seg && spec_.write_keys;
    const bool values = spec_.sort.value_words != 0;
    const uint32_t n = uint32_t(t.n), groups = step_groups(t.n);
    if ((t.keys_out || t.values_out) && !(seg && spec_.write_keys))
      throw Error("segmented sort: separate outputs need offsets, several segments and the keys");
    const VkDeviceAddress keys_out = t.keys_out ? t.keys_out : t.keys;
    const VkDeviceAddress values_out = t.values_out ? t.values_out : t.values;

    auto step = [&](Kernel kernel, const std::vector<uint32_t>& specialization, const auto& push) {
      record_step(rec, t, gpu_count, l.count, kernel, specialization, push);
    };

    if (gpu_count) {
      rec.dispatch(Kernel::segment_count,
                   spec_constants(SegmentOffsetsSpec{step_workgroup, spec_.offset_words}), 1,
                   SegmentCountPush{t.offsets, t.segment_count_address, count,
                                    count + step_dispatch_offset, n, uint32_t(t.segments), groups,
                                    step_workgroup, ctx_.info.max_workgroup_count_x});
      rec.indirect_barrier();
    }
    step(Kernel::segment_iota, spec_constants(WorkgroupSpec{step_workgroup}),
         SegmentIotaPush{origins, count, n, groups});
    if (t.n <= 1 && keys_out == t.keys && values_out == t.values) {  // in order, its index 0
      rec.compute_barrier();
      return;
    }
    if (copy_keys)
      step(Kernel::copy_elements,
           spec_constants(CopyElementsSpec{step_workgroup, spec_.sort.key_words}),
           CopyElementsPush{t.keys, key_copy, count, n, groups});
    if (values)
      step(Kernel::copy_elements,
           spec_constants(CopyElementsSpec{step_workgroup, spec_.sort.value_words}),
           CopyElementsPush{t.values, value_copy, count, n, groups});
    rec.compute_barrier();

    record_inner(rec, *by_key_, t.keys, origins, t, l, count);
    if (seg) {
      step(Kernel::segment_ids,
           spec_constants(SegmentOffsetsSpec{step_workgroup, spec_.offset_words}),
           SegmentIdsPush{origins, ids, t.offsets, count, t.segment_count_address, n,
                          uint32_t(t.segments), groups});
      rec.compute_barrier();
      record_inner(rec, *by_segment(t.segments), ids, origins, t, l, count);
    }

    if (copy_keys)
      step(Kernel::segment_gather,
           spec_constants(SegmentGatherSpec{step_workgroup, spec_.sort.key_words}),
           SegmentGatherPush{key_copy, keys_out, origins, count, n, groups});
    if (values)
      step(Kernel::segment_gather,
           spec_constants(SegmentGatherSpec{step_workgroup, spec_.sort.value_words}),
           SegmentGatherPush{value_copy, values_out, origins, count, n, groups});
    if (!rec.ends_with_barrier()) rec.compute_barrier();
  }

 private:
  Context::Impl& ctx_;
  SegmentedSpec spec_;
  MakeSort make_sort_;
  std::unique_ptr<SortAlgorithm> by_key_;
  std::vector<SegmentClass> classes_;
  uint32_t merge_workgroup_;  // segment_merge's; divides every medium class's slots
  uint32_t bucket_workgroup_, bucket_keys_per_thread_;  // segment_bucket's shape
  SegmentClassShape shape_;
};

}  // namespace

SegmentedClassTable segmented_class_table(const Context::Impl& ctx, const SortSpec& spec) {
  SegmentedClassTable table;
  for (const SegmentClass& c : fast_path_classes(ctx, spec, segment_class_shape(ctx))) {
    table.class_slots.push_back(c.segment_slots);
    if (c.blocks == 1) table.largest_tile = c.segment_slots;
  }
  return table;
}

std::unique_ptr<SegmentedSort> make_segmented_sort(Context::Impl& ctx, const SegmentedSpec& spec,
                                                   MakeSort make_sort,
                                                   const SegmentedOptions& options) {
  return std::make_unique<Segmented>(ctx, spec, std::move(make_sort), options);
}

}  // namespace gpusort
