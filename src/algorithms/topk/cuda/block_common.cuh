// What the top-k kernels (topk_select.cu, topk_segments.cu) share: a key as they compare it (and
// the cheap forms of that compare for the reads of a whole array), and a block's sort of (key,
// position) pairs in shared memory.
#ifndef GPUSORT_ALGORITHMS_TOPK_CUDA_BLOCK_COMMON_CUH
#define GPUSORT_ALGORITHMS_TOPK_CUDA_BLOCK_COMMON_CUH

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "primitives/key_order.h"

namespace gpusort::cuda::topk_common {

// The key as the select compares it: radix order (NumPy's order: of the canonical key),
// descending inverted, only the compared bits (mask).
template <class U>
__device__ __forceinline__ U compared_bits(U raw, uint32_t key_kind, uint32_t descending,
                                           uint32_t numpy, unsigned long long mask) {
  if (numpy != 0) raw = FloatKeyBits<U>::canonical(raw);
  U o = to_radix_order<U>(raw, key_kind);
  if (descending != 0) o = ~o;
  return o & U(mask);
}

// The cheap forms, for the reads that visit every key: compared_bits' general form costs about
// twenty instructions a key, which bounds such a read at about half the memory's rate. A reader
// knows the key's kind at compile time and gives, per key, a few instructions:
//   Least, first(), least(l, raw): the least key (in the select's order) of a share of keys, the
//     least of none after every key; bits(l): its compared bits;
//   at_most(raw): whether a key lies at or below the bound (compared bits) it was made with.
// RadixReader: the key's radix order, descending and the compared bits in one logic step.
template <class U, uint32_t Kind>
struct RadixReader {
  U flip, mask, bound;
  struct Least {
    U key;
  };
  __device__ RadixReader(uint32_t descending, unsigned long long compared, U bound_)
      : flip(descending != 0 ? ~U(0) : U(0)), mask(U(compared)), bound(bound_) {}
  __device__ __forceinline__ U key(U raw) const {
    return (to_radix_order<U>(raw, Kind) ^ flip) & mask;
  }
  __device__ __forceinline__ Least first() const { return {mask}; }
  __device__ __forceinline__ void least(Least& l, U raw) const { l.key = min(l.key, key(raw)); }
  __device__ __forceinline__ U bits(Least l) const { return l.key; }
  __device__ __forceinline__ bool at_most(U raw) const { return key(raw) <= bound; }
};

// NumPy's float order (the whole key) by the float's own compare, which orders -0.0 and +0.0 as
// equal, as NumPy's order does, and no NaN: ascending, the least non-NaN key (NaNs sort last: the
// least of NaNs alone is NaN); descending, the greatest, or NaN where one was seen (NaNs first).
template <class U>
__device__ __forceinline__ auto as_float(U raw) {
  std::conditional_t<sizeof(U) == 4, float, double> f;
  memcpy(&f, &raw, sizeof f);
  return f;
}
template <class U, bool Descending>
struct NumpyFloatReader {
  using F = decltype(as_float(U(0)));
  struct Least {
    F value;
    bool seen;  // ascending: a key not NaN; descending: a NaN
  };
  F bound;  // the bound's canonical key
  // (Ascending, a bound among the bits of NaNs below the canonical NaN's: every key but the NaNs,
  // as +inf gives them.)
  __device__ explicit NumpyFloatReader(U bound_bits) {
    using Bits = FloatKeyBits<U>;
    U raw = from_radix_order<U>(Descending ? ~bound_bits : bound_bits, key_kind_float);
    if (!Descending && Bits::is_nan(raw) &&
        bound_bits < to_radix_order<U>(Bits::canonical_nan, key_kind_float))
      raw = Bits::infinity;
    bound = as_float(raw);
  }
  // The least of no keys: after every key (ascending NaN); descending -inf, after all keys but
  // -inf, which is enough: where it is at or below the bound, every key is.
  __device__ __forceinline__ Least first() const {
    return {as_float(Descending ? FloatKeyBits<U>::sign | FloatKeyBits<U>::infinity
                                : FloatKeyBits<U>::infinity),
            false};
  }
  __device__ __forceinline__ void least(Least& l, U raw) const {
    const F x = as_float(raw);
    if constexpr (Descending) {
      l.value = x > l.value ? x : l.value;
      l.seen |= x != x;
    } else {
      l.value = x < l.value ? x : l.value;
      l.seen |= x == x;
    }
  }
  __device__ __forceinline__ U bits(Least l) const {
    U raw;
    memcpy(&raw, &l.value, sizeof raw);
    if (l.seen == Descending) raw = FloatKeyBits<U>::canonical_nan;
    return compared_bits<U>(raw, key_kind_float, Descending ? 1 : 0, 1, ~0ull);
  }
  __device__ __forceinline__ bool at_most(U raw) const {
    const F x = as_float(raw);
    // Ascending: at most the bound, or every key where the bound is NaN; descending: NaN (first)
    // or at least the bound (a NaN bound: NaNs only).
    if constexpr (Descending) return x != x || x >= bound;
    return x <= bound || bound != bound;
  }
};

// f(reader) with the reader of the select's order and the bound (compared bits).
template <class U, class F>
__device__ __forceinline__ void with_key_reader(uint32_t key_kind, uint32_t descending,
                                                uint32_t numpy, unsigned long long mask, U bound,
                                                F&& f) {
  if (numpy != 0) {
    if (descending != 0)
      f(NumpyFloatReader<U, true>(bound));
    else
      f(NumpyFloatReader<U, false>(bound));
  } else if (key_kind == key_kind_float) {
    f(RadixReader<U, key_kind_float>(descending, mask, bound));
  } else if (key_kind == key_kind_signed) {
    f(RadixReader<U, key_kind_signed>(descending, mask, bound));
  } else {
    f(RadixReader<U, key_kind_unsigned>(descending, mask, bound));
  }
}

// (a, i) before (b, j): by key, then position.
template <class U>
__device__ __forceinline__ bool before(U a, uint32_t i, U b, uint32_t j) {
  return a < b || (a == b && i < j);
}

// One compare-exchange of a bitonic stage in shared memory: pair j of the stage (lo, lo + stride),
// ascending where lo's bit `size` is clear.
template <class U>
__device__ __forceinline__ void exchange_shared(U* keys, uint32_t* positions, uint32_t j,
                                                uint32_t size, uint32_t stride) {
  const uint32_t lo = 2 * j - (j & (stride - 1)), hi = lo + stride;
  const bool up = (lo & size) == 0;
  if (before(keys[hi], positions[hi], keys[lo], positions[lo]) == up) {
    const U key = keys[lo];
    keys[lo] = keys[hi], keys[hi] = key;
    const uint32_t position = positions[lo];
    positions[lo] = positions[hi], positions[hi] = position;
  }
}

// A value exchanged with lane ^ mask of the warp (every lane calling it): on the GPU a shuffle a
// 32-bit word; the host's emulation (tests/cuda_emulation) exchanges the whole value at once.
template <class T>
__device__ __forceinline__ T shuffle_xor(const T& value, uint32_t mask) {
#ifdef __CUDA_ARCH__
  static_assert(sizeof(T) % 4 == 0);
  uint32_t words[sizeof(T) / 4];
  memcpy(words, &value, sizeof(T));
#pragma unroll
  for (uint32_t w = 0; w < sizeof(T) / 4; ++w)
    words[w] = __shfl_xor_sync(0xffffffffu, words[w], int(mask));
  T r;
  memcpy(&r, words, sizeof(T));
  return r;
#else
  return __shfl_xor_sync(0xffffffffu, value, int(mask));
#endif
}

// A warp's 64 consecutive pairs from `base`, in registers: lane l holds pairs base + l (a) and
// base + 32 + l (b). bitonic() runs the stages of `size` from stride `from` (at most 32) down to 1:
// stride 32 within the thread, the smaller ones with the lane l ^ stride.
template <class U>
struct WarpPairs {
  struct Lane {
    U a_key, b_key;
    uint32_t a_position, b_position;
  } v;
  __device__ __forceinline__ void load(const U* keys, const uint32_t* positions, uint32_t base) {
    const uint32_t lane = threadIdx.x & 31u;
    v.a_key = keys[base + lane], v.a_position = positions[base + lane];
    v.b_key = keys[base + 32 + lane], v.b_position = positions[base + 32 + lane];
  }
  __device__ __forceinline__ void store(U* keys, uint32_t* positions, uint32_t base) const {
    const uint32_t lane = threadIdx.x & 31u;
    keys[base + lane] = v.a_key, positions[base + lane] = v.a_position;
    keys[base + 32 + lane] = v.b_key, positions[base + 32 + lane] = v.b_position;
  }
  // Pair i (this lane's a or b) against its partner at i ^ stride (in the other lane): the lower
  // index keeps the lesser where the run ascends.
  static __device__ __forceinline__ void keep(U& key, uint32_t& position, U other_key,
                                              uint32_t other_position, uint32_t i, uint32_t size,
                                              uint32_t stride) {
    const bool lesser = ((i & stride) == 0) == ((i & size) == 0);
    if (before(other_key, other_position, key, position) == lesser) {
      key = other_key;
      position = other_position;
    }
  }
  __device__ __forceinline__ void bitonic(uint32_t base, uint32_t size, uint32_t from) {
    const uint32_t a = base + (threadIdx.x & 31u), b = a + 32;
    if (from == 32) {  // (size >= 64: a and b ascend alike)
      if (before(v.b_key, v.b_position, v.a_key, v.a_position) == ((a & size) == 0)) {
        const U key = v.a_key;
        v.a_key = v.b_key, v.b_key = key;
        const uint32_t position = v.a_position;
        v.a_position = v.b_position, v.b_position = position;
      }
      from = 16;
    }
    for (uint32_t stride = from; stride > 0; stride /= 2) {
      const Lane other = shuffle_xor(v, stride);
      keep(v.a_key, v.a_position, other.a_key, other.a_position, a, size, stride);
      keep(v.b_key, v.b_position, other.b_key, other.b_position, b, size, stride);
    }
  }
};

// Sorts `padded` (a power of two) (key, position) pairs in shared memory by key, then position,
// `threads` a block (a multiple of 32): a bitonic sort, stable as the pairs are unique. From 64
// pairs, the stages of strides up to 32 run in registers, a warp 64 pairs at a time (a barrier per
// run of them instead of one a stage); the larger strides in shared memory.
template <class U, uint32_t threads>
__device__ void sort_pairs(U* keys, uint32_t* positions, uint32_t padded) {
  if (padded < 64) {
    for (uint32_t size = 2; size <= padded; size *= 2)
      for (uint32_t stride = size / 2; stride > 0; stride /= 2) {
        for (uint32_t j = threadIdx.x; j < padded / 2; j += threads)
          exchange_shared(keys, positions, j, size, stride);
        __syncthreads();
      }
    return;
  }
  constexpr uint32_t warps = threads / 32;
  const uint32_t warp = threadIdx.x / 32;
  WarpPairs<U> w;
  for (uint32_t base = warp * 64; base < padded; base += warps * 64) {  // uniform in a warp
    w.load(keys, positions, base);
    for (uint32_t size = 2; size <= 64; size *= 2) w.bitonic(base, size, size / 2);
    w.store(keys, positions, base);
  }
  __syncthreads();
  for (uint32_t size = 128; size <= padded; size *= 2) {
    for (uint32_t stride = size / 2; stride >= 64; stride /= 2) {
      for (uint32_t j = threadIdx.x; j < padded / 2; j += threads)
        exchange_shared(keys, positions, j, size, stride);
      __syncthreads();
    }
    for (uint32_t base = warp * 64; base < padded; base += warps * 64) {
      w.load(keys, positions, base);
      w.bitonic(base, size, 32);
      w.store(keys, positions, base);
    }
    __syncthreads();
  }
}

// The first `count` pairs sorted so, after padding (all-ones keys and positions, last) up to a
// power of two: `keys` and `positions` hold that many.
template <class U, uint32_t threads>
__device__ void sort_padded(U* keys, uint32_t* positions, uint32_t count) {
  uint32_t padded = 1;
  while (padded < count) padded *= 2;
  for (uint32_t c = count + threadIdx.x; c < padded; c += threads)
    keys[c] = ~U(0), positions[c] = ~0u;
  __syncthreads();
  sort_pairs<U, threads>(keys, positions, padded);
}

}  // namespace gpusort::cuda::topk_common

#endif  // GPUSORT_ALGORITHMS_TOPK_CUDA_BLOCK_COMMON_CUH
