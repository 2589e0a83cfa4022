// Segmented sort and argsort. Two paths:
// The fast path (more than one segment): the GPU sizes every segment and deals it to a method
// in one pass over the offsets, nothing read back to the host:
//   segment_plan (clear)  zero the class counters
//   segment_classify      0-1 keys: done (a lone key's index written); 2..max_class_slots keys:
//                         appended to its size class's list (class c: segments of up to
//                         2^(first + c) keys); more: counted as large
//   segment_plan          each class's indirect dispatch; the global path's n: all of n when a
//                         large segment exists (the classes then dispatch nothing), else 0
//   segment_sort_tile     one indirect dispatch per class: each workgroup sorts a tile of its
//                         class's segments on chip (several small ones packed a workgroup, a
//                         larger one alone), in place: the small-array sort's bitonic network.
//                         The medium classes (2, 4, 8 x the largest tile): each block of a
//                         segment, one workgroup each, sorted to scratch
//   segment_merge         one indirect dispatch per medium class: each key's place in its
//                         segment from its block and binary searches of the segment's other
//                         blocks (the small-array sort's merge), written there
// When max_n exceeds the largest class (a large segment is possible) the global path below
// follows, reading its n from segment_plan: with a large segment present it costs what it costs
// alone (the whole array, every segment: sorting only the large segments' elements would need
// their positions compacted by a scan first), without one its steps see n = 0 and do nothing.
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
// With n from the GPU (indirect, or segment_plan's) segment_count or segment_plan writes beside n
// the step kernels' indirect dispatch, sized from n: n = 0 launches none of their workgroups
// (and Onesweep, the inner sorts' usual algorithm, sizes its own steps from n the same way).
// Without segments (argsort) only segment_iota, sort 1 and the values' gather run: the cost of
// sort_by_key with u32 values plus one write of the indices. With one segment at most the keys are
// sorted in place by sort 1 and no key copy is taken.
#include "algorithms/segmented_sort.hpp"

#include "algorithms/comparison_sorts.hpp"

#include <algorithm>
#include <bit>
#include <optional>

namespace gpusort {

namespace {

constexpr uint32_t step_workgroup = 256;
constexpr uint32_t max_step_groups = 4096;
// A slot holding the global path's n when it comes from the GPU: the u32 n, then the step
// kernels' VkDispatchIndirectCommand sized from it (written together by segment_count or
// segment_plan).
constexpr uint64_t count_slot_bytes = 256;
constexpr uint64_t step_dispatch_offset = 4;

struct IotaPush {
  VkDeviceAddress indices, count_address;
  uint32_t n, group_count;
};
struct CopyPush {
  VkDeviceAddress source, destination, count_address;
  uint32_t n, group_count;
};
struct IdsPush {
  VkDeviceAddress origins, ids, offsets, count_address, segment_count_address;
  uint32_t n, segments, group_count;
};
struct GatherPush {
  VkDeviceAddress source, destination, origins, count_address;
  uint32_t n, group_count;
};
struct CountPush {
  VkDeviceAddress offsets, segment_count_address, count_address, step_dispatch;
  uint32_t max_n, segments, step_group_count, step_workgroup, max_groups_x;
};

struct ClassifyPush {
  VkDeviceAddress offsets, segment_count_address, counters, lists, indices;
  VkDeviceAddress keys, values, keys_out, values_out;
  uint32_t max_n, segments, group_count;
};
struct PlanPush {
  VkDeviceAddress offsets, segment_count_address, counters, dispatch, global_count, step_dispatch;
  uint32_t max_n, segments, max_groups_x, step_group_count, step_workgroup;
};
struct SegmentTilePush {
  VkDeviceAddress keys, values, indices, offsets, list, listed;
  VkDeviceAddress sorted_keys, sorted_values, sorted_origins, keys_out, values_out;
  uint32_t max_n, list_capacity;
};
struct SegmentMergePush {
  VkDeviceAddress sorted_keys, sorted_values, sorted_origins, keys, values, indices, offsets, list,
      listed;
  uint32_t max_n, list_capacity;
};
constexpr uint32_t wanted_merge_workgroup = 256;
struct BucketPush {
  VkDeviceAddress keys, values, bucket_keys, bucket_values, offsets, list, listed, pieces,
      piece_counter;
  uint32_t max_n, list_capacity, piece_capacity;
};
// segment_bucket: piece table entries per medium segment (256 bucket starts and the end), keys
// per invocation per round, and the workgroup it would like (16 subgroups at most: its counters
// take 1 KiB of shared memory per subgroup).
constexpr uint32_t piece_stride = 257;
constexpr uint32_t default_bucket_keys_per_thread = 8;
constexpr uint32_t wanted_bucket_workgroup = 512;

// The fast path's size classes, per device family: class c sorts segments of up to
// 2^(log2_first_class + c) keys in blocks of that many slots; the classes below min_tile slots
// pack min_tile / slots segments into one workgroup of min_tile / 2 invocations. The largest
// class is the largest tile the device's workgroup and shared memory hold (fast_path_classes).
// Not yet measured: one row for every device, chosen so that a block's padding costs at most 2x
// and the smallest segments (2..8 keys) share a workgroup 16 at a time.
// The medium classes: segments of up to 2^log2_max_blocks largest tiles, each tile sorted alone
// then merged (segment_merge searches every other block of the segment for every key, so its
// work per key grows with the blocks).
struct SegmentClassShape {
  uint32_t log2_first_class = 3;
  uint32_t log2_min_tile = 7;
  uint32_t log2_max_blocks = 3;
};
constexpr SegmentClassShape segment_class_shape{};

// One size class: its block (segment_slots, a power of two) and how segment_sort_tile runs it;
// a medium class (blocks > 1) sorts blocks of tile() = segment_slots / blocks slots.
struct SegmentClass {
  uint32_t segment_slots, workgroup, items, blocks = 1;
  uint32_t tile() const { return workgroup * items; }
};

std::vector<SegmentClass> fast_path_classes(const Context::Impl& ctx, const SortSpec& spec,
                                           const SegmentClassShape& shape = segment_class_shape) {
  std::vector<SegmentClass> classes;
  const uint32_t max_workgroup = max_comparison_workgroup(ctx);
  const uint32_t min_tile = 1u << shape.log2_min_tile;
  for (uint32_t slots = 1u << shape.log2_first_class;; slots *= 2) {
    SegmentClass c{slots, min_tile / 2, 2};
    if (slots > min_tile) {
      while (slots / c.items > max_workgroup && c.items < 8) c.items *= 2;
      c.workgroup = slots / c.items;
    }
    if (c.workgroup > max_workgroup || small_tile_shared_bytes(spec, c.tile()) > ctx.info.shared_memory_bytes)
      break;
    classes.push_back(c);
  }
  if (classes.empty() || classes.back().segment_slots <= min_tile) return classes;
  const SegmentClass largest = classes.back();
  for (uint32_t blocks = 2; blocks <= 1u << shape.log2_max_blocks; blocks *= 2)
    classes.push_back({largest.segment_slots * blocks, largest.workgroup, largest.items, blocks});
  return classes;
}

// Mirrors class_list_capacity() of shaders/include/segment_classes.glsl.
uint64_t class_list_capacity(const std::vector<SegmentClass>& classes, size_t c, uint64_t max_n,
                             uint64_t max_segments) {
  const uint64_t min_size = c == 0 ? 2 : classes[c - 1].segment_slots + 1;
  return std::min(max_segments, max_n / min_size);
}

uint32_t step_groups(uint64_t n) {
  return uint32_t(std::clamp<uint64_t>((n + step_workgroup - 1) / step_workgroup, 1,
                                       max_step_groups));
}

class Segmented final : public SegmentedSort {
 public:
  Segmented(Context::Impl& ctx, const SegmentedSpec& spec, Algorithm requested,
            const SegmentedOptions& options)
      : ctx_(ctx), spec_(spec), requested_(requested) {
    if (requested == Algorithm::bitonic)
      throw Error("segmented sort and argsort need a stable sort: bitonic is not stable");
    SortSpec by_key = spec.sort;
    by_key.value_words = 1;  // the origins
    by_key_ = make_sort_algorithm(ctx, by_key, requested);
    if (options.log2_min_tile) shape_.log2_min_tile = options.log2_min_tile;
    classes_ = fast_path_classes(ctx, spec.sort, shape_);
    merge_workgroup_ = clamp_workgroup(ctx, wanted_merge_workgroup);
    bucket_workgroup_ = std::min(
        clamp_workgroup(ctx, options.bucket_workgroup ? options.bucket_workgroup
                                                      : wanted_bucket_workgroup),
        clamp_workgroup(ctx, 16 * ctx.info.min_subgroup_size));
    bucket_keys_per_thread_ = options.bucket_keys_per_thread ? options.bucket_keys_per_thread
                                                             : default_bucket_keys_per_thread;
  }

  // Whether the fast path runs (more than one segment, and a class fits this device).
  bool fast(uint64_t max_segments) const { return segmented(max_segments) && !classes_.empty(); }
  uint64_t max_class_slots() const { return classes_.empty() ? 0 : classes_.back().segment_slots; }
  // Whether the global path runs: without the fast path, or where a segment may be large.
  bool global(uint64_t max_n, uint64_t max_segments) const {
    return !fast(max_segments) || max_n > max_class_slots();
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
  // the piece table's slot counter, the piece count), the classes' VkDispatchIndirectCommands
  // (then the medium classes' merges'), the global path's n, the class lists; when a medium
  // segment is possible, the sorted blocks (keys in radix order, values, input positions), each
  // element at its own position, and for the bucketed medium path (segment_bucket) the bucketed
  // keys and values, the piece table and the second level's own counters, dispatches and lists
  // (its medium pieces reuse the sorted blocks).
  struct LevelLayout {
    uint64_t counters, dispatch, global_count, lists, end;
  };
  struct FastLayout {
    LevelLayout first, second;
    uint64_t sorted_keys, sorted_values, sorted_origins, bucket_keys, bucket_values, pieces, total;
  };
  LevelLayout level_layout(uint64_t begin, uint64_t max_n, uint64_t max_segments) const {
    LevelLayout l{};
    l.counters = begin;
    l.dispatch = l.counters + align_up((classes_.size() + 3) * 4, 256);
    l.global_count = l.dispatch + align_up((2 * classes_.size() - tile_classes()) * 12, 256);
    l.lists = l.global_count + count_slot_bytes;
    uint64_t entries = 0;
    for (size_t c = 0; c < classes_.size(); ++c)
      entries += class_list_capacity(classes_, c, max_n, max_segments);
    l.end = l.lists + align_up(entries * 4, 256);
    return l;
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
    f.sorted_keys = f.first.end;
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
  // Sort 2 compares the ids' bits [0, bit_width(S - 1)) rounded up to whole 8-bit digits: the
  // radix sorts make a pass per digit either way, and only four bit ranges (pipelines) exist.
  std::unique_ptr<SortAlgorithm> by_segment(uint64_t max_segments) const {
    const uint32_t bits = uint32_t(align_up(std::bit_width(max_segments - 1), 8));
    return make_sort_algorithm(ctx_, make_sort_spec(KeyType::u32, 4, false, 0, bits), requested_);
  }

  struct Layout {
    uint64_t origins, ids, key_copy, value_copy, count, inner, total;
  };
  Layout layout(uint64_t max_n, uint64_t max_segments) const {
    const bool seg = segmented(max_segments);
    Layout l{};
    l.origins = 0;
    l.ids = align_up(max_n * 4, 256);
    l.key_copy = l.ids + (seg ? align_up(max_n * 4, 256) : 0);
    l.value_copy =
        l.key_copy + (seg && spec_.write_keys ? align_up(max_n * spec_.sort.key_words * 4, 256) : 0);
    l.count = l.value_copy + align_up(max_n * spec_.sort.value_words * 4, 256);
    l.inner = l.count + count_slot_bytes;
    uint64_t inner = by_key_->scratch_bytes(max_n);
    if (seg) inner = std::max(inner, by_segment(max_segments)->scratch_bytes(max_n));
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

  void record(Recorder& rec, const SegmentedTargets& t) const override {
    const bool indirect = t.segment_count_address != 0;
    if (t.n == 0 && !indirect) return;
    if (!fast(t.segments)) return record_global(rec, t, std::nullopt);
    if ((t.keys_out || t.values_out) && !spec_.write_keys)
      throw Error("segmented sort: separate outputs need offsets, several segments and the keys");
    const uint64_t begin = fast_begin(t.n, t.segments);
    const FastLayout f = fast_layout(t.n, t.segments);
    const VkDeviceAddress base = t.scratch + begin;
    Level first{t.keys, t.values, t.offsets, t.indices,
                t.keys_out ? t.keys_out : t.keys, t.values_out ? t.values_out : t.values,
                t.segment_count_address, spec_.offset_words, 0, t.n, t.segments, base,
                t.scratch_buffer, t.scratch_offset + begin, f.first, f};
    // Medium segments are scattered into buckets (segment_bucket), except with indices
    // (segment_bucket does not carry input positions): then sorted blocks are merged.
    first.bucketed = medium(t.n) && t.indices == 0;
    record_level(rec, first);
    if (first.bucketed) {
      // The second level: the pieces (buckets) of the medium segments, read from the piece
      // table, sorted from the bucketed scratch copy to the outputs. A piece is at most a
      // medium segment: no global path.
      const uint64_t pieces = medium_capacity(t.n, t.segments) * piece_stride;
      Level second{base + f.bucket_keys, spec_.sort.value_words ? base + f.bucket_values : 0,
                   base + f.pieces, 0, first.keys_out, first.values_out,
                   base + f.first.counters + 4 * (classes_.size() + 2), 1, piece_stride, t.n,
                   pieces, base, t.scratch_buffer, t.scratch_offset + begin, f.second, f};
      record_level(rec, second);
    }
    if (global(t.n, t.segments)) record_global(rec, t, begin + f.first.global_count);
  }

  // One run of the fast path over a list of segments: the caller's, or the second level's
  // pieces (every piece_stride-th of which spans two medium segments and is skipped).
  struct Level {
    VkDeviceAddress keys, values, offsets, indices, keys_out, values_out, segment_count_address;
    uint32_t offset_words, piece_stride;
    uint64_t n, segments;
    VkDeviceAddress base;  // the fast path's scratch (FastLayout's offsets are relative to it)
    VkBuffer buffer;
    VkDeviceSize buffer_offset;  // of base in buffer
    LevelLayout layout;
    FastLayout fast;
    bool bucketed = false;
  };

  // Classify, plan, the classes' sorts (and merges or bucket scatters); ends with a barrier.
  void record_level(Recorder& rec, const Level& v) const {
    const LevelLayout& l = v.layout;
    const FastLayout& f = v.fast;
    // Lone keys (and values) are copied to separate outputs by segment_classify.
    const VkDeviceAddress copy_keys_to = v.keys_out != v.keys ? v.keys_out : 0;
    const VkDeviceAddress copy_values_to =
        spec_.sort.value_words && v.values_out != v.values ? v.values_out : 0;
    const uint32_t class_count = uint32_t(classes_.size());
    const uint32_t tile_class_count = tile_classes();
    auto plan_spec = [&](uint32_t clear) {
      return std::vector<uint32_t>{64,
                                   v.offset_words,
                                   shape_.log2_first_class,
                                   class_count,
                                   shape_.log2_min_tile,
                                   clear,
                                   tile_class_count,
                                   merge_workgroup_,
                                   uint32_t(v.bucketed)};
    };
    auto plan_push = [&] {
      return PlanPush{v.offsets,
                      v.segment_count_address,
                      v.base + l.counters,
                      v.base + l.dispatch,
                      v.base + l.global_count,
                      v.base + l.global_count + step_dispatch_offset,
                      uint32_t(v.n),
                      uint32_t(v.segments),
                      ctx_.info.max_workgroup_count_x,
                      step_groups(v.n),
                      step_workgroup};
    };
    rec.dispatch("segment_plan", plan_spec(1), 1, plan_push());
    rec.compute_barrier();
    const uint32_t classify_groups = step_groups(v.segments);
    rec.dispatch("segment_classify",
                 {step_workgroup, v.offset_words, shape_.log2_first_class,
                  class_count, spec_.sort.key_words, spec_.sort.value_words, v.piece_stride},
                 classify_groups,
                 ClassifyPush{v.offsets, v.segment_count_address, v.base + l.counters,
                              v.base + l.lists, v.indices, v.keys, v.values, copy_keys_to,
                              copy_values_to, uint32_t(v.n), uint32_t(v.segments),
                              classify_groups});
    rec.compute_barrier();
    rec.dispatch("segment_plan", plan_spec(0), 1, plan_push());
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
      auto tile_spec = tile_specialization(spec_.sort, k.workgroup, k.tile());
      tile_spec.insert(tile_spec.end(),
                       {lanes, uint32_t(std::countr_zero(k.segment_slots / k.blocks)),
                        v.offset_words, uint32_t(std::countr_zero(k.blocks))});
      rec.dispatch_indirect("segment_sort_tile_i" + std::to_string(k.items), tile_spec, v.buffer,
                            dispatch,
                            SegmentTilePush{v.keys, v.values, v.indices, v.offsets, lists[c],
                                            v.base + l.counters + 4 * c, sorted_keys,
                                            sorted_values, sorted_origins, v.keys_out,
                                            v.values_out, uint32_t(v.n), uint32_t(capacity)});
    }
    if (medium(v.n) && !v.bucketed) {
      rec.compute_barrier();
      for (uint32_t c = tile_class_count; c < class_count; ++c) {
        const uint64_t capacity = class_list_capacity(classes_, c, v.n, v.segments);
        if (capacity == 0) continue;
        const SegmentClass& k = classes_[c];
        auto merge_spec = tile_specialization(spec_.sort, merge_workgroup_, k.tile());
        merge_spec.insert(merge_spec.end(),
                          {uint32_t(std::countr_zero(k.segment_slots)), v.offset_words});
        const uint64_t dispatch = l.dispatch + 12 * (class_count + c - tile_class_count);
        rec.dispatch_indirect(
            k.blocks <= 4 ? "segment_merge_r4" : "segment_merge_r8", merge_spec, v.buffer,
            v.buffer_offset + dispatch,
            SegmentMergePush{sorted_keys, sorted_values, sorted_origins, v.keys_out, v.values_out,
                             v.indices, v.offsets, lists[c], v.base + l.counters + 4 * c,
                             uint32_t(v.n), uint32_t(capacity)});
      }
    }
    rec.compute_barrier();
  }

  // segment_bucket for medium class c: one workgroup per listed segment.
  void record_bucket_scatter(Recorder& rec, const Level& v, uint32_t c, VkDeviceAddress list,
                             uint64_t capacity, VkDeviceSize dispatch) const {
    const FastLayout& f = v.fast;
    const uint32_t class_count = uint32_t(classes_.size());
    rec.dispatch_indirect(
        "segment_bucket",
        {bucket_workgroup_, spec_.sort.key_words, spec_.sort.key_kind,
         uint32_t(spec_.sort.descending), spec_.sort.value_words, spec_.sort.begin_bit,
         spec_.sort.end_bit, ctx_.info.min_subgroup_size, ctx_.info.max_subgroup_size,
         bucket_keys_per_thread_, uint32_t(std::countr_zero(classes_[c].segment_slots)),
         v.offset_words},
        v.buffer, dispatch,
        BucketPush{v.keys, v.values, v.base + f.bucket_keys,
                   spec_.sort.value_words ? v.base + f.bucket_values : 0, v.offsets, list,
                   v.base + v.layout.counters + 4 * c, v.base + f.pieces,
                   v.base + v.layout.counters + 4 * (class_count + 1), uint32_t(v.n),
                   uint32_t(capacity), uint32_t(medium_capacity(v.n, v.segments))});
  }

  // The global path. planned_count: nothing, or the scratch offset of the count slot where
  // segment_plan (the fast path) put its n; without it and indirect, segment_count fills the
  // global path's own slot.
  void record_global(Recorder& rec, const SegmentedTargets& t,
                     std::optional<uint64_t> planned_count) const {
    const bool seg = segmented(t.segments);
    const Layout l = layout(t.n, t.segments);
    const VkDeviceAddress origins = t.indices ? t.indices : t.scratch + l.origins;
    const VkDeviceAddress ids = t.scratch + l.ids, key_copy = t.scratch + l.key_copy,
                          value_copy = t.scratch + l.value_copy;
    const bool gpu_count = planned_count || t.segment_count_address;
    const uint64_t count_slot = planned_count.value_or(l.count);
    const VkDeviceAddress count = gpu_count ? t.scratch + count_slot : 0;
    const bool copy_keys = seg && spec_.write_keys;
    const bool values = spec_.sort.value_words != 0;
    const uint32_t n = uint32_t(t.n), groups = step_groups(t.n);
    if ((t.keys_out || t.values_out) && !(seg && spec_.write_keys))
      throw Error("segmented sort: separate outputs need offsets, several segments and the keys");
    const VkDeviceAddress keys_out = t.keys_out ? t.keys_out : t.keys;
    const VkDeviceAddress values_out = t.values_out ? t.values_out : t.values;

    // A step kernel: the host's grid for max_n, or with n from the GPU the part of it that finds
    // elements (the dispatch written beside n).
    auto step = [&](std::string_view shader, const std::vector<uint32_t>& specialization,
                    const auto& push) {
      if (gpu_count)
        rec.dispatch_indirect(shader, specialization, t.scratch_buffer,
                              t.scratch_offset + count_slot + step_dispatch_offset, push);
      else
        rec.dispatch(shader, specialization, groups, push);
    };

    if (gpu_count && !planned_count) {
      rec.dispatch("segment_count", {step_workgroup, spec_.offset_words}, 1,
                   CountPush{t.offsets, t.segment_count_address, count,
                             count + step_dispatch_offset, n, uint32_t(t.segments), groups,
                             step_workgroup, ctx_.info.max_workgroup_count_x});
      rec.indirect_barrier();
    }
    step("segment_iota", {step_workgroup}, IotaPush{origins, count, n, groups});
    if (t.n <= 1 && keys_out == t.keys && values_out == t.values) {  // in order, its index 0
      rec.compute_barrier();
      return;
    }
    if (copy_keys)
      step("copy_elements", {step_workgroup, spec_.sort.key_words},
           CopyPush{t.keys, key_copy, count, n, groups});
    if (values)
      step("copy_elements", {step_workgroup, spec_.sort.value_words},
           CopyPush{t.values, value_copy, count, n, groups});
    rec.compute_barrier();

    auto inner = [&](const SortAlgorithm& sort, VkDeviceAddress keys) {
      sort.record(rec, SortTargets{keys, origins, t.scratch + l.inner, t.scratch_buffer,
                                   t.scratch_offset + l.inner, count, t.n});
      if (!rec.ends_with_barrier()) rec.compute_barrier();
    };
    inner(*by_key_, t.keys);
    if (seg) {
      step("segment_ids", {step_workgroup, spec_.offset_words},
           IdsPush{origins, ids, t.offsets, count, t.segment_count_address, n,
                   uint32_t(t.segments), groups});
      rec.compute_barrier();
      inner(*by_segment(t.segments), ids);
    }

    if (copy_keys)
      step("segment_gather", {step_workgroup, spec_.sort.key_words},
           GatherPush{key_copy, keys_out, origins, count, n, groups});
    if (values)
      step("segment_gather", {step_workgroup, spec_.sort.value_words},
           GatherPush{value_copy, values_out, origins, count, n, groups});
    if (!rec.ends_with_barrier()) rec.compute_barrier();
  }

 private:
  Context::Impl& ctx_;
  SegmentedSpec spec_;
  Algorithm requested_;
  std::unique_ptr<SortAlgorithm> by_key_;
  std::vector<SegmentClass> classes_;
  uint32_t merge_workgroup_;  // segment_merge's; divides every medium class's slots
  uint32_t bucket_workgroup_, bucket_keys_per_thread_;  // segment_bucket's shape
  SegmentClassShape shape_ = segment_class_shape;
};

}  // namespace

SegmentedClassTable segmented_class_table(const Context::Impl& ctx, const SortSpec& spec) {
  SegmentedClassTable table;
  for (const SegmentClass& c : fast_path_classes(ctx, spec)) {
    table.class_slots.push_back(c.segment_slots);
    if (c.blocks == 1) table.largest_tile = c.segment_slots;
  }
  return table;
}

std::unique_ptr<SegmentedSort> make_segmented_sort(Context::Impl& ctx, const SegmentedSpec& spec,
                                                   Algorithm requested,
                                                   const SegmentedOptions& options) {
  return std::make_unique<Segmented>(ctx, spec, requested, options);
}

}  // namespace gpusort
