// The small-array sort on the CUDA face: one block sorts the whole array (block_sort.cu, CUB's
// BlockRadixSort on the keys in radix order), one launch. Read by the kernels (nvcc) and the host.
#ifndef GPUSORT_SMALL_SORT_CUDA_BLOCK_SORT_HPP
#define GPUSORT_SMALL_SORT_CUDA_BLOCK_SORT_HPP

#include <cstdint>

namespace gpusort::cuda {

// One kernel per row: its key width, whether it carries 4-byte values, its block and keys per
// thread (the most it sorts: threads x items). Rows of one key class follow each other from the
// smallest capacity up; the host takes the first that holds n.
struct BlockSortShape {
  const char* kernel;
  uint32_t key_words, value_words;
  uint32_t threads, items;
  uint32_t radix_bits;  // bits per pass of the block's radix sort
};
inline constexpr BlockSortShape kBlockSortShapes[] = {
    // Chosen by `cub_baseline --gpusort` at 2^10-2^13 on the H200 (docs/PERFORMANCE.md, "The CUDA
    // face"): 6-bit digits where they measured faster (2^12 32-bit keys: 1.04-1.07x CUB against
    // 0.95-0.98x for 512 x 8 with 4-bit digits; 2^11 64-bit keys: 0.96-1.00x against 0.90-0.92x).
    {"gpusort_block_sort_k32_128x8", 1, 0, 128, 8, 4},
    {"gpusort_block_sort_k32_256x8", 1, 0, 256, 8, 4},
    {"gpusort_block_sort_k32_256x16", 1, 0, 256, 16, 6},
    {"gpusort_block_sort_k32_512x16", 1, 0, 512, 16, 4},
    {"gpusort_block_sort_k32_v32_128x8", 1, 1, 128, 8, 4},
    {"gpusort_block_sort_k32_v32_256x8", 1, 1, 256, 8, 4},
    {"gpusort_block_sort_k32_v32_256x16", 1, 1, 256, 16, 6},
    {"gpusort_block_sort_k32_v32_512x12", 1, 1, 512, 12, 4},
    {"gpusort_block_sort_k64_128x8", 2, 0, 128, 8, 4},
    {"gpusort_block_sort_k64_256x8", 2, 0, 256, 8, 6},
    {"gpusort_block_sort_k64_512x8", 2, 0, 512, 8, 4},
    {"gpusort_block_sort_k64_v32_128x8", 2, 1, 128, 8, 4},
    {"gpusort_block_sort_k64_v32_256x8", 2, 1, 256, 8, 6},
    {"gpusort_block_sort_k64_v32_512x6", 2, 1, 512, 6, 4},
};
inline constexpr uint32_t kBlockSortShapeCount =
    sizeof(kBlockSortShapes) / sizeof(kBlockSortShapes[0]);

// The one argument of every block-sort kernel. Sorted in place: keys (and values) of the count's
// n, bits [begin_bit, end_bit) of the radix order (src/primitives/key_order.h, descending
// inverted).
struct BlockSortParams {
  void* keys;
  void* values;           // null without values
  const uint32_t* count;  // the GPU-side count (clamped to n), or null: n
  uint32_t n;
  uint32_t key_kind, descending, begin_bit, end_bit;
};

}  // namespace gpusort::cuda

#endif  // GPUSORT_SMALL_SORT_CUDA_BLOCK_SORT_HPP
