// The rank sort on the CUDA face (rank_sort.cu): for the smallest arrays, each key's place is
// counted directly, the keys before it plus the equal ones ahead of it, by many blocks at once,
// and every key is written to its place in one launch (in place: the blocks meet at a grid
// barrier between reading and writing, or where the grid does not fit the GPU at once, a copy
// first: two). Read by the kernels (nvcc) and the host.
#ifndef GPUSORT_SMALL_SORT_CUDA_RANK_SORT_HPP
#define GPUSORT_SMALL_SORT_CUDA_RANK_SORT_HPP

#include <cstdint>

namespace gpusort::cuda {

// A block ranks 32 keys (one a lane); each of its warps counts over a sixteenth of the array,
// which the block holds in shared memory, in radix order.
inline constexpr uint32_t kRankSortThreads = 512;
inline constexpr uint32_t kRankSortKeysPerBlock = 32;
inline constexpr uint32_t kRankSortWarps = kRankSortThreads / 32;

// One kernel per key width and values; capacity: the most its shared memory holds (32 KiB of
// keys). The host takes it in a band of sizes (small_sort/cuda/stream_sort.cpp).
struct RankSortShape {
  const char* kernel;
  uint32_t key_words, value_words;
  uint32_t capacity;
};
inline constexpr RankSortShape kRankSortShapes[] = {
    {"gpusort_rank_sort_k32", 1, 0, 8192},
    {"gpusort_rank_sort_k32_v32", 1, 1, 8192},
    {"gpusort_rank_sort_k64", 2, 0, 4096},
    {"gpusort_rank_sort_k64_v32", 2, 1, 4096},
};

// With values given, the row's kernel named with this suffix runs first: one launch copies the
// keys from keys_out to keys_in (where keys_in is set: in place) and the values from values_out
// to values_in, the scratch the sort then reads. Keys alone in place are copied by the driver
// (cuMemcpyDtoDAsync), which measured faster than a launch.
inline constexpr const char* kRankSortCopySuffix = "_copy";
// In place in one cooperative launch (every block resident at once): the row's kernel named with
// this suffix reads the keys and its own keys' values, meets the other blocks at a grid barrier,
// and writes, keys_in == keys_out and values_in == values_out (null: none, or the positions).
inline constexpr const char* kRankSortInPlaceSuffix = "_in_place";
inline constexpr uint32_t kRankSortCopyThreads = 256;

// The one argument of every rank-sort kernel: the count's n keys (and 4-byte values) read from
// keys_in (values_in) and written sorted to keys_out (values_out), which must not overlap them;
// bits [begin_bit, end_bit) of the radix order (src/primitives/key_order.h, descending inverted),
// ties in input order. The output must not overlap the input but for the in-place kernels
// (kRankSortInPlaceSuffix), whose output is their input.
struct RankSortParams {
  const void* keys_in;
  void* keys_out;
  const void* values_in;  // null: the positions (values_iota) or no values
  void* values_out;       // null without values, or where values_wide takes them
  unsigned long long* values_wide;  // the values written zero-extended to 8 bytes, or null
  const uint32_t* count;  // the GPU-side count (clamped to n), or null: n
  uint32_t n;
  uint32_t key_kind, descending, begin_bit, end_bit;
  uint32_t values_iota;  // the values are the keys' positions
};

}  // namespace gpusort::cuda

#endif  // GPUSORT_SMALL_SORT_CUDA_RANK_SORT_HPP
