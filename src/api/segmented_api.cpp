// Segmented sort and argsort, both faces: offsets checked on the host, the convenient face
// through HostPath::run (only what the call needs goes up and comes down), and SegmentedSorter.
#include <cstring>
#include <vector>

#include "algorithms/onesweep/cuda/cuda_pass.hpp"
#include "algorithms/segmented_sort/segmented_sort.hpp"
#include "dispatch/dispatch.hpp"
#include "api/buffer_refs.hpp"
#include "host/host_path.hpp"
#include "vulkan/buffer.hpp"

namespace gpusort {

namespace {

void check_elements(uint64_t n, const char* what) {
  if (n > max_elements)
    throw Error(std::to_string(n) + " " + what + ": gpusort sorts at most " +
                std::to_string(max_elements) + " (2^31 - 1)");
}

uint64_t offset_at(const SegmentOffsets& o, uint64_t i) {
  if (o.bytes == 4) {
    uint32_t v;
    std::memcpy(&v, static_cast<const char*>(o.data) + i * 4, 4);
    return v;
  }
  uint64_t v;
  std::memcpy(&v, static_cast<const char*>(o.data) + i * 8, 8);
  return v;
}

// The first problem of the offsets, as one line; nothing when they are CSR offsets of n keys.
void check_offsets(const SegmentOffsets& o, uint64_t n) {
  if (o.bytes != 4 && o.bytes != 8)
    throw Error("segment offsets are 4 or 8 bytes wide, not " + std::to_string(o.bytes));
  if (o.count == 0)
    throw Error("segment offsets: none given (S segments need S + 1 offsets, from 0 to n = " +
                std::to_string(n) + ")");
  if (!o.data) throw Error("segment offsets: " + std::to_string(o.count) + " of them, but no data");
  check_elements(o.count - 1, "segments");
  const uint64_t first = offset_at(o, 0), last = offset_at(o, o.count - 1);
  if (first != 0) throw Error("segment offsets: the first is " + std::to_string(first) + ", not 0");
  if (last != n)
    throw Error("segment offsets: the last is " + std::to_string(last) +
                ", not n = " + std::to_string(n) + " (the number of keys)");
  uint64_t previous = first;
  for (uint64_t i = 1; i < o.count; ++i) {
    const uint64_t v = offset_at(o, i);
    if (v < previous)
      throw Error("segment offsets decrease at index " + std::to_string(i) + ": offsets[" +
                  std::to_string(i - 1) + "] = " + std::to_string(previous) + " > offsets[" +
                  std::to_string(i) + "] = " + std::to_string(v));
    previous = v;
  }
}

// The GPU writes u32 indices (n < 2^31); u64 ones are widened on their way out.
HostWriter widening_writer(const HostWriter& to) {
  return [to](uint64_t offset, const void* from, uint64_t size) {
    constexpr uint64_t chunk = 1 << 16;  // indices per step
    std::vector<uint64_t> wide;
    const auto* narrow = static_cast<const uint32_t*>(from);
    for (uint64_t done = 0; done < size / 4;) {
      const uint64_t count = std::min(chunk, size / 4 - done);
      wide.assign(narrow + done, narrow + done + count);
      to((offset / 4 + done) * 8, wide.data(), count * 8);
      done += count;
    }
  };
}

}  // namespace

void check_segment_offsets(const SegmentOffsets& offsets, uint64_t n) {
  check_offsets(offsets, n);
}

void sort_segments_streamed(Context& ctx, KeyType key_type, uint64_t n, const HostStream& keys,
                            uint32_t value_bytes, const HostStream& values,
                            const SegmentOffsets& offsets, const HostWriter& indices,
                            uint32_t index_bytes, const SortOptions& options) {
  check_elements(n, "elements");
  SortSpec spec =
      make_sort_spec(key_type, value_bytes, options.descending, options.begin_bit, options.end_bit);
  spec.kernels = requested_kernel_path(options.kernels);
  if (!keys.read) throw Error("sort_segments_streamed: the keys need a reader");
  if (value_bytes && (!values.read || !values.write))
    throw Error("sort_segments_streamed: the values need a reader and a writer");
  if (indices && index_bytes != 4 && index_bytes != 8)
    throw Error("argsort indices are 4 or 8 bytes wide, not " + std::to_string(index_bytes));
  const bool segmented = offsets.bytes != 0 || offsets.data || offsets.count;
  if (segmented) check_offsets(offsets, n);
  if (options.algorithm == Algorithm::bitonic && (segmented || indices))
    throw Error("segmented sort and argsort need a stable sort: bitonic is not stable");
  if (n == 0) {
    if (options.timings) *options.timings = SortTimings{};
    return;
  }
  if (!keys.write && !value_bytes && !indices)
    throw Error("sort_segments_streamed: nothing to write (no key writer, no values, no indices)");

  auto& host_path = ctx.impl().host_path();
  if (!segmented && !indices && keys.write) {  // a plain sort
    host_path.sort(spec, options.algorithm, n, keys, values, options.timings);
    return;
  }
  const uint64_t segments = segmented ? offsets.count - 1 : 1;
  SegmentedSpec segmented_spec;
  segmented_spec.sort = spec;
  segmented_spec.offset_words = segmented ? offsets.bytes / 4 : 0;
  segmented_spec.write_keys = bool(keys.write);
  const auto algorithm = make_segmented_sort(ctx.impl(), segmented_spec, options.algorithm);

  using B = HostPath::JobBuffer;
  HostPath::Job job;
  job.bytes[size_t(B::keys)] = n * spec.key_words * 4;
  job.bytes[size_t(B::values)] = n * spec.value_words * 4;
  job.uploads.emplace_back(B::keys, keys.read);
  if (value_bytes) job.uploads.emplace_back(B::values, values.read);
  if (segmented && n > 0) {
    job.bytes[size_t(B::offsets)] = offsets.count * offsets.bytes;
    job.uploads.emplace_back(B::offsets, memory_reader(offsets.data));
  }
  if (keys.write) job.downloads.emplace_back(B::keys, keys.write);
  if (value_bytes) job.downloads.emplace_back(B::values, values.write);
  if (indices) {
    job.bytes[size_t(B::indices)] = n * 4;
    job.downloads.emplace_back(B::indices, index_bytes == 8 ? widening_writer(indices) : indices);
  }
  job.scratch_bytes = algorithm->scratch_bytes(n, segments);
  job.record = [&](Recorder& rec, const HostPath::JobAddresses& a) {
    SegmentedTargets t;
    t.keys = a.buffer[size_t(B::keys)];
    t.values = a.buffer[size_t(B::values)];
    t.offsets = a.buffer[size_t(B::offsets)];
    t.indices = a.buffer[size_t(B::indices)];
    t.scratch = a.scratch;
    t.scratch_buffer = a.scratch_buffer;
    t.n = n;
    t.segments = segments;
    algorithm->record(rec, t);
  };
  host_path.run(job, options.timings);
}

void sort_segments_raw(Context& ctx, KeyType key_type, uint64_t n, const void* keys_in,
                       void* keys_out, uint32_t value_bytes, void* values,
                       const SegmentOffsets& offsets, void* indices, uint32_t index_bytes,
                       const SortOptions& options) {
  if (n && !keys_in) throw Error("sort_segments_raw: keys are null");
  if (n && value_bytes && !values) throw Error("sort_segments_raw: values are null");
  HostStream keys{memory_reader(keys_in), keys_out ? memory_writer(keys_out) : HostWriter{}};
  HostStream value_stream;
  if (value_bytes) value_stream = {memory_reader(values), memory_writer(values)};
  sort_segments_streamed(ctx, key_type, n, keys, value_bytes, value_stream, offsets,
                         indices ? memory_writer(indices) : HostWriter{}, index_bytes, options);
}

// ---- SegmentedSorter ----

struct SegmentedSorter::Impl {
  Context context;  // a copy: keeps the device and the pipeline cache alive
  SegmentedSorterConfig config;
  SegmentedSpec spec;
  std::unique_ptr<SegmentedSort> algorithm;

  void record(const char* call, VkCommandBuffer cmd, BufferRef keys, BufferRef values,
              BufferRef offsets, BufferRef indices, BufferRef scratch,
              const BufferRef* segment_count, uint64_t n, uint64_t segments) const {
    auto& ctx = context.impl();
    auto fail = [&](const std::string& why) { throw Error(std::string(call) + ": " + why); };
    check_elements(n, "elements");
    check_elements(segments, "segments");
    if (!cmd) fail("command buffer is VK_NULL_HANDLE");
    if (!segment_count && segments == 0 && n != 0)
      fail("0 segments but n = " + std::to_string(n) + " (offsets[S] must be n)");
    auto address = [&](BufferRef r, const char* what, VkDeviceSize alignment) {
      return resolve_buffer(ctx, call, r, what, alignment);
    };
    SegmentedTargets t;
    t.keys = address(keys, "keys", 16);
    if (spec.sort.value_words == 0 && values.buffer)
      fail("values given, but the SegmentedSorter was configured with value_bytes = 0");
    if (spec.sort.value_words != 0 && !values.buffer)
      fail(
          "values.buffer is VK_NULL_HANDLE, but the SegmentedSorter was configured with "
          "value_bytes = " +
          std::to_string(config.value_bytes));
    if (spec.sort.value_words) t.values = address(values, "values", 16);
    t.offsets = address(offsets, "offsets", config.offset_bytes);
    if (indices.buffer) t.indices = address(indices, "indices", 16);
    t.scratch = address(scratch, "scratch", 16);
    t.scratch_buffer = scratch.buffer;
    t.scratch_offset = scratch.offset;
    if (segment_count) t.segment_count_address = address(*segment_count, "segment_count", 4);
    t.n = n;
    t.segments = segments;

    refuse_overlaps(call,
                    {{"keys", t.keys, t.keys + n * spec.sort.key_words * 4},
                     {"values", t.values, t.values + n * spec.sort.value_words * 4},
                     {"offsets", t.offsets, t.offsets + (segments + 1) * config.offset_bytes},
                     {"indices", t.indices, t.indices + (t.indices ? n * 4 : 0)},
                     {"scratch", t.scratch, t.scratch + algorithm->scratch_bytes(n, segments)},
                     {"segment_count", t.segment_count_address,
                      t.segment_count_address + (segment_count ? 4 : 0)}},
                    std::to_string(n) + " elements and " + std::to_string(segments) + " segments");

    Recorder rec(ctx, cmd);
    algorithm->record(rec, t);
    // The contract's closing barrier, also where nothing was recorded.
    if (!rec.ends_with_barrier()) rec.compute_barrier();
  }

  // As Sorter's: the plans of a few shapes recorded into a command buffer that is never
  // submitted, so that record() of them compiles nothing: n of 1000 and 65536, direct and
  // indirect, with up to 2^8, 2^16, 2^24 and 2^32 segments (the four bit ranges of the segment
  // sort). Nothing executes, so every address may point into one small buffer.
  void create_pipelines() const {
    auto& ctx = context.impl();
    const std::initializer_list<uint64_t> sizes{1000, 65536};
    const std::initializer_list<uint64_t> segment_counts{2, 257, 65537, (1ull << 24) + 1};
    // Indirect dispatches read their sizes from scratch: the validation layers check that the
    // buffer holds them, so it is as large as the largest scratch of these shapes.
    uint64_t any_bytes = 256;
    for (uint64_t n : sizes)
      for (uint64_t segments : segment_counts)
        any_bytes = std::max(
            any_bytes, algorithm->scratch_bytes(std::min(n, algorithm->max_elements()), segments));
    DeviceBuffer any(ctx, any_bytes, MemoryKind::device_local);
    ctx.record_unsubmitted([&](VkCommandBuffer cmd) {
      for (uint64_t n : sizes)
        for (uint64_t segments : segment_counts) {
          n = std::min(n, algorithm->max_elements());
          for (bool indirect : {false, true}) {
            SegmentedTargets t;
            t.keys = t.offsets = t.indices = t.scratch = any.address();
            if (spec.sort.value_words) t.values = any.address();
            t.scratch_buffer = any.buffer();
            if (indirect) t.segment_count_address = any.address();
            t.n = n;
            t.segments = segments;
            Recorder rec(ctx, cmd);
            algorithm->record(rec, t);
          }
        }
    });
  }
};

SegmentedSorter::SegmentedSorter(Context& ctx, const SegmentedSorterConfig& config)
    : impl_(std::make_unique<Impl>()) {
  if (config.offset_bytes != 4 && config.offset_bytes != 8)
    throw Error("SegmentedSorter: offsets are 4 or 8 bytes wide, not " +
                std::to_string(config.offset_bytes));
  impl_->context = ctx;
  impl_->config = config;
  impl_->spec.sort = make_sort_spec(config.key, config.value_bytes, config.descending,
                                    config.begin_bit, config.end_bit);
  impl_->spec.offset_words = config.offset_bytes / 4;
  impl_->spec.write_keys = true;
  impl_->algorithm = make_segmented_sort(ctx.impl(), impl_->spec, config.algorithm);
  impl_->create_pipelines();
}
SegmentedSorter::~SegmentedSorter() = default;
SegmentedSorter::SegmentedSorter(SegmentedSorter&&) noexcept = default;
SegmentedSorter& SegmentedSorter::operator=(SegmentedSorter&&) noexcept = default;

namespace {
const SegmentedSorter::Impl& valid(const std::unique_ptr<SegmentedSorter::Impl>& impl) {
  if (!impl) throw Error("SegmentedSorter: used after being moved from");
  return *impl;
}
}  // namespace

const SegmentedSorterConfig& SegmentedSorter::config() const {
  return valid(impl_).config;
}

uint64_t SegmentedSorter::scratch_bytes(uint64_t max_n, uint64_t max_segments) const {
  check_elements(max_n, "elements");
  check_elements(max_segments, "segments");
  constexpr uint64_t min_scratch_bytes = 256;
  return std::max(valid(impl_).algorithm->scratch_bytes(max_n, max_segments), min_scratch_bytes);
}

void SegmentedSorter::record(VkCommandBuffer cmd, BufferRef keys, BufferRef values,
                             BufferRef offsets, BufferRef indices, BufferRef scratch, uint64_t n,
                             uint64_t segments) const {
  valid(impl_).record("SegmentedSorter::record", cmd, keys, values, offsets, indices, scratch,
                      nullptr, n, segments);
}

void SegmentedSorter::record_indirect(VkCommandBuffer cmd, BufferRef keys, BufferRef values,
                                      BufferRef offsets, BufferRef indices, BufferRef scratch,
                                      BufferRef segment_count, uint64_t max_n,
                                      uint64_t max_segments) const {
  valid(impl_).record("SegmentedSorter::record_indirect", cmd, keys, values, offsets, indices,
                      scratch, &segment_count, max_n, max_segments);
}

}  // namespace gpusort
