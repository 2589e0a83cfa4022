// Top-k on the CUDA face (topk_select.cu): the kernels' parameters and names, read by the kernels
// (nvcc) and the host (src/api/cuda_topk.cpp). The same radix select as the Vulkan kernels
// (docs/design/topk.md, "On the CUDA face"): 11-bit digits from the top of the compared bits,
// a candidate list after the first digit where it fits, a stable compaction by tiles, then the
// face's own sort of the keys before the k-th.
#ifndef GPUSORT_ALGORITHMS_TOPK_CUDA_TOPK_PARAMS_HPP
#define GPUSORT_ALGORITHMS_TOPK_CUDA_TOPK_PARAMS_HPP

#include <cstdint>

#include "primitives/key_order.h"  // GPUSORT_HOST_DEVICE

namespace gpusort::cuda {

inline constexpr uint32_t kTopKThreads = 256;  // every kernel's block but the scan's
inline constexpr uint32_t kTopKItems = 8;      // keys per thread in a tile
inline constexpr uint32_t kTopKTile = kTopKThreads * kTopKItems;
inline constexpr uint32_t kTopKDigitBits = 11;
inline constexpr uint32_t kTopKBins = 1u << kTopKDigitBits;
inline constexpr uint32_t kTopKMaxPasses = 6;  // a 64-bit key in 11-bit digits

// The state block (u32 words) at the start of the scratch, then kTopKMaxPasses histograms of
// kTopKBins u32 (pass p's at word kTopKStateWords + p x kTopKBins).
inline constexpr uint32_t kTopKStateN = 0;           // the element count (GPU-side count clamped)
inline constexpr uint32_t kTopKStateK = 1;           // min(k, n)
inline constexpr uint32_t kTopKStateBefore = 2;      // keys strictly before the k-th key
inline constexpr uint32_t kTopKStatePrefix = 3;      // words 3 (low), 4 (high): the k-th key
inline constexpr uint32_t kTopKStateNeedEqual = 5;   // keys equal to the k-th that the result takes
inline constexpr uint32_t kTopKStateCursor = 6;      // the candidate list's next free entry
inline constexpr uint32_t kTopKStateBounded = 7;     // the bound's list: the keys at or below it
inline constexpr uint32_t kTopKStateListed = 8;      // the digits' result in a long list: its count
inline constexpr uint32_t kTopKStateQualifying = 9;  // the bound's entries at or below it
inline constexpr uint32_t kTopKStateBound = 10;      // words 10 (low), 11 (high): the bound
inline constexpr uint32_t kTopKStateWords = 16;

// The bound (entries_n > 0). A first read gives each of entries_n entries the least key of a
// strided share of the array (entry e: keys e, e + entries_n, ...; 16-byte loads, a thread's
// vector a key of each of 16 / key bytes consecutive entries); the k-th least entry, found by the
// digit passes over the entries (a second state block), is at least the k-th key, and at least k
// keys lie at or below it. A second read lists the positions of the keys at or below it: spread
// keys about 1.15 k for entries_n = 4 k, sorted ones k. Where they fit the list (list_capacity),
// the list is sorted by (key, position) and the first k taken: no digits over the array, no
// compaction by tiles. Where keys pile at the bound and overflow the list, the digits run, as
// without the bound, and write their result into the list (the keys before the k-th in input
// order, then the equal ones), so that the list's one sort orders either and writes the results
// as the caller wants them: list_sort (k up to 1024, one block in shared memory) or list_order
// (below).
//
// The second read takes only the shares of the entries at or below the bound (the others hold no
// key at or below it) where there are at most topk_qualifying_capacity of them: each of their keys
// costs a 32-byte sector. Where k such shares would cost more than the groups' lows (below), the
// first read also writes each group's least key (kTopKGroupBytes of consecutive keys: a 16th of
// 32-bit keys' bytes, an 8th of 64-bit ones'), and the second reads the lows and only the groups
// whose low lies at or below the bound. Where more entries than the capacity lie at or below it
// (keys piled at the bound), the second read takes the whole array.
inline constexpr uint32_t kTopKBoundThreads = 1u << 17;  // at least: the reads in flight
inline constexpr uint32_t kTopKLoads = 8;                // 16-byte loads in flight a thread
inline constexpr uint32_t kTopKGroupBytes = 64;          // a group: four 16-byte loads
inline constexpr uint32_t kTopKLowsLoads = 4;            // in flight where least writes the lows
// The groups of n keys of key_bytes: a low each.
GPUSORT_HOST_DEVICE constexpr uint64_t topk_groups(uint64_t n, uint32_t key_bytes) {
  return (n * key_bytes + kTopKGroupBytes - 1) / kTopKGroupBytes;
}
// The bound's select stops at the first digit whose bucket holding the k-th least entry has at
// most this many: the bound is the top of that bucket (the list longer by at most as many keys).
inline constexpr uint32_t kTopKBoundBucket = 64;
// The entries whose shares the second read may take: as many as cost at most the lows' bytes
// written and read (n key_bytes / 64 lows of key_bytes each, twice), at 32 bytes a key. 0 where
// that is below k + kTopKBoundBucket (so many entries may lie at or below the bound): the lows are
// read instead.
GPUSORT_HOST_DEVICE constexpr uint32_t topk_qualifying_capacity(uint64_t n, uint32_t entries_n,
                                                                uint32_t key_bytes, uint64_t k) {
  const uint64_t share = (n + entries_n - 1) / entries_n;  // an entry's keys, at most
  const uint64_t lows_bytes = 2 * topk_groups(n, key_bytes) * key_bytes;
  uint64_t capacity = lows_bytes / (32 * share);
  if (capacity > entries_n) capacity = entries_n;
  return capacity < k + kTopKBoundBucket ? 0 : uint32_t(capacity);
}
static_assert(topk_qualifying_capacity(1u << 24, 1u << 19, 4, 1024) == 1u << 13 &&
              topk_qualifying_capacity(1u << 24, 1u << 19, 4, 16384) == 0 &&
              topk_qualifying_capacity(1u << 24, 1u << 19, 4, 65536) == 0);

struct TopKParams {
  const void* keys;     // n keys (4 or 8 bytes)
  void* keys_out;       // k keys: the result's (canonical ones in NumPy's order)
  uint32_t* positions;  // k u32: the result's positions
  // What the bound's last launch (list_sort, list_order) writes besides: the results' positions
  // as u64 indices (instead of `positions`) where not null, their values gathered where
  // value_bytes is 4 or 8. Its keys are the original ones in NumPy's order too.
  unsigned long long* indices64;
  const void* values;
  void* values_out;
  uint32_t value_bytes;
  uint32_t* state;      // the state block and the histograms
  // The bound: entries_n keys in the select's order (key-width), and their select's state block
  // and histograms (kTopKBoundStateWords); entries_n = 0: no bound. The bound's list (positions in
  // `candidates`, up to list_capacity); a long list's keys and positions (list_order's first list:
  // the digits' result where they run, canonical keys as read_key gives them).
  void* entries;
  uint32_t* bound_state;
  uint32_t entries_n;
  uint32_t list_capacity;
  void* list_keys;
  uint32_t* list_positions;
  // A long list's sort (list_order): a second list of list_capacity keys and positions, and the
  // digits' counts (topk_list_counts_words).
  void* list_keys_b;
  uint32_t* list_positions_b;
  uint32_t* list_counts;
  uint32_t* qualifying;  // the entries at or below the bound (up to qualifying_capacity), or 0
  uint32_t qualifying_capacity;
  // Each group's least key (compared bits, key-width), written by least_lows; or null (the face:
  // where qualifying_capacity is 0 and the array is past 64 MiB).
  void* group_lows;
  uint32_t* candidates;              // capacity u32: positions of the listing pass's candidates
  unsigned long long* tile_counts;   // per tile: keys before the k-th (low word), equal (high)
  unsigned long long* tile_offsets;  // their exclusive scan
  unsigned long long* block_sums;    // the scan's: each block's run of tiles (kTopKScanBlocks)
  const uint32_t* count;             // the GPU-side element count, or null: n
  unsigned long long mask;           // the compared bits [begin_bit, end_bit) of the radix order
  uint32_t n;                        // the element count (with count: the most)
  uint32_t k;
  uint32_t tiles;     // ceil(n / kTopKTile)
  uint32_t capacity;  // candidate list entries
  uint32_t key_kind;  // 0 unsigned, 1 signed, 2 float
  uint32_t descending;
  uint32_t numpy;  // floats in NumPy's order: keys read canonical
  uint32_t begin_bit, end_bit;
  uint32_t pass;  // the histogram's digit
  uint32_t list_buckets;  // list_order may sort the bound's list by buckets (below)
};

// The select's passes and digit p's lowest bit and width: the compared bits split evenly into
// passes of at most kTopKDigitBits, from the top down (as the Vulkan kernels' topk_digit).
GPUSORT_HOST_DEVICE constexpr uint32_t topk_passes(uint32_t begin_bit, uint32_t end_bit) {
  return (end_bit - begin_bit + kTopKDigitBits - 1) / kTopKDigitBits;
}
struct TopKDigit {
  uint32_t bit, bits;
};
GPUSORT_HOST_DEVICE constexpr TopKDigit topk_digit(uint32_t begin_bit, uint32_t end_bit,
                                                   uint32_t p) {
  const uint32_t passes = topk_passes(begin_bit, end_bit);
  uint32_t top = end_bit, bits = 0;
  for (uint32_t q = 0; q <= p; ++q) {
    bits = (top - begin_bit + (passes - q) - 1) / (passes - q);
    top -= bits;
  }
  return {top, bits};
}
static_assert(topk_passes(0, 32) == 3 && topk_digit(0, 32, 0).bit == 21 &&
              topk_digit(0, 32, 0).bits == 11 && topk_digit(0, 32, 2).bit == 0 &&
              topk_digit(0, 32, 2).bits == 10);
static_assert(topk_passes(0, 64) == 6 && topk_digit(0, 64, 5).bit == 0);

// The bound's select: the same digits over its entries (read as unsigned keys already in the
// select's order), with their own state block and no candidate list.
GPUSORT_HOST_DEVICE TopKParams topk_entries_params(TopKParams p) {
  p.keys = p.entries;
  p.state = p.bound_state;
  p.count = nullptr;
  p.n = p.entries_n;
  p.k = p.k < p.entries_n ? p.k : p.entries_n;
  p.tiles = (p.entries_n + kTopKTile - 1) / kTopKTile;
  p.capacity = 0;
  p.key_kind = key_kind_unsigned;
  p.descending = 0;
  p.numpy = 0;
  p.entries_n = 0;
  return p;
}

// Kernel names: the prefix, then "32" or "64" (the key's width); init and scan alone.
inline constexpr const char* kTopKInit = "gpusort_topk_init";
// The digits over the array, the count, scan and write: one cooperative launch of at most
// kTopKScanBlocks blocks.
inline constexpr const char* kTopKDigits = "gpusort_topk_digits_";
inline constexpr uint32_t kTopKScanBlocks = 2048;
// The bound: the entries (least, with the init), then the rest in one cooperative launch (the
// entries' histograms, bound_entries, bound_list).
inline constexpr const char* kTopKLeast = "gpusort_topk_least_";
inline constexpr const char* kTopKLeastLows = "gpusort_topk_least_lows_";  // and the groups' lows
inline constexpr const char* kTopKBound = "gpusort_topk_bound_";
inline constexpr const char* kTopKListSort = "gpusort_topk_list_sort_";
inline constexpr uint32_t kTopKListSortCapacity = 4096;  // 48 KiB of 64-bit keys and positions
// A list past one block's sort (0 without the bound): list_order sorts it, and the digits write
// their result into it (the host's launches and the digits' count agree on this).
GPUSORT_HOST_DEVICE constexpr bool topk_long_list(uint32_t list_capacity) {
  return list_capacity > kTopKListSortCapacity;
}
inline constexpr uint32_t kTopKListSortThreads = 1024;

// A long list's sort (list_order, one cooperative launch of kTopKThreads a block): an LSD radix
// sort by (key, position) of the list's count, 8-bit digits (positions' low bits first, their
// bit_width(n - 1); then the compared key's), each block a stretch of the list in order, a grid
// barrier a pass: the first read counts every pass's digits, each pass skips where one digit
// holds every entry, ranks its stretch stably by chunks of at most kTopKTile (as many entries a
// thread as the stretch needs; a warp's lanes by matching digits, the warps by their counts) and
// scatters it, counting the next pass's digits into the block that then reads each entry; the last
// pass writes the first k. The digits' result (in input order already) skips the positions'
// passes. Per pass: the digits' totals (in the bound's state block, which the face clears), and
// per block the first read's counts and the scatters' (in list_counts, which that read clears).
inline constexpr const char* kTopKListOrder = "gpusort_topk_list_order_";
inline constexpr uint32_t kTopKListDigitBits = 8;
inline constexpr uint32_t kTopKListBins = 1u << kTopKListDigitBits;
inline constexpr uint32_t kTopKListPasses = 12;   // 32-bit positions and a 64-bit key
inline constexpr uint32_t kTopKListBlocks = 256;  // the grid, at most
// A block per kTopKListBlockEntries of the list's capacity (1024: 130 blocks for k = 65,536, where
// 2048 left half the H200's SMs idle; docs/design/topk.md).
inline constexpr uint32_t kTopKListBlockEntries = 1024;
GPUSORT_HOST_DEVICE constexpr uint32_t topk_list_blocks(uint32_t list_capacity) {
  const uint32_t chunks = (list_capacity + kTopKListBlockEntries - 1) / kTopKListBlockEntries;
  return chunks < kTopKListBlocks ? chunks : kTopKListBlocks;
}
GPUSORT_HOST_DEVICE constexpr uint64_t topk_list_counts_words(uint32_t list_capacity) {
  return uint64_t(kTopKListPasses) * 2 * topk_list_blocks(list_capacity) * kTopKListBins;
}
// The bound's list is sorted by its key's passes first; a run of equal keys of up to kTopKListRun
// is then put in position order by one thread, a longer one sets the fallback word and the list
// is sorted again with the positions' passes.
inline constexpr uint32_t kTopKListRun = 32;
// The bound's list by buckets instead, where its keys spread (list_buckets set): its keys lie
// between the bottom of the least entry's first digit and the bound, a span cut into
// kTopKListBuckets buckets of equal width (a power of two). The first read counts each bucket's
// keys; where no bucket holds more than kTopKListBucketMost and each block's buckets (those that
// start in its stretch) fit kTopKListBucketEntries, the list is scattered by bucket (each key's
// place its bucket's start and an atomic), and each block sorts the keys of its buckets by (key,
// position) in shared memory and writes those before k: two phases where the key's passes and
// list_ties take four or five. Else (keys piled into few buckets, whose atomics would queue at a
// word) the passes above run.
inline constexpr uint32_t kTopKListBucketBits = 11;
inline constexpr uint32_t kTopKListBuckets = 1u << kTopKListBucketBits;
inline constexpr uint32_t kTopKListBucketEntries = 1024;  // a power of two (the block's sort)
inline constexpr uint32_t kTopKListBucketMost = 512;
// A bucket's counters (its total, its scatter's count) at word topk_bucket_word: neighbouring
// buckets in different 128-byte lines, 64 buckets apart in one, so that the many keys of the
// buckets near the bound (spread keys are densest there) do not queue at one line's atomics.
GPUSORT_HOST_DEVICE constexpr uint32_t topk_bucket_word(uint32_t bucket) {
  return bucket % 64 * (kTopKListBuckets / 64) + bucket / 64;
}
static_assert(kTopKListBuckets % 64 == 0 && topk_bucket_word(1) == kTopKListBuckets / 64 &&
              topk_bucket_word(kTopKListBuckets - 1) == kTopKListBuckets - 1);
// The bound's state block: the state words, the entries' histograms, the list's digit totals,
// the fallback word, the buckets' totals and their scatter's counts.
inline constexpr uint32_t kTopKBoundListTotals = kTopKStateWords + kTopKMaxPasses * kTopKBins;
inline constexpr uint32_t kTopKBoundListFallback =
    kTopKBoundListTotals + kTopKListPasses * kTopKListBins;
inline constexpr uint32_t kTopKBoundBucketTotals = kTopKBoundListFallback + 1;
inline constexpr uint32_t kTopKBoundBucketFill = kTopKBoundBucketTotals + kTopKListBuckets;
inline constexpr uint32_t kTopKBoundStateWords = kTopKBoundBucketFill + kTopKListBuckets;

// ---- Per segment (topk_segments.cu): the first min(k, length) of each segment's stable sort ----
//
// After the face's segmented argsort (`order`: the positions in the order of the sort, each
// segment's in its own range), two launches: the results' places (one block: S + 1 u32, an
// exclusive sum of min(k, length) per segment, the total last) and the take (a warp per segment,
// a grid striding over them): result j of segment s, the key at order[offsets[s] + j] with its
// value and position, to result_offsets[s] + j.
struct TopKSegmentsParams {
  const void* keys;    // n keys (key_bytes each)
  void* keys_out;      // the results' keys, or null
  const void* values;  // n values (value_bytes each), or null
  void* values_out;    // the results' values, or null
  void* indices;       // the results' positions (index_bytes each), or null
  const uint32_t* order;
  const void* offsets;       // S + 1 CSR offsets (offset_bytes each)
  uint32_t* result_offsets;  // S + 1: each segment's first result, the total last
  unsigned long long segments, k;
  uint32_t key_bytes, value_bytes, index_bytes, offset_bytes;
  uint32_t in_segment;  // 1: positions from the segment's first key (rows), else in the array
  unsigned long long row_length;  // rows: offsets[s] = s row_length (the row offsets kernel)
  // The rows' select (kTopKRowsSelect): how keys compare, as the sorts' options give it.
  unsigned long long mask;  // the compared bits of the radix order
  uint32_t key_kind, descending, numpy;
  // Long rows split (kTopKLongRowsChunks): each row's chunks of chunk_length keys, and their
  // first k positions (rows x chunks x k u32).
  uint32_t* chunk_positions;
  uint32_t chunks;
  unsigned long long chunk_length;
};
inline constexpr uint32_t kTopKSegmentOffsetsThreads = 512;  // (1024 spill: 64 registers)
inline constexpr uint32_t kTopKSegmentTakeThreads = 256;
inline constexpr const char* kTopKSegmentOffsets = "gpusort_topk_segment_offsets";
inline constexpr const char* kTopKSegmentTake = "gpusort_topk_segment_take";
// Rows of one length: their S + 1 offsets (u64, into `offsets`) made on the GPU first.
inline constexpr const char* kTopKRowOffsets = "gpusort_topk_row_offsets";

// Rows of up to kTopKRowsCapacity keys instead: a block per row (a grid striding over them), the
// row in shared memory. For k at most a quarter of the block, the k-th least of the threads'
// least keys bounds the k-th key from above, and the keys at most it (spread keys: about k and a
// few) are ranked among themselves by (key, position) and written; where they overflow
// kTopKRowsCandidates, or for a larger k, the row is sorted in shared memory (a bitonic sort of
// (key, position) pairs, which makes it stable) and its first k written. Its name: the prefix,
// then "32" or "64". Dynamic shared memory: topk_rows_shared_bytes.
inline constexpr uint32_t kTopKRowsThreads = 512;
inline constexpr uint32_t kTopKRowsCapacity = 16384;
inline constexpr uint32_t kTopKRowsCandidates = 1024;
inline constexpr const char* kTopKRowsSelect = "gpusort_topk_rows_select_";
// Rows longer than half the capacity: more loads in flight, one block an SM (the prefix of those).
inline constexpr const char* kTopKRowsSelectWide = "gpusort_topk_rows_select_wide_";
// Rows of any length, for k up to kTopKLongRowsK (those longer than kTopKRowsCapacity, or all of
// them where the device gives a block less shared memory): a block per row (a grid striding over
// them). A first read keeps each thread's 4 least keys; the k-th least of those 4096 (a radix
// select over them in shared memory) bounds the k-th key, and a second read takes the keys at or
// below it. Where they overflow kTopKLongRowsCandidates (keys piled at the bound), the radix
// select of the whole-array kernels runs inside the block (the row read once per 11-bit digit),
// and one more read takes the keys below the k-th and the first ones equal to it (by position, a
// block's width at a time, where more are equal than taken). The candidates are sorted by (key,
// position) in shared memory and the first k written. Its name: the prefix, then "32" or "64";
// static shared memory only.
inline constexpr uint32_t kTopKLongRowsThreads = 1024;
inline constexpr uint32_t kTopKLongRowsK = 1024;
inline constexpr uint32_t kTopKLongRowsCandidates = 2048;
inline constexpr const char* kTopKLongRowsSelect = "gpusort_topk_long_rows_select_";
// Fewer long rows than SMs, each of at least two chunks of kTopKLongRowsMinChunk keys: each row
// split into chunks (their candidates together at most kTopKLongRowsCandidates), a block a chunk
// selecting its first k as long_rows_select does (kTopKLongRowsChunks), then a block a row
// sorting its chunks' candidates (kTopKLongRowsMerge). The chunks' positions take scratch.
inline constexpr uint64_t kTopKLongRowsMinChunk = 1u << 17;
inline constexpr const char* kTopKLongRowsChunks = "gpusort_topk_long_rows_chunks_";
inline constexpr const char* kTopKLongRowsMerge = "gpusort_topk_long_rows_merge_";
// Keys of key_bytes and u32 positions for the row padded to a power of two, the threads' least
// keys, the candidates' keys and positions, 16-byte aligned.
GPUSORT_HOST_DEVICE constexpr uint32_t topk_rows_padded(uint64_t row_length) {
  uint32_t p = 4;  // (the least keys after the row stay 8-byte aligned)
  while (p < row_length) p *= 2;
  return p;
}
GPUSORT_HOST_DEVICE constexpr uint32_t topk_rows_shared_bytes(uint32_t key_bytes,
                                                              uint64_t row_length) {
  return topk_rows_padded(row_length) * (key_bytes + 4) + kTopKRowsThreads * key_bytes +
         kTopKRowsCandidates * (key_bytes + 4) + 16;
}

}  // namespace gpusort::cuda

#endif  // GPUSORT_ALGORITHMS_TOPK_CUDA_TOPK_PARAMS_HPP
