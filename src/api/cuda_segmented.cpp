// The segmented sort and argsort on the CUDA face (include/gpusort/cuda.hpp), composed from the
// face's argsort as two stable sorts: the keys with their positions (every option applies there),
// then the positions by the segment each comes from, on that segment's bits alone; a stable sort
// by segment keeps each segment's keys in their sorted order. Then the keys, values or indices
// are gathered through the two permutations. Nothing is read back: the offsets stay on the
// device, and the segment of each element is found by a binary search in them.
#include <gpusort/cuda.hpp>

#include "api/cuda_call.hpp"
#include "cuda/module.hpp"
#include "primitives/cuda/elementwise.hpp"
#include "primitives/sort_spec.hpp"

namespace gpusort::cuda {

namespace {

constexpr uint64_t max_n = uint64_t(1) << 32;

// The scratch of one call, each part aligned to 256 bytes: the first argsort's, its positions and
// sorted keys, the segment of each sorted key (then the composed permutation), the second
// argsort's indices and scratch, and a copy of the values (a sort with values).
struct SegmentedLayout {
  uint64_t first = 0, positions = 0, sorted_keys = 0, segments = 0, order = 0, second = 0,
           values = 0, total = 0;
};

// The first argsort: the caller's order and bits, its sorted keys returned (`sorted_keys`: where;
// a size query gives any non-null address, which only its scratch size depends on).
Options first_options(const Options& options, void* sorted_keys) {
  Options o;
  o.descending = options.descending;
  o.begin_bit = options.begin_bit;
  o.end_bit = options.end_bit;
  o.numpy_float_order = options.numpy_float_order;
  o.sorted_keys = sorted_keys;
  return o;
}

Options second_options(uint64_t segments) {
  Options o;
  o.end_bit = segment_bits(segments);
  return o;
}

void check_value_bytes(uint32_t value_bytes) {
  if (value_bytes != 0 && value_bytes != 4 && value_bytes != 8)
    throw Error("segmented sort: values are 0, 4 or 8 bytes wide, not " +
                std::to_string(value_bytes));
}

void check_index_bytes(uint32_t index_bytes) {
  if (index_bytes != 4 && index_bytes != 8)
    throw Error("segmented argsort: indices are 4 or 8 bytes wide, not " +
                std::to_string(index_bytes));
}

void check_arguments(const char* call, uint64_t n, uint32_t offset_bytes, uint64_t segments,
                     const Options& options) {
  if (n >= max_n)
    throw Error(std::string(call) + ": the CUDA face sorts fewer than 2^32 elements, not " +
                std::to_string(n));
  if (segments >= max_n)
    throw Error(std::string(call) + ": fewer than 2^32 segments, not " + std::to_string(segments));
  if (n > 0 && segments == 0)
    throw Error(std::string(call) + ": no segments for " + std::to_string(n) + " keys");
  if (offset_bytes != 4 && offset_bytes != 8)
    throw Error(std::string(call) + ": offsets are 4 or 8 bytes wide, not " +
                std::to_string(offset_bytes));
  if (options.count)
    throw Error(std::string(call) + ": a GPU-side count does not apply (the offsets give n)");
  if (options.keys_in || options.sorted_keys)
    throw Error(std::string(call) + ": keys_in and sorted_keys do not apply");
}

SegmentedLayout segmented_layout(KeyType key_type, uint32_t value_bytes, uint64_t n,
                                 uint64_t segments, const Options& options) {
  SegmentedLayout l;
  ScratchLayout buffers;
  static char any_address;
  l.first =
      buffers.take(argsort_scratch_bytes(key_type, 4, n, first_options(options, &any_address)));
  l.positions = buffers.take(n * 4);
  l.sorted_keys = buffers.take(n * key_bytes(key_type));
  l.segments = buffers.take(n * 4);
  l.order = buffers.take(n * 4);
  l.second = buffers.take(argsort_scratch_bytes(KeyType::u32, 4, n, second_options(segments)));
  l.values = buffers.take(n * value_bytes);
  l.total = buffers.total();
  return l;
}

// The two argsorts, then the composed permutation, positions[order[i]], into `permutation` (the
// caller's u32 indices, or the segments' buffer, no longer needed).
void sort_by_segment(Module& module, KeyType key_type, const void* keys, uint64_t n,
                     const void* offsets, uint32_t offset_bytes, uint64_t segments,
                     const SegmentedLayout& l, const CallScratch& scratch, Stream stream,
                     const Options& options, uint32_t* permutation) {
  uint32_t* positions = scratch.at<uint32_t>(l.positions);
  uint32_t* segment = scratch.at<uint32_t>(l.segments);
  uint32_t* order = scratch.at<uint32_t>(l.order);
  Options first = first_options(options, scratch.at<void>(l.sorted_keys));
  first.scratch = scratch.at<void>(l.first);
  first.scratch_size = l.positions - l.first;
  argsort_raw(key_type, keys, positions, 4, n, stream, first);
  const SegmentOfParams of{segment, offsets, positions, n, segments, offset_bytes};
  launch(module.function(kSegmentOfKernel), elementwise_grid(module, n), kElementwiseThreads, 0,
         stream, of);
  Options second = second_options(segments);
  second.scratch = scratch.at<void>(l.second);
  second.scratch_size = l.values - l.second;
  argsort_raw(KeyType::u32, segment, order, 4, n, stream, second);
  elementwise(module, kGather32Kernel, {permutation, positions, order, nullptr, n}, stream);
}

}  // namespace

uint64_t segmented_scratch_bytes(KeyType key_type, uint32_t value_bytes, uint64_t n,
                                 uint64_t segments, const Options& options) {
  check_value_bytes(value_bytes);
  check_arguments("segmented sort", n, 4, segments, options);
  if (segments <= 1) return scratch_bytes(key_type, value_bytes, n, options);
  return segmented_layout(key_type, value_bytes, n, segments, options).total;
}

uint64_t segmented_argsort_scratch_bytes(KeyType key_type, uint32_t index_bytes, uint64_t n,
                                         uint64_t segments, const Options& options) {
  check_arguments("segmented argsort", n, 4, segments, options);
  if (segments <= 1) return argsort_scratch_bytes(key_type, index_bytes, n, options);
  check_index_bytes(index_bytes);
  return segmented_layout(key_type, 0, n, segments, options).total;
}

void segmented_sort_raw(KeyType key_type, void* keys, void* values, uint32_t value_bytes,
                        uint64_t n, const void* offsets, uint32_t offset_bytes, uint64_t segments,
                        Stream stream, const Options& options) {
  if (!values) value_bytes = 0;
  check_value_bytes(value_bytes);
  check_arguments("segmented sort", n, offset_bytes, segments, options);
  if (n == 0) return;
  if (!keys || !offsets)
    throw Error(!keys ? "segmented sort: keys is null" : "segmented sort: offsets is null");
  if (segments == 1) return sort_raw(key_type, keys, values, value_bytes, n, stream, options);
  const StreamContext context(stream);
  Module& module = module_for(context.context());
  const SegmentedLayout l = segmented_layout(key_type, value_bytes, n, segments, options);
  const CallScratch scratch(options, l.total, stream,
                            "segmented sort: ", "this sort needs (segmented_scratch_bytes)");
  if (value_bytes)
    check(driver().memcpy_dtod_async(scratch.at(l.values), reinterpret_cast<CUdeviceptr>(values),
                                     size_t(n * value_bytes), stream),
          "cuMemcpyDtoDAsync");
  uint32_t* permutation = scratch.at<uint32_t>(l.segments);
  sort_by_segment(module, key_type, keys, n, offsets, offset_bytes, segments, l, scratch, stream,
                  options, permutation);
  const uint32_t* order = scratch.at<uint32_t>(l.order);
  elementwise(module, key_bytes(key_type) == 4 ? kGather32Kernel : kGather64Kernel,
              {keys, scratch.at<void>(l.sorted_keys), order, nullptr, n}, stream);
  if (value_bytes)
    elementwise(module, value_bytes == 4 ? kGather32Kernel : kGather64Kernel,
                {values, scratch.at<void>(l.values), permutation, nullptr, n}, stream);
}

void segmented_argsort_raw(KeyType key_type, const void* keys, void* indices, uint32_t index_bytes,
                           uint64_t n, const void* offsets, uint32_t offset_bytes,
                           uint64_t segments, Stream stream, const Options& options) {
  check_index_bytes(index_bytes);
  check_arguments("segmented argsort", n, offset_bytes, segments, options);
  if (n == 0) return;
  if (!keys || !indices || !offsets)
    throw Error(std::string("segmented argsort: ") +
                (!keys      ? "keys"
                 : !indices ? "indices"
                            : "offsets") +
                " is null");
  if (segments == 1) return argsort_raw(key_type, keys, indices, index_bytes, n, stream, options);
  const StreamContext context(stream);
  Module& module = module_for(context.context());
  const SegmentedLayout l = segmented_layout(key_type, 0, n, segments, options);
  const CallScratch scratch(options, l.total, stream, "segmented argsort: ",
                            "this argsort needs (segmented_argsort_scratch_bytes)");
  uint32_t* permutation =
      index_bytes == 4 ? static_cast<uint32_t*>(indices) : scratch.at<uint32_t>(l.segments);
  sort_by_segment(module, key_type, keys, n, offsets, offset_bytes, segments, l, scratch, stream,
                  options, permutation);
  if (index_bytes == 8)
    elementwise(module, kWidenKernel, {indices, permutation, nullptr, nullptr, n}, stream);
}

}  // namespace gpusort::cuda
