// Top-k on the CUDA face (include/gpusort/cuda.hpp): arguments checked as the Vulkan faces' top-k
// checks them (src/api/topk_api.cpp), the scratch laid out, and the launches enqueued on the
// caller's stream: with the bound, its list (or the digits' result where it overflows) sorted by
// one last launch that writes the results as the caller wants them; without it, the radix select
// and the stable compaction (algorithms/topk/cuda/), the sort of the keys before the k-th by the
// face's own sort_raw (its count read on the GPU from the select's state), then the values
// gathered and the positions widened. Nothing is read back.
#include <algorithm>
#include <gpusort/cuda.hpp>

#include "algorithms/topk/cuda/topk_params.hpp"
#include "api/cuda_call.hpp"
#include "cuda/environment.hpp"
#include "cuda/module.hpp"
#include "primitives/cuda/elementwise.hpp"
#include "primitives/cuda/float_order.hpp"
#include "primitives/key_order.h"
#include "primitives/sort_spec.hpp"

namespace gpusort::cuda {

namespace {

constexpr const char* call = "topk";

// The CUDA face's positions are u32.
constexpr uint64_t max_n = uint64_t(1) << 32;

// The scratch of one call, each buffer aligned to 256 bytes.
struct TopKLayout {
  uint64_t state = 0, candidates = 0, tile_counts = 0, tile_offsets = 0, keys = 0, positions = 0,
           block_sums = 0, entries = 0, bound_state = 0, list_keys = 0, list_positions = 0,
           list_keys_b = 0, list_positions_b = 0, list_counts = 0, qualifying = 0, group_lows = 0,
           sort = 0, total = 0;
  uint32_t tiles = 0, capacity = 0, entries_n = 0, list_capacity = 0, qualifying_capacity = 0;
  bool lows = false;  // the groups' lows (where no entries' shares are read)
};

// The survivors' sort: the caller's order and bits, in totalOrder (NumPy's order is read
// canonical by the select, so its survivors are canonical keys).
Options survivors_options(const SortSpec& spec) {
  Options o;
  o.descending = spec.descending;
  o.begin_bit = spec.begin_bit;
  o.end_bit = spec.end_bit;
  return o;
}

// Keys a 16-byte load holds: the bound's first read takes them so.
uint32_t keys_a_load(const SortSpec& spec) {
  return 16 / (spec.key_words * 4);
}

TopKLayout topk_layout(const SortSpec& spec, uint64_t n, uint64_t k) {
  TopKLayout l;
  if (n == 0 || k == 0) return l;
  l.tiles = uint32_t((n + kTopKTile - 1) / kTopKTile);
  // Spread keys put about n / 2048 in the first digit's bucket; keys piled into fewer buckets
  // take the full passes instead.
  l.capacity = uint32_t(std::min<uint64_t>(n, n / 8 + 1024));
  // The bound (topk_params.hpp) where its entries (4 k, and enough for the reads in flight) are
  // at most a quarter of the keys; its list takes up to 2 k + 2048 (spread keys list about 1.15 k,
  // sorted ones k). GPUSORT_CUDA_TOPK_BOUND=0 leaves it out, for measurements.
  const uint64_t grain = uint64_t(kTopKThreads) * keys_a_load(spec);  // whole blocks
  const uint64_t entries =
      (std::max<uint64_t>(4 * k, kTopKBoundThreads * keys_a_load(spec)) + grain - 1) / grain *
      grain;
  if (entries <= n / 4 && cuda_environment().topk_bound) {
    l.entries_n = uint32_t(entries);
    l.list_capacity = uint32_t(2 * k + 2048);
    l.qualifying_capacity = topk_qualifying_capacity(n, l.entries_n, spec.key_words * 4, k);
  }
  ScratchLayout buffers;
  l.state = buffers.take(uint64_t(kTopKStateWords + kTopKMaxPasses * kTopKBins) * 4);
  l.candidates = buffers.take(uint64_t(std::max(l.capacity, l.list_capacity)) * 4);
  l.tile_counts = buffers.take(uint64_t(l.tiles) * 8);
  l.tile_offsets = buffers.take(uint64_t(l.tiles) * 8);
  l.block_sums = buffers.take(uint64_t(kTopKScanBlocks) * 8);
  l.keys = buffers.take(k * spec.key_words * 4);
  l.entries = buffers.take(uint64_t(l.entries_n) * spec.key_words * 4);
  l.bound_state = buffers.take(l.entries_n ? uint64_t(kTopKBoundStateWords) * 4 : 0);
  l.list_keys = buffers.take(uint64_t(l.list_capacity) * spec.key_words * 4);
  l.list_positions = buffers.take(uint64_t(l.list_capacity) * 4);
  l.qualifying = buffers.take(uint64_t(l.qualifying_capacity) * 4);
  const uint64_t key_bytes = spec.key_words * 4;
  // The groups' lows where no entries' shares are read and the array is past the L2 cache: at
  // 2^28 keys with k = 65,536 they took the call from 0.59 to 0.42 ms; at 2^24 (64 MiB, much of
  // it still in L2 from least's read as the second read runs backward) 0.130-0.150 ms without
  // them, 0.141-0.161 with (bench_torch.py --topk, H200, 2026-12-01).
  l.lows = l.entries_n != 0 && l.qualifying_capacity == 0 && n * key_bytes > (uint64_t(64) << 20);
  l.group_lows = buffers.take(l.lows ? topk_groups(n, uint32_t(key_bytes)) * key_bytes : 0);
  l.positions = buffers.take(k * 4);
  // A long list's sort (list_order), or without the bound the survivors' (the face's sort).
  if (topk_long_list(l.list_capacity)) {
    l.list_keys_b = buffers.take(uint64_t(l.list_capacity) * spec.key_words * 4);
    l.list_positions_b = buffers.take(uint64_t(l.list_capacity) * 4);
    l.list_counts = buffers.take(topk_list_counts_words(l.list_capacity) * 4);
  } else if (l.entries_n == 0) {
    l.sort = buffers.take(scratch_bytes(spec.key, 4, k, survivors_options(spec)));
  }
  l.total = buffers.total();
  return l;
}

// Whether the call selects floats in NumPy's order (only over the full bit range), as the sorts.
bool numpy_order(const SortSpec& spec, const Options& options, const char* what = call) {
  if (!options.numpy_float_order || spec.key_kind != key_kind_float) return false;
  if (spec.begin_bit != 0 || spec.end_bit != spec.key_words * 32)
    throw Error(std::string(what) + ": numpy_float_order compares the full key, not bits [" +
                std::to_string(spec.begin_bit) + ", " + std::to_string(spec.end_bit) + ")");
  return true;
}

SortSpec topk_spec(KeyType key_type, uint64_t n, uint64_t k, const Options& options) {
  const SortSpec spec =
      make_sort_spec(key_type, 0, options.descending, options.begin_bit, options.end_bit);
  numpy_order(spec, options);
  if (n >= max_n)
    throw Error(std::string(call) + ": the CUDA face takes fewer than 2^32 keys, not " +
                std::to_string(n));
  if (k > n)
    throw Error(std::string(call) + ": k = " + std::to_string(k) + " is more than the " +
                std::to_string(n) + " keys");
  return spec;
}

}  // namespace

uint64_t topk_scratch_bytes(KeyType key_type, uint64_t n, uint64_t k, const Options& options) {
  return topk_layout(topk_spec(key_type, n, k, options), n, k).total;
}

void topk_raw(KeyType key_type, const void* keys, uint64_t n, uint64_t k, void* keys_out,
              const void* values, void* values_out, uint32_t value_bytes, void* indices,
              uint32_t index_bytes, Stream stream, const Options& options) {
  const bool with_values = values || values_out;
  if (with_values && k > 0 && (!values || !values_out))
    throw Error(std::string(call) + ": values need both the input values and values_out");
  if (with_values && value_bytes != 4 && value_bytes != 8)
    throw Error(std::string(call) + ": values are 4 or 8 bytes wide, not " +
                std::to_string(value_bytes));
  const SortSpec spec = topk_spec(key_type, n, k, options);
  if (indices && index_bytes != 4 && index_bytes != 8)
    throw Error(std::string(call) + ": indices are 4 or 8 bytes wide, not " +
                std::to_string(index_bytes));
  if (n && !keys) throw Error(std::string(call) + ": keys are null");
  if (n == 0 || k == 0) return;
  if (!keys_out && !values_out && !indices)
    throw Error(std::string(call) + ": nothing to write (no output keys, values or indices)");
  const bool numpy = numpy_order(spec, options);
  const StreamContext context(stream);
  Module& module = module_for(context.context());
  const TopKLayout layout = topk_layout(spec, n, k);
  const CallScratch scratch(options, layout.total, stream, std::string(call) + ": ",
                            "this top-k needs (topk_scratch_bytes)");

  TopKParams p{};
  p.keys = keys;
  p.keys_out = keys_out ? keys_out : scratch.at<void>(layout.keys);
  p.positions = indices && index_bytes == 4 ? static_cast<uint32_t*>(indices)
                                            : scratch.at<uint32_t>(layout.positions);
  p.state = scratch.at<uint32_t>(layout.state);
  p.entries = scratch.at<void>(layout.entries);
  p.bound_state = scratch.at<uint32_t>(layout.bound_state);
  p.entries_n = layout.entries_n;
  p.list_capacity = layout.list_capacity;
  p.list_keys = scratch.at<void>(layout.list_keys);
  p.list_positions = scratch.at<uint32_t>(layout.list_positions);
  p.list_keys_b = scratch.at<void>(layout.list_keys_b);
  p.list_positions_b = scratch.at<uint32_t>(layout.list_positions_b);
  p.list_counts = scratch.at<uint32_t>(layout.list_counts);
  p.qualifying = scratch.at<uint32_t>(layout.qualifying);
  p.qualifying_capacity = layout.qualifying_capacity;
  p.group_lows = layout.lows ? scratch.at<void>(layout.group_lows) : nullptr;
  p.candidates = scratch.at<uint32_t>(layout.candidates);
  p.tile_counts = scratch.at<unsigned long long>(layout.tile_counts);
  p.tile_offsets = scratch.at<unsigned long long>(layout.tile_offsets);
  p.block_sums = scratch.at<unsigned long long>(layout.block_sums);
  p.count = options.count;
  const uint64_t below_end = spec.end_bit >= 64 ? ~0ull : (1ull << spec.end_bit) - 1;
  p.mask = below_end & ~((1ull << spec.begin_bit) - 1);
  p.n = uint32_t(n);
  p.k = uint32_t(k);
  p.tiles = layout.tiles;
  p.capacity = layout.capacity;
  p.key_kind = spec.key_kind;
  p.descending = spec.descending ? 1 : 0;
  p.numpy = numpy ? 1 : 0;
  p.begin_bit = spec.begin_bit;
  p.end_bit = spec.end_bit;
  p.list_buckets = cuda_environment().topk_buckets ? 1 : 0;

  const std::string suffix = spec.key_words == 1 ? "32" : "64";
  // A bounded grid for the kernels that stride over the tiles (8 blocks per SM): their global
  // histogram atomics stay about 2048 x blocks per pass whatever n.
  const uint32_t grid = uint32_t(std::clamp<uint64_t>(layout.tiles, 1, 8ull * module.sm_count()));
  const bool bounded = p.entries_n != 0;
  if (bounded) {
    // The bound (topk_params.hpp): its state block cleared (least adds the first digit's
    // histogram to it); the entries (and both state blocks), a reader a thread (each with 8
    // 16-byte loads in flight; 4 blocks an SM); then one cooperative launch: their select (the
    // digits over the entries, read as unsigned keys in the select's order), the bound, the list
    // of the keys at or below it. A block an SM where the list reads only the entries' shares (the
    // grid barriers cost less: 22.6 µs against 26.2 with 3 at 2^24, f32, k = 32), 3 where it reads
    // the whole array (more loads in flight: 0.70 ms against 0.92 at 2^28 with k = 65,536).
    check(
        driver().memset_d32_async(scratch.at(layout.bound_state), 0, kTopKBoundStateWords, stream),
        "cuMemsetD32Async");
    launch(module.function((p.group_lows ? kTopKLeastLows : kTopKLeast) + suffix),
           p.entries_n / keys_a_load(spec) / kTopKThreads, kTopKThreads, 0, stream, p);
    const CUfunction bound = module.function(kTopKBound + suffix);
    const uint32_t bound_grid = p.qualifying_capacity != 0 ? module.sm_count() : grid;
    launch_cooperative(bound, std::min(bound_grid, module.resident_blocks(bound, kTopKThreads)),
                       kTopKThreads, stream, p);
  } else {
    launch(module.function(kTopKInit), 1, kTopKThreads, 0, stream, p);
  }
  // The digits over the array and the compaction, its blocks resident (nothing where the bound's
  // list gave the result): with the bound, into the list.
  TopKParams compaction = p;
  if (bounded) {
    compaction.keys_out = p.list_keys;
    compaction.positions = p.list_positions;
  }
  const CUfunction digits = module.function(kTopKDigits + suffix);
  launch_cooperative(
      digits, std::min({grid, module.resident_blocks(digits, kTopKThreads), kTopKScanBlocks}),
      kTopKThreads, stream, compaction);

  if (bounded) {
    // The bound's list where it fits, else the digits' result, sorted by (key, position) and the
    // first k written as the caller wants them (the original keys, u64 indices, values): k up to
    // a block's sort by one block, longer lists by one cooperative sort.
    p.indices64 = indices && index_bytes == 8 ? static_cast<unsigned long long*>(indices) : nullptr;
    if (with_values) {
      p.values = values;
      p.values_out = values_out;
      p.value_bytes = value_bytes;
    }
    if (topk_long_list(p.list_capacity)) {
      const CUfunction order = module.function(kTopKListOrder + suffix);
      launch_cooperative(
          order,
          std::min(topk_list_blocks(p.list_capacity), module.resident_blocks(order, kTopKThreads)),
          kTopKThreads, stream, p);
    } else {
      launch(module.function(kTopKListSort + suffix), 1, kTopKListSortThreads, 0, stream, p);
    }
    return;
  }

  // Without the bound: the keys before the k-th, with their positions, sorted stably by the face's
  // sort; the equal ones after them are all equal and already in position order.
  Options sort = survivors_options(spec);
  sort.scratch = scratch.at<void>(layout.sort);
  sort.scratch_size = layout.total - layout.sort;
  sort.count = p.state + kTopKStateBefore;
  sort_raw(key_type, p.keys_out, p.positions, 4, k, stream, sort);

  const uint32_t* results = p.state + kTopKStateK;  // min(k, n): the GPU-side count's
  // NumPy's order: the original zeros and NaNs where canonical ones stand.
  if (numpy && keys_out)
    elementwise(module, (kFixSorted + std::string(spec.key_words == 1 ? "f32" : "f64")).c_str(),
                {keys_out, keys, p.positions, results, k}, stream);
  if (with_values)
    elementwise(module, value_bytes == 4 ? kGather32Kernel : kGather64Kernel,
                {values_out, values, p.positions, results, k}, stream);
  if (indices && index_bytes == 8)
    elementwise(module, kWidenKernel, {indices, p.positions, nullptr, results, k}, stream);
}

namespace {

// Per segment: the segmented argsort's positions and scratch, the results' places where the
// caller gives none, and for rows their offsets, each aligned to 256 bytes.
struct TopKSegmentsLayout {
  uint64_t order = 0, argsort = 0, result_offsets = 0, row_offsets = 0, total = 0;
};
Options segments_options(const Options& options) {
  Options o;
  o.descending = options.descending;
  o.begin_bit = options.begin_bit;
  o.end_bit = options.end_bit;
  o.numpy_float_order = options.numpy_float_order;
  return o;
}
TopKSegmentsLayout topk_segments_layout(KeyType key_type, uint64_t n, uint64_t segments, bool rows,
                                        const Options& options) {
  TopKSegmentsLayout l;
  ScratchLayout buffers;
  l.order = buffers.take(n * 4);
  l.argsort = buffers.take(
      segmented_argsort_scratch_bytes(key_type, 4, n, segments, segments_options(options)));
  l.result_offsets = buffers.take((segments + 1) * 4);
  if (rows) l.row_offsets = buffers.take((segments + 1) * 8);
  l.total = buffers.total();
  return l;
}
void check_segments_call(const char* what, KeyType key_type, uint64_t n, uint64_t segments,
                         const Options& options) {
  numpy_order(make_sort_spec(key_type, 0, options.descending, options.begin_bit, options.end_bit),
              options, what);
  if (n >= max_n)
    throw Error(std::string(what) + ": the CUDA face takes fewer than 2^32 keys, not " +
                std::to_string(n));
  if (segments >= max_n)
    throw Error(std::string(what) + ": fewer than 2^32 segments, not " + std::to_string(segments));
  if (n > 0 && segments == 0)
    throw Error(std::string(what) + ": no segments for " + std::to_string(n) + " keys");
  if (options.count || options.keys_in || options.sorted_keys)
    throw Error(std::string(what) +
                ": options.count, keys_in and sorted_keys do not apply (the offsets give n)");
}

// Rows a block each: up to kTopKRowsCapacity keys in shared memory (topk_segments.cu's
// rows_select; its wide kernel past half that) where `in_shared`, no scratch; else
// long_rows_select, or fewer rows than SMs split into chunks (their positions in scratch).
void rows_select(bool in_shared, Module& module, KeyType key_type, const void* keys, uint64_t rows,
                 uint64_t row_length, uint64_t k, void* keys_out, const void* values,
                 void* values_out, uint32_t value_bytes, void* indices, uint32_t index_bytes,
                 Stream stream, const Options& options) {
  const SortSpec spec =
      make_sort_spec(key_type, 0, options.descending, options.begin_bit, options.end_bit);
  const uint32_t key_bytes = spec.key_words * 4;
  const uint64_t below_end = spec.end_bit >= 64 ? ~0ull : (1ull << spec.end_bit) - 1;
  const TopKSegmentsParams p{.keys = keys,
                             .keys_out = keys_out,
                             .values = values,
                             .values_out = values_out,
                             .indices = indices,
                             .segments = rows,
                             .k = k,
                             .key_bytes = key_bytes,
                             .value_bytes = value_bytes,
                             .index_bytes = index_bytes,
                             .in_segment = 1,
                             .row_length = row_length,
                             .mask = below_end & ~((1ull << spec.begin_bit) - 1),
                             .key_kind = spec.key_kind,
                             .descending = spec.descending ? 1u : 0u,
                             .numpy = numpy_order(spec, options, "topk_rows") ? 1u : 0u};
  const std::string width = key_bytes == 4 ? "32" : "64";
  if (!in_shared) {
    // Fewer rows than SMs: each row's chunks a block each, then a block a row (their scratch is
    // at most the n u32 that topk_rows_scratch_bytes counts).
    const uint64_t chunks =
        std::min({module.sm_count() / std::max<uint64_t>(rows, 1), kTopKLongRowsCandidates / k,
                  row_length / kTopKLongRowsMinChunk});
    if (chunks >= 2) {
      const CallScratch scratch(options, rows * chunks * k * 4, stream,
                                "topk_rows: ", "this top-k needs (topk_rows_scratch_bytes)");
      TopKSegmentsParams split = p;
      split.chunk_positions = scratch.at<uint32_t>(0);
      split.chunks = uint32_t(chunks);
      split.chunk_length = (row_length + chunks - 1) / chunks;
      launch(module.function(kTopKLongRowsChunks + width), uint32_t(rows * chunks),
             kTopKLongRowsThreads, 0, stream, split);
      return launch(module.function(kTopKLongRowsMerge + width), uint32_t(rows),
                    kTopKLongRowsThreads, 0, stream, split);
    }
    const uint32_t grid = uint32_t(std::min<uint64_t>(rows, 2ull * module.sm_count()));
    return launch(module.function(kTopKLongRowsSelect + width), grid, kTopKLongRowsThreads, 0,
                  stream, p);
  }
  const char* prefix = row_length > kTopKRowsCapacity / 2 ? kTopKRowsSelectWide : kTopKRowsSelect;
  const CUfunction select =
      module.function(prefix + width, topk_rows_shared_bytes(key_bytes, kTopKRowsCapacity));
  const uint32_t grid = uint32_t(std::min<uint64_t>(rows, 4ull * module.sm_count()));
  launch(select, grid, kTopKRowsThreads, topk_rows_shared_bytes(key_bytes, row_length), stream, p);
}

// The per-segment top-k of topk_segments_raw (the caller's offsets) and topk_rows_raw (rows:
// segments of row_length, their offsets made first, positions within the row).
void segments_topk(const char* name, KeyType key_type, const void* keys, uint64_t n, bool rows,
                   const void* offsets, uint32_t offset_bytes, uint64_t segments,
                   uint64_t row_length, uint64_t k, void* keys_out, const void* values,
                   void* values_out, uint32_t value_bytes, void* indices, uint32_t index_bytes,
                   uint32_t* result_offsets, Stream stream, const Options& options) {
  const std::string what = std::string(name) + ": ";
  check_segments_call(name, key_type, n, segments, options);
  const bool with_values = values || values_out;
  if (with_values && k > 0 && (!values || !values_out))
    throw Error(what + "values need both the input values and values_out");
  if (with_values && value_bytes != 4 && value_bytes != 8)
    throw Error(what + "values are 4 or 8 bytes wide, not " + std::to_string(value_bytes));
  if (indices && index_bytes != 4 && index_bytes != 8)
    throw Error(what + "indices are 4 or 8 bytes wide, not " + std::to_string(index_bytes));
  if (!rows && offset_bytes != 4 && offset_bytes != 8)
    throw Error(what + "offsets are 4 or 8 bytes wide, not " + std::to_string(offset_bytes));
  if (n == 0 || k == 0) return;
  if (!keys || (!rows && !offsets))
    throw Error(what + (!keys ? "keys are null" : "offsets are null"));
  if (!keys_out && !values_out && !indices && !result_offsets)
    throw Error(what + "nothing to write (no output keys, values, indices or result offsets)");
  const StreamContext context(stream);
  Module& module = module_for(context.context());
  // Rows a block each: in shared memory where the device gives a block that of the longest row,
  // else for k up to kTopKLongRowsK.
  const bool in_shared = row_length <= kTopKRowsCapacity &&
                         topk_rows_shared_bytes(key_bytes(key_type), kTopKRowsCapacity) <=
                             module.shared_per_block_optin();
  if (rows && (in_shared || k <= kTopKLongRowsK))
    return rows_select(in_shared, module, key_type, keys, segments, row_length, k, keys_out, values,
                       values_out, value_bytes, indices, index_bytes, stream, options);
  const TopKSegmentsLayout l = topk_segments_layout(key_type, n, segments, rows, options);
  const std::string needs = std::string("this top-k needs (") + name + "_scratch_bytes)";
  const CallScratch scratch(options, l.total, stream, what, needs.c_str());
  TopKSegmentsParams p{
      .keys = keys,
      .keys_out = keys_out,
      .values = values,
      .values_out = values_out,
      .indices = indices,
      .order = scratch.at<uint32_t>(l.order),
      .offsets = rows ? scratch.at<void>(l.row_offsets) : offsets,
      .result_offsets = result_offsets ? result_offsets : scratch.at<uint32_t>(l.result_offsets),
      .segments = segments,
      .k = k,
      .key_bytes = key_bytes(key_type),
      .value_bytes = value_bytes,
      .index_bytes = index_bytes,
      .offset_bytes = rows ? 8u : offset_bytes,
      .in_segment = rows ? 1u : 0u,
      .row_length = row_length};
  const uint64_t warps_per_block = kTopKSegmentTakeThreads / 32;
  const uint32_t grid = uint32_t(std::clamp<uint64_t>(
      (segments + warps_per_block - 1) / warps_per_block, 1, 8ull * module.sm_count()));
  if (rows) launch(module.function(kTopKRowOffsets), grid, kTopKSegmentTakeThreads, 0, stream, p);
  Options argsort = segments_options(options);
  argsort.scratch = scratch.at<void>(l.argsort);
  argsort.scratch_size = l.result_offsets - l.argsort;
  segmented_argsort_raw(key_type, keys, const_cast<uint32_t*>(p.order), 4, n, p.offsets,
                        p.offset_bytes, segments, stream, argsort);
  launch(module.function(kTopKSegmentOffsets), 1, kTopKSegmentOffsetsThreads, 0, stream, p);
  launch(module.function(kTopKSegmentTake), grid, kTopKSegmentTakeThreads, 0, stream, p);
}

}  // namespace

uint64_t topk_segments_scratch_bytes(KeyType key_type, uint64_t n, uint64_t segments, uint64_t k,
                                     const Options& options) {
  check_segments_call("topk_segments", key_type, n, segments, options);
  if (n == 0 || k == 0) return 0;
  return topk_segments_layout(key_type, n, segments, false, options).total;
}

void topk_segments_raw(KeyType key_type, const void* keys, uint64_t n, const void* offsets,
                       uint32_t offset_bytes, uint64_t segments, uint64_t k, void* keys_out,
                       const void* values, void* values_out, uint32_t value_bytes, void* indices,
                       uint32_t index_bytes, uint32_t* result_offsets, Stream stream,
                       const Options& options) {
  segments_topk("topk_segments", key_type, keys, n, false, offsets, offset_bytes, segments, 0, k,
                keys_out, values, values_out, value_bytes, indices, index_bytes, result_offsets,
                stream, options);
}

namespace {
// rows x row_length keys, refused from 2^32 (the CUDA face's positions are u32).
uint64_t rows_keys(uint64_t rows, uint64_t row_length) {
  if (row_length != 0 && rows > (max_n - 1) / row_length)
    throw Error("topk_rows: " + std::to_string(rows) + " rows of " + std::to_string(row_length) +
                " keys: the CUDA face takes fewer than 2^32 keys");
  return rows * row_length;
}
}  // namespace

uint64_t topk_rows_scratch_bytes(KeyType key_type, uint64_t rows, uint64_t row_length, uint64_t k,
                                 const Options& options) {
  const uint64_t n = rows_keys(rows, row_length);
  check_segments_call("topk_rows", key_type, n, rows, options);
  if (n == 0 || k == 0) return 0;
  // (Rows of up to kTopKRowsCapacity keys need none where the device takes them a block each.)
  return topk_segments_layout(key_type, n, rows, true, options).total;
}

void topk_rows_raw(KeyType key_type, const void* keys, uint64_t rows, uint64_t row_length,
                   uint64_t k, void* keys_out, const void* values, void* values_out,
                   uint32_t value_bytes, void* indices, uint32_t index_bytes, Stream stream,
                   const Options& options) {
  segments_topk("topk_rows", key_type, keys, rows_keys(rows, row_length), true, nullptr, 8, rows,
                row_length, k, keys_out, values, values_out, value_bytes, indices, index_bytes,
                nullptr, stream, options);
}

}  // namespace gpusort::cuda
