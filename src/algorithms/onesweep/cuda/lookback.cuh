// Onesweep's decoupled look-back over a circular table of tagged tile entries, with the decoupled
// fallback (the GLSL original: src/primitives/glsl/lookback.glsl), in CUDA C++ for the pass
// kernel of onesweep_pass.cu. Written once for two environments: a CUDA block (CudaBlock in
// onesweep_pass.cu) and host threads that emulate blocks (tests/lookback_protocol.cpp, built with
// the host compiler), so that the protocol the kernels run is tested without a GPU, including
// blocks that start in any order.
//
// Entry (one u64 per slot and digit, entry slot x 256 + digit, as the library's state block):
// bits 63..33 the tag (the tile's sequence number in this sort, unique per pass and tile, 0 =
// never written), bit 32 "inclusive", bits 31..0 a count. Writers only use atomicMax: a newer tag
// always wins, an inclusive prefix replaces the partial count of the same tile, and a later
// tile's entry (the slot reused) is never overwritten by an earlier one's. A reader that finds
//   its tag      uses the count (partial: keeps walking back; inclusive: done),
//   an older tag (not published yet) spins, and after spin_limit rounds stops,
//   a newer tag  (the slot was reused) stops at once;
// then the block counts the latest stopped predecessor's keys itself (the fallback) and offers
// that partial count to others. No forward progress of other blocks is assumed, and the table
// is cleared once per sort, never between passes (tags grow from pass to pass).
// Relaxed device-scope atomics suffice: an entry carries all it publishes (tag and count in one
// word), and the keys a fallback recounts were written by an earlier kernel.
//
// Env (all static): thread() (index in the block), sync() (block barrier), load_entry(p) and
// max_entry(p, v) (relaxed device-scope atomics on a table entry), shared_max(p, v) and
// shared_add(p, v) (atomics on the block's shared memory), global_add(p, v).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define NVX_INLINE __device__ __forceinline__
#define NVX_NOINLINE __device__ __noinline__
#define NVX_UNROLL _Pragma("unroll")
#else
#define NVX_INLINE inline
#define NVX_NOINLINE inline
#define NVX_UNROLL
#endif
#ifndef NVX_HOST_DEVICE
#ifdef __CUDACC__
#define NVX_HOST_DEVICE __host__ __device__
#else
#define NVX_HOST_DEVICE
#endif
#endif

namespace gpusort::cuda {

inline constexpr uint32_t kLookbackRadix = 256;
inline constexpr uint64_t kLookbackInclusive = uint64_t(1) << 32;
inline constexpr uint32_t kLookbackTagShift = 33;
NVX_HOST_DEVICE inline constexpr uint64_t lookback_entry(uint32_t tag, bool inclusive,
                                                         uint32_t count) {
  return (uint64_t(tag) << kLookbackTagShift) | (inclusive ? kLookbackInclusive : 0) | count;
}

// The index of the lowest set bit of x (x != 0).
NVX_HOST_DEVICE inline uint32_t lowest_bit(uint32_t x) {
#ifdef __CUDA_ARCH__
  return uint32_t(__ffs(int(x)) - 1);
#else
  return uint32_t(__builtin_ctz(x));
#endif
}

using LookbackEntry = unsigned long long;  // what CUDA's 64-bit atomicMax takes
static_assert(sizeof(LookbackEntry) == 8, "64-bit entries");

struct LookbackParams {
  uint32_t n;           // keys in the pass
  uint32_t bit;         // the pass's digit: bits [bit, bit + 8) of a key
  uint32_t first_tag;   // tag of tile 0 in this pass; tile p has first_tag + p
  uint32_t slot_mask;   // table length in tiles (a power of two) - 1
  uint32_t spin_limit;  // look-back rounds on an unpublished predecessor before recounting it
};

// PACKED: the fallback's recount keeps two 16-bit digit counts per word (512 bytes of shared
// memory less; a tile's count of one digit must stay below 2^16). MASK_WALK: where the window
// lies in place, its walk is found from bit masks (window_in_place) instead of entry by entry.
template <class Env, class K, int THREADS, uint32_t TILE, int WINDOW, bool PACKED = false,
          bool MASK_WALK = false>
struct Lookback {
  static_assert(!PACKED || TILE < (1u << 16), "16-bit fallback counts");
  static constexpr uint32_t kCountWords = PACKED ? kLookbackRadix / 2 : kLookbackRadix;
  // Digits per thread: thread t holds digits t * kBins .. t * kBins + kBins - 1 (CUB's
  // BlockRadixRank ThreadBin, so that the ranking's counts are the thread's own).
  static constexpr int kBins = (int(kLookbackRadix) + THREADS - 1) / THREADS;

  struct Shared {
    uint32_t fallback_counts[kCountWords];  // a recounted predecessor's digit counts
    uint32_t stalled[2];  // latest stalled predecessor + 1, one word per round parity
  };

  static NVX_INLINE int thread_bin(int u) { return int(Env::thread()) * kBins + u; }

  static NVX_INLINE void publish(LookbackEntry* table, uint32_t slot_mask, uint32_t tile,
                                 uint32_t digit, uint32_t tag, bool inclusive, uint32_t count) {
    Env::max_entry(&table[(tile & slot_mask) * kLookbackRadix + digit],
                   LookbackEntry(lookback_entry(tag, inclusive, count)));
  }

  // Before a barrier that precedes run(): round 0's word.
  static NVX_INLINE void prepare(Shared& s) {
    if (Env::thread() == 0) s.stalled[0] = 0;
  }

  // A key's digit where the keys are the raw (unmapped) K at keys_in and the digit is bits
  // [bit, bit + 8) (the experiment's keys).
  struct RawDigits {
    const K* keys_in;
    uint32_t bit;
    NVX_INLINE uint32_t operator()(uint32_t i) const {
      return uint32_t(keys_in[i] >> bit) & (kLookbackRadix - 1);
    }
  };

  // The fallback's recount of one tile's digits into s.fallback_counts (every thread calls it:
  // it has barriers); digits(i) is the digit of key i in this pass. Tiles looked back on precede
  // the caller's, so they are full, but the bound costs nothing here. Not inlined on the GPU: the
  // rare path's registers then stay out of the look-back's (inlined, u32+u32 at 384 x 23 spilled
  // 15 registers).
  template <class Digits>
  static NVX_NOINLINE void count_tile_digits(Shared& s, Digits digits, uint32_t n, uint32_t tile) {
    for (uint32_t d = Env::thread(); d < kCountWords; d += THREADS) s.fallback_counts[d] = 0;
    Env::sync();
    const uint32_t begin = tile * TILE;
    const uint32_t size = n - begin < TILE ? n - begin : TILE;
    for (uint32_t i = Env::thread(); i < size; i += THREADS) {
      const uint32_t digit = digits(begin + i);
      if (PACKED)
        Env::shared_add(&s.fallback_counts[digit >> 1], 1u << (16 * (digit & 1)));
      else
        Env::shared_add(&s.fallback_counts[digit], 1u);
    }
    Env::sync();
  }
  static NVX_INLINE uint32_t fallback_count(const Shared& s, uint32_t digit) {
    return PACKED ? (s.fallback_counts[digit >> 1] >> (16 * (digit & 1))) & 0xffffu
                  : s.fallback_counts[digit];
  }

  // One round of one digit's walk: reads the WINDOW entries of tiles newest, newest - 1, ...
  // (those at or after tile 0), adds the counts of the published ones up to the first that is
  // not (or the first inclusive prefix, included) to `exclusive` and moves `next` past them
  // (0 once the prefix is complete). waiting: the walk met an entry of an older tag (not
  // published yet); reused: of a newer tag (the slot was reused). Any window, wrapping around the
  // table or reaching past tile 0.
  static NVX_INLINE void window_anywhere(LookbackEntry* table, const LookbackParams& p,
                                         uint32_t bin, uint32_t newest, uint32_t& next,
                                         uint32_t& exclusive, bool& waiting, bool& reused) {
    LookbackEntry seen[WINDOW];
    NVX_UNROLL
    for (int w = 0; w < WINDOW; ++w)
      seen[w] = uint32_t(w) <= newest
                    ? Env::load_entry(&table[((newest - w) & p.slot_mask) * kLookbackRadix + bin])
                    : 0;
    NVX_UNROLL
    for (int w = 0; w < WINDOW; ++w) {
      if (next == 0 || uint32_t(w) > newest) break;
      const uint32_t tag = p.first_tag + newest - uint32_t(w);
      const uint32_t seen_tag = uint32_t(seen[w] >> kLookbackTagShift);
      if (seen_tag != tag) {
        waiting = true;
        reused = seen_tag > tag;
        break;
      }
      exclusive += uint32_t(seen[w]);
      next = (seen[w] & kLookbackInclusive) != 0 ? 0u : newest - uint32_t(w);
    }
  }

  // The same (MASK_WALK) where all WINDOW tiles are at or after tile 0 and their slots do not
  // wrap around the table (all but WINDOW of every slot_mask + 1 tiles): the entries at fixed
  // distances from the newest one, and the walk's end found from two bit masks instead of entry
  // by entry (fewer instructions; the walks are deep: inclusive prefixes trail the claimed tiles
  // by tens of tiles, docs/design/onesweep.md). An entry's upper word is tag x 2 + inclusive, so
  // with x = upper word - the expected tag x 2, x = 0 is a partial count to add and go on past,
  // x = 1 the inclusive prefix that ends the walk, any other value an unpublished or reused
  // entry.
  static NVX_INLINE void window_in_place(LookbackEntry* table, const LookbackParams& p,
                                         uint32_t bin, uint32_t newest, uint32_t& next,
                                         uint32_t& exclusive, bool& waiting, bool& reused) {
    static_assert(WINDOW >= 1 && WINDOW < 32, "a stop bit above the window");
    LookbackEntry* newest_entry = &table[(newest & p.slot_mask) * kLookbackRadix + bin];
    LookbackEntry seen[WINDOW];
    NVX_UNROLL
    for (int w = 0; w < WINDOW; ++w)
      seen[w] = Env::load_entry(newest_entry - w * int(kLookbackRadix));
    const uint32_t tag2 = (p.first_tag + newest) << 1;
    uint32_t stops = 1u << WINDOW, inclusive = 0;
    NVX_UNROLL
    for (int w = 0; w < WINDOW; ++w) {
      const uint32_t x = uint32_t(seen[w] >> 32) - (tag2 - 2u * uint32_t(w));
      stops |= uint32_t(x != 0) << w;
      inclusive |= uint32_t(x == 1) << w;
    }
    const uint32_t stop = lowest_bit(stops);
    const bool done = ((inclusive >> stop) & 1u) != 0;
    const uint32_t consumed = stop + (done ? 1u : 0u);
    NVX_UNROLL
    for (int w = 0; w < WINDOW; ++w)
      if (uint32_t(w) < consumed) exclusive += uint32_t(seen[w]);
    next = done ? 0u : newest - stop + 1;
    if (!done && stop < uint32_t(WINDOW)) {
      waiting = true;
      uint32_t seen_tag = 0;
      NVX_UNROLL
      for (int w = 0; w < WINDOW; ++w)
        if (uint32_t(w) == stop) seen_tag = uint32_t(seen[w] >> kLookbackTagShift);
      reused = seen_tag > p.first_tag + newest - stop;
    }
  }

  // One round of a walk: by masks (MASK_WALK) where the window lies in place, else entry by entry.
  // window_in_place is compiled only with MASK_WALK (its masks bound the window to 31).
  static NVX_INLINE void window(LookbackEntry* table, const LookbackParams& p, uint32_t bin,
                                uint32_t newest, uint32_t& next, uint32_t& exclusive, bool& waiting,
                                bool& reused) {
    if constexpr (MASK_WALK) {
      if (newest >= uint32_t(WINDOW - 1) && (newest & p.slot_mask) >= uint32_t(WINDOW - 1)) {
        window_in_place(table, p, bin, newest, next, exclusive, waiting, reused);
        return;
      }
    }
    window_anywhere(table, p, bin, newest, next, exclusive, waiting, reused);
  }

  // Sums, for each digit of this thread, the counts of all tiles before `tile` into
  // exclusive[u]; every thread of the block calls it (it has barriers). Each digit walks back on
  // its own, WINDOW entries per round of reads (a chain of partial counts costs few memory
  // latencies), until it meets an inclusive prefix or tile 0, or stops (above). When every
  // digit has finished or stopped (a barrier), the block recounts the latest stopped
  // predecessor, offers its counts (a partial entry) and the walks resume. Each round with a
  // recount moves at least one digit back by one tile, so the look-back ends whatever the other
  // blocks do. Counts each recount in *fallbacks.
  // The fallback recounts with digits(i), the digit of key i in this pass (see RawDigits).
  template <class Digits>
  static NVX_INLINE void run_with(Shared& s, const Digits& digits, LookbackEntry* table,
                                  uint32_t* fallbacks, const LookbackParams& p, uint32_t tile,
                                  uint32_t (&exclusive)[kBins]) {
    // next[u]: 1 + the predecessor digit u reads next; 0 once its prefix is complete.
    uint32_t next[kBins];
    NVX_UNROLL
    for (int u = 0; u < kBins; ++u) {
      exclusive[u] = 0;
      next[u] = thread_bin(u) < int(kLookbackRadix) ? tile : 0u;
    }
    for (uint32_t round = 0;; ++round) {
      uint32_t stalled = 0;
      NVX_UNROLL
      for (int u = 0; u < kBins; ++u) {
        const uint32_t bin = uint32_t(thread_bin(u));
        uint32_t spins = 0;
        while (next[u] != 0) {
          const uint32_t newest = next[u] - 1;
          bool waiting = false, reused = false;
          window(table, p, bin, newest, next[u], exclusive[u], waiting, reused);
          if (!waiting) {
            spins = 0;
          } else if (reused || ++spins >= p.spin_limit) {
            stalled = stalled > next[u] ? stalled : next[u];
            break;
          }
        }
      }
      // The word of the next round was last read two rounds ago, before that round's fallback
      // barriers; this round's word was cleared a round ago (round 0's by prepare()).
      if (Env::thread() == 0) s.stalled[(round + 1) & 1] = 0;
      if (stalled != 0) Env::shared_max(&s.stalled[round & 1], stalled);
      Env::sync();
      const uint32_t recount = s.stalled[round & 1];
      if (recount == 0) break;
      // Decoupled fallback: count the predecessor's keys here and offer the counts to others.
      const uint32_t predecessor = recount - 1;
      if (Env::thread() == 0) Env::global_add(fallbacks, 1u);
      count_tile_digits(s, digits, p.n, predecessor);
      NVX_UNROLL
      for (int u = 0; u < kBins; ++u) {
        if (next[u] != recount) continue;
        const uint32_t bin = uint32_t(thread_bin(u));
        const uint32_t c = fallback_count(s, bin);
        publish(table, p.slot_mask, predecessor, bin, p.first_tag + predecessor, false, c);
        exclusive[u] += c;
        next[u] = predecessor;
      }
    }
  }

  // The same on raw keys (RawDigits with p.bit).
  static NVX_INLINE void run(Shared& s, const K* keys_in, LookbackEntry* table, uint32_t* fallbacks,
                             const LookbackParams& p, uint32_t tile, uint32_t (&exclusive)[kBins]) {
    run_with(s, RawDigits{keys_in, p.bit}, table, fallbacks, p, tile, exclusive);
  }
};

}  // namespace gpusort::cuda
