// Top-k, both faces: arguments checked on the host, the convenient face through HostPath::run
// (the keys and values go up; only the k results come down), TopKSelector recording the radix
// select (src/algorithms/topk/); the per-segment form selects each segment's k in one workgroup
// and sorts them with the segmented sort.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algorithms/onesweep/cuda/cuda_pass.hpp"
#include "algorithms/topk/topk.hpp"
#include "api/buffer_refs.hpp"
#include "dispatch/dispatch.hpp"
#include "host/host_path.hpp"
#include "vulkan/buffer.hpp"

namespace gpusort {

namespace {

void check_topk(const char* call, uint64_t n, uint64_t k) {
  if (n > max_elements)
    throw Error(std::string(call) + ": " + std::to_string(n) + " keys: gpusort takes at most " +
                std::to_string(max_elements) + " (2^31 - 1)");
  if (k > n)
    throw Error(std::string(call) + ": k = " + std::to_string(k) + " is more than the " +
                std::to_string(n) + " keys");
}

MakeSort survivors_sort(Context::Impl& ctx, Algorithm algorithm, const char* call) {
  if (algorithm == Algorithm::bitonic)
    throw Error(std::string(call) + ": top-k needs a stable sort: bitonic is not stable");
  algorithm_entry(algorithm);  // refuses a value that names no algorithm
  return [&ctx, algorithm](const SortSpec& spec) {
    return make_sort_algorithm(ctx, spec, algorithm);
  };
}

// u32 positions widened to u64 on their way out.
HostWriter widening_writer(const HostWriter& to) {
  return [to](uint64_t offset, const void* from, uint64_t size) {
    std::vector<uint64_t> wide(static_cast<const uint32_t*>(from),
                               static_cast<const uint32_t*>(from) + size / 4);
    to(offset * 2, wide.data(), wide.size() * 8);
  };
}

// One device buffer holding [keys | pad | values] comes down through one writer, split here.
HostWriter split_writer(uint64_t keys_bytes, uint64_t values_at, uint64_t values_bytes,
                        void* keys_out, void* values_out) {
  return [=](uint64_t offset, const void* from, uint64_t size) {
    const auto* src = static_cast<const char*>(from);
    const uint64_t end = offset + size;
    if (keys_out && offset < keys_bytes) {
      const uint64_t stop = std::min(end, keys_bytes);
      std::memcpy(static_cast<char*>(keys_out) + offset, src, stop - offset);
    }
    const uint64_t values_end = values_at + values_bytes;
    if (values_out && end > values_at && offset < values_end) {
      const uint64_t start = std::max(offset, values_at), stop = std::min(end, values_end);
      std::memcpy(static_cast<char*>(values_out) + (start - values_at), src + (start - offset),
                  stop - start);
    }
  };
}

}  // namespace

void topk_raw(Context& ctx, KeyType key_type, uint64_t n, const void* keys, uint64_t k,
              void* keys_out, uint32_t value_bytes, const void* values, void* values_out,
              void* indices_out, uint32_t index_bytes, const SortOptions& options) {
  constexpr const char* call = "topk";
  const bool with_values = values || values_out;
  if (with_values && k > 0 && (!values || !values_out))
    throw Error(std::string(call) + ": values need both the input values and values_out");
  SortSpec spec = make_sort_spec(key_type, with_values ? value_bytes : 0, options.descending,
                                 options.begin_bit, options.end_bit);
  spec.kernels = requested_kernel_path(options.kernels);
  check_topk(call, n, k);
  if (indices_out && index_bytes != 4 && index_bytes != 8)
    throw Error(std::string(call) + ": indices are 4 or 8 bytes wide, not " +
                std::to_string(index_bytes));
  if (n && !keys) throw Error(std::string(call) + ": keys are null");
  auto& impl = ctx.impl();
  const auto selector = make_topk(impl, spec, survivors_sort(impl, options.algorithm, call));
  if (n == 0 || k == 0) {
    if (options.timings) *options.timings = SortTimings{};
    return;
  }
  if (!keys_out && !values_out && !indices_out)
    throw Error(std::string(call) + ": nothing to write (no output keys, values or indices)");
  using B = HostPath::JobBuffer;
  const uint64_t keys_bytes = k * spec.key_words * 4;
  const uint64_t values_at = align_up(keys_bytes, 16);
  const uint64_t values_bytes = k * spec.value_words * 4;
  HostPath::Job job;
  // keys and values: the inputs; offsets: the results' keys and values; indices: their positions.
  job.bytes[size_t(B::keys)] = n * spec.key_words * 4;
  job.bytes[size_t(B::values)] = n * spec.value_words * 4;
  job.bytes[size_t(B::offsets)] = values_bytes ? values_at + values_bytes : keys_bytes;
  job.uploads.emplace_back(B::keys, memory_reader(keys));
  if (spec.value_words) job.uploads.emplace_back(B::values, memory_reader(values));
  if (keys_out || values_out)
    job.downloads.emplace_back(B::offsets,
                               split_writer(keys_bytes, values_at, values_bytes, keys_out, values_out));
  if (indices_out) {
    job.bytes[size_t(B::indices)] = k * 4;
    const HostWriter w = memory_writer(indices_out);
    job.downloads.emplace_back(B::indices, index_bytes == 8 ? widening_writer(w) : w);
  }
  job.scratch_bytes = selector->scratch_bytes(n, k);
  job.record = [&](Recorder& rec, const HostPath::JobAddresses& a) {
    TopKTargets t;
    t.keys = a.buffer[size_t(B::keys)];
    t.values = spec.value_words ? a.buffer[size_t(B::values)] : 0;
    t.keys_out = a.buffer[size_t(B::offsets)];
    t.values_out = spec.value_words ? t.keys_out + values_at : 0;
    t.positions = indices_out ? a.buffer[size_t(B::indices)] : 0;
    t.scratch = a.scratch;
    t.scratch_buffer = a.scratch_buffer;
    t.n = n;
    t.k = k;
    selector->record(rec, t);
  };
  impl.host_path().run(job, options.timings);
}

uint64_t topk_segments_count(const SegmentOffsets& offsets, uint64_t k) {
  uint64_t total = 0;
  for (uint64_t s = 0; s + 1 < offsets.count; ++s) {
    uint64_t a = 0, b = 0;
    std::memcpy(&a, static_cast<const char*>(offsets.data) + s * offsets.bytes, offsets.bytes);
    std::memcpy(&b, static_cast<const char*>(offsets.data) + (s + 1) * offsets.bytes,
                offsets.bytes);
    total += std::min(k, b >= a ? b - a : 0);
  }
  return total;
}

void topk_segments_raw(Context& ctx, KeyType key_type, uint64_t n, const void* keys,
                       const SegmentOffsets& offsets, uint64_t k, void* keys_out,
                       uint32_t value_bytes, const void* values, void* values_out,
                       void* indices_out, uint32_t index_bytes, const SortOptions& options) {
  constexpr const char* call = "topk_segments";
  const bool with_values = values || values_out;
  if (with_values && k > 0 && (!values || !values_out))
    throw Error(std::string(call) + ": values need both the input values and values_out");
  SortSpec spec = make_sort_spec(key_type, with_values ? value_bytes : 0, options.descending,
                                 options.begin_bit, options.end_bit);
  spec.kernels = requested_kernel_path(options.kernels);
  if (n > max_elements)
    throw Error(std::string(call) + ": " + std::to_string(n) + " keys: gpusort takes at most " +
                std::to_string(max_elements) + " (2^31 - 1)");
  check_segment_offsets(offsets, n);
  if (indices_out && index_bytes != 4 && index_bytes != 8)
    throw Error(std::string(call) + ": indices are 4 or 8 bytes wide, not " +
                std::to_string(index_bytes));
  if (n && !keys) throw Error(std::string(call) + ": keys are null");
  auto& impl = ctx.impl();
  const Algorithm algorithm = options.algorithm;
  const auto selector = make_topk(
      impl, spec, survivors_sort(impl, algorithm, call), offsets.bytes / 4,
      [&impl, algorithm](const SegmentedSpec& s) { return make_segmented_sort(impl, s, algorithm); });
  const uint64_t segments = offsets.count - 1, results = topk_segments_count(offsets, k);
  if (n == 0 || results == 0) return;
  if (!keys_out && !values_out && !indices_out)
    throw Error(std::string(call) + ": nothing to write (no output keys, values or indices)");
  // The results come down in one buffer: keys | values | positions (u32), each 16-aligned.
  using B = HostPath::JobBuffer;
  const uint64_t keys_bytes = results * spec.key_words * 4;
  const uint64_t values_at = align_up(keys_bytes, 16);
  const uint64_t values_bytes = results * spec.value_words * 4;
  const uint64_t positions_at = align_up(values_at + values_bytes, 16);
  const uint64_t out_bytes = positions_at + (indices_out ? results * 4 : 0);
  HostPath::Job job;
  job.bytes[size_t(B::keys)] = n * spec.key_words * 4;
  job.bytes[size_t(B::values)] = n * spec.value_words * 4;
  job.bytes[size_t(B::offsets)] = offsets.count * offsets.bytes;
  job.bytes[size_t(B::indices)] = out_bytes;
  job.uploads.emplace_back(B::keys, memory_reader(keys));
  if (spec.value_words) job.uploads.emplace_back(B::values, memory_reader(values));
  job.uploads.emplace_back(B::offsets, memory_reader(offsets.data));
  const HostWriter indices_writer =
      indices_out ? (index_bytes == 8 ? widening_writer(memory_writer(indices_out))
                                      : memory_writer(indices_out))
                  : HostWriter{};
  job.downloads.emplace_back(
      B::indices, [=, writer = split_writer(keys_bytes, values_at, values_bytes, keys_out, values_out)](
                      uint64_t offset, const void* from, uint64_t size) {
        const auto* src = static_cast<const char*>(from);
        const uint64_t end = offset + size;
        if (offset < positions_at) writer(offset, src, std::min(end, positions_at) - offset);
        if (indices_writer && end > positions_at) {
          const uint64_t start = std::max(offset, positions_at);
          indices_writer(start - positions_at, src + (start - offset), end - start);
        }
      });
  job.scratch_bytes = selector->segments_scratch_bytes(n, segments, results);
  job.record = [&](Recorder& rec, const HostPath::JobAddresses& a) {
    TopKSegmentsTargets t;
    t.keys = a.buffer[size_t(B::keys)];
    t.values = spec.value_words ? a.buffer[size_t(B::values)] : 0;
    t.offsets = a.buffer[size_t(B::offsets)];
    t.keys_out = a.buffer[size_t(B::indices)];
    t.values_out = spec.value_words ? t.keys_out + values_at : 0;
    t.positions = indices_out ? t.keys_out + positions_at : 0;
    t.scratch = a.scratch;
    t.scratch_buffer = a.scratch_buffer;
    t.n = n;
    t.segments = segments;
    t.k = k;
    t.results = results;
    selector->record_segments(rec, t);
  };
  impl.host_path().run(job, options.timings);
}

// ---- TopKSelector ----

struct TopKSelector::Impl {
  Context context;  // a copy: keeps the device and the pipeline cache alive
  TopKConfig config;
  SortSpec spec;
  std::unique_ptr<TopK> algorithm;

  // The buffers both recordings take (TopKTargets and TopKSegmentsTargets alike): values and
  // values_out given exactly where the selector has values.
  template <class Targets>
  void resolve_common(const char* call, Targets& t, BufferRef keys, BufferRef values,
                      BufferRef keys_out, BufferRef values_out, BufferRef indices,
                      BufferRef scratch) const {
    auto& ctx = context.impl();
    auto address = [&](BufferRef r, const char* what) {
      return resolve_buffer(ctx, call, r, what, 16);
    };
    const bool with_values = spec.value_words != 0;
    if (!with_values && (values.buffer || values_out.buffer))
      throw Error(std::string(call) +
                  ": values given, but the TopKSelector was configured with value_bytes = 0");
    if (with_values && (!values.buffer || !values_out.buffer))
      throw Error(std::string(call) +
                  ": values and values_out are needed: the TopKSelector was configured with "
                  "value_bytes = " +
                  std::to_string(config.value_bytes));
    t.keys = address(keys, "keys");
    t.keys_out = address(keys_out, "keys_out");
    if (with_values) {
      t.values = address(values, "values");
      t.values_out = address(values_out, "values_out");
    }
    if (indices.buffer) t.positions = address(indices, "indices");
    t.scratch = address(scratch, "scratch");
    t.scratch_buffer = scratch.buffer;
    t.scratch_offset = scratch.offset;
  }

  void record(const char* call, VkCommandBuffer cmd, BufferRef keys, BufferRef values,
              BufferRef keys_out, BufferRef values_out, BufferRef indices, BufferRef scratch,
              const BufferRef* count, uint64_t n, uint64_t k) const {
    auto& ctx = context.impl();
    auto fail = [&](const std::string& why) { throw Error(std::string(call) + ": " + why); };
    if (n > max_elements)
      fail(std::to_string(n) + " keys: gpusort takes at most " + std::to_string(max_elements) +
           " (2^31 - 1)");
    if (!count && k > n)
      fail("k = " + std::to_string(k) + " is more than the " + std::to_string(n) + " keys");
    if (!cmd) fail("command buffer is VK_NULL_HANDLE");
    TopKTargets t;
    resolve_common(call, t, keys, values, keys_out, values_out, indices, scratch);
    if (count) t.count_address = resolve_buffer(ctx, call, *count, "count", 4);
    t.n = n;
    t.k = k;
    const uint64_t kept = std::min(k, n);
    const uint64_t kw = spec.key_words * 4, vw = spec.value_words * 4;
    refuse_overlaps(call,
                    {{"keys", t.keys, t.keys + n * kw},
                     {"values", t.values, t.values + n * vw},
                     {"keys_out", t.keys_out, t.keys_out + kept * kw},
                     {"values_out", t.values_out, t.values_out + kept * vw},
                     {"indices", t.positions, t.positions + (t.positions ? kept * 4 : 0)},
                     {"scratch", t.scratch, t.scratch + algorithm->scratch_bytes(n, k)},
                     {"count", t.count_address, t.count_address + (count ? 4 : 0)}},
                    std::to_string(n) + " keys and k = " + std::to_string(k));
    Recorder rec(ctx, cmd);
    algorithm->record(rec, t);
    if (!rec.ends_with_barrier()) rec.compute_barrier();
  }

  // As Sorter's: the plans of a few shapes recorded into a command buffer that is never
  // submitted, so that record() and record_segments() of them compile nothing (whole arrays of
  // 1000 and 65536 keys, k of 100 and 1000, direct and indirect; 64 segments of 1024 keys).
  // Nothing executes, so every address may point into one small buffer.
  void create_pipelines() const {
    auto& ctx = context.impl();
    struct Shape {
      uint64_t n, k;
    };
    const std::initializer_list<Shape> shapes{{1000, 1000}, {65536, 100}};
    constexpr uint64_t segment_n = 65536, segments = 64, segment_k = 16;
    uint64_t any_bytes = std::max<uint64_t>(
        256, algorithm->segments_scratch_bytes(segment_n, segments, segments * segment_k));
    for (const Shape& shape : shapes)
      any_bytes = std::max(any_bytes, algorithm->scratch_bytes(shape.n, shape.k));
    DeviceBuffer any(ctx, any_bytes, MemoryKind::device_local);
    ctx.record_unsubmitted([&](VkCommandBuffer cmd) {
      for (const Shape& shape : shapes)
        for (bool indirect : {false, true}) {
          TopKTargets t;
          t.keys = t.keys_out = t.positions = t.scratch = any.address();
          if (spec.value_words) t.values = t.values_out = any.address();
          t.scratch_buffer = any.buffer();
          if (indirect) t.count_address = any.address();
          t.n = shape.n;
          t.k = shape.k;
          Recorder rec(ctx, cmd);
          algorithm->record(rec, t);
        }
      TopKSegmentsTargets t;
      t.keys = t.offsets = t.keys_out = t.positions = t.scratch = any.address();
      if (spec.value_words) t.values = t.values_out = any.address();
      t.scratch_buffer = any.buffer();
      t.n = segment_n;
      t.segments = segments;
      t.k = segment_k;
      t.results = segments * segment_k;
      Recorder rec(ctx, cmd);
      algorithm->record_segments(rec, t);
    });
  }
};

TopKSelector::TopKSelector(Context& ctx, const TopKConfig& config)
    : impl_(std::make_unique<Impl>()) {
  impl_->context = ctx;
  impl_->config = config;
  impl_->spec = make_sort_spec(config.key, config.value_bytes, config.largest, config.begin_bit,
                               config.end_bit);
  if (config.offset_bytes != 4 && config.offset_bytes != 8)
    throw Error("TopKSelector: offsets are 4 or 8 bytes wide, not " +
                std::to_string(config.offset_bytes));
  Context::Impl& impl = ctx.impl();
  const Algorithm algorithm = config.algorithm;
  impl_->algorithm = make_topk(
      impl, impl_->spec, survivors_sort(impl, algorithm, "TopKSelector"), config.offset_bytes / 4,
      [&impl, algorithm](const SegmentedSpec& s) { return make_segmented_sort(impl, s, algorithm); });
  impl_->create_pipelines();
}
TopKSelector::~TopKSelector() = default;
TopKSelector::TopKSelector(TopKSelector&&) noexcept = default;
TopKSelector& TopKSelector::operator=(TopKSelector&&) noexcept = default;

namespace {
const TopKSelector::Impl& valid(const std::unique_ptr<TopKSelector::Impl>& impl) {
  if (!impl) throw Error("TopKSelector: used after being moved from");
  return *impl;
}
}  // namespace

const TopKConfig& TopKSelector::config() const { return valid(impl_).config; }

uint64_t TopKSelector::scratch_bytes(uint64_t max_n, uint64_t k) const {
  if (max_n > max_elements)
    throw Error("TopKSelector::scratch_bytes: " + std::to_string(max_n) +
                " keys: gpusort takes at most " + std::to_string(max_elements) + " (2^31 - 1)");
  constexpr uint64_t min_scratch_bytes = 256;
  return std::max(valid(impl_).algorithm->scratch_bytes(max_n, k), min_scratch_bytes);
}

void TopKSelector::record(VkCommandBuffer cmd, BufferRef keys, BufferRef values,
                          BufferRef keys_out, BufferRef values_out, BufferRef indices,
                          BufferRef scratch, uint64_t n, uint64_t k) const {
  valid(impl_).record("TopKSelector::record", cmd, keys, values, keys_out, values_out, indices,
                      scratch, nullptr, n, k);
}

uint64_t TopKSelector::segments_scratch_bytes(uint64_t max_n, uint64_t max_segments,
                                              uint64_t k) const {
  if (max_n > max_elements || max_segments > max_elements)
    throw Error("TopKSelector::segments_scratch_bytes: " + std::to_string(max_n) + " keys and " +
                std::to_string(max_segments) + " segments: gpusort takes at most " +
                std::to_string(max_elements) + " (2^31 - 1) of each");
  constexpr uint64_t min_scratch_bytes = 256;
  const uint64_t results = std::min(max_n, max_segments * std::min(k, max_n));
  return std::max(valid(impl_).algorithm->segments_scratch_bytes(max_n, max_segments, results),
                  min_scratch_bytes);
}

void TopKSelector::record_segments(VkCommandBuffer cmd, BufferRef keys, BufferRef values,
                                   BufferRef offsets, BufferRef keys_out, BufferRef values_out,
                                   BufferRef indices, BufferRef scratch, uint64_t n,
                                   uint64_t segments, uint64_t k) const {
  const Impl& impl = valid(impl_);
  constexpr const char* call = "TopKSelector::record_segments";
  auto& ctx = impl.context.impl();
  auto fail = [&](const std::string& why) { throw Error(std::string(call) + ": " + why); };
  if (n > max_elements || segments > max_elements)
    fail(std::to_string(n) + " keys and " + std::to_string(segments) +
         " segments: gpusort takes at most " + std::to_string(max_elements) + " (2^31 - 1) of each");
  if (!cmd) fail("command buffer is VK_NULL_HANDLE");
  if (segments == 0 && n != 0)
    fail("0 segments but n = " + std::to_string(n) + " (offsets[S] must be n)");
  TopKSegmentsTargets t;
  impl.resolve_common(call, t, keys, values, keys_out, values_out, indices, scratch);
  t.offsets = resolve_buffer(ctx, call, offsets, "offsets", impl.config.offset_bytes);
  t.n = n;
  t.segments = segments;
  t.k = k;
  t.results = std::min(n, segments * std::min(k, n));
  const uint64_t kw = impl.spec.key_words * 4, vw = impl.spec.value_words * 4, r = t.results;
  refuse_overlaps(call,
                  {{"keys", t.keys, t.keys + n * kw},
                   {"values", t.values, t.values + n * vw},
                   {"offsets", t.offsets, t.offsets + (segments + 1) * impl.config.offset_bytes},
                   {"keys_out", t.keys_out, t.keys_out + r * kw},
                   {"values_out", t.values_out, t.values_out + r * vw},
                   {"indices", t.positions, t.positions + (t.positions ? r * 4 : 0)},
                   {"scratch", t.scratch,
                    t.scratch + impl.algorithm->segments_scratch_bytes(n, segments, r)}},
                  std::to_string(n) + " keys, " + std::to_string(segments) +
                      " segments and k = " + std::to_string(k));
  Recorder rec(ctx, cmd);
  impl.algorithm->record_segments(rec, t);
  if (!rec.ends_with_barrier()) rec.compute_barrier();
}

void TopKSelector::record_indirect(VkCommandBuffer cmd, BufferRef keys, BufferRef values,
                                   BufferRef keys_out, BufferRef values_out, BufferRef indices,
                                   BufferRef scratch, BufferRef count, uint64_t max_n,
                                   uint64_t k) const {
  valid(impl_).record("TopKSelector::record_indirect", cmd, keys, values, keys_out, values_out,
                      indices, scratch, &count, max_n, k);
}

}  // namespace gpusort
