// Shared by the kernels (onesweep.cu) and the host (main.cpp and the sorters): the state
// block's layout, the look-back entry format and the tuning variants. Plain C++17, no CUDA.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define NVX_HOST_DEVICE __host__ __device__
#else
#define NVX_HOST_DEVICE
#endif

namespace nvx_onesweep {

inline constexpr uint32_t kRadix = 256;
inline constexpr uint32_t kDigitBits = 8;
inline constexpr uint32_t kMaxPasses = 8;  // 64-bit keys

// The state block, zeroed (one fill) before every sort. u32 words:
//   [kStateCounts, +kMaxPasses * kRadix)    every pass's digit histogram (histogram kernel)
//   [kStateOffsets, +kMaxPasses * kRadix)   their exclusive prefix sums (its last block)
//   [kStateControl, +kControlWords)         per-pass tile counters, the histogram's ticket,
//                                           the count of look-back fallbacks
// then, at kLookbackByteOffset, the circular look-back table: slots x kRadix u64 entries, the
// same layout as gpusort's src/primitives/glsl/lookback.glsl (entry (slot, digit) at
// slot * kRadix + digit; bits 63..33 the tag, bit 32 "inclusive", bits 31..0 the count).
inline constexpr uint32_t kStateCounts = 0;
inline constexpr uint32_t kStateOffsets = kMaxPasses * kRadix;
inline constexpr uint32_t kStateControl = 2 * kMaxPasses * kRadix;
inline constexpr uint32_t kControlTileCounter = 0;  // + pass
inline constexpr uint32_t kControlTicket = kMaxPasses;
inline constexpr uint32_t kControlFallbacks = kMaxPasses + 1;
inline constexpr uint32_t kControlWords = 64;
inline constexpr uint64_t kLookbackByteOffset = uint64_t(kStateControl + kControlWords) * 4;
static_assert(kLookbackByteOffset % 256 == 0, "the table starts 256-byte aligned");
inline constexpr uint32_t kMaxLookbackSlots = 1024;  // as gpusort's OnesweepOptions default

inline constexpr uint64_t kLookbackInclusive = uint64_t(1) << 32;
inline constexpr uint32_t kLookbackTagShift = 33;
NVX_HOST_DEVICE inline constexpr uint64_t lookback_entry(uint32_t tag, bool inclusive,
                                                         uint32_t count) {
  return (uint64_t(tag) << kLookbackTagShift) | (inclusive ? kLookbackInclusive : 0) | count;
}

// The histogram kernel's shape (all variants): 128 threads, 16 32-bit or 8 64-bit keys each,
// as CUB's sm_90 histogram policy; the host launches min(tiles, SMs x blocks per SM) blocks.
inline constexpr uint32_t kHistogramThreads = 128;
inline constexpr uint32_t kHistogramItems32 = 16;
inline constexpr uint32_t kHistogramItems64 = 8;

// How a pass block moves its ranked keys (then values) to their global places.
//   kExchangeWhole    the whole tile goes to shared memory in digit order, then out in runs of
//                     one digit (coalesced writes): CUB's way; shared memory ~ tile size.
//   kExchangeSegments the same, a segment of the digit-ordered tile at a time (ranks in
//                     [s x seg, (s + 1) x seg) staged, written out, next), with as few segments
//                     as let min_blocks blocks share an SM's 48 KiB (kNvxSharedPerSm: what a launch
//                     through VK_NVX_binary_import gets); segment 0 is staged before the
//                     look-back, the later segments' keys stay in registers across it.
//   kExchangeSegmentsReload  the same, but the later segments' keys are loaded again from
//                     global memory (L2) after the look-back instead of held in registers.
//   kExchangeDirect   no staging: each key (value) is written from its register to its place
//                     (scattered 4- or 8-byte writes that L2 merges into sectors); shared memory
//                     only for the ranking, the digit offsets and the look-back. The keys are
//                     loaded again after the look-back (held across it, they spilled).
inline constexpr uint32_t kExchangeWhole = 0;
inline constexpr uint32_t kExchangeSegments = 1;
inline constexpr uint32_t kExchangeSegmentsReload = 2;
inline constexpr uint32_t kExchangeDirect = 3;

// Hints (a Variant's bit mask), each a change of the segmented exchanges that costs no registers:
//   kHintPrefetchValues  pairs: as soon as the tile is claimed, each warp's lane 0 asks L2 for
//                        the warp's values (cp.async.bulk.prefetch.L2, sm_90), which are loaded
//                        only after the look-back: they then come from L2, not DRAM.
//   kHintPackedFallback  the look-back fallback's recount keeps two 16-bit digit counts per word
//                        (lookback.cuh PACKED): 512 bytes less per block, which lets a segment
//                        hold more keys (fewer segments) within the same budget.
inline constexpr uint32_t kHintPrefetchValues = 1;
inline constexpr uint32_t kHintPackedFallback = 2;

// Shared memory an SM gives a launch through VK_NVX_binary_import, measured (README.md): a fixed
// 48 KiB carveout that all resident blocks share, each block's static shared memory plus
// kReservedSharedPerBlock (a block of 48 KiB of dynamic shared memory lost the device).
inline constexpr uint32_t kNvxSharedPerSm = 48 * 1024;
// Shared memory the sm_90 driver reserves per block, counted against the 48 KiB static limit.
inline constexpr uint32_t kReservedSharedPerBlock = 1024;

// One tuning of the digit-pass kernel: a cubin per variant is built and embedded (the
// kernels take kVariants[ONESWEEP_VARIANT]), the host selects one with --variant.
struct Variant {
  const char* name;
  uint32_t threads;     // per block
  uint32_t min_blocks;  // per SM (__launch_bounds__: caps registers at 64K / (threads x this))
  uint32_t items_u32, items_u32_u32, items_u64, items_u64_u32;  // keys per thread, per key type
  uint32_t lookback_window;  // predecessors read at once per look-back round (gpusort: 16)
  uint32_t early_values;     // 1: values are requested before the look-back (gpusort), 0: after
                             // the keys' scatter (CUB)
  uint32_t exchange = kExchangeWhole;  // how the ranked keys (values) reach global memory
  uint32_t hints = 0;                  // kHint* bits
};

// The first is the default: CUB's sm_90 shapes (tuning_radix_sort.cuh: 384 threads; 20 keys
// per thread for u32, 23 for u32+u32; 64-bit keys: 30 nominal scaled to 15 by CUB, 14 here so
// that the block's shared memory, with the 1 KiB sm_90 reserves per block, stays within 48 KiB:
// 15 needed 49168 B, and every such launch through VK_NVX_binary_import lost the device).
inline constexpr Variant kVariants[] = {
    {"384x20", 384, 2, 20, 23, 14, 14, 16, 0},
    {"384x20w1", 384, 2, 20, 23, 14, 14, 1, 0},  // CUB-like look-back: one predecessor a read
    {"384x20ev", 384, 2, 20, 23, 14, 14, 16, 1},
    {"256x16", 256, 3, 16, 16, 12, 12, 16, 0},
    {"512x15", 512, 2, 15, 15, 10, 10, 16, 0},
    // Within the NVX path's 48 KiB per SM (the variants above get one block per SM there):
    // CUB's sm_90 shapes (u64 back to 15 keys) staged in segments: 2 blocks/SM.
    {"384x20seg", 384, 2, 20, 18, 15, 15, 16, 0, kExchangeSegments},
    {"384x20segrl", 384, 2, 20, 18, 15, 15, 16, 0, kExchangeSegmentsReload},
    // The same shape scattering from registers (no staging).
    {"384x20direct", 384, 2, 20, 20, 15, 15, 16, 0, kExchangeDirect},
    // 1024 threads/SM in two blocks of 512 (64 registers), segments.
    {"512x15seg", 512, 2, 15, 15, 10, 10, 16, 0, kExchangeSegmentsReload},
    // 768 threads/SM in three blocks of 256 (85 registers), segments.
    {"256x16seg3", 256, 3, 16, 16, 12, 12, 16, 0, kExchangeSegments},
    // One block of 1024 threads per SM (64 registers), the tile staged in two halves.
    {"1024x12seg1", 1024, 1, 12, 12, 8, 8, 16, 0, kExchangeSegmentsReload},
    // The three best of those with the pairs' values prefetched into L2 at the tile's claim
    // (keys-only kernels unchanged).
    {"384x20segrlpf", 384, 2, 20, 18, 15, 15, 16, 0, kExchangeSegmentsReload, kHintPrefetchValues},
    {"512x15segpf", 512, 2, 15, 15, 10, 10, 16, 0, kExchangeSegmentsReload, kHintPrefetchValues},
    {"1024x12seg1pf", 1024, 1, 12, 12, 8, 8, 16, 0, kExchangeSegmentsReload, kHintPrefetchValues},
    // 16-bit fallback counts (512 B less) and values prefetched: 384 x 14 u64 keys in two
    // segments of 7 (384x20segrl: three of 5), u32+u32 14 in two of 7, u64+u32 12 in three of 4.
    {"384x14s2pk", 384, 2, 20, 14, 14, 12, 16, 0, kExchangeSegmentsReload,
     kHintPrefetchValues | kHintPackedFallback},
    // The same budget with larger tiles: u32+u32 19 in three segments of 7, u64 18 in three of 6,
    // u64+u32 15 in four of 4 (at 21 and 16 they spilled 144/216 and 44/120 bytes).
    {"384x18s3pk", 384, 2, 20, 19, 18, 15, 16, 0, kExchangeSegmentsReload,
     kHintPrefetchValues | kHintPackedFallback},
    // One block of 1024 per SM (1024x12seg1: the best for pairs so far) with larger tiles for
    // pairs and u64 (u32+u32 13 in three segments of 5, u64 10 in two of 5, u64+u32 9 in three
    // of 3; at 16 and 15 keys u32 and u32+u32 spilled 124/132 and 124/140 bytes).
    {"1024x13s1pk", 1024, 1, 12, 13, 10, 9, 16, 0, kExchangeSegmentsReload,
     kHintPrefetchValues | kHintPackedFallback},
    // Three blocks per SM, near CUB's f32 occupancy (384 x 19, three blocks per SM through the
    // CUDA runtime: 36 warps), each block within 15 KiB (384 threads' ranking alone leaves too
    // little): 320 threads (30 warps, 68 registers) and 352 (33 warps, 62 registers), keys in
    // segments, loaded again, 16-bit fallback counts.
    {"320x20s3k3", 320, 3, 20, 15, 15, 12, 16, 0, kExchangeSegmentsReload,
     kHintPrefetchValues | kHintPackedFallback},
    {"352x16s3k3", 352, 3, 16, 12, 12, 9, 16, 0, kExchangeSegmentsReload,
     kHintPrefetchValues | kHintPackedFallback},
};

inline constexpr uint32_t kVariantCount = sizeof(kVariants) / sizeof(kVariants[0]);

// Key types: 32- or 64-bit unsigned keys, alone or with 32-bit values.
enum class KeyType { u32, u32_u32, u64, u64_u32 };
inline constexpr uint32_t items_for(const Variant& v, KeyType t) {
  return t == KeyType::u32       ? v.items_u32
         : t == KeyType::u32_u32 ? v.items_u32_u32
         : t == KeyType::u64     ? v.items_u64
                                 : v.items_u64_u32;
}

}  // namespace nvx_onesweep
