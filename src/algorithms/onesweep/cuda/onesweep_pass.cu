// Onesweep's digit pass (src/algorithms/onesweep/onesweep_pass.comp) as CUDA kernels, launched by
// both backends: through VK_NVX_binary_import in the caller's Vulkan command buffer
// (../onesweep.cpp), where the SPIR-V clear and copy-back run around them, and on the caller's
// CUDA stream (stream_sort.cpp). Both read the same state block (../state.h): this pass's
// exclusive digit offsets, the plan word (skipped pass, which buffer is read, first / last pass:
// keys mapped to radix order on the first read and back on the last write), the pass's tile
// counter, the look-back table and the fallback count, and the GPU-side count.
//
// A launch cannot be indirect: the host launches the grid for max_n's tiles; blocks beyond the
// count's tiles, and every block of a skipped pass, return at once.
//
// Per key class kernels with their own tile shape (cuda_kernels.hpp lists them), built once per key
// order: a block claims a tile from the pass's atomic counter (or takes its id's), ranks its keys
// by digit with CUB's BlockRadixRankMatchEarlyCounts, publishes the tile's digit counts at once,
// stages the digit-ordered tile in shared memory, looks back (lookback.cuh) and scatters keys,
// then values. The NVX rows stage a segment of the tile at a time in static shared memory (two
// blocks share the 48 KiB an NVX launch gets per SM); the CUDA face's rows the whole tile in
// dynamic shared memory (kHintWholeTile).
#include <cooperative_groups.h>

#include <cstdint>
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_rank.cuh>
#include <cuda/atomic>
#include <type_traits>

#include "algorithms/onesweep/cuda/cuda_kernels.hpp"
#include "algorithms/onesweep/cuda/lookback.cuh"
#include "algorithms/onesweep/state.h"
#include "cuda/dependent_launch.cuh"
#include "primitives/key_order.h"

namespace gpusort::cuda {
namespace {

constexpr uint32_t kRadix = ONESWEEP_RADIX;
constexpr uint32_t kDigitBits = ONESWEEP_DIGIT_BITS;

// What an SM gives a launch through VK_NVX_binary_import (measured in the CUDA laboratory, docs/design/onesweep.md):
// a fixed 48 KiB carveout that all resident blocks share, each block's static shared memory
// plus about 1 KiB the driver reserves; a block above 48 KiB with it lost the device.
constexpr size_t kNvxSharedPerSm = 48 * 1024;
constexpr size_t kReservedSharedPerBlock = 1024;
constexpr size_t kMaxStaticShared = 48 * 1024;

// The look-back's environment: a CUDA block. Table entries are read and written with relaxed
// device-scope atomics: they reach L2, where every SM's atomicMax lands, and the compiler cannot
// keep an entry in a register across the spin loop.
struct CudaBlock {
  static __device__ __forceinline__ uint32_t thread() { return threadIdx.x; }
  static __device__ __forceinline__ void sync() { __syncthreads(); }
  static __device__ __forceinline__ LookbackEntry load_entry(LookbackEntry* p) {
    return ::cuda::atomic_ref<LookbackEntry, ::cuda::thread_scope_device>(*p).load(
        ::cuda::memory_order_relaxed);
  }
  static __device__ __forceinline__ void max_entry(LookbackEntry* p, LookbackEntry v) {
    atomicMax(p, v);
  }
  static __device__ __forceinline__ void shared_max(uint32_t* p, uint32_t v) { atomicMax(p, v); }
  static __device__ __forceinline__ void shared_add(uint32_t* p, uint32_t v) { atomicAdd(p, v); }
  static __device__ __forceinline__ void global_add(uint32_t* p, uint32_t v) { atomicAdd(p, v); }
};

// Keys to radix order and back (src/primitives/key_order.h), descending inverted. ORDER is one
// of cuda_kernels.hpp's key orders (kind x 2 + descending, NumPy's float order's two included), so
// that each order's pass kernel holds its own mapping alone, without a register for it; kOrderAny
// (the histogram) decides at run time.
constexpr uint32_t kOrderAny = kCudaKeyOrderCount + 2;
template <class K, uint32_t ORDER>
struct KeyOrder {
  static constexpr bool kFixed = ORDER < kOrderAny;
  uint32_t kind;  // kOrderAny: the kind, and all ones in invert where descending
  K invert;
  static __device__ __forceinline__ KeyOrder make(uint32_t kind, bool descending) {
    return KeyOrder{kind, descending ? ~K(0) : K(0)};
  }
  __device__ __forceinline__ K inverted(K o) const {
    if constexpr (kFixed)
      return ORDER % 2 != 0 ? ~o : o;
    else
      return o ^ invert;
  }
  __device__ __forceinline__ uint32_t kind_now() const { return kFixed ? ORDER / 2 : kind; }
  __device__ __forceinline__ K to_order(K raw) const {
    if constexpr (kFixed && ORDER / 2 == key_kind_numpy_float)
      return inverted(gpusort::to_numpy_radix_order<K>(raw));
    else
      return inverted(gpusort::to_radix_order<K>(raw, kind_now()));
  }
  __device__ __forceinline__ K from_order(K ordered) const {
    return gpusort::from_radix_order<K>(inverted(ordered), kind_now());
  }
};

// The pass's digit of a radix-ordered key: bits [bit, bit + mask's width).
template <class K>
struct DigitOf {
  uint32_t bit, mask;
  __device__ __forceinline__ uint32_t Digit(K key) const { return uint32_t(key >> bit) & mask; }
};

// Whether a kernel of ORDER may read NumPy's floats (OnesweepFusedParams::canonical): only the
// fused variants of the float orders carry the code.
template <uint32_t ORDER, bool FUSED>
inline constexpr bool kMayCanonicalize = FUSED && ORDER < kOrderAny && ORDER / 2 == key_kind_float;

// The fallback's digit of key i: read from the pass's input, mapped where it is the caller's.
template <class K, uint32_t ORDER>
struct InputDigits {
  const K* keys_in;
  KeyOrder<K, ORDER> order;
  DigitOf<K> digits;
  bool map;
  __device__ __forceinline__ uint32_t operator()(uint32_t i) const {
    const K key = keys_in[i];
    return digits.Digit(map ? order.to_order(key) : key);
  }
};
// The same, the caller's keys read as the first pass reads NumPy's floats where `canonical` (-0.0
// as +0.0, every NaN as the canonical NaN): a functor of its own, so that the other kernels' code
// stays as it was.
template <class K, uint32_t ORDER>
struct CanonicalInputDigits {
  InputDigits<K, ORDER> input;
  bool canonical;
  __device__ __forceinline__ uint32_t operator()(uint32_t i) const {
    const K raw = input.keys_in[i];
    const K key = canonical ? FloatKeyBits<K>::canonical(raw) : raw;  // first passes only
    return input.digits.Digit(input.map ? input.order.to_order(key) : key);
  }
};

struct NoValue {};


// FUSED: the CUDA face's fused variant of a row (kHintFusedVariant), which takes
// OnesweepFusedParams; the other kernels are given none.
template <class K, class V, int THREADS, int ITEMS, int MIN_BLOCKS, int WINDOW, uint32_t HINTS,
          uint32_t ORDER, bool FUSED>
struct OnesweepPass {
  // The key order compiled in, or (kHintRuntimeOrder) decided at run time by the kind.
  static constexpr uint32_t kOrder = (HINTS & kHintRuntimeOrder) != 0 ? kOrderAny : ORDER;
  using Order = KeyOrder<K, kOrder>;
  static constexpr bool kValues = !std::is_same<V, NoValue>::value;
  // The fused variants of the float orders read NumPy's floats canonical where asked.
  static constexpr bool kMayCanonicalize = gpusort::cuda::kMayCanonicalize<kOrder, FUSED>;
  // NumPy's float order (key_kind_numpy_float) does not map one to one: the keys stay as they are
  // between passes; each pass maps the keys it reads to rank them, then loads them again as they
  // are to stage them, and maps each again for its digit as it writes it.
  static constexpr bool kRawKeys = kOrder < kOrderAny && kOrder / 2 == key_kind_numpy_float;
  static constexpr uint32_t kTile = uint32_t(THREADS * ITEMS);
  using Lookback =
      gpusort::cuda::Lookback<CudaBlock, K, THREADS, kTile, WINDOW,
                              (HINTS & kHintPackedFallback) != 0, (HINTS & kHintMaskWalk) != 0>;
  static constexpr bool kPrefetchValues = kValues && (HINTS & kHintPrefetchValues) != 0;
  // The tile's values copied into shared memory as the tile is claimed (kHintAsyncValues).
  static constexpr bool kAsyncValues = kValues && (HINTS & kHintAsyncValues) != 0;
  // The whole tile staged at once in dynamic shared memory (the CUDA face's rows).
  static constexpr bool kWholeTile = (HINTS & kHintWholeTile) != 0;
  static_assert(!FUSED || (kValues && sizeof(V) == 4 && kWholeTile),
                "fused variants are of the CUDA face's rows with 4-byte values");
  static_assert(!kAsyncValues || (sizeof(V) == 4 && kWholeTile),
                "values copied ahead are of the CUDA face's rows with 4-byte values");
  static_assert(!kRawKeys || kWholeTile, "NumPy's float order is of the CUDA face's rows");
  static constexpr int kBins = Lookback::kBins;
  using Rank =
      cub::BlockRadixRankMatchEarlyCounts<THREADS, int(kDigitBits), false,
                                          cub::BLOCK_SCAN_RAKING_MEMOIZE, cub::WARP_MATCH_ANY, 1>;
  using ValueSlot = typename std::conditional<kValues, V, K>::type;

  struct Fixed {
    uint32_t digit_shift[kRadix];  // global index - tile position, per digit
    typename Lookback::Shared lookback;
    uint32_t tile;
  };
  // Shared memory of a block whose exchange array holds `items` keys (and values) per thread.
  static constexpr size_t shared_bytes(int items) {
    const size_t rank = sizeof(typename Rank::TempStorage);
    const size_t exchange =
        size_t(THREADS) * size_t(items) * (sizeof(K) + (kValues ? sizeof(ValueSlot) : 0));
    const size_t bytes = (rank > exchange ? rank : exchange) + sizeof(Fixed);
    return (bytes + 15) / 16 * 16;
  }
  // Keys per thread in one exchange segment: the most that let MIN_BLOCKS blocks (each with its
  // reserved shared memory) share the NVX path's 48 KiB per SM.
  static constexpr int segment_items() {
    if (kWholeTile) return ITEMS;
    int items = 1;
    for (int segments = ITEMS; segments >= 1; --segments) {
      const int candidate = (ITEMS + segments - 1) / segments;
      if (shared_bytes(candidate) + kReservedSharedPerBlock <= kNvxSharedPerSm / MIN_BLOCKS)
        items = candidate;
    }
    return items;
  }
  static constexpr int kSegmentItems = segment_items();
  static constexpr int kSegments = (ITEMS + kSegmentItems - 1) / kSegmentItems;
  static constexpr uint32_t kSegmentKeys = uint32_t(THREADS * kSegmentItems);

  struct KeysAndValues {
    K keys[kSegmentKeys];
    ValueSlot values[kSegmentKeys];
  };
  struct KeysOnly {
    K keys[kSegmentKeys];
  };
  using Joint = typename std::conditional<kValues, KeysAndValues, KeysOnly>::type;
  struct Shared {
    union {
      typename Rank::TempStorage rank;
      Joint joint;  // a segment of the tile in digit order: keys (and their values)
    } exchange;
    Fixed fixed;
  };
  // The values copied ahead land in the exchange array's values, beside the ranking's storage.
  static_assert(!kAsyncValues || sizeof(typename Rank::TempStorage) <= sizeof(K) * kSegmentKeys,
                "the ranking's storage overlaps the values copied ahead");
  static_assert(kWholeTile || sizeof(Shared) + kReservedSharedPerBlock <= kMaxStaticShared,
                "the tile does not fit 48 KiB of shared memory");
  static_assert(kWholeTile ||
                    (sizeof(Shared) + kReservedSharedPerBlock) * MIN_BLOCKS <= kNvxSharedPerSm,
                "the blocks do not fit the NVX path's 48 KiB per SM");
  // The dynamic shared memory the host gives a whole-tile launch covers the block's.
  static_assert(!kWholeTile || sizeof(Shared) <= cuda_pass_dynamic_shared(
                                                    THREADS, ITEMS, sizeof(K),
                                                    kValues ? sizeof(ValueSlot) : 0),
                "cuda_pass_dynamic_shared is below the block's shared memory");
  // Static shared memory (all an NVX launch can have), or dynamic for the whole tile.
  static __device__ __forceinline__ Shared& shared_storage() {
    if constexpr (kWholeTile) {
      extern __shared__ __align__(16) unsigned char dynamic_shared[];
      return *reinterpret_cast<Shared*>(dynamic_shared);
    } else {
      __shared__ Shared s;
      return s;
    }
  }
  static_assert(kTile <= (1u << 16), "ranks are packed in 16 bits");
  static constexpr int kPackedRanks = (ITEMS + 1) / 2;
  static __device__ __forceinline__ uint32_t rank_of(const uint32_t (&ranks)[kPackedRanks], int u) {
    return (ranks[u / 2] >> (16 * (u & 1))) & 0xffffu;
  }
  static __device__ __forceinline__ int thread_bin(int u) { return Lookback::thread_bin(u); }

  // Publishes the tile's digit counts as soon as the ranking has them; tile 0's are inclusive.
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

  // The tile's keys, warp-striped (each warp a contiguous chunk: the ranking is stable in that
  // order), mapped to radix order where they are the caller's; past the end of the last tile
  // all-ones keys (the pass's largest digit), which rank after every real key and are not
  // stored.
  template <bool FULL>
  static __device__ __forceinline__ void load_keys(const K* __restrict__ keys_in,
                                                   uint32_t tile_begin, uint32_t tile_items,
                                                   bool map, bool canonical, const Order& order,
                                                   K (&keys)[ITEMS]) {
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const uint32_t first = warp * uint32_t(ITEMS) * 32 + lane;
    const K* chunk = keys_in + tile_begin + first;
#pragma unroll
    for (int u = 0; u < ITEMS; ++u)
      keys[u] = FULL || first + uint32_t(u) * 32 < tile_items ? chunk[u * 32] : K(0);
    if constexpr (kMayCanonicalize) {
      if (canonical) {
#pragma unroll
        for (int u = 0; u < ITEMS; ++u) keys[u] = FloatKeyBits<K>::canonical(keys[u]);
      }
    }
    if (map) {
#pragma unroll
      for (int u = 0; u < ITEMS; ++u) keys[u] = order.to_order(keys[u]);
    }
    if (!FULL) {
#pragma unroll
      for (int u = 0; u < ITEMS; ++u)
        if (first + uint32_t(u) * 32 >= tile_items) keys[u] = ~K(0);
    }
  }

  // The tile's values, warp-striped as its keys; `iota`: the keys' positions instead.
  template <bool FULL>
  static __device__ __forceinline__ void load_values(const V* __restrict__ values_in,
                                                     uint32_t tile_begin, uint32_t tile_items,
                                                     bool iota, ValueSlot (&values)[ITEMS]) {
    if (iota) {
      const uint32_t first = tile_begin + (threadIdx.x / 32) * uint32_t(ITEMS) * 32 + (threadIdx.x & 31);
#pragma unroll
      for (int u = 0; u < ITEMS; ++u) values[u] = ValueSlot(first + uint32_t(u) * 32);
    } else if (FULL)
      cub::LoadDirectWarpStriped(int(threadIdx.x), values_in + tile_begin, values);
    else
      cub::LoadDirectWarpStriped(int(threadIdx.x), values_in + tile_begin, values, int(tile_items));
  }

  // One bulk L2 prefetch per warp (lane 0) of the warp's chunk of a tile's items (keys or
  // values): a hint, no registers held, nothing waited for (16-byte aligned chunks, the last cut
  // to whole 16 bytes, nothing past the tile's last item).
  template <class T>
  static __device__ __forceinline__ void prefetch_tile(const T* __restrict__ items,
                                                       uint32_t tile_begin, uint32_t tile_items) {
    static_assert(kTile * sizeof(T) % 16 == 0, "16-byte aligned tiles");
    const uint32_t warp = threadIdx.x / 32;
    const uint32_t first = warp * uint32_t(ITEMS) * 32;
    if ((threadIdx.x & 31) != 0 || first >= tile_items) return;
    const uint32_t count =
        tile_items - first < uint32_t(ITEMS) * 32 ? tile_items - first : uint32_t(ITEMS) * 32;
    const uint32_t bytes = count * uint32_t(sizeof(T)) / 16 * 16;
    const T* chunk = items + tile_begin + first;
    if (bytes != 0 && (reinterpret_cast<uintptr_t>(chunk) & 15) == 0) {
#if __CUDACC_VER_MAJOR__ >= 12  // cp.async.bulk is PTX ISA 8.0; older nvcc leave the hint out
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(
                       uint64_t(__cvta_generic_to_global(chunk))),
                   "r"(bytes)
                   : "memory");
#endif
    }
  }

  // The values of the block's own tile (kHintPrefetchValues), for their load after the look-back.
  static __device__ __forceinline__ void prefetch_values(const V* __restrict__ values_in,
                                                         uint32_t tile_begin, uint32_t tile_items) {
    if constexpr (kPrefetchValues) {
      static_assert(sizeof(V) == 4, "4-byte values");
      prefetch_tile(values_in, tile_begin, tile_items);
    }
  }

  // kHintAsyncValues: the tile's values, in tile order, into the exchange array's values with
  // cp.async (16 bytes a copy where the tile is whole and aligned, else 4), waited for only before
  // they are staged by rank, so that their load overlaps the ranking and the look-back.
  static __device__ __forceinline__ void copy_values_async(ValueSlot* slots,
                                                           const V* __restrict__ values_in,
                                                           uint32_t tile_begin, uint32_t tile_items) {
    const V* tile_values = values_in + tile_begin;
    if (tile_items == kTile && kTile % 4 == 0 && (reinterpret_cast<uintptr_t>(tile_values) & 15) == 0) {
      for (uint32_t c = threadIdx.x; c < kTile / 4; c += THREADS)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                         uint32_t(__cvta_generic_to_shared(slots + 4 * c))),
                     "l"(__cvta_generic_to_global(tile_values + 4 * c))
                     : "memory");
    } else {
      for (uint32_t j = threadIdx.x; j < tile_items; j += THREADS)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(
                         uint32_t(__cvta_generic_to_shared(slots + j))),
                     "l"(__cvta_generic_to_global(tile_values + j))
                     : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  }

  // The values copied ahead, each thread's warp-striped as its keys; every thread's read before
  // any is staged by rank over them.
  static __device__ __forceinline__ void read_copied_values(const ValueSlot* slots,
                                                            ValueSlot (&values)[ITEMS]) {
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();  // every thread's copies landed
    const uint32_t first = (threadIdx.x / 32) * uint32_t(ITEMS) * 32 + (threadIdx.x & 31);
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) values[u] = slots[first + uint32_t(u) * 32];
    __syncthreads();
  }

  // Prefetch ahead (OnesweepPassParams::prefetch_tiles = D, not 0): the keys (and values) of tile
  // tile + D, which a block claims about D tiles later, so that they are in L2 when it loads them.
  // Nothing at or past the count's last tile.
  static __device__ __forceinline__ void prefetch_ahead(const K* __restrict__ keys_in,
                                                        const V* __restrict__ values_in,
                                                        uint32_t tile, uint32_t prefetch_tiles,
                                                        uint32_t tile_total, uint32_t last_index) {
    if (prefetch_tiles == 0 || prefetch_tiles >= tile_total || tile >= tile_total - prefetch_tiles)
      return;
    const uint32_t ahead = tile + prefetch_tiles;
    const uint32_t begin = ahead * kTile;
    const uint32_t items = ahead + 1 < tile_total ? kTile : last_index - begin + 1;
    prefetch_tile(keys_in, begin, items);
    if constexpr (kValues) {
      if constexpr (sizeof(V) * kTile % 16 == 0) prefetch_tile(values_in, begin, items);
    }
  }

  // Stages the items whose ranks fall in segment `seg` of the digit-ordered tile.
  template <class T>
  static __device__ __forceinline__ void stage(T* slots, const T (&items)[ITEMS],
                                               const uint32_t (&ranks)[kPackedRanks], int seg) {
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
      const uint32_t local = rank_of(ranks, u) - uint32_t(seg) * kSegmentKeys;
      if (kSegments == 1 || local < kSegmentKeys) slots[local] = items[u];
    }
  }

  // Keys (with their values) from shared memory, a segment at a time, to their global places:
  // runs of one digit are contiguous, so the writes coalesce. Segment 0's keys were staged
  // before the look-back; the later segments' keys are loaded again (from L2) here.
  template <bool FULL>
  static __device__ __forceinline__ void scatter(
      Shared& s, const K* __restrict__ keys_in, K* __restrict__ keys_out,
      const V* __restrict__ values_in, V* __restrict__ values_out, const DigitOf<K>& digits,
      const Order& order, bool map_in, bool map_out, bool iota, unsigned long long* values_wide,
      uint32_t tile_begin, uint32_t tile_items, K (&keys)[ITEMS],
      const uint32_t (&ranks)[kPackedRanks]) {
    if constexpr (kSegments > 1)
      load_keys<FULL>(keys_in, tile_begin, tile_items, map_in, false, order, keys);
    ValueSlot values[ITEMS];
    if constexpr (kAsyncValues) {
      if (iota)
        load_values<FULL>(values_in, tile_begin, tile_items, true, values);
      else
        read_copied_values(s.exchange.joint.values, values);
    } else if constexpr (kValues) {
      load_values<FULL>(values_in, tile_begin, tile_items, iota, values);
    }
#pragma unroll
    for (int seg = 0; seg < kSegments; ++seg) {
      if (seg > 0) {
        __syncthreads();  // the previous segment read
        stage(s.exchange.joint.keys, keys, ranks, seg);
      }
      if constexpr (kValues) stage(s.exchange.joint.values, values, ranks, seg);
      if (seg > 0 || kValues) __syncthreads();
#pragma unroll
      for (int u = 0; u < kSegmentItems; ++u) {
        const int item = seg * kSegmentItems + u;
        if (item >= ITEMS) break;
        const uint32_t local = threadIdx.x + uint32_t(u * THREADS);
        const uint32_t i = uint32_t(seg) * kSegmentKeys + local;
        const K key = s.exchange.joint.keys[local];
        const uint32_t target =
            i + s.fixed.digit_shift[digits.Digit(kRawKeys ? order.to_order(key) : key)];
        if (FULL || i < tile_items) {
          keys_out[target] = map_out ? order.from_order(key) : key;
          if constexpr (FUSED) {
            if (values_wide != nullptr)
              values_wide[target] = s.exchange.joint.values[local];
            else
              values_out[target] = s.exchange.joint.values[local];
          } else if constexpr (kValues) {
            values_out[target] = s.exchange.joint.values[local];
          }
        }
        __syncwarp();
      }
    }
  }

  static __device__ __forceinline__ void run(const OnesweepPassParams& p,
                                             const OnesweepFusedParams& f) {
    const uint32_t t = threadIdx.x;
    // The count's tiles (n up to 2^32: every index fits 32 bits).
    const unsigned long long count =
        p.count != nullptr ? min((unsigned long long)(*p.count), p.n) : p.n;
    if (count == 0) return;
    const uint32_t last_index = uint32_t(count - 1);
    const uint32_t tile_total = last_index / kTile + 1;
    // The grid is max_n's: blocks beyond the count's tiles have nothing to do.
    if (blockIdx.x >= tile_total) return;
    Shared& s = shared_storage();
    // The claim, the plan word and the digit offsets are requested together, so that their
    // latencies overlap (the plan read alone before the claim cost a round trip per tile). Blocks
    // of a skipped pass claim too, from that pass's own counter, and return below.
    if (t == 0)
      s.fixed.tile = p.claim_by_id != 0
                         ? blockIdx.x
                         : atomicAdd(&p.control[ONESWEEP_CONTROL_PARTITION_COUNTER + p.pass], 1u);
    const uint32_t plan = p.control[ONESWEEP_CONTROL_PLAN + p.pass];
    Lookback::prepare(s.fixed.lookback);
    uint32_t digit_offset[kBins];
#pragma unroll
    for (int u = 0; u < kBins; ++u) {
      const int bin = thread_bin(u);
      digit_offset[u] = bin < int(kRadix) ? p.digit_offsets[bin] : 0u;
    }
    __syncthreads();
    if ((plan & ONESWEEP_PLAN_ACTIVE) == 0) return;  // a skipped pass
    const bool input_alt = (plan & ONESWEEP_PLAN_INPUT_ALT) != 0;
    const bool first = (plan & ONESWEEP_PLAN_FIRST) != 0, last = (plan & ONESWEEP_PLAN_LAST) != 0;
    const bool map_in = kRawKeys || first, map_out = !kRawKeys && last;
    // The first active pass of a fused variant reads keys_first on either side (routed by parity,
    // it starts on the scratch side).
    const K* keys_in = static_cast<const K*>(FUSED && first && f.keys_first != nullptr
                                                 ? f.keys_first
                                                 : (input_alt ? p.keys_b : p.keys_a));
    const bool iota = FUSED && first && f.values_iota != 0;
    const bool canonical = kMayCanonicalize && first && f.canonical != 0;
    unsigned long long* const values_wide = FUSED && last ? f.values_wide : nullptr;
    K* keys_out = static_cast<K*>(input_alt ? p.keys_a : p.keys_b);
    const V* values_in = static_cast<const V*>(input_alt ? p.values_b : p.values_a);
    V* values_out = static_cast<V*>(input_alt ? p.values_a : p.values_b);
    const Order order = Order::make(p.key_kind, p.descending != 0);
    const DigitOf<K> digits{p.bit, (1u << p.digit_bits) - 1u};
    const uint32_t tile = s.fixed.tile;
    const uint32_t tile_begin = tile * kTile;
    const bool full = tile + 1 < tile_total;
    const uint32_t tile_items = full ? kTile : last_index - tile_begin + 1;
    const uint32_t tag = p.first_tag + tile;
    if (!iota) prefetch_values(values_in, tile_begin, tile_items);
    if constexpr (kAsyncValues) {
      if (!iota) copy_values_async(s.exchange.joint.values, values_in, tile_begin, tile_items);
    }
    prefetch_ahead(keys_in, values_in, tile, p.prefetch_tiles, tile_total, last_index);
    const bool publishes = p.refusal_period == 0 || tile % p.refusal_period != p.refusal_period - 1;

    // 1. The tile's keys.
    K keys[ITEMS];
    if (full)
      load_keys<true>(keys_in, tile_begin, tile_items, map_in, canonical, order, keys);
    else
      load_keys<false>(keys_in, tile_begin, tile_items, map_in, canonical, order, keys);

    // 2-3. Rank by digit; the counts are published from within the ranking.
    int ranks[ITEMS];
    int tile_prefix[kBins];
    int bins[kBins];
    Rank(s.exchange.rank)
        .RankKeys(keys, ranks, digits, tile_prefix,
                  PublishCounts{bins, p.lookback, p.slot_mask, tile, tag, publishes});
    __syncthreads();  // the ranking's storage becomes the exchange array
    if constexpr (kRawKeys) {  // the keys as they are staged, not as they were ranked
      if (full)
        load_keys<true>(keys_in, tile_begin, tile_items, false, false, order, keys);
      else
        load_keys<false>(keys_in, tile_begin, tile_items, false, false, order, keys);
    }
#pragma unroll
    for (int u = 0; u < ITEMS; ++u)
      if (kSegments == 1 || uint32_t(ranks[u]) < kSegmentKeys)
        s.exchange.joint.keys[ranks[u]] = keys[u];
    uint32_t packed_ranks[kPackedRanks];
#pragma unroll
    for (int u = 0; u < kPackedRanks; ++u)
      packed_ranks[u] =
          uint32_t(ranks[2 * u]) | (2 * u + 1 < ITEMS ? uint32_t(ranks[2 * u + 1]) << 16 : 0u);
#pragma unroll
    for (int u = 0; u < kBins; ++u) {
      const int bin = thread_bin(u);
      if (bin < int(kRadix)) s.fixed.digit_shift[bin] = digit_offset[u] - uint32_t(tile_prefix[u]);
    }

    // 4. Look back for each digit's count in all earlier tiles, publish the inclusive prefix.
    uint32_t exclusive[kBins];
    const auto look_back = [&](const auto& input_digits) {
      Lookback::run_with(s.fixed.lookback, input_digits, p.lookback,
                         p.control + ONESWEEP_CONTROL_FALLBACKS,
                         LookbackParams{uint32_t(count), p.bit, p.first_tag, p.slot_mask,
                                        p.spin_limit},
                         tile, exclusive);
    };
    const InputDigits<K, kOrder> input_digits{keys_in, order, digits, map_in};
    if constexpr (kMayCanonicalize)
      look_back(CanonicalInputDigits<K, kOrder>{input_digits, canonical});
    else
      look_back(input_digits);
#pragma unroll
    for (int u = 0; u < kBins; ++u) {
      const int bin = thread_bin(u);
      if (bin >= int(kRadix)) continue;
      if (publishes && tile != 0)
        Lookback::publish(p.lookback, p.slot_mask, tile, uint32_t(bin), tag, true,
                          exclusive[u] + uint32_t(bins[u]));
      s.fixed.digit_shift[bin] += exclusive[u];
    }
    __syncthreads();

    // 5. Scatter.
    if (full)
      scatter<true>(s, keys_in, keys_out, values_in, values_out, digits, order, map_in, map_out,
                    iota, values_wide, tile_begin, tile_items, keys, packed_ranks);
    else
      scatter<false>(s, keys_in, keys_out, values_in, values_out, digits, order, map_in, map_out,
                     iota, values_wide, tile_begin, tile_items, keys, packed_ranks);
  }
};

}  // namespace
}  // namespace gpusort::cuda

using namespace gpusort::cuda;

// One kernel per row of cuda_kernels.hpp (kCudaPassShapes) and key order (kCudaKeyOrderSuffixes),
// with the row's shape; the rows with kHintFusedVariant also their fused variants (the name's
// suffix then _fused).
#define GPUSORT_CUDA_PASS_KERNEL(name, K, V, SHAPE, ORDER, FUSED)                              \
  GPUSORT_CUDA_PASS_KERNEL_WITH(name, K, V, SHAPE, ORDER, FUSED, GPUSORT_CUDA_PASS_ARGS_##FUSED, \
                                GPUSORT_CUDA_FUSED_ARG_##FUSED)
#define GPUSORT_CUDA_PASS_ARGS_false const OnesweepPassParams p
#define GPUSORT_CUDA_PASS_ARGS_true const OnesweepPassParams p, const OnesweepFusedParams f
#define GPUSORT_CUDA_FUSED_ARG_false OnesweepFusedParams{}
#define GPUSORT_CUDA_FUSED_ARG_true f
#define GPUSORT_CUDA_PASS_KERNEL_WITH(name, K, V, SHAPE, ORDER, FUSED, ARGS, FUSED_ARG)        \
  extern "C" __global__ void __launch_bounds__(kCudaPassShapes[SHAPE].threads,                 \
                                               kCudaPassShapes[SHAPE].min_blocks) name(ARGS) { \
    wait_for_prior_kernel();                                                                   \
    OnesweepPass<K, V, int(kCudaPassShapes[SHAPE].threads), int(kCudaPassShapes[SHAPE].items), \
                 int(kCudaPassShapes[SHAPE].min_blocks), int(kCudaPassShapes[SHAPE].window),   \
                 kCudaPassShapes[SHAPE].hints, ORDER, FUSED>::run(p, FUSED_ARG);               \
  }
#define GPUSORT_CUDA_PASS_KERNEL_ORDERS(name, K, V, SHAPE, FUSED, F)   \
  GPUSORT_CUDA_PASS_KERNEL(name##F, K, V, SHAPE, 0, FUSED)             \
  GPUSORT_CUDA_PASS_KERNEL(name##_desc##F, K, V, SHAPE, 1, FUSED)      \
  GPUSORT_CUDA_PASS_KERNEL(name##_i##F, K, V, SHAPE, 2, FUSED)         \
  GPUSORT_CUDA_PASS_KERNEL(name##_i_desc##F, K, V, SHAPE, 3, FUSED)    \
  GPUSORT_CUDA_PASS_KERNEL(name##_f##F, K, V, SHAPE, 4, FUSED)         \
  GPUSORT_CUDA_PASS_KERNEL(name##_f_desc##F, K, V, SHAPE, 5, FUSED)
// NumPy's float order (kHintNumpyOrder rows): cuda_face_order_suffix 6 and 7.
#define GPUSORT_CUDA_PASS_KERNEL_NUMPY_ORDERS(name, K, V, SHAPE, FUSED, F) \
  GPUSORT_CUDA_PASS_KERNEL(name##_n##F, K, V, SHAPE, 6, FUSED)             \
  GPUSORT_CUDA_PASS_KERNEL(name##_n_desc##F, K, V, SHAPE, 7, FUSED)
#define GPUSORT_CUDA_PASS_KERNELS(name, K, V, SHAPE)                                         \
  static_assert((kCudaPassShapes[SHAPE].hints & (kHintFusedVariant | kHintNumpyOrder)) == 0, \
                "a row of one build per order");                                             \
  GPUSORT_CUDA_PASS_KERNEL_ORDERS(name, K, V, SHAPE, false, )
#define GPUSORT_CUDA_FACE_PASS_KERNELS(name, K, V, SHAPE)                                        \
  static_assert(                                                                                 \
      (kCudaPassShapes[SHAPE].hints & (kHintFusedVariant | kHintNumpyOrder)) == kHintNumpyOrder, \
      "a row with NumPy's float order");                                                         \
  GPUSORT_CUDA_PASS_KERNEL_ORDERS(name, K, V, SHAPE, false, )                                    \
  GPUSORT_CUDA_PASS_KERNEL_NUMPY_ORDERS(name, K, V, SHAPE, false, )
#define GPUSORT_CUDA_FACE_PASS_KERNELS_AND_FUSED(name, K, V, SHAPE)                       \
  static_assert((kCudaPassShapes[SHAPE].hints & (kHintFusedVariant | kHintNumpyOrder)) == \
                    (kHintFusedVariant | kHintNumpyOrder),                                \
                "a fused row with NumPy's float order");                                  \
  GPUSORT_CUDA_PASS_KERNEL_ORDERS(name, K, V, SHAPE, false, )                             \
  GPUSORT_CUDA_PASS_KERNEL_NUMPY_ORDERS(name, K, V, SHAPE, false, )                       \
  GPUSORT_CUDA_PASS_KERNEL_ORDERS(name, K, V, SHAPE, true, _fused)                        \
  GPUSORT_CUDA_PASS_KERNEL_NUMPY_ORDERS(name, K, V, SHAPE, true, _fused)
GPUSORT_CUDA_PASS_KERNELS(gpusort_onesweep_pass_k32, uint32_t, NoValue, 0)
GPUSORT_CUDA_PASS_KERNELS(gpusort_onesweep_pass_k32_v32, uint32_t, uint32_t, 1)
GPUSORT_CUDA_PASS_KERNELS(gpusort_onesweep_pass_k64, unsigned long long, NoValue, 2)
GPUSORT_CUDA_PASS_KERNELS(gpusort_onesweep_pass_k64_v32, unsigned long long, uint32_t, 3)
GPUSORT_CUDA_PASS_KERNELS(gpusort_onesweep_pass_k64_v32_1024, unsigned long long, uint32_t, 4)
GPUSORT_CUDA_FACE_PASS_KERNELS(gpusort_onesweep_pass_k32_w512x20, uint32_t, NoValue, 5)
GPUSORT_CUDA_FACE_PASS_KERNELS(gpusort_onesweep_pass_k32_w384x32, uint32_t, NoValue, 6)
GPUSORT_CUDA_FACE_PASS_KERNELS_AND_FUSED(gpusort_onesweep_pass_k32_v32_w384x23, uint32_t, uint32_t,
                                         7)
GPUSORT_CUDA_FACE_PASS_KERNELS_AND_FUSED(gpusort_onesweep_pass_k32_v32_w384x28, uint32_t, uint32_t,
                                         8)
GPUSORT_CUDA_FACE_PASS_KERNELS(gpusort_onesweep_pass_k64_w384x20, unsigned long long, NoValue, 9)
GPUSORT_CUDA_FACE_PASS_KERNELS_AND_FUSED(gpusort_onesweep_pass_k64_v32_w384x16, unsigned long long,
                                         uint32_t, 10)
GPUSORT_CUDA_FACE_PASS_KERNELS(gpusort_onesweep_pass_k32_w256x8, uint32_t, NoValue, 11)
GPUSORT_CUDA_FACE_PASS_KERNELS(gpusort_onesweep_pass_k32_w256x16, uint32_t, NoValue, 12)
GPUSORT_CUDA_FACE_PASS_KERNELS(gpusort_onesweep_pass_k64_w256x8, unsigned long long, NoValue, 13)
GPUSORT_CUDA_FACE_PASS_KERNELS(gpusort_onesweep_pass_k64_w256x16, unsigned long long, NoValue, 14)
GPUSORT_CUDA_FACE_PASS_KERNELS(gpusort_onesweep_pass_k32_v32_w256x8, uint32_t, uint32_t, 15)
GPUSORT_CUDA_FACE_PASS_KERNELS(gpusort_onesweep_pass_k32_v32_w256x16, uint32_t, uint32_t, 16)
GPUSORT_CUDA_FACE_PASS_KERNELS(gpusort_onesweep_pass_k64_v32_w256x8, unsigned long long, uint32_t,
                               17)
GPUSORT_CUDA_FACE_PASS_KERNELS_AND_FUSED(gpusort_onesweep_pass_k64_v32_w256x16, unsigned long long,
                                         uint32_t, 18)
GPUSORT_CUDA_FACE_PASS_KERNELS_AND_FUSED(gpusort_onesweep_pass_k64_v32_w256x28, unsigned long long,
                                         uint32_t, 19)
GPUSORT_CUDA_PASS_KERNELS(gpusort_onesweep_pass_k64_v32_w256x24, unsigned long long, uint32_t, 20)
GPUSORT_CUDA_PASS_KERNELS(gpusort_onesweep_pass_k64_v32_w256x24w16, unsigned long long, uint32_t, 21)
GPUSORT_CUDA_PASS_KERNELS(gpusort_onesweep_pass_k64_v32_w256x28w16, unsigned long long, uint32_t, 22)
GPUSORT_CUDA_PASS_KERNELS(gpusort_onesweep_pass_k64_v32_w256x32, unsigned long long, uint32_t, 23)

// ---- The histogram and plan as a CUDA kernel (OnesweepTuning::cuda_histogram) ----
//
// What onesweep_histogram.comp with onesweep_plan.glsl does, on the same state block: one read
// of the keys (mapped to radix order) counts every pass's digits per block in shared memory, added
// into the digit counts; the block that draws the last ticket turns each pass's counts into
// exclusive offsets in place and writes the plan words (a pass whose digit is the same for every
// key is skipped; the active ones ping-pong from the caller's buffer), the copy-back flag and the
// dispatch commands of the passes and the copy-back. The shapes: kCudaHistogramShapes.
namespace gpusort::cuda {
namespace {



__device__ __forceinline__ uint32_t div_ceil64(unsigned long long a, uint32_t b) {
  return uint32_t(a / b + (a % b != 0 ? 1u : 0u));
}
__device__ __forceinline__ void write_dispatch(uint32_t* command, uint32_t groups,
                                               uint32_t max_groups_x) {
  const uint32_t x = groups < max_groups_x ? groups : max_groups_x;
  command[0] = x;
  command[1] = x == 0 ? 0u : groups / x + (groups % x != 0 ? 1u : 0u);
  command[2] = 1;
}

// One block: THREADS threads, each loading VEC 16-byte vectors of keys per round (rounds stride
// over the grid), every pass's digit counted by a shared atomic into one of COPIES histograms
// (warp w into copy w % COPIES: fewer collisions where few digits hold most keys). The pass loop is
// unrolled over the key's largest pass count. Keys before the first 16-byte boundary and after the
// last whole vector (fewer than a vector each) are counted by block 0.
template <class K, int THREADS, int VEC, int COPIES>
struct HistogramAndPlan {
  static constexpr uint32_t kKeyPasses = uint32_t(sizeof(K));  // 8-bit digits
  // The plan's scan: each thread kPerThread consecutive counts of one pass.
  static constexpr uint32_t kPerThread = kKeyPasses * kRadix / uint32_t(THREADS);
  static constexpr uint32_t kThreadsPerPass = kRadix / kPerThread;
  static constexpr uint32_t kWarpsPerPass = kThreadsPerPass / 32;
  static_assert(kKeyPasses * kRadix % uint32_t(THREADS) == 0 && kThreadsPerPass % 32 == 0,
                "whole warps a pass");
  static constexpr uint32_t kPerVec = 16 / uint32_t(sizeof(K));
  static constexpr uint32_t kRoundVecs = uint32_t(THREADS * VEC);

  struct Counter {
    uint32_t* hist;  // this warp's copy
    KeyOrder<K, kOrderAny> order;
    K keep;  // the bits below end_bit
    uint32_t begin_bit, passes;
    bool canonical;  // NumPy's floats, as the fused first pass reads them
    __device__ __forceinline__ void operator()(K raw) const {
      if (canonical) raw = FloatKeyBits<K>::canonical(raw);
      const K bits = (order.to_order(raw) & keep) >> begin_bit;
#pragma unroll
      for (uint32_t pass = 0; pass < kKeyPasses; ++pass)
        if (pass < passes)
          atomicAdd(&hist[pass * kRadix + (uint32_t(bits >> (pass * kDigitBits)) & 0xffu)], 1u);
    }
    __device__ __forceinline__ void vector(const uint4& v) const {
      if constexpr (sizeof(K) == 4) {
        (*this)(K(v.x));
        (*this)(K(v.y));
        (*this)(K(v.z));
        (*this)(K(v.w));
      } else {
        (*this)(K(v.x) | (K(v.y) << 32));
        (*this)(K(v.z) | (K(v.w) << 32));
      }
    }
  };

  static __device__ __forceinline__ void run(const OnesweepHistogramParams& p) {
    __shared__ uint32_t hist[COPIES * kKeyPasses * kRadix];
    __shared__ uint32_t warp_total[THREADS / 32], warp_nonzero[THREADS / 32];
    __shared__ bool last;
    __shared__ uint32_t active_passes_mask;
    const uint32_t t = threadIdx.x;
    const uint32_t passes = p.pass_count < kKeyPasses ? p.pass_count : kKeyPasses;
    if (p.state_words != 0) {
      // The CUDA face's cooperative launch: the state block cleared here (16 bytes a store; it
      // starts and ends at 16-byte boundaries), every block past the barrier before any counts.
      uint4* const state = reinterpret_cast<uint4*>(p.digit_counts);
      for (uint32_t i = blockIdx.x * THREADS + t; i < p.state_words / 4; i += gridDim.x * THREADS)
        state[i] = make_uint4(0u, 0u, 0u, 0u);
      cooperative_groups::this_grid().sync();
    }
    for (uint32_t i = t; i < uint32_t(COPIES) * kKeyPasses * kRadix; i += THREADS) hist[i] = 0;
    __syncthreads();
    const unsigned long long count =
        p.count != nullptr ? min((unsigned long long)(*p.count), p.n) : p.n;
    const K* keys = static_cast<const K*>(p.keys);
    const uint32_t key_bits = uint32_t(sizeof(K) * 8);
    const Counter counter{hist + ((t / 32) % uint32_t(COPIES)) * kKeyPasses * kRadix,
                          KeyOrder<K, kOrderAny>::make(p.key_kind, p.descending != 0),
                          p.end_bit >= key_bits ? ~K(0) : (K(1) << p.end_bit) - K(1), p.begin_bit,
                          passes, p.canonical != 0};
    // The keys before the first 16-byte boundary, the whole vectors, the rest.
    const uint32_t misaligned =
        uint32_t(reinterpret_cast<uintptr_t>(keys) & 15u) / uint32_t(sizeof(K));
    const uint32_t head =
        uint32_t(min(count, (unsigned long long)((kPerVec - misaligned) % kPerVec)));
    const uint32_t vecs = uint32_t((count - head) / kPerVec);
    const unsigned long long tail_begin = head + (unsigned long long)vecs * kPerVec;
    if (blockIdx.x == 0) {
      if (t < head) counter(keys[t]);
      if (tail_begin + t < count) counter(keys[tail_begin + t]);
    }
    const uint4* __restrict__ vectors = reinterpret_cast<const uint4*>(keys + head);
    for (uint32_t base = blockIdx.x * kRoundVecs; base < vecs; base += gridDim.x * kRoundVecs) {
      uint4 v[VEC];
      if (base + kRoundVecs <= vecs) {
#pragma unroll
        for (int u = 0; u < VEC; ++u) v[u] = vectors[base + uint32_t(u * THREADS) + t];
#pragma unroll
        for (int u = 0; u < VEC; ++u) counter.vector(v[u]);
      } else {
#pragma unroll
        for (int u = 0; u < VEC; ++u) {
          const uint32_t i = base + uint32_t(u * THREADS) + t;
          if (i < vecs) v[u] = vectors[i];
        }
#pragma unroll
        for (int u = 0; u < VEC; ++u)
          if (base + uint32_t(u * THREADS) + t < vecs) counter.vector(v[u]);
      }
    }
    __syncthreads();
    for (uint32_t i = t; i < passes * kRadix; i += THREADS) {
      uint32_t sum = 0;
#pragma unroll
      for (int c = 0; c < COPIES; ++c) sum += hist[uint32_t(c) * kKeyPasses * kRadix + i];
      if (sum != 0) atomicAdd(&p.digit_counts[i], sum);
    }
    // Each thread's additions before its fence, the fences before the barrier, the barrier
    // before the ticket; the block that draws the last ticket fences after it.
    __threadfence();
    __syncthreads();
    if (t == 0) {
      ::cuda::atomic_ref<uint32_t, ::cuda::thread_scope_device> ticket(
          p.control[ONESWEEP_CONTROL_HISTOGRAM_TICKET]);
      last = ticket.fetch_add(1u, ::cuda::memory_order_acq_rel) == gridDim.x - 1;
      active_passes_mask = 0;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    // Every pass's exclusive offsets at once: thread t owns kPerThread consecutive counts of pass
    // t / kThreadsPerPass (whole warps a pass), loaded together (one trip to L2), scanned in
    // registers, across its warp by shuffles and across its pass's warps through shared memory.
    const uint32_t lane = t % 32, warp = t / 32, pass = t / kThreadsPerPass;
    const bool owns = pass < passes;
    uint32_t c[kPerThread];
#pragma unroll
    for (uint32_t k = 0; k < kPerThread; ++k)
      c[k] = owns ? ::cuda::atomic_ref<uint32_t, ::cuda::thread_scope_device>(
                        p.digit_counts[t * kPerThread + k])
                        .load(::cuda::memory_order_relaxed)
                  : 0u;
    uint32_t sum = 0, nonzero = 0;
#pragma unroll
    for (uint32_t k = 0; k < kPerThread; ++k) {
      sum += c[k];
      nonzero += c[k] != 0 ? 1u : 0u;
    }
    uint32_t inclusive = sum;
#pragma unroll
    for (uint32_t d = 1; d < 32; d *= 2) {
      const uint32_t below = __shfl_up_sync(~0u, inclusive, d);
      if (lane >= d) inclusive += below;
    }
#pragma unroll
    for (uint32_t d = 16; d >= 1; d /= 2) nonzero += __shfl_xor_sync(~0u, nonzero, d);
    if (lane == 31) warp_total[warp] = inclusive;
    if (lane == 0) warp_nonzero[warp] = nonzero;
    __syncthreads();
    uint32_t offset = inclusive - sum, digits_with_keys = 0;
#pragma unroll
    for (uint32_t w = 0; w < kWarpsPerPass; ++w) {
      const uint32_t other = pass * kWarpsPerPass + w;
      if (other < warp) offset += warp_total[other];
      digits_with_keys += warp_nonzero[other];
    }
    if (owns) {
#pragma unroll
      for (uint32_t k = 0; k < kPerThread; ++k) {
        p.digit_counts[t * kPerThread + k] = offset;
        offset += c[k];
      }
      // A pass is skipped where at most one digit holds keys (counted, not compared with n: one
      // digit holding all 2^32 keys counts 0 in 32 bits).
      if (t % kThreadsPerPass == 0 &&
          (digits_with_keys > 1 || (pass == 0 && p.first_pass_always != 0)))
        atomicOr(&active_passes_mask, 1u << pass);
    }
    __syncthreads();
    if (t != 0) return;
    const uint32_t active = active_passes_mask;
    const uint32_t active_passes = uint32_t(__popc(active));
    // The side the first active pass writes: the scratch copy, or (routed by parity, an odd
    // count) the caller's, so that the last one writes the caller's.
    const uint32_t side = p.route_by_parity != 0 ? active_passes & 1u : 0u;
    uint32_t index = 0;
    for (uint32_t pass = 0; pass < passes; ++pass) {
      uint32_t plan = 0;
      if ((active >> pass) & 1u) {
        plan = ONESWEEP_PLAN_ACTIVE | (((index + side) & 1u) != 0 ? ONESWEEP_PLAN_INPUT_ALT : 0u) |
               (index == 0 ? ONESWEEP_PLAN_FIRST : 0u) |
               (index + 1 == active_passes ? ONESWEEP_PLAN_LAST : 0u);
        ++index;
      }
      p.control[ONESWEEP_CONTROL_PLAN + pass] = plan;
    }
    const uint32_t copy_back = (active_passes + side) & 1u;
    p.control[ONESWEEP_CONTROL_COPY_BACK] = copy_back;
    uint32_t tiles = count == 0 ? 0u : div_ceil64(count, p.tile);
    if (p.pass_group_cap != 0 && tiles > p.pass_group_cap) tiles = p.pass_group_cap;
    for (uint32_t pass = 0; pass < passes; ++pass)
      write_dispatch(p.dispatch + 3 * (ONESWEEP_DISPATCH_PASS + pass), (active >> pass) & 1u ? tiles : 0u,
                     p.max_groups_x);
    const unsigned long long capped = count < 0xffffffffull ? count : 0xffffffffull;
    uint32_t copy_groups = div_ceil64(capped, p.copy_keys_per_round);
    if (copy_groups > p.copy_group_count) copy_groups = p.copy_group_count;
    write_dispatch(p.dispatch + 3 * ONESWEEP_DISPATCH_COPY_BACK, copy_back != 0 ? copy_groups : 0u,
                   p.max_groups_x);
  }
};

}  // namespace
}  // namespace gpusort::cuda

// One kernel per row of kCudaHistogramShapes (cuda_kernels.hpp), its shape from the row.
#define GPUSORT_CUDA_HISTOGRAM_KERNEL(name, K, ROW)                                             \
  extern "C" __global__ void __launch_bounds__(kCudaHistogramShapes[ROW].threads,               \
                                               kCudaHistogramShapes[ROW].blocks_per_sm)         \
      name(const OnesweepHistogramParams p) {                                                   \
    static_assert(kCudaHistogramShapes[ROW].key_words * 4 == sizeof(K), "the row's key width"); \
    allow_dependent_launch();                                                                   \
    HistogramAndPlan<K, int(kCudaHistogramShapes[ROW].threads),                                 \
                     int(kCudaHistogramShapes[ROW].vectors),                                    \
                     int(kCudaHistogramShapes[ROW].copies)>::run(p);                            \
  }
GPUSORT_CUDA_HISTOGRAM_KERNEL(gpusort_onesweep_histogram_k32, uint32_t, 0)
GPUSORT_CUDA_HISTOGRAM_KERNEL(gpusort_onesweep_histogram_k64, unsigned long long, 1)
GPUSORT_CUDA_HISTOGRAM_KERNEL(gpusort_onesweep_histogram_k32_c2, uint32_t, 2)
GPUSORT_CUDA_HISTOGRAM_KERNEL(gpusort_onesweep_histogram_k64_c2, unsigned long long, 3)

// ---- The copy-back, for the CUDA face (the Vulkan faces run onesweep_copy_back.comp) ----
//
// Where the plan ran an odd number of passes (the copy-back flag), the sorted keys and values lie
// in the scratch copies: copied to the caller's, 16 bytes a thread and step where both are
// aligned, else 4.
namespace gpusort::cuda {
namespace {
__device__ __forceinline__ void copy_words(const uint32_t* __restrict__ from,
                                           uint32_t* __restrict__ to, unsigned long long words) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (((reinterpret_cast<uintptr_t>(from) | reinterpret_cast<uintptr_t>(to)) & 15) == 0) {
    const unsigned long long vectors = words / 4;
    for (unsigned long long i = first; i < vectors; i += stride)
      reinterpret_cast<uint4*>(to)[i] = reinterpret_cast<const uint4*>(from)[i];
    for (unsigned long long i = vectors * 4 + first; i < words; i += stride) to[i] = from[i];
  } else {
    for (unsigned long long i = first; i < words; i += stride) to[i] = from[i];
  }
}
}  // namespace
}  // namespace gpusort::cuda

extern "C" __global__ void __launch_bounds__(256) gpusort_onesweep_copy_back(
    const OnesweepCopyBackParams p) {
  if (p.control[ONESWEEP_CONTROL_COPY_BACK] == 0) return;
  const unsigned long long count = p.count != nullptr ? min((unsigned long long)(*p.count), p.n) : p.n;
  copy_words(static_cast<const uint32_t*>(p.keys_b), static_cast<uint32_t*>(p.keys_a),
             count * p.key_words);
  if (p.value_words != 0)
    copy_words(static_cast<const uint32_t*>(p.values_b), static_cast<uint32_t*>(p.values_a),
               count * p.value_words);
}
