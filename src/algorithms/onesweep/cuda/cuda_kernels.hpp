// Onesweep's CUDA pass kernels (onesweep_pass.cu), one per tile shape and key order, and the shape
// each was compiled with: read by the kernels (nvcc, C++17) and by the host (the library, C++20).
#ifndef GPUSORT_ONESWEEP_CUDA_KERNELS_HPP
#define GPUSORT_ONESWEEP_CUDA_KERNELS_HPP

#include <cstdint>

namespace gpusort::cuda {

// Hints (CudaPassShape::hints); what each measured is in docs/design/onesweep.md ("Tuning"):
//   kHintPrefetchValues  pairs: each warp's values are prefetched into L2 when the tile is claimed
//                        (cp.async.bulk.prefetch.L2, sm_90), so their load after the look-back
//                        hits L2;
//   kHintPackedFallback  the look-back fallback's recount keeps two 16-bit digit counts per word
//                        (512 bytes of shared memory less);
//   kHintRuntimeOrder    the key order is decided at run time by the kind in every order's kernel
//                        (compiled per order, the u64 kernel spilled more and lost 3-4 %);
//   kHintMaskWalk        the look-back walks a window that lies in place by bit masks
//                        (lookback.cuh window_in_place): faster for u32+u32 alone;
//   kHintWholeTile       the whole tile is staged at once in dynamic shared memory of
//                        cuda_pass_dynamic_shared bytes: launched by the CUDA face only (an NVX
//                        launch cannot raise the dynamic limit), which sets the kernel's limit.
inline constexpr uint32_t kHintPrefetchValues = 1;
inline constexpr uint32_t kHintPackedFallback = 2;
inline constexpr uint32_t kHintRuntimeOrder = 4;
inline constexpr uint32_t kHintMaskWalk = 8;
inline constexpr uint32_t kHintWholeTile = 16;
//   kHintFusedVariant    the row also has a fused variant per order (name + order suffix +
//                        kCudaFusedSuffix) that takes OnesweepFusedParams: the CUDA face's argsort
//                        reads the keys in place and makes and widens the positions within its
//                        passes (docs/design/cuda-face.md: 1.10x for u64 indices of 64-bit keys
//                        on 256 x 24, 1.10-1.18x for 32-bit keys on 384 x 23 and 384 x 28 at
//                        2^26-2^28; on 384 x 16 and 256 x 16 it did not pay).
inline constexpr uint32_t kHintFusedVariant = 32;
inline constexpr const char* kCudaFusedSuffix = "_fused";
//   kHintAsyncValues     pairs, whole tiles: the block copies its tile's values into shared memory
//                        with cp.async as it claims the tile, so that they arrive during the
//                        ranking and the look-back instead of being loaded after it (u32+u32 on
//                        384 x 28: 2-3 % faster from 2^25; the smaller pair tiles and 64-bit keys
//                        lost 1-3 %: docs/design/cuda-face.md).
inline constexpr uint32_t kHintAsyncValues = 64;
//   kHintNumpyOrder      the row is also built for NumPy's float order (orders 6 and 7,
//                        kCudaNumpyOrderSuffixes; with its fused variant where it has one): the
//                        CUDA face sorts floats in NumPy's order through it directly, where the
//                        other rows sort a canonical copy and write the zeros and NaNs back.
inline constexpr uint32_t kHintNumpyOrder = 128;

// The dynamic shared memory a whole-tile block is launched with: its exchange array (the tile's
// keys and values) or the ranking's storage, whichever is larger, and 4 KiB for the digit
// offsets, the look-back's words and the tile number (onesweep_pass.cu checks that it covers
// the block's).
constexpr uint32_t cuda_pass_dynamic_shared(uint32_t threads, uint32_t items, uint32_t key_bytes,
                                            uint32_t value_bytes) {
  const uint32_t exchange = threads * items * (key_bytes + value_bytes);
  const uint32_t rank = 16 * 1024;
  return ((exchange > rank ? exchange : rank) + 4 * 1024 + 15) / 16 * 16;
}

// One pass kernel: its key class, name in the module (of its unsigned ascending build; the other
// orders add kCudaKeyOrderSuffixes), block shape and the name of its variant. A key class may have
// several (OnesweepTuning::cuda_variants picks the NVX path's per device family, kCudaFaceTiles
// the CUDA face's). Without kHintWholeTile a tile is staged in the fewest segments that let
// min_blocks blocks share the 48 KiB of shared memory an SM gives a launch through
// VK_NVX_binary_import; the later segments' keys are loaded again after the look-back.
struct CudaPassShape {
  const char* kernel;
  uint32_t key_words, value_words;
  uint32_t threads, min_blocks, items, hints;
  const char* variant;
  // Look-back entries each digit reads per round (lookback.cuh WINDOW): 8, up to 1.6 % faster
  // than 16 on the H200, but for u32+u32 on the H100 (docs/design/onesweep.md).
  uint32_t window = 8;
};

// The NVX rows: the variants of the CUDA laboratory that measured best per key class on the H100
// and H200 (docs/design/onesweep.md, "The CUDA laboratory" and "Tuning"; the device family's
// table, ../tuning.cpp, picks one where a class has two). 64-bit values have no kernel: those
// sorts take the SPIR-V pass.
inline constexpr CudaPassShape kCudaPassShapes[] = {
    {"gpusort_onesweep_pass_k32", 1, 0, 512, 2, 15, 0, "512x15seg"},  // 1.02-1.06x CUB, H100
    {"gpusort_onesweep_pass_k32_v32", 1, 1, 512, 2, 15, kHintMaskWalk, "512x15seg", 16},
    {"gpusort_onesweep_pass_k64", 2, 0, 384, 2, 18,
     kHintPrefetchValues | kHintPackedFallback | kHintRuntimeOrder, "384x18s3pk"},
    {"gpusort_onesweep_pass_k64_v32", 2, 1, 384, 2, 15, kHintPrefetchValues | kHintPackedFallback,
     "384x18s3pk"},
    {"gpusort_onesweep_pass_k64_v32_1024", 2, 1, 1024, 1, 8, 0, "1024x12seg1"},
    // The CUDA face's rows (src/cuda): whole tiles in dynamic shared memory, two blocks per SM,
    // chosen by kCudaFaceTiles.
    {"gpusort_onesweep_pass_k32_w512x20", 1, 0, 512, 2, 20, kHintWholeTile | kHintNumpyOrder,
     "512x20"},
    {"gpusort_onesweep_pass_k32_w384x32", 1, 0, 384, 2, 32, kHintWholeTile | kHintNumpyOrder,
     "384x32"},
    {"gpusort_onesweep_pass_k32_v32_w384x23", 1, 1, 384, 2, 23,
     kHintWholeTile | kHintNumpyOrder | kHintFusedVariant, "384x23"},
    {"gpusort_onesweep_pass_k32_v32_w384x28", 1, 1, 384, 2, 28,
     kHintWholeTile | kHintNumpyOrder | kHintAsyncValues | kHintFusedVariant, "384x28"},
    {"gpusort_onesweep_pass_k64_w384x20", 2, 0, 384, 2, 20, kHintWholeTile | kHintNumpyOrder,
     "384x20"},
    {"gpusort_onesweep_pass_k64_v32_w384x16", 2, 1, 384, 2, 16,
     kHintWholeTile | kHintNumpyOrder | kHintFusedVariant, "384x16"},
    // Small tiles for the sizes just above the one-block sort: more blocks per pass.
    {"gpusort_onesweep_pass_k32_w256x8", 1, 0, 256, 2, 8, kHintWholeTile | kHintNumpyOrder,
     "256x8"},
    {"gpusort_onesweep_pass_k32_w256x16", 1, 0, 256, 2, 16, kHintWholeTile | kHintNumpyOrder,
     "256x16"},
    {"gpusort_onesweep_pass_k64_w256x8", 2, 0, 256, 2, 8, kHintWholeTile | kHintNumpyOrder,
     "256x8"},
    {"gpusort_onesweep_pass_k64_w256x16", 2, 0, 256, 2, 16, kHintWholeTile | kHintNumpyOrder,
     "256x16"},
    {"gpusort_onesweep_pass_k32_v32_w256x8", 1, 1, 256, 2, 8, kHintWholeTile | kHintNumpyOrder,
     "256x8"},
    {"gpusort_onesweep_pass_k32_v32_w256x16", 1, 1, 256, 2, 16, kHintWholeTile | kHintNumpyOrder,
     "256x16"},
    {"gpusort_onesweep_pass_k64_v32_w256x8", 2, 1, 256, 2, 8, kHintWholeTile | kHintNumpyOrder,
     "256x8"},
    {"gpusort_onesweep_pass_k64_v32_w256x16", 2, 1, 256, 2, 16,
     kHintWholeTile | kHintNumpyOrder | kHintFusedVariant, "256x16"},
    {"gpusort_onesweep_pass_k64_v32_w256x28", 2, 1, 256, 2, 28,
     kHintWholeTile | kHintNumpyOrder | kHintFusedVariant, "256x28"},
    // Measurement rows for u64+u32 from 2^25 (GPUSORT_CUDA_FACE_TILE; their numbers below).
    {"gpusort_onesweep_pass_k64_v32_w256x24", 2, 1, 256, 2, 24, kHintWholeTile, "256x24"},
    {"gpusort_onesweep_pass_k64_v32_w256x24w16", 2, 1, 256, 2, 24, kHintWholeTile, "256x24w16", 16},
    {"gpusort_onesweep_pass_k64_v32_w256x28w16", 2, 1, 256, 2, 28, kHintWholeTile, "256x28w16", 16},
    {"gpusort_onesweep_pass_k64_v32_w256x32", 2, 1, 256, 2, 32, kHintWholeTile, "256x32"},
};
inline constexpr uint32_t kCudaPassShapeCount =
    sizeof(kCudaPassShapes) / sizeof(kCudaPassShapes[0]);
// The CUDA face's pass row per key class and size: the first row whose max_n holds the sort's
// (GPUSORT_CUDA_FACE_TILE names another row of the class, for measurements). Chosen by
// `cub_baseline --gpusort` at 2^22-2^28 on the H200 among 384 x 14-32, 512 x 10-20 and 256 x 16-20
// tiles, CUB time / ours (docs/PERFORMANCE.md, "The CUDA face"):
//   u32   256x8 1.27-1.48 at 2^14-2^18 (512x20 0.98-1.14); 256x16 1.21 at 2^19;
//         512x20 1.14 at 2^20, 1.20-1.23 at 2^22; 384x32 1.23-1.25 at 2^24-2^28 (384x20 1.09-1.13)
//   f32   512x20 1.23 at 2^22; 384x32 1.10-1.12 at 2^24-2^28 (384x20 0.97-1.04)
//   u64   256x8 1.26-1.59 at 2^13-2^18 (384x20 0.95-1.24); 256x16 1.17-1.21 at 2^19-2^20;
//         384x20 1.19-1.27 above (384x14 1.03-1.18, 384x22 1.17-1.20: spills)
//   u32+u32  256x8 1.38-1.61 at 2^13-2^18 (384x23 1.07-1.12); 256x16 1.27 at 2^19; 384x23 1.10-1.15
//            at 2^20-2^22; 384x28 with its values copied ahead 1.02-1.05 at 2^24-2^28 (without:
//            1.00-1.05; 384x32 spills: 0.88-0.95; 384x18 with three blocks an SM 0.85-0.92)
//   u64+u32  256x8 1.27-1.43 at 2^13-2^18 (384x16 1.04-1.11); 256x16 1.16-1.19 at 2^19-2^20;
//            384x16 0.98-1.08; 256x28 1.01-1.05 at 2^25-2^28, 256x24 1.00-1.02 (384x16 0.98-1.01; 512x12 0.96-1.01;
//            384x14 with three blocks an SM 0.77-0.81; at 2^25/2^26/2^27/2^28, twice alternating
//            in one run: 256x24 1.02/1.01-1.02/1.01/1.00, 256x28 1.05/1.04/1.03/1.01, 256x24
//            with window 16 1.02/1.02/1.01/1.01, with the mask walk 1.02/1.01/1.00/1.00, 256x20
//            0.97/0.96/0.95/0.95, 320x20 1.03/1.01-1.02/1.01/1.00; 256x28 with window 16 and
//            256x32 once, at 2^26-2^28: 1.04/1.03/1.03 and 1.02/1.03/1.02)
struct CudaFaceTile {
  uint32_t key_class;
  unsigned long long max_n;
  const char* variant;
};
inline constexpr CudaFaceTile kCudaFaceTiles[] = {
    // u32, i32, f32
    {0, 1ull << 18, "256x8"}, {0, 1ull << 19, "256x16"}, {0, (1ull << 23) - 1, "512x20"},
    {0, ~0ull, "384x32"},
    // with 4-byte values
    {1, 1ull << 18, "256x8"}, {1, 1ull << 19, "256x16"}, {1, (1ull << 23) - 1, "384x23"},
    {1, ~0ull, "384x28"},
    // 64-bit keys
    {2, 1ull << 18, "256x8"}, {2, 1ull << 20, "256x16"}, {2, ~0ull, "384x20"},
    // with 4-byte values
    {3, 1ull << 18, "256x8"}, {3, 1ull << 20, "256x16"}, {3, (1ull << 25) - 1, "384x16"},
    {3, ~0ull, "256x28"},
};

constexpr uint32_t cuda_pass_dynamic_shared(const CudaPassShape& shape) {
  return (shape.hints & kHintWholeTile) == 0
             ? 0u
             : cuda_pass_dynamic_shared(shape.threads, shape.items, shape.key_words * 4,
                                        shape.value_words * 4);
}

// Each row's kernel is built once per key order, the mapping of keys to radix order and back
// compiled in (decided at run time it cost the u32 pass 5 %, and f32's its spills:
// docs/design/onesweep.md): order = kind x 2 + descending, kind as SortSpec's key_kind (0
// unsigned, 1 signed, 2 float), the name's suffix per order below (unsigned ascending keys: the
// row's name). Their functions follow one another per row (cuda_pass_function).
inline constexpr uint32_t kCudaKeyOrderCount = 6;
inline constexpr const char* kCudaKeyOrderSuffixes[kCudaKeyOrderCount] = {
    "", "_desc", "_i", "_i_desc", "_f", "_f_desc"};
constexpr uint32_t cuda_key_order(uint32_t key_kind, bool descending) {
  return key_kind * 2 + (descending ? 1u : 0u);
}
// The CUDA face's rows but its measurement rows (kHintNumpyOrder) are built for two more orders,
// NumPy's float order (key_kind_numpy_float: 6 ascending, 7 descending), whose kernels keep the
// keys as they are between passes and map them for each pass's digits.
inline constexpr const char* kCudaNumpyOrderSuffixes[2] = {"_n", "_n_desc"};
constexpr const char* cuda_face_order_suffix(uint32_t order) {
  return order < kCudaKeyOrderCount ? kCudaKeyOrderSuffixes[order]
                                    : kCudaNumpyOrderSuffixes[order - kCudaKeyOrderCount];
}
inline constexpr uint32_t kCudaPassFunctionCount = kCudaPassShapeCount * kCudaKeyOrderCount;
// A pass kernel's index in the Context's functions (cuda::function_names, cuda_pass.hpp), and a
// histogram kernel's (the histograms follow the pass kernels).
constexpr uint32_t cuda_pass_function(uint32_t row, uint32_t order) {
  return row * kCudaKeyOrderCount + order;
}
constexpr uint32_t cuda_histogram_function(uint32_t row) {
  return kCudaPassFunctionCount + row;
}

// The key classes with CUDA pass kernels, in the order of OnesweepTuning's per-class arrays:
// 32-bit keys alone, with 4-byte values, 64-bit keys alone, with 4-byte values.
constexpr uint32_t cuda_key_class(uint32_t key_words, uint32_t value_words) {
  return (key_words == 2 ? 2u : 0u) + (value_words == 1 ? 1u : 0u);
}

// The histogram and plan as CUDA kernels (OnesweepTuning::cuda_histogram), one per row, after the
// pass kernels' kCudaPassFunctionCount functions in the Context's. A block of `threads` threads
// loads `vectors` 16-byte vectors of keys per thread and round and counts every pass's digits
// with shared atomics into `copies` histograms (warp w into copy w % copies); the grid is
// blocks_per_sm blocks per SM (what fits the NVX path's 48 KiB per SM with the driver's 1 KiB per
// block, and 2048 threads), each striding over the rounds. OnesweepTuning::cuda_histogram (or
// GPUSORT_CUDA_HISTOGRAM) = v picks the v-th row of the sort's key width.
struct CudaHistogramShape {
  const char* kernel;
  uint32_t key_words;
  uint32_t threads, vectors, copies, blocks_per_sm;
};
inline constexpr CudaHistogramShape kCudaHistogramShapes[] = {
    {"gpusort_onesweep_histogram_k32", 1, 512, 2, 1, 4},     // 4 KiB of counters
    {"gpusort_onesweep_histogram_k64", 2, 512, 2, 1, 4},     // 8 KiB
    {"gpusort_onesweep_histogram_k32_c2", 1, 512, 2, 2, 4},  // 8 KiB
    {"gpusort_onesweep_histogram_k64_c2", 2, 512, 2, 2, 2},  // 16 KiB
};
inline constexpr uint32_t kCudaHistogramShapeCount =
    sizeof(kCudaHistogramShapes) / sizeof(kCudaHistogramShapes[0]);

// The one argument of every pass kernel (onesweep_pass.cu OnesweepPass), filled by the host
// (onesweep.cpp through VK_NVX_binary_import, the CUDA face through the driver): a struct that
// both compilers lay out alike (8-byte pointers and u64, then u32s).
struct OnesweepPassParams {
  void* keys_a;  // the caller's keys
  void* keys_b;  // the scratch copy
  void* values_a;
  void* values_b;
  const uint32_t* count;          // the GPU-side count (clamped to n), or null: n
  const uint32_t* digit_offsets;  // this pass's 256 exclusive offsets
  uint32_t* control;              // the control words (state.h)
  unsigned long long* lookback;   // the look-back table (lookback.cuh LookbackEntry)
  unsigned long long n;           // max_n, up to 2^32
  uint32_t pass, bit, digit_bits, first_tag, slot_mask;
  // The key order, read only by rows that decide it at run time (kHintRuntimeOrder); the others
  // have it compiled in (their name's suffix).
  uint32_t key_kind, descending;
  uint32_t spin_limit, refusal_period, claim_by_id;
  uint32_t prefetch_tiles;  // prefetch ahead: tile + this many (0: off)
};

// The second argument of a fused variant (kHintFusedVariant), apart from OnesweepPassParams so
// that the other kernels' argument is what it was (a larger one changed their code and cost the
// u64 pass 20 %: docs/design/cuda-face.md). values_iota = 1: the first active pass's values are
// the keys' positions (values_a is not read); keys_first: the first active pass reads its keys
// here (the caller's, left as they are) instead of keys_a, which then only receives results;
// values_wide: the last active pass writes its 4-byte values zero-extended to 8 bytes here
// instead of to its value output (argsort's u64 indices). The histogram's plan then keeps the
// first pass active (OnesweepHistogramParams::first_pass_always).
struct OnesweepFusedParams {
  const void* keys_first;
  unsigned long long* values_wide;
  uint32_t values_iota;
  // 1: float keys in NumPy's order: the first pass reads them canonical (-0.0 as +0.0, every NaN
  // as the canonical NaN), as the histogram does (OnesweepHistogramParams::canonical).
  uint32_t canonical;
};

// The one argument of every histogram-and-plan kernel (onesweep_pass.cu HistogramAndPlan).
struct OnesweepHistogramParams {
  const void* keys;
  const uint32_t* count;
  unsigned long long n;
  uint32_t* digit_counts;  // max passes x 256: the counts in, exclusive offsets out
  uint32_t* control;
  uint32_t* dispatch;  // indirect dispatch commands (3 words each), for the SPIR-V copy-back
  uint32_t begin_bit, end_bit, pass_count, key_kind, descending;
  uint32_t copy_group_count, copy_keys_per_round, max_groups_x, tile, pass_group_cap;
  // 1: the first pass runs even where every key has one digit in it, so that a pass writes the
  // results where the CUDA face's fused steps (OnesweepPassParams::keys_first, values_iota) need
  // them.
  uint32_t first_pass_always;
  // 1: float keys counted canonical, for the fused first pass that reads them so, and for NumPy's
  // float order (key_kind_numpy_float, which the histogram is given as key_kind_float).
  uint32_t canonical;
  // 1 (the CUDA face's fused steps, where keys_first is read and no values are: none, or
  // values_iota): an odd number of active passes starts on the scratch side, so that the last one
  // writes keys_a and values_a and no copy-back is needed. The first active pass reads keys_first
  // whichever side it starts on.
  uint32_t route_by_parity;
  // Not 0 (the CUDA face's cooperative launch): the kernel clears the state block itself, these
  // many u32s from digit_counts (a multiple of 4), before a grid barrier; 0: the launcher cleared
  // it.
  uint32_t state_words;
};

// The one argument of the copy-back kernel (gpusort_onesweep_copy_back, the CUDA face's).
struct OnesweepCopyBackParams {
  const void* keys_b;  // the scratch copies, where the copy-back flag is set
  void* keys_a;        // the caller's
  const void* values_b;
  void* values_a;
  const uint32_t* count;
  const uint32_t* control;
  unsigned long long n;
  uint32_t key_words, value_words;
};
inline constexpr const char* kCudaCopyBackKernel = "gpusort_onesweep_copy_back";
inline constexpr uint32_t kCudaCopyBackThreads = 256;

}  // namespace gpusort::cuda

#endif  // GPUSORT_ONESWEEP_CUDA_KERNELS_HPP
