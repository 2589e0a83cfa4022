// Segmented sort and argsort: a global stable sort by (segment, key), built from the stable sorts
// the library already has, so that any mix of segments (a million of one key, one of a billion,
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
// Without segments (argsort) only segment_iota, sort 1 and the values' gather run: the cost of
// sort_by_key with u32 values plus one write of the indices. With one segment at most the keys are
// sorted in place by sort 1 and no key copy is taken.
#include "algorithms/segmented_sort.hpp"

#include <bit>

namespace gpusort {

namespace {

constexpr uint32_t step_workgroup = 256;
constexpr uint32_t max_step_groups = 4096;

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
  VkDeviceAddress offsets, segment_count_address, count_address;
  uint32_t max_n, segments;
};

uint32_t step_groups(uint64_t n) {
  return uint32_t(std::clamp<uint64_t>((n + step_workgroup - 1) / step_workgroup, 1,
                                       max_step_groups));
}

class Segmented final : public SegmentedSort {
 public:
  Segmented(Context::Impl& ctx, const SegmentedSpec& spec, Algorithm requested)
      : ctx_(ctx), spec_(spec), requested_(requested) {
    if (requested == Algorithm::bitonic)
      throw Error("segmented sort and argsort need a stable sort: bitonic is not stable");
    SortSpec by_key = spec.sort;
    by_key.value_words = 1;  // the origins
    by_key_ = make_sort_algorithm(ctx, by_key, requested);
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
    l.inner = l.count + 256;
    uint64_t inner = by_key_->scratch_bytes(max_n);
    if (seg) inner = std::max(inner, by_segment(max_segments)->scratch_bytes(max_n));
    l.total = l.inner + inner;
    return l;
  }

  // Sort 2 (u32 ids with u32 origins) fits wherever sort 1 (the keys with u32 origins) does.
  uint64_t max_elements() const override { return by_key_->max_elements(); }

  uint64_t scratch_bytes(uint64_t max_n, uint64_t max_segments) const override {
    return layout(max_n, max_segments).total;
  }

  void record(Recorder& rec, const SegmentedTargets& t) const override {
    const bool indirect = t.segment_count_address != 0;
    if (t.n == 0 && !indirect) return;
    const bool seg = segmented(t.segments);
    const Layout l = layout(t.n, t.segments);
    const VkDeviceAddress origins = t.indices ? t.indices : t.scratch + l.origins;
    const VkDeviceAddress ids = t.scratch + l.ids, key_copy = t.scratch + l.key_copy,
                          value_copy = t.scratch + l.value_copy;
    const VkDeviceAddress count = indirect ? t.scratch + l.count : 0;
    const bool copy_keys = seg && spec_.write_keys;
    const bool values = spec_.sort.value_words != 0;
    const uint32_t n = uint32_t(t.n), groups = step_groups(t.n);
    if ((t.keys_out || t.values_out) && !(seg && spec_.write_keys))
      throw Error("segmented sort: separate outputs need offsets, several segments and the keys");
    const VkDeviceAddress keys_out = t.keys_out ? t.keys_out : t.keys;
    const VkDeviceAddress values_out = t.values_out ? t.values_out : t.values;

    if (indirect) {
      rec.dispatch("segment_count", {step_workgroup, spec_.offset_words}, 1,
                   CountPush{t.offsets, t.segment_count_address, count, n,
                             uint32_t(t.segments)});
      rec.compute_barrier();
    }
    rec.dispatch("segment_iota", {step_workgroup}, groups, IotaPush{origins, count, n, groups});
    if (t.n <= 1 && keys_out == t.keys && values_out == t.values) {  // in order, its index 0
      rec.compute_barrier();
      return;
    }
    if (copy_keys)
      rec.dispatch("copy_elements", {step_workgroup, spec_.sort.key_words}, groups,
                   CopyPush{t.keys, key_copy, count, n, groups});
    if (values)
      rec.dispatch("copy_elements", {step_workgroup, spec_.sort.value_words}, groups,
                   CopyPush{t.values, value_copy, count, n, groups});
    rec.compute_barrier();

    auto inner = [&](const SortAlgorithm& sort, VkDeviceAddress keys) {
      sort.record(rec, SortTargets{keys, origins, t.scratch + l.inner, t.scratch_buffer,
                                   t.scratch_offset + l.inner, count, t.n});
      if (!rec.ends_with_barrier()) rec.compute_barrier();
    };
    inner(*by_key_, t.keys);
    if (seg) {
      rec.dispatch("segment_ids", {step_workgroup, spec_.offset_words}, groups,
                   IdsPush{origins, ids, t.offsets, count, t.segment_count_address, n,
                           uint32_t(t.segments), groups});
      rec.compute_barrier();
      inner(*by_segment(t.segments), ids);
    }

    if (copy_keys)
      rec.dispatch("segment_gather", {step_workgroup, spec_.sort.key_words}, groups,
                   GatherPush{key_copy, keys_out, origins, count, n, groups});
    if (values)
      rec.dispatch("segment_gather", {step_workgroup, spec_.sort.value_words}, groups,
                   GatherPush{value_copy, values_out, origins, count, n, groups});
    if (!rec.ends_with_barrier()) rec.compute_barrier();
  }

 private:
  Context::Impl& ctx_;
  SegmentedSpec spec_;
  Algorithm requested_;
  std::unique_ptr<SortAlgorithm> by_key_;
};

}  // namespace

std::unique_ptr<SegmentedSort> make_segmented_sort(Context::Impl& ctx, const SegmentedSpec& spec,
                                                   Algorithm requested) {
  return std::make_unique<Segmented>(ctx, spec, requested);
}

}  // namespace gpusort
