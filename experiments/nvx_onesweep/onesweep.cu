// gpusort's Onesweep radix sort (8-bit digits, LSD) as CUDA kernels for sm_90, compiled to a
// cubin (and PTX) that the host loads through VK_NVX_binary_import and launches inside a Vulkan
// command buffer, or through the CUDA runtime (main.cpp). Two kernels:
//   onesweep_histogram_<key>  one read of the keys builds every pass's digit histogram; the
//                             last block to finish turns them into exclusive digit offsets
//   onesweep_pass_<key>[_<value>]  one digit pass: a block claims a tile from the pass's atomic
//                             counter, ranks its keys by digit in shared memory (CUB's
//                             BlockRadixRankMatchEarlyCounts), publishes the tile's digit counts,
//                             looks back over its predecessors for each digit's exclusive prefix
//                             and scatters keys (then values) through shared memory.
// The look-back is gpusort's (src/primitives/glsl/lookback.glsl,
// src/algorithms/onesweep/onesweep_pass.comp), in lookback.cuh: a circular table of a fixed number
// of tile slots whose entries carry the tile's tag (scratch independent of n, never cleared between
// passes), and a decoupled fallback that assumes no forward progress of other blocks: a block whose
// predecessor stays unpublished (or whose slot was reused) counts that predecessor's keys itself.
//
// Kernel parameters are only pointers and 32-bit scalars (launched with arrays of pointers to
// each argument through vkCmdCuLaunchKernelNVX or cudaLaunchKernel). Every pass kernel has the
// same parameter list; the keys-only kernels ignore the value pointers.
#include <cstdint>
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_rank.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/atomic>
#include <type_traits>

#include "layout.hpp"
#include "lookback.cuh"
#include "residency.cuh"

#ifndef ONESWEEP_VARIANT
#define ONESWEEP_VARIANT 0
#endif

namespace nvx_onesweep {
namespace {

constexpr Variant kVariant = kVariants[ONESWEEP_VARIANT];
constexpr int kThreads = int(kVariant.threads);
constexpr int kMinBlocks = int(kVariant.min_blocks);
// Static shared memory only: a launch through VK_NVX_binary_import cannot raise the 48 KiB
// limit of dynamic shared memory (no cuFuncSetAttribute there).
constexpr size_t kMaxStaticShared = 48 * 1024;

template <class K>
struct DigitOf {
  uint32_t bit;
  __device__ __forceinline__ uint32_t Digit(K key) const {
    return uint32_t(key >> bit) & (kRadix - 1);
  }
};

// The look-back's environment (lookback.cuh): a CUDA block. Table entries are read and written
// with relaxed device-scope atomics: they reach L2, where every SM's atomicMax lands, and the
// compiler cannot keep an entry in a register across the spin loop.
struct CudaBlock {
  static __device__ __forceinline__ uint32_t thread() { return threadIdx.x; }
  static __device__ __forceinline__ void sync() { __syncthreads(); }
  static __device__ __forceinline__ LookbackEntry load_entry(LookbackEntry* p) {
    return cuda::atomic_ref<LookbackEntry, cuda::thread_scope_device>(*p).load(
        cuda::memory_order_relaxed);
  }
  static __device__ __forceinline__ void max_entry(LookbackEntry* p, LookbackEntry v) {
    atomicMax(p, v);
  }
  static __device__ __forceinline__ void shared_max(uint32_t* p, uint32_t v) { atomicMax(p, v); }
  static __device__ __forceinline__ void shared_add(uint32_t* p, uint32_t v) { atomicAdd(p, v); }
  static __device__ __forceinline__ void global_add(uint32_t* p, uint32_t v) { atomicAdd(p, v); }
};

struct NoValue {};

struct PassParams {
  uint32_t n;               // keys (< 2^32)
  uint32_t pass;            // digit = bits [8 pass, 8 pass + 8)
  uint32_t first_tag;       // tag of tile 0 in this pass; tile p has first_tag + p
  uint32_t slot_mask;       // look-back table length in tiles (a power of two) - 1
  uint32_t refusal_period;  // testing: tiles p % period == period - 1 never publish (0: all do)
  uint32_t spin_limit;      // look-back rounds on an unpublished predecessor before recounting it
  uint32_t claim_by_id;     // 1: block i sorts tile i (no counter); 0: tiles from the counter
};

template <class K, class V, int THREADS, int ITEMS, int MIN_BLOCKS, int WINDOW, bool EARLY_VALUES,
          uint32_t EXCHANGE, uint32_t HINTS>
struct OnesweepPass {
  static constexpr bool kValues = !std::is_same<V, NoValue>::value;
  static constexpr uint32_t kTile = uint32_t(THREADS * ITEMS);
  using Lookback = nvx_onesweep::Lookback<CudaBlock, K, THREADS, kTile, WINDOW,
                                          (HINTS & kHintPackedFallback) != 0>;
  // Values prefetched into L2 when the tile is claimed (pairs whose values load after the
  // look-back): each warp's values are contiguous (warp-striped), ITEMS x 32 x 4 bytes.
  static constexpr bool kPrefetchValues =
      kValues && !EARLY_VALUES && (HINTS & kHintPrefetchValues) != 0;
  static constexpr int kBins = Lookback::kBins;
  using Rank =
      cub::BlockRadixRankMatchEarlyCounts<THREADS, int(kDigitBits), false,
                                          cub::BLOCK_SCAN_RAKING_MEMOIZE, cub::WARP_MATCH_ANY, 1>;
  using ValueSlot = typename std::conditional<kValues, V, K>::type;
  static constexpr bool kDirect = EXCHANGE == kExchangeDirect;
  // Segmented pairs stage each segment's keys and values together (the value goes out right
  // after its key, to the same place): no per-key targets held across the keys' scatter.
  static constexpr bool kJoint =
      kValues && (EXCHANGE == kExchangeSegments || EXCHANGE == kExchangeSegmentsReload);

  // Everything but the exchange array.
  struct Fixed {
    uint32_t digit_shift[kRadix];  // global index - tile position, per digit
    typename Lookback::Shared lookback;
    uint32_t tile;
  };
  // Shared memory of a block whose exchange array holds `items` keys per thread (0: none).
  static constexpr size_t shared_bytes(int items) {
    const size_t rank = sizeof(typename Rank::TempStorage);
    const size_t exchange =
        size_t(THREADS) * size_t(items) * (sizeof(K) + (kJoint ? sizeof(ValueSlot) : 0));
    const size_t bytes = (rank > exchange ? rank : exchange) + sizeof(Fixed);
    return (bytes + 15) / 16 * 16;
  }
  // Keys per thread in one exchange segment: the whole tile (kExchangeWhole), none (direct),
  // else the most that let MIN_BLOCKS blocks (each with its reserved shared memory) share the
  // NVX path's 48 KiB per SM.
  static constexpr int segment_items() {
    if constexpr (EXCHANGE == kExchangeWhole) {
      return ITEMS;
    } else if constexpr (kDirect) {
      return 0;
    } else {
      int items = 1;
      for (int segments = ITEMS; segments >= 1; --segments) {
        const int candidate = (ITEMS + segments - 1) / segments;
        if (shared_bytes(candidate) + kReservedSharedPerBlock <= kNvxSharedPerSm / MIN_BLOCKS)
          items = candidate;
      }
      return items;
    }
  }
  static constexpr int kSegmentItems = segment_items();
  static constexpr int kSegments = kDirect ? 0 : (ITEMS + kSegmentItems - 1) / kSegmentItems;
  static constexpr uint32_t kSegmentKeys = uint32_t(THREADS * kSegmentItems);

  static constexpr uint32_t kSlots = kSegmentKeys > 0 ? kSegmentKeys : 1;
  struct KeysAndValues {
    K keys[kSlots];
    ValueSlot values[kSlots];
  };
  struct KeysOnly {
    K keys[kSlots];
  };
  using Joint = typename std::conditional<kJoint, KeysAndValues, KeysOnly>::type;
  struct Shared {
    union {
      typename Rank::TempStorage rank;
      K keys[kSlots];            // a segment of the tile in digit order
      ValueSlot values[kSlots];  // (then of its values)
      Joint joint;               // kJoint: a segment's keys and values
    } exchange;
    Fixed fixed;
  };
  // With the block's reserved shared memory: launches through VK_NVX_binary_import of a block
  // above 48 KiB in all lost the device (u64 at 384 x 15: 48144 B + 1 KiB).
  static_assert(sizeof(Shared) + kReservedSharedPerBlock <= kMaxStaticShared,
                "the variant's tile does not fit 48 KiB of shared memory");
  // The segmented and direct variants are made to fit MIN_BLOCKS blocks per SM through NVX.
  static_assert(EXCHANGE == kExchangeWhole ||
                    (sizeof(Shared) + kReservedSharedPerBlock) * MIN_BLOCKS <= kNvxSharedPerSm,
                "the variant's blocks do not fit the NVX path's 48 KiB per SM");
  static_assert(kTile <= (1u << 16), "ranks are packed in 16 bits");
  static constexpr int kPackedRanks = (ITEMS + 1) / 2;
  static __device__ __forceinline__ uint32_t rank_of(const uint32_t (&ranks)[kPackedRanks], int u) {
    return (ranks[u / 2] >> (16 * (u & 1))) & 0xffffu;
  }

  static __device__ __forceinline__ int thread_bin(int u) { return Lookback::thread_bin(u); }

  // Publishes the tile's digit counts as soon as the ranking has them (before its exclusive
  // scan), so that successors can pass over this tile early; tile 0's counts are inclusive.
  struct PublishCounts {
    int (&bins)[kBins];
    LookbackEntry* table;
    uint32_t slot_mask, tile, tag;
    bool publishes;
    __device__ __forceinline__ void operator()(int (&counts)[kBins]) {
#pragma unroll
      for (int u = 0; u < kBins; ++u) {
        bins[u] = counts[u];
        const int bin = thread_bin(u);
        if (publishes && bin < int(kRadix))
          Lookback::publish(table, slot_mask, tile, uint32_t(bin), tag, tile == 0,
                            uint32_t(counts[u]));
      }
    }
  };

  // One bulk L2 prefetch per warp (lane 0) of the warp's values in the tile: a hint, no
  // registers held, nothing waited for. The address must be 16-byte aligned and the size a
  // multiple of 16: the warp's chunk starts at a multiple of 128 bytes of the tile (the tile at a
  // multiple of kTile x 4 bytes, kTile % 4 == 0), the last tile's chunk is cut to 16 bytes.
  static __device__ __forceinline__ void prefetch_values(const V* __restrict__ values_in,
                                                         uint32_t tile_begin, uint32_t tile_items) {
    if constexpr (kPrefetchValues) {
      static_assert(sizeof(V) == 4 && kTile % 4 == 0, "16-byte aligned chunks");
      const uint32_t warp = threadIdx.x / 32;
      const uint32_t first = warp * uint32_t(ITEMS) * 32;  // the warp's first value in the tile
      if ((threadIdx.x & 31) != 0 || first >= tile_items) return;
      const uint32_t count =
          tile_items - first < uint32_t(ITEMS) * 32 ? tile_items - first : uint32_t(ITEMS) * 32;
      const uint32_t bytes = count * uint32_t(sizeof(V)) / 16 * 16;
      const V* chunk = values_in + tile_begin + first;
      if (bytes != 0 && (reinterpret_cast<uintptr_t>(chunk) & 15) == 0)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(
                         uint64_t(__cvta_generic_to_global(chunk))),
                     "r"(bytes)
                     : "memory");
    }
  }

  template <bool FULL>
  static __device__ __forceinline__ void load_values(const V* __restrict__ values_in,
                                                     uint32_t tile_begin, uint32_t tile_items,
                                                     ValueSlot (&values)[ITEMS]) {
    if (FULL)
      cub::LoadDirectWarpStriped(int(threadIdx.x), values_in + tile_begin, values);
    else
      cub::LoadDirectWarpStriped(int(threadIdx.x), values_in + tile_begin, values, int(tile_items));
  }

  // Stages the keys (or values) whose ranks fall in segment `seg` of the digit-ordered tile at
  // their places in the exchange array.
  template <class T>
  static __device__ __forceinline__ void stage(T* slots, const T (&items)[ITEMS],
                                               const uint32_t (&ranks)[kPackedRanks], int seg) {
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
      const uint32_t local = rank_of(ranks, u) - uint32_t(seg) * kSegmentKeys;
      if (kSegments == 1 || local < kSegmentKeys) slots[local] = items[u];
    }
  }

  // Keys (then values) from shared memory (tile order, digit runs contiguous) to their global
  // places: positions t, t + THREADS, ... of each segment, so that each run's writes coalesce.
  // Segment 0 was staged before the look-back; `keys` holds the later segments' keys (kept in
  // registers, or loaded again here: kExchangeSegmentsReload).
  template <bool FULL>
  static __device__ __forceinline__ void scatter(
      Shared& s, const K* __restrict__ keys_in, K* __restrict__ keys_out,
      const V* __restrict__ values_in, V* __restrict__ values_out, DigitOf<K> digits,
      uint32_t tile_begin, uint32_t tile_items, K (&keys)[ITEMS],
      const uint32_t (&ranks)[kPackedRanks], ValueSlot (&values)[ITEMS]) {
    uint32_t targets[ITEMS];
    if constexpr (kDirect) {
      // The keys again (from L2): held in registers across the look-back they spilled.
      if (FULL)
        cub::LoadDirectWarpStriped(int(threadIdx.x), keys_in + tile_begin, keys);
      else
        cub::LoadDirectWarpStriped(int(threadIdx.x), keys_in + tile_begin, keys, int(tile_items),
                                   ~K(0));
#pragma unroll
      for (int u = 0; u < ITEMS; ++u) {
        const uint32_t rank = rank_of(ranks, u);
        targets[u] = rank + s.fixed.digit_shift[digits.Digit(keys[u])];
        if (FULL || rank < tile_items) keys_out[targets[u]] = keys[u];
      }
      if constexpr (kValues) {
        if (!EARLY_VALUES) load_values<FULL>(values_in, tile_begin, tile_items, values);
#pragma unroll
        for (int u = 0; u < ITEMS; ++u)
          if (FULL || rank_of(ranks, u) < tile_items) values_out[targets[u]] = values[u];
      }
      return;
    } else {
      if constexpr (EXCHANGE == kExchangeSegmentsReload && kSegments > 1) {
        if (FULL)
          cub::LoadDirectWarpStriped(int(threadIdx.x), keys_in + tile_begin, keys);
        else
          cub::LoadDirectWarpStriped(int(threadIdx.x), keys_in + tile_begin, keys, int(tile_items),
                                     ~K(0));
      }
      if constexpr (kJoint && !EARLY_VALUES)
        load_values<FULL>(values_in, tile_begin, tile_items, values);
#pragma unroll
      for (int seg = 0; seg < kSegments; ++seg) {
        if (seg > 0) {
          __syncthreads();  // the previous segment read
          stage(s.exchange.keys, keys, ranks, seg);
        }
        if constexpr (kJoint) stage(s.exchange.joint.values, values, ranks, seg);
        if (seg > 0 || kJoint) __syncthreads();
#pragma unroll
        for (int u = 0; u < kSegmentItems; ++u) {
          const int item = seg * kSegmentItems + u;
          if (item >= ITEMS) break;
          const uint32_t local = threadIdx.x + uint32_t(u * THREADS);
          const uint32_t i = uint32_t(seg) * kSegmentKeys + local;  // = t + item x THREADS
          const K key = s.exchange.keys[local];
          targets[item] = i + s.fixed.digit_shift[digits.Digit(key)];
          if (FULL || i < tile_items) {
            keys_out[targets[item]] = key;
            if constexpr (kJoint) values_out[targets[item]] = s.exchange.joint.values[local];
          }
          __syncwarp();
        }
      }
      if constexpr (kValues && !kJoint) {
        if (!EARLY_VALUES) load_values<FULL>(values_in, tile_begin, tile_items, values);
        __syncthreads();  // every key read from shared memory
        stage(s.exchange.values, values, ranks, 0);
        __syncthreads();
#pragma unroll
        for (int u = 0; u < ITEMS; ++u) {
          const uint32_t i = threadIdx.x + uint32_t(u * THREADS);
          if (FULL || i < tile_items) values_out[targets[u]] = s.exchange.values[i];
          __syncwarp();
        }
      }
    }
  }

  static __device__ __forceinline__ void run(const K* __restrict__ keys_in,
                                             K* __restrict__ keys_out,
                                             const V* __restrict__ values_in,
                                             V* __restrict__ values_out, uint32_t* state,
                                             LookbackEntry* table, const PassParams& p) {
    __shared__ Shared s;
    const uint32_t t = threadIdx.x;
    const DigitOf<K> digits{p.pass * kDigitBits};
    uint32_t* control = state + kStateControl;
    if (t == 0)
      s.fixed.tile =
          p.claim_by_id != 0 ? blockIdx.x : atomicAdd(&control[kControlTileCounter + p.pass], 1u);
    Lookback::prepare(s.fixed.lookback);
    // This pass's exclusive digit offsets, requested early so their latency hides behind the
    // claim and the keys.
    uint32_t digit_offset[kBins];
#pragma unroll
    for (int u = 0; u < kBins; ++u) {
      const int bin = thread_bin(u);
      digit_offset[u] =
          bin < int(kRadix) ? state[kStateOffsets + p.pass * kRadix + uint32_t(bin)] : 0u;
    }
    __syncthreads();
    const uint32_t tile = s.fixed.tile;
    const uint32_t tile_begin = tile * kTile;
    const bool full = p.n - tile_begin >= kTile;
    const uint32_t tile_items = full ? kTile : p.n - tile_begin;
    const uint32_t tag = p.first_tag + tile;
    prefetch_values(values_in, tile_begin, tile_items);
    const bool publishes = p.refusal_period == 0 || tile % p.refusal_period != p.refusal_period - 1;

    // 1. The tile's keys, warp-striped (each warp a contiguous chunk): the ranking is stable in
    // that order. Past the end of the last tile, all-ones keys (digit 255 in every pass) rank
    // after every real key and are not stored.
    K keys[ITEMS];
    if (full)
      cub::LoadDirectWarpStriped(int(t), keys_in + tile_begin, keys);
    else
      cub::LoadDirectWarpStriped(int(t), keys_in + tile_begin, keys, int(tile_items), ~K(0));
    ValueSlot values[ITEMS];
    if constexpr (kValues && EARLY_VALUES) {
      if (full)
        load_values<true>(values_in, tile_begin, tile_items, values);
      else
        load_values<false>(values_in, tile_begin, tile_items, values);
    }

    // 2-3. Rank by digit; the counts are published from within the ranking (PublishCounts).
    int ranks[ITEMS];
    int tile_prefix[kBins];  // exclusive prefix of each digit within the tile
    int bins[kBins];         // the tile's count of each digit
    Rank(s.exchange.rank)
        .RankKeys(keys, ranks, digits, tile_prefix,
                  PublishCounts{bins, table, p.slot_mask, tile, tag, publishes});
    if constexpr (!kDirect) {
      __syncthreads();  // the ranking's storage becomes the exchange array
                        // The first (or only) segment.
#pragma unroll
      for (int u = 0; u < ITEMS; ++u)
        if (kSegments == 1 || uint32_t(ranks[u]) < kSegmentKeys)
          s.exchange.keys[ranks[u]] = keys[u];
    }
    // The values (and the later segments' keys) need the ranks after the look-back: two 16-bit
    // ranks per register meanwhile (u32+u32 at 384 x 23 spilled 14 registers around the
    // look-back with one rank each).
    uint32_t packed_ranks[kPackedRanks];
#pragma unroll
    for (int u = 0; u < kPackedRanks; ++u) {
      packed_ranks[u] =
          uint32_t(ranks[2 * u]) | (2 * u + 1 < ITEMS ? uint32_t(ranks[2 * u + 1]) << 16 : 0u);
    }
    // Each digit's global offset less its start in the tile, completed by the look-back's
    // prefix below (kept in shared memory meanwhile, as CUB does, to spare registers).
#pragma unroll
    for (int u = 0; u < kBins; ++u) {
      const int bin = thread_bin(u);
      if (bin < int(kRadix)) s.fixed.digit_shift[bin] = digit_offset[u] - uint32_t(tile_prefix[u]);
    }

    // 4. Look back for each digit's count in all earlier tiles, publish the inclusive prefix.
    uint32_t exclusive[kBins];
    Lookback::run(s.fixed.lookback, keys_in, table, control + kControlFallbacks,
                  LookbackParams{p.n, digits.bit, p.first_tag, p.slot_mask, p.spin_limit}, tile,
                  exclusive);
#pragma unroll
    for (int u = 0; u < kBins; ++u) {
      const int bin = thread_bin(u);
      if (bin >= int(kRadix)) continue;
      if (publishes && tile != 0)
        Lookback::publish(table, p.slot_mask, tile, uint32_t(bin), tag, true,
                          exclusive[u] + uint32_t(bins[u]));
      s.fixed.digit_shift[bin] += exclusive[u];
    }
    __syncthreads();

    // 5. Scatter.
    if (full)
      scatter<true>(s, keys_in, keys_out, values_in, values_out, digits, tile_begin, tile_items,
                    keys, packed_ranks, values);
    else
      scatter<false>(s, keys_in, keys_out, values_in, values_out, digits, tile_begin, tile_items,
                     keys, packed_ranks, values);
  }
};

// Every pass's digit histogram in one read of the keys (accumulated per block in shared memory,
// then added into the state block); the block that draws the last ticket then writes each
// pass's exclusive digit offsets.
template <class K, int THREADS, int ITEMS>
struct Histogram {
  static constexpr int kPasses = int(sizeof(K));
  static constexpr uint32_t kTile = uint32_t(THREADS * ITEMS);
  static constexpr int kDigitsPerThread = int(kRadix) / THREADS;
  static_assert(int(kRadix) % THREADS == 0, "the scan gives each thread whole digits");
  using Scan = cub::BlockScan<uint32_t, THREADS>;

  template <bool FULL>
  static __device__ __forceinline__ void count_tile(uint32_t* hist, const K* __restrict__ keys,
                                                    uint32_t base, uint32_t n) {
    K k[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
      const uint32_t i = base + uint32_t(u * THREADS) + threadIdx.x;
      k[u] = FULL || i < n ? keys[i] : K(0);
    }
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
      if (!FULL && base + uint32_t(u * THREADS) + threadIdx.x >= n) continue;
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass)
        atomicAdd(&hist[pass * kRadix + (uint32_t(k[u] >> (pass * kDigitBits)) & (kRadix - 1))],
                  1u);
    }
  }

  static __device__ __forceinline__ void run(const K* __restrict__ keys, uint32_t n,
                                             uint32_t* state) {
    __shared__ uint32_t hist[kPasses * kRadix];
    __shared__ typename Scan::TempStorage scan;
    __shared__ bool last;
    const uint32_t t = threadIdx.x;
    for (uint32_t i = t; i < kPasses * kRadix; i += THREADS) hist[i] = 0;
    __syncthreads();
    for (uint32_t base = blockIdx.x * kTile; base < n; base += gridDim.x * kTile) {
      if (n - base >= kTile)
        count_tile<true>(hist, keys, base, n);
      else
        count_tile<false>(hist, keys, base, n);
    }
    __syncthreads();
    for (uint32_t i = t; i < kPasses * kRadix; i += THREADS)
      if (hist[i] != 0) atomicAdd(&state[kStateCounts + i], hist[i]);
    // Each thread's additions happen before its fence, the fences before the barrier, the
    // barrier before the ticket; the block that draws the last ticket fences after it, so it
    // sees every block's additions.
    __threadfence();
    __syncthreads();
    if (t == 0) {
      cuda::atomic_ref<uint32_t, cuda::thread_scope_device> ticket(
          state[kStateControl + kControlTicket]);
      last = ticket.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    for (int pass = 0; pass < kPasses; ++pass) {
      uint32_t c[kDigitsPerThread], offsets[kDigitsPerThread];
#pragma unroll
      for (int k = 0; k < kDigitsPerThread; ++k)
        c[k] = cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(
                   state[kStateCounts + pass * kRadix + t * kDigitsPerThread + k])
                   .load(cuda::memory_order_relaxed);
      Scan(scan).ExclusiveSum(c, offsets);
#pragma unroll
      for (int k = 0; k < kDigitsPerThread; ++k)
        state[kStateOffsets + pass * kRadix + t * kDigitsPerThread + k] = offsets[k];
      __syncthreads();  // the scan's storage is reused by the next pass
    }
  }
};

template <class K, class V, uint32_t ITEMS>
using PassOf = OnesweepPass<K, V, kThreads, int(ITEMS), kMinBlocks, int(kVariant.lookback_window),
                            kVariant.early_values != 0, kVariant.exchange, kVariant.hints>;

}  // namespace
}  // namespace nvx_onesweep

using namespace nvx_onesweep;

#define NVX_HISTOGRAM_KERNEL(name, K, ITEMS)                               \
  extern "C" __global__ void __launch_bounds__(kHistogramThreads)          \
      name(const K* keys, uint32_t n, uint32_t* state) {                   \
    Histogram<K, int(kHistogramThreads), int(ITEMS)>::run(keys, n, state); \
  }
NVX_HISTOGRAM_KERNEL(onesweep_histogram_u32, uint32_t, kHistogramItems32)
NVX_HISTOGRAM_KERNEL(onesweep_histogram_u64, unsigned long long, kHistogramItems64)

// The same parameter list for every key type: the keys-only kernels ignore the value pointers.
#define NVX_PASS_KERNEL(name, K, V, ITEMS)                                                      \
  extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks) name(                      \
      const K* keys_in, K* keys_out, const uint32_t* values_in, uint32_t* values_out,           \
      uint32_t* state, LookbackEntry* lookback, uint32_t n, uint32_t pass, uint32_t first_tag,  \
      uint32_t slot_mask, uint32_t refusal_period, uint32_t spin_limit, uint32_t claim_by_id) { \
    PassOf<K, V, ITEMS>::run(                                                                   \
        keys_in, keys_out, reinterpret_cast<const V*>(values_in),                               \
        reinterpret_cast<V*>(values_out), state, lookback,                                      \
        PassParams{n, pass, first_tag, slot_mask, refusal_period, spin_limit, claim_by_id});    \
  }
NVX_PASS_KERNEL(onesweep_pass_u32, uint32_t, NoValue, kVariant.items_u32)
NVX_PASS_KERNEL(onesweep_pass_u32_u32, uint32_t, uint32_t, kVariant.items_u32_u32)
NVX_PASS_KERNEL(onesweep_pass_u64, unsigned long long, NoValue, kVariant.items_u64)
NVX_PASS_KERNEL(onesweep_pass_u64_u32, unsigned long long, uint32_t, kVariant.items_u64_u32)

// Self-test kernels (main.cpp --self-test), in the same module as the sort's kernels.
// selftest_echo has the pass kernels' parameter list: block 0's thread 0 writes every parameter
// it received into `state` (each pointer as two words, low first; then the seven integers, then
// gridDim.x and blockDim.x), and the grid copies n words from keys_in to keys_out.
extern "C" __global__ void selftest_echo(const uint32_t* keys_in, uint32_t* keys_out,
                                         const uint32_t* values_in, uint32_t* values_out,
                                         uint32_t* state, LookbackEntry* lookback, uint32_t n,
                                         uint32_t pass, uint32_t first_tag, uint32_t slot_mask,
                                         uint32_t refusal_period, uint32_t spin_limit,
                                         uint32_t claim_by_id) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const uint64_t pointers[6] = {uint64_t(keys_in),    uint64_t(keys_out), uint64_t(values_in),
                                  uint64_t(values_out), uint64_t(state),    uint64_t(lookback)};
    for (int i = 0; i < 6; ++i) {
      state[2 * i] = uint32_t(pointers[i]);
      state[2 * i + 1] = uint32_t(pointers[i] >> 32);
    }
    const uint32_t ints[7] = {n,          pass,       first_tag, slot_mask, refusal_period,
                              spin_limit, claim_by_id};
    for (int i = 0; i < 7; ++i) state[12 + i] = ints[i];
    state[19] = gridDim.x;
    state[20] = blockDim.x;
  }
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    keys_out[i] = keys_in[i];
}

// Residency (residency.cuh): blocks of the pass kernels' shape and static shared memory (the u32
// or u64 pass's).
template <class Pass>
__device__ __forceinline__ void residency(unsigned long long* out, uint32_t spin_ns) {
  __shared__ typename Pass::Shared s;
  residency_body(reinterpret_cast<volatile uint32_t*>(&s), uint32_t(sizeof(s) / 4), out, spin_ns);
}
// The same with only dynamic shared memory (the launch's sharedMemBytes), or a static block of
// a given size: which shared memory configuration each launch path picks.
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
    selftest_residency_dynamic(unsigned long long* out, uint32_t spin_ns) {
  extern __shared__ uint32_t dynamic_words[];
  uint32_t bytes;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  residency_body(dynamic_words, bytes / 4, out, spin_ns);
}
template <uint32_t kBytes>
__device__ __forceinline__ void residency_static(unsigned long long* out, uint32_t spin_ns) {
  __shared__ uint32_t words[kBytes / 4];
  residency_body(words, kBytes / 4, out, spin_ns);
}
#define NVX_RESIDENCY_STATIC(kib)                                                  \
  extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)               \
      selftest_residency_static_##kib(unsigned long long* out, uint32_t spin_ns) { \
    residency_static<kib * 1024>(out, spin_ns);                                    \
  }
NVX_RESIDENCY_STATIC(8)
NVX_RESIDENCY_STATIC(16)
NVX_RESIDENCY_STATIC(24)
NVX_RESIDENCY_STATIC(30)
NVX_RESIDENCY_STATIC(40)
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
    selftest_residency_u32(unsigned long long* out, uint32_t spin_ns) {
  residency<PassOf<uint32_t, NoValue, kVariant.items_u32>>(out, spin_ns);
}
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
    selftest_residency_u64(unsigned long long* out, uint32_t spin_ns) {
  residency<PassOf<unsigned long long, NoValue, kVariant.items_u64>>(out, spin_ns);
}
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
    selftest_residency_u32_u32(unsigned long long* out, uint32_t spin_ns) {
  residency<PassOf<uint32_t, uint32_t, kVariant.items_u32_u32>>(out, spin_ns);
}
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
    selftest_residency_u64_u32(unsigned long long* out, uint32_t spin_ns) {
  residency<PassOf<unsigned long long, uint32_t, kVariant.items_u64_u32>>(out, spin_ns);
}

// The pass kernels' exchange shape (main.cpp --self-test and --info): per key type (u32,
// u32+u32, u64, u64+u32) keys per thread, exchange segments (0: direct scatter), keys per
// thread in a segment, static shared bytes of the block.
template <class Pass>
__device__ __forceinline__ void shape_of(uint32_t* out) {
  out[0] = uint32_t(Pass::kTile / uint32_t(kThreads));
  out[1] = uint32_t(Pass::kSegments);
  out[2] = uint32_t(Pass::kSegmentItems);
  out[3] = uint32_t(sizeof(typename Pass::Shared));
}
extern "C" __global__ void selftest_shape(uint32_t* out) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  shape_of<PassOf<uint32_t, NoValue, kVariant.items_u32>>(out);
  shape_of<PassOf<uint32_t, uint32_t, kVariant.items_u32_u32>>(out + 4);
  shape_of<PassOf<unsigned long long, NoValue, kVariant.items_u64>>(out + 8);
  shape_of<PassOf<unsigned long long, uint32_t, kVariant.items_u64_u32>>(out + 12);
}
