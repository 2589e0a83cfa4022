// Top-k on the CUDA face (topk_params.hpp): the radix select, the stable compaction's count, scan
// and write, and the bound before them. The logic of the Vulkan kernels (topk_select.glsl,
// topk_histogram.comp, topk_count.comp, topk_write.comp) in CUDA; launched in this order on one
// stream by src/api/cuda_topk.cpp, each kernel reading what the ones before wrote (nothing read
// back):
//
//   least       (the bound) the entries, each the least key of a strided share (the keys read by
//               the cheap compares of block_common.cuh); block 0 also initializes the state blocks
//               (else: init, one block);
//   bound       (the bound) one cooperative launch:
//     histogram per digit, over the entries (below), each selected from once (select_pass),
//               until a digit's bucket holding the k-th least entry is small (kTopKBoundBucket);
//     bound_entries the bound from that select (that entry, or the top of that bucket), and the
//               entries at or below it listed where they are few;
//     bound_list the positions of the keys at or below the bound listed: from those entries'
//               shares only, else from the whole array;
//   digits      one cooperative launch (nothing where the bound's list gave the result):
//     histogram per digit (a bounded grid striding over the tiles): every block first selects
//               from the histograms of the passes before (select_digits), then histograms digit
//               p of the candidates in shared memory and adds its bins to pass p's histogram;
//               the first pass whose candidates fit the list (pass 1 for spread keys, a later
//               one where keys pile into few buckets) also lists them, and writes each tile's
//               count of keys below its prefix; the passes after it read only the list;
//     count     the last select (block 0 stores the k-th key), then per tile the keys below the
//               k-th key and equal to it (with the list: the listing pass's counts plus the
//               listed keys);
//     scan      the tiles' places (an exclusive scan of both counts at once): each block's run
//               of tiles summed, then scanned after the runs before it;
//     write     per tile: the keys below the k-th to [0, before) and the first need_equal equal
//               ones to [before, k), both in input order, with their positions (with the bound:
//               into the list; a long list's count set to before); without the bound the face's
//               sort then orders the ones before the k-th;
//   list_sort   (the bound, k up to a block's sort) the bound's list where it fits, else the
//               digits' result, sorted by (key, position) in one block, the first k written as
//               the caller wants them (original keys, positions or u64 indices, values);
//   list_order  (the bound, larger k) one cooperative launch: the same for a long list, a radix
//               pass per 8-bit digit (the bound's list: the key's passes, then runs of equal keys
//               put in position order), its first k written as list_sort writes them.
#ifdef __CUDACC__
#include <cooperative_groups.h>  // the host's emulation (tests/cuda_emulation) has its own
#endif
#include <cstdint>
#include <cub/block/block_scan.cuh>

#include "algorithms/topk/cuda/block_common.cuh"
#include "algorithms/topk/cuda/topk_params.hpp"
#include "primitives/cuda/elementwise.hpp"
#include "primitives/key_order.h"

namespace gpusort::cuda::topk {
namespace {

using u64 = unsigned long long;
using BlockScan = cub::BlockScan<uint32_t, kTopKThreads>;

// The key as the select orders it: its radix order (NumPy's order: of the canonical key),
// descending inverted, only the compared bits.
template <class U>
__device__ __forceinline__ U read_key(const TopKParams& p, u64 i) {
  const U raw = static_cast<const U*>(p.keys)[i];
  return p.numpy != 0 ? FloatKeyBits<U>::canonical(raw) : raw;
}
template <class U>
__device__ __forceinline__ u64 ordered(const TopKParams& p, U raw) {
  return topk_common::compared_bits<U>(raw, p.key_kind, p.descending, 0, p.mask);
}
// The same in the key's width, from the raw key.
template <class U>
__device__ __forceinline__ U ordered_bits(const TopKParams& p, U raw) {
  return topk_common::compared_bits<U>(raw, p.key_kind, p.descending, p.numpy, p.mask);
}
template <class U>
__device__ __forceinline__ u64 select_key(const TopKParams& p, u64 i) {
  return ordered<U>(p, read_key<U>(p, i));
}

__device__ __forceinline__ TopKDigit digit(const TopKParams& p, uint32_t q) {
  return topk_digit(p.begin_bit, p.end_bit, q);
}
__device__ __forceinline__ uint32_t passes(const TopKParams& p) {
  return topk_passes(p.begin_bit, p.end_bit);
}
__device__ __forceinline__ u64 kth_key(const TopKParams& p) {
  return u64(p.state[kTopKStatePrefix]) | (u64(p.state[kTopKStatePrefix + 1]) << 32);
}
// Whether a key's bits from `above` up equal the prefix's (above 64: every key).
__device__ __forceinline__ bool same_above(u64 key, u64 prefix, uint32_t above) {
  return above >= 64 || (key >> above) == (prefix >> above);
}

struct Selected {
  u64 prefix;          // the digits selected so far
  uint32_t before;     // keys strictly below the prefix
  uint32_t remaining;  // of the k, how many the prefix's candidates give
  // The candidate list: the first pass q >= 1 whose candidates (pass q - 1's selected bucket) fit
  // the list, and their count; all ones where none does up to the passes done (or k = 0).
  uint32_t list_pass, listed;
  uint32_t passes;  // the passes selected from (fewer where a bucket was small enough)
  uint32_t bucket;  // the last one's selected bucket: its count
};
struct SelectShared {
  BlockScan::TempStorage scan;
  u64 prefix;
  uint32_t before, remaining, bucket;
};

// Nothing selected yet: the k of the state block remaining.
__device__ __forceinline__ Selected select_start(const TopKParams& p) {
  return Selected{0, 0, p.state[kTopKStateK], 0xffffffffu, 0xffffffffu, 0, 0};
}

// From pass r.passes's histogram (r: the selection from the passes before): the digit whose
// bucket holds the remaining-th candidate joins the prefix; the candidates of smaller digits are
// all in the result; the first bucket that fits the candidate list names the pass that lists it.
// Every thread of the block calls it (barriers inside), with r.remaining above 0.
__device__ void select_pass(const TopKParams& p, SelectShared& s, Selected& r) {
  constexpr uint32_t per = kTopKBins / kTopKThreads;
  const uint32_t t = threadIdx.x;
  const uint32_t q = r.passes;
  const TopKDigit d = digit(p, q);
  const uint32_t* histogram = p.state + kTopKStateWords + q * kTopKBins;
  uint32_t counts[per], sum = 0;
#pragma unroll
  for (uint32_t b = 0; b < per; ++b) {
    counts[b] = histogram[t * per + b];
    sum += counts[b];
  }
  uint32_t below;
  BlockScan(s.scan).ExclusiveSum(sum, below);
  // One thread holds the remaining-th candidate.
  if (below < r.remaining && r.remaining <= below + sum) {
    uint32_t c = below;
    for (uint32_t b = 0; b < per; ++b) {
      if (c + counts[b] >= r.remaining) {
        s.prefix = r.prefix | (u64(t * per + b) << d.bit);
        s.before = r.before + c;
        s.remaining = r.remaining - c;
        s.bucket = counts[b];
        break;
      }
      c += counts[b];
    }
  }
  __syncthreads();
  r.prefix = s.prefix;
  r.before = s.before;
  r.remaining = s.remaining;
  if (r.list_pass == 0xffffffffu && s.bucket <= p.capacity) {
    r.list_pass = q + 1;
    r.listed = s.bucket;
  }
  r.passes = q + 1;
  r.bucket = s.bucket;
  __syncthreads();  // read before the next pass writes them (and the scan's storage reused)
}

// The selection from the histograms of passes [0, passes_done), pass after pass. With `small`:
// the passes stop after the first whose selected bucket holds at most that many.
__device__ Selected select_digits(const TopKParams& p, uint32_t passes_done, SelectShared& s,
                                  uint32_t small = 0) {
  Selected r = select_start(p);
  if (r.remaining == 0) return r;  // uniform: k = 0 selects nothing
  while (r.passes < passes_done) {
    select_pass(p, s, r);
    if (r.bucket <= small) break;  // uniform
  }
  return r;
}

__device__ __forceinline__ uint32_t element_count(const TopKParams& p) {
  return p.count != nullptr ? min(*p.count, p.n) : p.n;
}

// A state block: n and k, nothing selected yet, the histograms cleared.
__device__ void init_state(const TopKParams& p, uint32_t* state, uint32_t n, uint32_t k) {
  const uint32_t t = threadIdx.x;
  if (t < kTopKStateWords) {
    uint32_t w = 0;
    if (t == kTopKStateN) w = n;
    if (t == kTopKStateK) w = k;
    state[t] = w;
  }
  for (uint32_t w = t; w < passes(p) * kTopKBins; w += blockDim.x) state[kTopKStateWords + w] = 0;
}

__device__ void init(const TopKParams& p) {
  const uint32_t n = element_count(p);
  init_state(p, p.state, n, min(p.k, n));
}

// Whether the bound's list holds every key at or below the k-th: then its tail gives the result,
// and the digits' launches do nothing.
__device__ __forceinline__ bool listed(const TopKParams& p) {
  return p.entries_n != 0 && p.state[kTopKStateBounded] <= p.list_capacity;
}

// Threads in step over the keys: thread e of T takes the vectors e, e + T, ... of 16 / sizeof(U)
// consecutive keys (one 16-byte load where the keys are aligned to it and the vector lies inside
// the array, else a load a key), kTopKLoads of them in flight; f(i, c, raw, valid) for each of
// their keys (c: its place in the vector), then batch() (barriers allowed where every thread of
// the block takes part, as grid_keys's do). Whole batches of aligned vectors first, with no check
// a key; kBackward: the same batches, the last first.
template <class U>
union KeyVector {
  uint4 v;
  U k[16 / sizeof(U)];
};
// One batch: Loads vectors a thread from vector `first` on (whole: aligned, inside the array).
template <class U, uint32_t Loads, bool kWhole, class F, class Batch>
__device__ __forceinline__ void keys_batch(const U* keys, uint32_t n, u64 first, u64 e, u64 threads,
                                           F& f, Batch& batch) {
  constexpr uint32_t V = 16 / sizeof(U);
  KeyVector<U> raw[Loads];
#pragma unroll
  for (uint32_t j = 0; j < Loads; ++j) {
    if constexpr (kWhole) {
      raw[j].v = reinterpret_cast<const uint4*>(keys)[first + j * threads + e];
    } else {
      const u64 i = (first + j * threads + e) * V;
#pragma unroll
      for (uint32_t c = 0; c < V; ++c) raw[j].k[c] = i + c < n ? keys[i + c] : U(0);
    }
  }
#pragma unroll
  for (uint32_t j = 0; j < Loads; ++j) {
    const u64 i = (first + j * threads + e) * V;
#pragma unroll
    for (uint32_t c = 0; c < V; ++c) f(i + c, c, raw[j].k[c], kWhole || i + c < n);
  }
  batch();
}
template <class U, bool kBackward = false, uint32_t Loads = kTopKLoads, class F, class Batch>
__device__ __forceinline__ void strided_keys(const void* data, uint32_t n, u64 e, u64 threads,
                                             F&& f, Batch&& batch) {
  constexpr uint32_t V = 16 / sizeof(U);
  const U* keys = static_cast<const U*>(data);
  const u64 step = Loads * threads;
  const bool aligned = reinterpret_cast<uintptr_t>(keys) % 16 == 0;
  u64 first = 0;
  if constexpr (!kBackward) {
    if (aligned)
      for (; (first + step) * V <= n; first += step)  // uniform
        keys_batch<U, Loads, true>(keys, n, first, e, threads, f, batch);
    for (; first * V < n; first += step)
      keys_batch<U, Loads, false>(keys, n, first, e, threads, f, batch);
  } else {
    // The same batches, the last first. `whole`: the end of the whole batches.
    u64 whole = 0;
    if (aligned)
      while ((whole + step) * V <= n) whole += step;
    for (first = whole; first * V < n;) first += step;
    while (first > whole) {
      first -= step;
      keys_batch<U, Loads, false>(keys, n, first, e, threads, f, batch);
    }
    while (first > 0) {
      first -= step;
      keys_batch<U, Loads, true>(keys, n, first, e, threads, f, batch);
    }
  }
}

// The grid in step (kBackward: the last batch first).
template <class U, bool kBackward = false, uint32_t Loads = kTopKLoads, class F, class Batch>
__device__ __forceinline__ void grid_keys(const void* data, uint32_t n, F&& f, Batch&& batch) {
  strided_keys<U, kBackward, Loads>(data, n, u64(blockIdx.x) * blockDim.x + threadIdx.x,
                                    u64(gridDim.x) * blockDim.x, f, batch);
}

// f(reader): the select's key reader (block_common.cuh) with the bound.
template <class U, class F>
__device__ __forceinline__ void with_reader(const TopKParams& p, U bound, F&& f) {
  topk_common::with_key_reader<U>(p.key_kind, p.descending, p.numpy, p.mask, bound, f);
}

// The bound's first read: entry e is the least key of e, e + entries_n, ... (after every key where
// it has none), its compared bits. entries_n / (16 / sizeof(U)) readers in step, each a vector of
// entries (any grid: a thread takes reader t, t + the grid's threads, ...). With them, the first
// digit's histogram of the entries (a block's in shared memory, then added to the bound's state
// block, which the face cleared before). Block 0 also initializes the select's state block and
// the bound's n and k: what comes after reads them, this does not.
template <class U, bool kLows>
__device__ void least(const TopKParams& p) {
  constexpr uint32_t V = 16 / sizeof(U);
  __shared__ uint32_t bins[kTopKBins];
  const uint32_t n = element_count(p);
  const uint32_t t = threadIdx.x;
  if (blockIdx.x == 0) {
    init(p);
    if (t == 0) {
      p.bound_state[kTopKStateN] = p.entries_n;
      p.bound_state[kTopKStateK] = min(min(p.k, n), p.entries_n);
    }
  }
  for (uint32_t b = t; b < kTopKBins; b += blockDim.x) bins[b] = 0;
  __syncthreads();
  const TopKDigit d = digit(p, 0);
  const u64 readers = p.entries_n / V;
  // The groups' lows: a group is the vectors of kTopKGroupBytes / 16 neighbouring lanes (readers
  // in step read neighbouring vectors), their least keys met by shuffles.
  constexpr uint32_t group_keys = kTopKGroupBytes / sizeof(U), lanes = kTopKGroupBytes / 16;
  U* const lows = static_cast<U*>(p.group_lows);
  const uint32_t groups = uint32_t(topk_groups(n, sizeof(U)));
  with_reader<U>(p, U(0), [&](auto reader) {
    for (u64 e = u64(blockIdx.x) * blockDim.x + t; e < readers; e += u64(gridDim.x) * blockDim.x) {
      typename decltype(reader)::Least lowest[V], group = reader.first();
#pragma unroll
      for (uint32_t c = 0; c < V; ++c) lowest[c] = reader.first();
      strided_keys<U, false, kLows ? kTopKLowsLoads : kTopKLoads>(
          p.keys, n, e, readers,
          [&](u64 i, uint32_t c, U raw, bool valid) {
            if (valid) reader.least(lowest[c], raw);
            if constexpr (!kLows) return;
            if (valid) reader.least(group, raw);
            if (c + 1 < V) return;
            U low = reader.bits(group);
            group = reader.first();
#pragma unroll
            for (uint32_t lane = 1; lane < lanes; lane *= 2)
              low = min(low, topk_common::shuffle_xor(low, lane));
            const uint32_t g = uint32_t(i) / group_keys;  // (i below n, below 2^32)
            if (t % lanes == 0 && g < groups) lows[g] = low;
          },
          [] {});
#pragma unroll
      for (uint32_t c = 0; c < V; ++c)
        static_cast<U*>(p.entries)[e * V + c] = reader.bits(lowest[c]);
    }
  });
  // (Read back from the thread's own writes: in the loop above they cost registers, and spills.)
  for (u64 e = u64(blockIdx.x) * blockDim.x + t; e < readers; e += u64(gridDim.x) * blockDim.x)
#pragma unroll
    for (uint32_t c = 0; c < V; ++c) {
      const U entry = static_cast<const U*>(p.entries)[e * V + c];
      atomicAdd(&bins[uint32_t(u64(entry) >> d.bit) & ((1u << d.bits) - 1u)], 1u);
    }
  __syncthreads();
  for (uint32_t b = t; b < kTopKBins; b += blockDim.x)
    if (bins[b] != 0) atomicAdd(&p.bound_state[kTopKStateWords + b], bins[b]);
}

// A block's listed items staged in shared memory, then one place in a global list a batch: past
// `capacity` only counted (in `counter`).
inline constexpr uint32_t kTopKListBatch = kTopKThreads * kTopKLoads * 4;  // 32-bit keys' batch
struct Staged {
  uint32_t items[kTopKListBatch];
  uint32_t count, base;
};
// One for each kernel, whichever of its stages stage.
__device__ __forceinline__ Staged& staged_storage() {
  __shared__ Staged staged;
  return staged;
}
__device__ __forceinline__ void stage(Staged& s, uint32_t item) {
  s.items[atomicAdd(&s.count, 1u)] = item;
}
// Every thread of the block, after each batch.
__device__ void flush(Staged& s, uint32_t* counter, uint32_t* list, uint32_t capacity) {
  const uint32_t t = threadIdx.x;
  __syncthreads();
  const uint32_t count = s.count;
  __syncthreads();         // read by all before the next batch stages more
  if (count == 0) return;  // uniform
  if (t == 0) {
    s.base = atomicAdd(counter, count);
    s.count = 0;
  }
  __syncthreads();
  for (uint32_t c = t; c < count; c += kTopKThreads)
    if (s.base + c < capacity) list[s.base + c] = s.items[c];
  __syncthreads();  // staged read before the next batch's
}

// The bound from the entries' select: the k-th least entry, or, where a digit's bucket holding
// it has at most kTopKBoundBucket entries, the top of that bucket (at least as many entries lie at
// or below it; the passes after it need not run).
template <class U>
__device__ U entries_bound(const TopKParams& p, const Selected& s) {
  if (s.passes == 0) return U(0);  // k = 0 (a GPU-side count of 0)
  const TopKDigit d = digit(p, s.passes - 1);
  return U(s.prefix | (((u64(1) << d.bit) - 1) & p.mask));
}

// The bound: every block has the entries' select (s: its passes stop at a bucket of at most
// kTopKBoundBucket) and returns the bound; block 0 stores it. Where the entries at or below it
// may be listed (qualifying_capacity), they are.
template <class U>
__device__ U bound_entries(const TopKParams& p, const Selected& s) {
  Staged& staged = staged_storage();
  const U bound = entries_bound<U>(p, s);
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {
      p.state[kTopKStateBound] = uint32_t(bound);
      p.state[kTopKStateBound + 1] = uint32_t(u64(bound) >> 32);
    }
    staged.count = 0;
  }
  if (p.qualifying_capacity == 0) return bound;  // uniform
  __syncthreads();
  grid_keys<U>(
      p.entries, p.entries_n,
      [&](u64 e, uint32_t, U entry, bool valid) {
        if (valid && entry <= bound) stage(staged, uint32_t(e));
      },
      [&] { flush(staged, &p.state[kTopKStateQualifying], p.qualifying, p.qualifying_capacity); });
  return bound;
}
template <class U>
__device__ __forceinline__ U stored_bound(const TopKParams& p) {
  return U(u64(p.state[kTopKStateBound]) | (u64(p.state[kTopKStateBound + 1]) << 32));
}

// The bound's list from the groups' lows (least's): the lows read as keys, the groups whose low
// lies at or below the bound staged, a batch at a time; then their keys, a 16-byte vector a thread
// (kTopKLowsLoads in flight), each key at or below the bound given a place in the list by its warp.
// Once the list has overflowed (keys piled at the bound: the digits give the result), a block
// stages no more groups.
template <class U, class Reader>
__device__ void bound_groups(const TopKParams& p, const Reader& reader, U bound, uint32_t n) {
  constexpr uint32_t V = 16 / sizeof(U), group_keys = kTopKGroupBytes / sizeof(U);
  constexpr uint32_t vectors = group_keys / V;  // a group's
  static_assert(kTopKThreads * kTopKLowsLoads * V <= kTopKListBatch, "a batch's groups are staged");
  Staged& staged = staged_storage();
  __shared__ bool overflowed;
  const uint32_t t = threadIdx.x, lane = t % 32;
  const U* keys = static_cast<const U*>(p.keys);
  const bool aligned = reinterpret_cast<uintptr_t>(keys) % 16 == 0;
  if (t == 0) overflowed = false;
  __syncthreads();
  grid_keys<U, false, kTopKLowsLoads>(
      p.group_lows, uint32_t(topk_groups(n, sizeof(U))),
      [&](u64 g, uint32_t, U low, bool valid) {
        if (valid && low <= bound && !overflowed) stage(staged, uint32_t(g));
      },
      [&] {
        __syncthreads();
        const uint32_t staged_vectors = staged.count * vectors;
        for (uint32_t x0 = 0; x0 < staged_vectors;
             x0 += kTopKThreads * kTopKLowsLoads) {  // uniform
          KeyVector<U> raw[kTopKLowsLoads];
          uint32_t first[kTopKLowsLoads];  // the vector's first key (n: none)
#pragma unroll
          for (uint32_t j = 0; j < kTopKLowsLoads; ++j) {
            const uint32_t x = x0 + j * kTopKThreads + t;
            first[j] = n;
            raw[j].v = uint4{};
            if (x >= staged_vectors) continue;
            // (A group's last vectors may lie past n: none.)
            first[j] = uint32_t(
                min(u64(n), u64(staged.items[x / vectors]) * group_keys + (x % vectors) * V));
            if (aligned && V <= n - first[j]) {
              raw[j].v = reinterpret_cast<const uint4*>(keys)[first[j] / V];
            } else {
#pragma unroll
              for (uint32_t c = 0; c < V; ++c)
                raw[j].k[c] = c < n - first[j] ? keys[first[j] + c] : U(0);
            }
          }
#pragma unroll
          for (uint32_t j = 0; j < kTopKLowsLoads; ++j)
#pragma unroll
            for (uint32_t c = 0; c < V; ++c) {
              const bool take = c < n - first[j] && reader.at_most(raw[j].k[c]);
              const uint32_t takers = __ballot_sync(0xffffffffu, take);
              if (takers == 0) continue;
              const uint32_t leader = __ffs(takers) - 1;
              uint32_t at = 0;
              if (lane == leader)
                at = atomicAdd(&p.state[kTopKStateBounded], uint32_t(__popc(takers)));
              at = __shfl_sync(0xffffffffu, at, leader) + __popc(takers & ((1u << lane) - 1));
              if (take && at < p.list_capacity) p.candidates[at] = first[j] + c;
            }
        }
        __syncthreads();
        if (t == 0) {
          staged.count = 0;
          overflowed =
              *static_cast<volatile uint32_t*>(&p.state[kTopKStateBounded]) > p.list_capacity;
        }
        __syncthreads();
      });
}

// The bound's list: the positions of the keys at or below the bound, a batch at a time (staged in
// shared memory, then one place in the list a block's batch); past list_capacity only counted.
// Where the entries at or below it were listed, only their shares are read (x over their keys:
// entry x % q's key x / q, so that a warp's loads take neighbouring entries where they are so);
// where least wrote the groups' lows, those and the groups they name (bound_groups); else the
// whole array.
template <class U>
__device__ void bound_list(const TopKParams& p, U bound) {
  Staged& staged = staged_storage();
  const uint32_t n = p.state[kTopKStateN];
  const uint32_t qualifying = p.state[kTopKStateQualifying];
  const uint32_t t = threadIdx.x;
  if (t == 0) staged.count = 0;
  __syncthreads();
  auto batch = [&] { flush(staged, &p.state[kTopKStateBounded], p.candidates, p.list_capacity); };
  with_reader<U>(p, bound, [&](auto reader) {
    if (p.group_lows != nullptr) {  // uniform
      bound_groups<U>(p, reader, bound, n);
      return;
    }
    if (p.qualifying_capacity == 0 || qualifying > p.qualifying_capacity) {  // uniform
      // Backward: least has just read the array forward, and its last keys may still be in L2.
      grid_keys<U, true>(
          p.keys, n,
          [&](u64 i, uint32_t, U raw, bool valid) {
            if (valid && reader.at_most(raw)) stage(staged, uint32_t(i));
          },
          batch);
      return;
    }
    // (qualifying x share is below 2^32: topk_qualifying_capacity.)
    const uint32_t share = uint32_t((u64(n) + p.entries_n - 1) / p.entries_n);
    const uint32_t total = qualifying * share;
    const U* keys = static_cast<const U*>(p.keys);
    constexpr uint32_t step = kTopKThreads * kTopKLoads;
    for (u64 base = u64(blockIdx.x) * step; base < total; base += u64(gridDim.x) * step) {
      U raw[kTopKLoads];
      uint32_t at[kTopKLoads];
#pragma unroll
      for (uint32_t j = 0; j < kTopKLoads; ++j) {
        const u64 x = base + j * kTopKThreads + t;
        at[j] = n;
        if (x < total) {
          const u64 i =
              p.qualifying[uint32_t(x) % qualifying] + u64(uint32_t(x) / qualifying) * p.entries_n;
          if (i < n) {
            at[j] = uint32_t(i);
            raw[j] = keys[i];
          }
        }
      }
#pragma unroll
      for (uint32_t j = 0; j < kTopKLoads; ++j)
        if (at[j] < n && reader.at_most(raw[j])) stage(staged, at[j]);
      batch();
    }
  });
}

// The bound's results, as its last launch writes them: result r is the key at `position` (the
// original, in NumPy's order too), its position (u32, or u64 indices), its value.
template <class U>
struct Result {
  U key;
  u64 value;
};
template <class U>
__device__ __forceinline__ Result<U> load_result(const TopKParams& p, uint32_t position) {
  Result<U> r{static_cast<const U*>(p.keys)[position], 0};
  if (p.value_bytes == 4)
    r.value = static_cast<const uint32_t*>(p.values)[position];
  else if (p.value_bytes == 8)
    r.value = static_cast<const u64*>(p.values)[position];
  return r;
}
template <class U>
__device__ __forceinline__ void store_result(const TopKParams& p, uint32_t r, uint32_t position,
                                             const Result<U>& loaded) {
  static_cast<U*>(p.keys_out)[r] = loaded.key;
  if (p.indices64 != nullptr)
    p.indices64[r] = position;
  else
    p.positions[r] = position;
  if (p.value_bytes == 4)
    static_cast<uint32_t*>(p.values_out)[r] = uint32_t(loaded.value);
  else if (p.value_bytes == 8)
    static_cast<u64*>(p.values_out)[r] = loaded.value;
}

// k up to kTopKListSortCapacity / 4, in one block after the digits: the bound's list where it fits,
// else the digits' result (the k in the list), sorted in shared memory by (key, position), the
// first min(k, n) written.
template <class U>
__device__ void list_sort(const TopKParams& p) {
  __shared__ U keys[kTopKListSortCapacity];
  __shared__ uint32_t positions[kTopKListSortCapacity];
  const uint32_t k = p.state[kTopKStateK];
  const bool bound_list = listed(p);
  const uint32_t count = bound_list ? p.state[kTopKStateBounded] : k;
  const uint32_t* from = bound_list ? p.candidates : p.list_positions;
  for (uint32_t c = threadIdx.x; c < count; c += blockDim.x) {
    const uint32_t i = from[c];
    keys[c] = ordered_bits<U>(p, static_cast<const U*>(p.keys)[i]);
    positions[c] = i;
  }
  topk_common::sort_padded<U, kTopKListSortThreads>(keys, positions, count);
  for (uint32_t r = threadIdx.x; r < k; r += blockDim.x)
    store_result<U>(p, r, positions[r], load_result<U>(p, positions[r]));
}

// ---- A long list's sort (list_order, topk_params.hpp) ----
//
// The list: the bound's (its positions in `candidates`, in no order) where it fits, else the
// digits' result (in the list, the keys before the k-th in input order, then the equal ones). Its
// count: the bound's, or the keys before the k-th.
__device__ __forceinline__ uint32_t list_count(const TopKParams& p) {
  return listed(p) ? p.state[kTopKStateBounded] : p.state[kTopKStateListed];
}
// The positions' passes: their low bit_width(n - 1) bits, 8 a pass; then the key's.
__device__ __forceinline__ uint32_t list_position_passes(const TopKParams& p) {
  const uint32_t bits = 32 - __clz(max(p.n, 2u) - 1);
  return (bits + kTopKListDigitBits - 1) / kTopKListDigitBits;
}
// The first pass that may run: the digits' result is in input order already, and skips the
// positions'.
__device__ __forceinline__ uint32_t list_first_pass(const TopKParams& p, uint32_t position_passes) {
  return listed(p) ? 0 : position_passes;
}
template <class U>
__device__ __forceinline__ uint32_t list_digit(U key, uint32_t position, uint32_t q,
                                               uint32_t position_passes) {
  return q < position_passes
             ? (position >> (q * kTopKListDigitBits)) & (kTopKListBins - 1)
             : uint32_t(key >> ((q - position_passes) * kTopKListDigitBits)) & (kTopKListBins - 1);
}
// This block's stretch of the list: [begin, end) = [b s, (b + 1) s) within the count,
// s = ceil(count / blocks).
struct ListStretch {
  uint32_t s, begin, end;
};
__device__ __forceinline__ ListStretch list_stretch(uint32_t count) {
  const uint32_t s = (count + gridDim.x - 1) / gridDim.x;
  const uint32_t begin = min(count, blockIdx.x * s);
  return {s, begin, min(count, begin + s)};
}
// Pass q's digit totals, and its counts per block: the first read's (set) or the scatters' (added).
__device__ __forceinline__ uint32_t* list_totals(const TopKParams& p, uint32_t q) {
  return p.bound_state + kTopKBoundListTotals + q * kTopKListBins;
}
__device__ __forceinline__ uint32_t* list_block_counts(const TopKParams& p, uint32_t q,
                                                       uint32_t scattered) {
  return p.list_counts + (u64(q) * 2 + scattered) * gridDim.x * kTopKListBins;
}

struct ListPasses {
  uint32_t count, position_passes, active_n;
  uint32_t keys_from;  // active[keys_from] on: the key's passes
  uint32_t active[kTopKListPasses];
};
// The passes that move anything: the positions' (for the bound's list) and the key's, less those
// whose digits are all one. Every thread of the block calls it.
template <class U>
__device__ void list_passes(const TopKParams& p, ListPasses& passes) {
  __shared__ uint32_t one_digit[kTopKListPasses];
  const uint32_t t = threadIdx.x;
  const uint32_t count = list_count(p), position_passes = list_position_passes(p);
  const uint32_t all = position_passes + sizeof(U);
  const uint32_t first = list_first_pass(p, position_passes);
  if (t < kTopKListPasses) one_digit[t] = 0;
  __syncthreads();
  for (uint32_t q = first; q < all; ++q)  // kTopKThreads = kTopKListBins: thread t reads digit t
    if (list_totals(p, q)[t] == count) one_digit[q] = 1;
  __syncthreads();
  if (t == 0) {
    passes.count = count;
    passes.position_passes = position_passes;
    passes.active_n = 0;
    passes.keys_from = 0;
    for (uint32_t q = first; q < all; ++q) {
      if (q == position_passes) passes.keys_from = passes.active_n;
      if (one_digit[q] == 0) passes.active[passes.active_n++] = q;
    }
  }
  __syncthreads();
}

// The bound's list by buckets (topk_params.hpp, kTopKListBuckets): the span, each bucket's first
// place, the block's range of the list.
template <class U>
struct ListBuckets {
  U lo;              // every listed key lies in [lo, the bound]
  uint32_t shift;    // a key's bucket: (key - lo) >> shift
  uint32_t on;       // the first read counts the buckets
  uint32_t least;    // (the span's: the least entry's first digit; the plan's: the fullest bucket)
  uint32_t edge[2];  // (the sort's: its buckets' range of the list)
  uint32_t starts[kTopKListBuckets];  // each bucket's first place (the plan's)
};
template <class U>
__device__ __forceinline__ uint32_t list_bucket(const ListBuckets<U>& b, U key) {
  return min(uint32_t((key - b.lo) >> b.shift), kTopKListBuckets - 1);  // (never past: the span)
}
template <class U>
__device__ __forceinline__ uint32_t bit_width_of(U v) {
  if constexpr (sizeof(U) == 8) {
    const uint32_t high = uint32_t(u64(v) >> 32);
    if (high != 0) return 64 - __clz(high);
  }
  return 32 - __clz(uint32_t(v));
}

// The span of the bound's list, where list_buckets asks for the buckets: from the bottom of the
// least entry's first digit (least's histogram, which no later pass overwrites: every key lies at
// or above the least entry) to the bound. Every thread of the block calls it.
template <class U>
__device__ void list_bucket_span(const TopKParams& p, ListBuckets<U>& b) {
  const uint32_t t = threadIdx.x;
  const bool on = p.list_buckets != 0 && listed(p);  // uniform
  if (t == 0) {
    b.on = on ? 1 : 0;
    b.least = kTopKBins;
  }
  __syncthreads();
  if (!on) return;
  const TopKDigit d = digit(p, 0);
  const uint32_t* histogram = p.bound_state + kTopKStateWords;
  for (uint32_t bin = t; bin < (1u << d.bits); bin += kTopKThreads)
    if (histogram[bin] != 0) {
      atomicMin(&b.least, bin);
      break;
    }
  __syncthreads();
  if (t == 0) {
    const U lo = b.least < kTopKBins ? U(u64(b.least) << d.bit) : U(0);
    const uint32_t width = bit_width_of<U>(U(stored_bound<U>(p) - lo));
    b.lo = lo;
    b.shift = width > kTopKListBucketBits ? width - kTopKListBucketBits : 0;
  }
  __syncthreads();
}

// Before the first grid barrier: the list into the first buffer (keys as the select compares
// them), the keys of each bucket counted where buckets.on, the digits of every pass that may run
// counted (the totals, and each block's counts, the scatters' cleared); the digits' equal keys
// after those before the k-th straight to the result.
template <class U>
__device__ void list_order_start(const TopKParams& p, ListBuckets<U>& buckets) {
  static_assert(kTopKThreads == kTopKListBins);
  __shared__ uint32_t counts[kTopKListPasses][kTopKListBins];
  list_bucket_span<U>(p, buckets);
  uint32_t* const bucket_totals = p.bound_state + kTopKBoundBucketTotals;
  const uint32_t t = threadIdx.x;
  const uint32_t count = list_count(p), position_passes = list_position_passes(p);
  const uint32_t first = list_first_pass(p, position_passes), all = position_passes + sizeof(U);
  for (uint32_t q = first; q < all; ++q) counts[q][t] = 0;
  __syncthreads();
  const uint32_t* from = listed(p) ? p.candidates : p.list_positions;
  const auto [s, begin, end] = list_stretch(count);
  U* keys = static_cast<U*>(p.list_keys);
  // A tile at a time, its loads in flight together.
  for (uint32_t tile = begin; tile < end; tile += kTopKTile) {
    uint32_t position[kTopKItems];
    U key[kTopKItems];
#pragma unroll
    for (uint32_t j = 0; j < kTopKItems; ++j) {
      const uint32_t c = tile + j * kTopKThreads + t;
      // (The digits' list: read, then written, by this thread.)
      position[j] = c < end ? from[c] : 0;
    }
#pragma unroll
    for (uint32_t j = 0; j < kTopKItems; ++j)
      key[j] = tile + j * kTopKThreads + t < end
                   ? ordered_bits<U>(p, static_cast<const U*>(p.keys)[position[j]])
                   : U(0);
#pragma unroll
    for (uint32_t j = 0; j < kTopKItems; ++j) {
      const uint32_t c = tile + j * kTopKThreads + t;
      if (c >= end) break;
      keys[c] = key[j];
      p.list_positions[c] = position[j];
      for (uint32_t q = first; q < all; ++q)
        atomicAdd(&counts[q][list_digit<U>(key[j], position[j], q, position_passes)], 1u);
      if (buckets.on) atomicAdd(&bucket_totals[topk_bucket_word(list_bucket(buckets, key[j]))], 1u);
    }
  }
  __syncthreads();
  for (uint32_t q = first; q < all; ++q) {
    const uint32_t c = counts[q][t];
    list_block_counts(p, q, 0)[blockIdx.x * kTopKListBins + t] = c;
    list_block_counts(p, q, 1)[blockIdx.x * kTopKListBins + t] = 0;
    if (c != 0) atomicAdd(&list_totals(p, q)[t], c);
  }
  if (!listed(p)) {
    const uint32_t k = p.state[kTopKStateK];
    for (uint32_t c = count + blockIdx.x * kTopKThreads + t; c < k; c += gridDim.x * kTopKThreads)
      store_result<U>(p, c, p.list_positions[c], load_result<U>(p, p.list_positions[c]));
  }
}

// The list's two buffers: 0 the first (the start's), 1 the second.
template <class U>
__device__ __forceinline__ U* list_keys_in(const TopKParams& p, uint32_t buffer) {
  return static_cast<U*>(buffer == 0 ? p.list_keys : p.list_keys_b);
}
__device__ __forceinline__ uint32_t* list_positions_in(const TopKParams& p, uint32_t buffer) {
  return buffer == 0 ? p.list_positions : p.list_positions_b;
}

// One radix pass of list_order: pass q's digit over the list in buffer `from`, its counts per
// block in slot `slot` (0: the start's, 1: the scatters'); scattered to the other buffer, pass
// `next`'s digits counted for the blocks that will read each entry; or (last) the first k written.
struct ListStep {
  uint32_t q, slot, from, next;
  bool last;
};

// Each block's stretch ranked stably by the pass's digit, chunk after chunk, and scattered.
template <class U>
__device__ void list_order_pass(const TopKParams& p, const ListPasses& passes,
                                const ListStep& step) {
  constexpr uint32_t warps = kTopKThreads / 32;
  __shared__ uint32_t places[warps][kTopKListBins];
  __shared__ uint32_t base[kTopKListBins];
  __shared__ BlockScan::TempStorage scan;
  const uint32_t t = threadIdx.x, lane = t % 32, warp = t / 32;
  const uint32_t count = passes.count, k = p.state[kTopKStateK];
  const auto [s, begin, end] = list_stretch(count);
  const uint32_t q = step.q, next = step.next;
  const bool last = step.last;
  const U* keys_in = list_keys_in<U>(p, step.from);
  const uint32_t* positions_in = list_positions_in(p, step.from);
  U* keys_to = list_keys_in<U>(p, step.from ^ 1);
  uint32_t* positions_to = list_positions_in(p, step.from ^ 1);
  // Digit t's first place for this block: the entries of lower digits, then digit t's in the
  // blocks before.
  {
    const uint32_t* blocks = list_block_counts(p, q, step.slot);
    uint32_t before_blocks = 0;  // (loads in flight together: each one's latency is most of it)
#pragma unroll 16
    for (uint32_t b = 0; b < blockIdx.x; ++b) before_blocks += blocks[b * kTopKListBins + t];
    uint32_t lower;
    BlockScan(scan).ExclusiveSum(list_totals(p, q)[t], lower);
    base[t] = lower + before_blocks;
    for (uint32_t w = 0; w < warps; ++w) places[w][t] = 0;
  }
  __syncthreads();
  uint32_t* next_counts = last || next == kTopKListPasses ? nullptr : list_block_counts(p, next, 1);
  // A chunk is `rounds` entries a thread, as few as the stretch needs: every warp ranks its share
  // in that many rounds (with a chunk of kTopKTile, a short stretch left the last warps idle
  // while the first ranked 8 rounds).
  const uint32_t rounds = min(kTopKItems, (s + kTopKThreads - 1) / kTopKThreads);
  for (uint32_t chunk = begin; chunk < end; chunk += rounds * kTopKThreads) {  // uniform
    // Warp w ranks entries [chunk + w 32 rounds, + 32 rounds) in order, 32 at a time: among equal
    // digits by lane, after the warp's earlier ones (its leader keeps the warp's count).
    U key[kTopKItems];
    uint32_t position[kTopKItems], d[kTopKItems], rank[kTopKItems];
#pragma unroll
    for (uint32_t j = 0; j < kTopKItems; ++j) {  // the loads first, in flight together
      const uint32_t c = chunk + (warp * rounds + j) * 32 + lane;
      key[j] = j < rounds && c < end ? keys_in[c] : U(0);
      position[j] = j < rounds && c < end ? positions_in[c] : 0;
    }
#pragma unroll
    for (uint32_t j = 0; j < kTopKItems; ++j) {
      d[j] = kTopKListBins;
      if (j >= rounds) continue;  // uniform
      const bool valid = chunk + (warp * rounds + j) * 32 + lane < end;
      d[j] = valid ? list_digit<U>(key[j], position[j], q, passes.position_passes) : kTopKListBins;
      const uint32_t peers = __match_any_sync(0xffffffffu, d[j]);
      const uint32_t leader = __ffs(peers) - 1;
      uint32_t earlier = 0;
      if (lane == leader && valid) {
        earlier = places[warp][d[j]];
        places[warp][d[j]] = earlier + __popc(peers);
      }
      rank[j] = __shfl_sync(0xffffffffu, earlier, leader) + __popc(peers & ((1u << lane) - 1));
      __syncwarp();
    }
    __syncthreads();
    // Digit t: each warp's first place, after the warps before and the chunks before.
    {
      uint32_t at = base[t];
      for (uint32_t w = 0; w < warps; ++w) {
        const uint32_t c = places[w][t];
        places[w][t] = at;
        at += c;
      }
      base[t] = at;
    }
    __syncthreads();
    // Each entry's place: its warp's first for its digit, then its rank there.
#pragma unroll
    for (uint32_t j = 0; j < kTopKItems; ++j)
      if (d[j] != kTopKListBins) rank[j] += places[warp][d[j]];
    if (last) {  // the first k (their loads in flight together)
      Result<U> loaded[kTopKItems];
#pragma unroll
      for (uint32_t j = 0; j < kTopKItems; ++j)
        if (d[j] != kTopKListBins && rank[j] < k) loaded[j] = load_result<U>(p, position[j]);
#pragma unroll
      for (uint32_t j = 0; j < kTopKItems; ++j)
        if (d[j] != kTopKListBins && rank[j] < k)
          store_result<U>(p, rank[j], position[j], loaded[j]);
    } else {
#pragma unroll
      for (uint32_t j = 0; j < kTopKItems; ++j) {
        if (d[j] == kTopKListBins) continue;
        keys_to[rank[j]] = key[j];
        positions_to[rank[j]] = position[j];
        if (next_counts == nullptr) continue;
        const uint32_t digit = list_digit<U>(key[j], position[j], next, passes.position_passes);
        atomicAdd(&next_counts[(rank[j] / s) * kTopKListBins + digit], 1u);
      }
    }
    __syncthreads();
    for (uint32_t w = 0; w < warps; ++w) places[w][t] = 0;
    __syncthreads();
  }
}

// The bound's list sorted by its key's passes alone (stable: ties in the list's order) in buffer
// `from`: each run of equal keys is put in position order here, the first k written. A run of
// more than kTopKListRun entries is left to the full sort (the fallback flag); the other results
// stand. The later key passes' scatter counts are cleared for it (each block its own), and the
// last key pass counted the first position pass's digits.
template <class U>
__device__ void list_ties(const TopKParams& p, const ListPasses& passes, uint32_t from) {
  constexpr uint32_t items = 4;
  const uint32_t t = threadIdx.x;
  const uint32_t count = passes.count, k = p.state[kTopKStateK];
  const ListStretch stretch = list_stretch(count);
  const uint32_t begin = stretch.begin, end = min(stretch.end, k);
  const U* keys = list_keys_in<U>(p, from);
  const uint32_t* positions = list_positions_in(p, from);
  for (uint32_t i = passes.keys_from + 1; i < passes.active_n; ++i)
    list_block_counts(p, passes.active[i], 1)[blockIdx.x * kTopKListBins + t] = 0;
  for (uint32_t chunk = begin; chunk < end; chunk += items * kTopKThreads) {
    U key[items];
    uint32_t position[items], tie[items];  // tie: 1 after an equal key, 2 before one
    Result<U> loaded[items];
#pragma unroll
    for (uint32_t j = 0; j < items; ++j) {  // the loads first, in flight together
      const uint32_t c = chunk + j * kTopKThreads + t;
      tie[j] = 0;
      if (c >= end) continue;
      key[j] = keys[c];
      position[j] = positions[c];
      if (c > 0 && keys[c - 1] == key[j]) tie[j] |= 1;
      if (c + 1 < count && keys[c + 1] == key[j]) tie[j] |= 2;
    }
#pragma unroll
    for (uint32_t j = 0; j < items; ++j)
      if (chunk + j * kTopKThreads + t < end && tie[j] == 0)
        loaded[j] = load_result<U>(p, position[j]);
#pragma unroll
    for (uint32_t j = 0; j < items; ++j) {
      const uint32_t c = chunk + j * kTopKThreads + t;
      if (c >= end) continue;
      if (tie[j] == 0) {
        store_result<U>(p, c, position[j], loaded[j]);
      } else if (tie[j] == 2) {  // a run's first entry orders it: each position ranked among them
        uint32_t run = 1;
        while (c + run < count && run <= kTopKListRun && keys[c + run] == key[j]) ++run;
        if (run > kTopKListRun) {
          p.bound_state[kTopKBoundListFallback] = 1;
          continue;
        }
        for (uint32_t r = 0; r < run; ++r) {
          const uint32_t at = positions[c + r];
          uint32_t rank = 0;
          for (uint32_t o = 0; o < run; ++o) rank += positions[c + o] < at ? 1 : 0;
          if (c + rank < k) store_result<U>(p, c + rank, at, load_result<U>(p, at));
        }
      }
    }
  }
}

// After the first read: each bucket's first place (the exclusive sum of the totals); whether the
// buckets sort the list (no bucket holds more than kTopKListBucketMost, and each block's buckets,
// those that start in its stretch, fit kTopKListBucketEntries: at most its stretch and the
// fullest bucket less one). The same in every block. Every thread of the block calls it.
template <class U>
__device__ bool list_bucket_plan(const TopKParams& p, ListBuckets<U>& b) {
  constexpr uint32_t per = kTopKListBuckets / kTopKThreads;
  __shared__ BlockScan::TempStorage scan;
  if (!b.on) return false;  // uniform
  const uint32_t t = threadIdx.x;
  const uint32_t* totals = p.bound_state + kTopKBoundBucketTotals;
  uint32_t c[per], sum = 0, most = 0;
#pragma unroll
  for (uint32_t j = 0; j < per; ++j) {
    c[j] = totals[topk_bucket_word(t * per + j)];
    sum += c[j];
    most = max(most, c[j]);
  }
  if (t == 0) b.least = 0;
  __syncthreads();
  atomicMax(&b.least, most);
  uint32_t before;
  BlockScan(scan).ExclusiveSum(sum, before);
#pragma unroll
  for (uint32_t j = 0; j < per; ++j) {
    b.starts[t * per + j] = before;
    before += c[j];
  }
  __syncthreads();
  const uint32_t s = list_stretch(list_count(p)).s;
  return b.least <= kTopKListBucketMost && s + b.least <= kTopKListBucketEntries + 1;
}

// The block's stretch of the first buffer to the second, each key at its bucket's first place
// after those its bucket has taken (an atomic a key: the order within a bucket is the sort's).
template <class U>
__device__ void list_bucket_scatter(const TopKParams& p, const ListBuckets<U>& b) {
  const uint32_t t = threadIdx.x;
  const auto [s, begin, end] = list_stretch(list_count(p));
  const U* keys = list_keys_in<U>(p, 0);
  const uint32_t* positions = list_positions_in(p, 0);
  U* keys_to = list_keys_in<U>(p, 1);
  uint32_t* positions_to = list_positions_in(p, 1);
  uint32_t* fill = p.bound_state + kTopKBoundBucketFill;
  for (uint32_t tile = begin; tile < end; tile += kTopKTile) {
    U key[kTopKItems];
    uint32_t position[kTopKItems];
#pragma unroll
    for (uint32_t j = 0; j < kTopKItems; ++j) {  // the loads first, in flight together
      const uint32_t c = tile + j * kTopKThreads + t;
      key[j] = c < end ? keys[c] : U(0);
      position[j] = c < end ? positions[c] : 0;
    }
#pragma unroll
    for (uint32_t j = 0; j < kTopKItems; ++j) {
      if (tile + j * kTopKThreads + t >= end) break;
      const uint32_t bucket = list_bucket(b, key[j]);
      const uint32_t at = b.starts[bucket] + atomicAdd(&fill[topk_bucket_word(bucket)], 1u);
      keys_to[at] = key[j];
      positions_to[at] = position[j];
    }
  }
}

// The buckets that start in the block's stretch (the list's [edge[0], edge[1]), whole buckets, so
// that their order in the list is their keys') sorted by (key, position) in shared memory, those
// before k written. (A bitonic sort: ranking each key among its bucket's keys instead cost the
// square of a bucket's, and took list_order to 124-127 µs where the passes take 46, for f32
// normal keys at 2^24 with k = 65,536, whose buckets near the bound hold about 400.)
template <class U>
__device__ void list_bucket_sort(const TopKParams& p, ListBuckets<U>& b) {
  constexpr uint32_t per = kTopKListBuckets / kTopKThreads;
  __shared__ U keys[kTopKListBucketEntries];
  __shared__ uint32_t positions[kTopKListBucketEntries];
  const uint32_t t = threadIdx.x;
  const uint32_t count = list_count(p), k = p.state[kTopKStateK];
  const uint32_t s = list_stretch(count).s;
  const u64 first = u64(blockIdx.x) * s, past = first + s;
  if (t < 2) b.edge[t] = count;
  __syncthreads();
#pragma unroll
  for (uint32_t j = 0; j < per; ++j) {  // the first bucket at or past each end of the stretch
    const uint32_t at = b.starts[t * per + j];
    if (at >= first) atomicMin(&b.edge[0], at);
    if (at >= past) atomicMin(&b.edge[1], at);
  }
  __syncthreads();
  const uint32_t e0 = b.edge[0], e1 = b.edge[1];
  if (e0 >= min(e1, k)) return;  // uniform: nothing before k
  const U* keys_in = list_keys_in<U>(p, 1);
  const uint32_t* positions_in = list_positions_in(p, 1);
  for (uint32_t c = e0 + t; c < e1; c += kTopKThreads) {
    keys[c - e0] = keys_in[c];
    positions[c - e0] = positions_in[c];
  }
  topk_common::sort_padded<U, kTopKThreads>(keys, positions, e1 - e0);
  for (uint32_t c = e0 + t; c < min(e1, k); c += kTopKThreads)
    store_result<U>(p, c, positions[c - e0], load_result<U>(p, positions[c - e0]));
}

// Phase `phase` of list_order (after phase + 1 grid barriers), below list_phases. The digits'
// result: its passes. The bound's list: the key's passes, then list_ties, then only where a run
// of ties was long, the full sort (the positions' passes and the key's again, from list_ties's
// buffer). No pass at all: the list is in order, copied.
__device__ __forceinline__ uint32_t list_phases(const TopKParams& p, const ListPasses& passes) {
  if (passes.active_n == 0) return 1;
  return listed(p) ? 2 * passes.active_n - passes.keys_from + 1 : passes.active_n;
}
// Whether a phase may follow (false: the sort is done).
template <class U>
__device__ bool list_phase(const TopKParams& p, const ListPasses& passes, uint32_t phase) {
  constexpr uint32_t none = kTopKListPasses;
  const uint32_t n = passes.active_n;
  if (n == 0) {
    const auto [s, begin, end] = list_stretch(passes.count);
    const uint32_t k = p.state[kTopKStateK];
    for (uint32_t c = begin + threadIdx.x; c < min(end, k); c += kTopKThreads)
      store_result<U>(p, c, p.list_positions[c], load_result<U>(p, p.list_positions[c]));
    return false;
  }
  // The step of the phase: a pass of the key's alone (the bound's list), or of the full sort.
  ListStep step;
  if (listed(p)) {
    const uint32_t key_passes = n - passes.keys_from;
    if (phase == key_passes) {
      list_ties<U>(p, passes, key_passes % 2);
      return true;
    }
    if (phase < key_passes) {
      const uint32_t i = passes.keys_from + phase;
      step = {passes.active[i], phase == 0 ? 0u : 1u, phase % 2,
              i + 1 < n ? passes.active[i + 1] : (passes.keys_from != 0 ? passes.active[0] : none),
              false};
    } else {
      // (Read after the grid barrier that follows list_ties: uniform.)
      if (*static_cast<volatile uint32_t*>(p.bound_state + kTopKBoundListFallback) == 0)
        return false;
      const uint32_t i = phase - key_passes - 1;
      step = {passes.active[i], i == 0 ? (key_passes == 0 ? 0u : 1u) : 1u, (key_passes + i) % 2,
              i + 1 < n ? passes.active[i + 1] : none, i + 1 == n};
    }
  } else {
    step = {passes.active[phase], phase == 0 ? 0u : 1u, phase % 2,
            phase + 1 < n ? passes.active[phase + 1] : none, phase + 1 == n};
  }
  list_order_pass<U>(p, passes, step);
  return !step.last;
}

// The whole sort in one cooperative launch (its blocks resident, meeting at grid barriers).
template <class U>
__device__ void list_order(const TopKParams& p) {
  const auto grid = cooperative_groups::this_grid();
  __shared__ ListPasses passes;
  __shared__ ListBuckets<U> buckets;
  list_order_start<U>(p, buckets);
  grid.sync();
  if (list_bucket_plan<U>(p, buckets)) {  // uniform
    list_bucket_scatter<U>(p, buckets);
    grid.sync();
    list_bucket_sort<U>(p, buckets);
    return;
  }
  list_passes<U>(p, passes);
  for (uint32_t phase = 0; phase < list_phases(p, passes); ++phase) {  // uniform
    if (phase != 0) grid.sync();
    if (!list_phase<U>(p, passes, phase)) break;
  }
}

template <class U>
__device__ void histogram(const TopKParams& p) {
  __shared__ uint32_t bins[kTopKBins];
  __shared__ SelectShared select;
  __shared__ uint32_t tile_below, tile_listed, list_base;
  if (p.state[kTopKStateK] == 0 || listed(p)) return;  // uniform: nothing to select here
  const uint32_t n = p.state[kTopKStateN];
  const uint32_t t = threadIdx.x;
  const Selected s = select_digits(p, p.pass, select);
  const bool from_list = s.list_pass < p.pass;  // uniform
  const bool listing = s.list_pass == p.pass;
  const TopKDigit d = digit(p, p.pass);
  const uint32_t above = d.bit + d.bits;  // the bits from here up are the prefix's
  const uint32_t mask = (1u << d.bits) - 1u;
  for (uint32_t b = t; b < kTopKBins; b += kTopKThreads) bins[b] = 0;
  __syncthreads();
  if (from_list) {
    for (u64 c = u64(blockIdx.x) * kTopKThreads + t; c < s.listed;
         c += u64(gridDim.x) * kTopKThreads) {
      const u64 key = select_key<U>(p, p.candidates[c]);
      if (same_above(key, s.prefix, above)) atomicAdd(&bins[uint32_t(key >> d.bit) & mask], 1u);
    }
  } else {
    // Tiles grid-stride: a block adds many tiles' counts before its one flush. The listing pass
    // visits every tile up to the most (its per-tile counts are written for all of them).
    const uint32_t tiles = listing ? p.tiles : uint32_t((u64(n) + kTopKTile - 1) / kTopKTile);
    for (uint32_t index = blockIdx.x; index < tiles; index += gridDim.x) {  // uniform
      const u64 base = u64(index) * kTopKTile;
      if (listing) {
        if (t == 0) {
          tile_below = 0;
          tile_listed = 0;
        }
        __syncthreads();
      }
      u64 keys[kTopKItems];  // all the loads first: kTopKItems reads in flight
#pragma unroll
      for (uint32_t j = 0; j < kTopKItems; ++j) {
        const u64 i = base + j * kTopKThreads + t;
        keys[j] = i < n ? select_key<U>(p, i) : 0;
      }
      uint32_t positions[kTopKItems];
      uint32_t slots = 0, below = 0;
#pragma unroll
      for (uint32_t j = 0; j < kTopKItems; ++j) {
        const u64 i = base + j * kTopKThreads + t;
        if (i >= n) break;
        if (same_above(keys[j], s.prefix, above)) {
          atomicAdd(&bins[uint32_t(keys[j] >> d.bit) & mask], 1u);
          if (listing) positions[slots++] = uint32_t(i);
        } else if (listing && (keys[j] >> above) < (s.prefix >> above)) {
          ++below;
        }
      }
      if (listing) {
        uint32_t slot = 0;
        if (below != 0) atomicAdd(&tile_below, below);
        if (slots != 0) slot = atomicAdd(&tile_listed, slots);
        __syncthreads();
        if (t == 0) {
          p.tile_counts[index] = tile_below;
          if (tile_listed != 0) list_base = atomicAdd(&p.state[kTopKStateCursor], tile_listed);
        }
        __syncthreads();
        for (uint32_t j = 0; j < slots; ++j) p.candidates[list_base + slot + j] = positions[j];
        __syncthreads();  // tile_below, tile_listed and list_base read before the next tile's
      }
    }
  }
  __syncthreads();
  uint32_t* global = p.state + kTopKStateWords + p.pass * kTopKBins;
  for (uint32_t b = t; b <= mask; b += kTopKThreads) {
    const uint32_t c = bins[b];
    if (c != 0) atomicAdd(&global[b], c);
  }
}

template <class U>
__device__ void count(const TopKParams& p) {
  __shared__ SelectShared select;
  __shared__ uint32_t less_count, equal_count;
  if (listed(p)) return;  // uniform: the bound's tail gives the result
  const uint32_t n = p.state[kTopKStateN];
  const uint32_t t = threadIdx.x;
  const uint32_t total_passes = passes(p);
  const Selected s = select_digits(p, total_passes, select);
  const u64 kth = s.prefix;
  if (blockIdx.x == 0 && t == 0) {  // no block reads these words in this kernel
    p.state[kTopKStatePrefix] = uint32_t(kth);
    p.state[kTopKStatePrefix + 1] = uint32_t(kth >> 32);
    p.state[kTopKStateBefore] = s.before;
    p.state[kTopKStateNeedEqual] = s.remaining;
    // A long list's sort orders the keys before the k-th, which the write puts into the list.
    if (topk_long_list(p.list_capacity)) p.state[kTopKStateListed] = s.before;
  }
  if (s.list_pass < total_passes) {  // uniform
    // The listing pass counted each tile's keys below its prefix and listed its candidates: only
    // they are read, each added to its tile.
    for (u64 c = u64(blockIdx.x) * kTopKThreads + t; c < s.listed;
         c += u64(gridDim.x) * kTopKThreads) {
      const uint32_t i = p.candidates[c];
      const u64 key = select_key<U>(p, i);
      if (key <= kth) atomicAdd(&p.tile_counts[i / kTopKTile], key < kth ? 1ull : (1ull << 32));
    }
    return;
  }
  const bool none = p.state[kTopKStateK] == 0;  // uniform
  for (uint32_t index = blockIdx.x; index < p.tiles; index += gridDim.x) {
    const u64 base = u64(index) * kTopKTile;
    if (none || base >= n) {  // uniform
      if (t == 0) p.tile_counts[index] = 0;
      continue;
    }
    if (t == 0) {
      less_count = 0;
      equal_count = 0;
    }
    __syncthreads();
    u64 keys[kTopKItems];
#pragma unroll
    for (uint32_t j = 0; j < kTopKItems; ++j) {
      const u64 i = base + j * kTopKThreads + t;
      keys[j] = i < n ? select_key<U>(p, i) : 0;
    }
    uint32_t less = 0, equal = 0;
#pragma unroll
    for (uint32_t j = 0; j < kTopKItems; ++j) {
      if (base + j * kTopKThreads + t >= n) break;
      less += keys[j] < kth ? 1u : 0u;
      equal += keys[j] == kth ? 1u : 0u;
    }
    if (less != 0) atomicAdd(&less_count, less);
    if (equal != 0) atomicAdd(&equal_count, equal);
    __syncthreads();
    if (t == 0) p.tile_counts[index] = u64(less_count) | (u64(equal_count) << 32);
    __syncthreads();  // the counts read before the next tile clears them
  }
}

// The exclusive scan of the tiles' counts over the grid (both words at once: each total is below
// 2^32, so the low word never carries into the high one), in two steps with a grid barrier
// between: block b sums its run of tiles into block_sums[b]; then it adds up the runs before its
// own and scans its run a block's width at a time (coalesced).
using ScanU64 = cub::BlockScan<u64, kTopKThreads>;
__device__ __forceinline__ void tile_run(const TopKParams& p, uint32_t& begin, uint32_t& end) {
  const uint32_t per = (p.tiles + gridDim.x - 1) / gridDim.x;
  begin = min(p.tiles, blockIdx.x * per);
  end = min(p.tiles, begin + per);
}
__device__ void scan_sums(const TopKParams& p) {
  __shared__ ScanU64::TempStorage temp;
  uint32_t begin, end;
  tile_run(p, begin, end);
  u64 sum = 0;
  for (uint32_t i = begin + threadIdx.x; i < end; i += kTopKThreads) sum += p.tile_counts[i];
  u64 before, total;
  ScanU64(temp).ExclusiveSum(sum, before, total);
  if (threadIdx.x == 0) p.block_sums[blockIdx.x] = total;
}
__device__ void scan_runs(const TopKParams& p) {
  __shared__ ScanU64::TempStorage temp;
  uint32_t begin, end;
  tile_run(p, begin, end);
  u64 sum = 0;
  for (uint32_t b = threadIdx.x; b < blockIdx.x; b += kTopKThreads) sum += p.block_sums[b];
  u64 before, carry;
  ScanU64(temp).ExclusiveSum(sum, before, carry);
  for (uint32_t first = begin; first < end; first += kTopKThreads) {  // uniform
    __syncthreads();  // the scan's storage read before it is reused
    const uint32_t i = first + threadIdx.x;
    const u64 c = i < end ? p.tile_counts[i] : 0;
    u64 offset, total;
    ScanU64(temp).ExclusiveSum(c, offset, total);
    if (i < end) p.tile_offsets[i] = carry + offset;
    carry += total;
  }
}

// Each thread ranks kTopKItems consecutive keys, so one scan of the threads' counts ranks the
// tile in input order. A tile that gives nothing (most, for a small k) reads only its counts.
template <class U>
__device__ void write_tile(const TopKParams& p, uint32_t tile, BlockScan::TempStorage& temp) {
  const u64 counts = p.tile_counts[tile], offsets = p.tile_offsets[tile];
  const uint32_t less_n = uint32_t(counts), equal_n = uint32_t(counts >> 32);
  const uint32_t less_at0 = uint32_t(offsets), equal_at0 = uint32_t(offsets >> 32);
  const uint32_t need = p.state[kTopKStateNeedEqual];
  if (less_n == 0 && (equal_n == 0 || equal_at0 >= need)) return;  // uniform
  const uint32_t n = p.state[kTopKStateN];
  const uint32_t before = p.state[kTopKStateBefore];
  const u64 kth = kth_key(p);
  const u64 first = u64(tile) * kTopKTile + u64(threadIdx.x) * kTopKItems;
  U raw[kTopKItems];
#pragma unroll
  for (uint32_t j = 0; j < kTopKItems; ++j)
    raw[j] = first + j < n ? read_key<U>(p, first + j) : U(0);
  uint32_t flags = 0;  // bit j: key j is before the k-th; bit 16 + j: equal to it
#pragma unroll
  for (uint32_t j = 0; j < kTopKItems; ++j) {
    if (first + j >= n) break;
    const u64 key = ordered<U>(p, raw[j]);
    if (key < kth)
      flags |= 1u << j;
    else if (key == kth)
      flags |= 0x10000u << j;
  }
  // Both counts in one scanned word: below the k-th (low half), equal (high half); a tile's
  // counts are at most kTopKTile, below 2^16.
  const uint32_t mine = uint32_t(__popc(flags & 0xffffu)) | (uint32_t(__popc(flags >> 16)) << 16);
  uint32_t rank;
  BlockScan(temp).ExclusiveSum(mine, rank);
  uint32_t less_at = less_at0 + (rank & 0xffffu), equal_at = equal_at0 + (rank >> 16);
  U* keys_out = static_cast<U*>(p.keys_out);
#pragma unroll
  for (uint32_t j = 0; j < kTopKItems; ++j) {
    uint32_t out_at = 0xffffffffu;
    if ((flags & (1u << j)) != 0) {
      out_at = less_at++;
    } else if ((flags & (0x10000u << j)) != 0) {
      if (equal_at < need) out_at = before + equal_at;
      ++equal_at;
    }
    if (out_at != 0xffffffffu) {
      keys_out[out_at] = raw[j];
      p.positions[out_at] = uint32_t(first + j);
    }
  }
}

// A bounded grid strides over the tiles: where the bound's list gave the result, it does nothing.
template <class U>
__device__ void write(const TopKParams& p) {
  __shared__ BlockScan::TempStorage temp;
  if (listed(p)) return;  // uniform
  for (uint32_t tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
    write_tile<U>(p, tile, temp);
    __syncthreads();  // the scan's storage read before the next tile's scan
  }
}

// The digits over the array and the compaction in one cooperative launch (its blocks resident,
// meeting at grid barriers): a histogram per digit, the count, the scan (two steps), the write.
// Where the bound's list gave the result, nothing.
template <class U>
__device__ void digits(TopKParams p) {
  if (listed(p)) return;  // uniform over the grid
  const auto grid = cooperative_groups::this_grid();
  for (p.pass = 0; p.pass < passes(p); ++p.pass) {
    histogram<U>(p);
    grid.sync();
  }
  count<U>(p);
  grid.sync();
  scan_sums(p);
  grid.sync();
  scan_runs(p);
  grid.sync();
  write<U>(p);
}

// The bound after the entries, in one cooperative launch (its blocks resident, meeting at grid
// barriers): the entries' select's other histograms, the bound and the entries at or below it,
// the list.
template <class U>
__device__ void bound(TopKParams p) {
  const auto grid = cooperative_groups::this_grid();
  __shared__ SelectShared select;
  TopKParams entries = topk_entries_params(p);
  // The first digit's histogram came with the entries; each pass selects from its histogram, then
  // the next is made, until a small bucket. (Uniform: every block reads the same histograms.)
  Selected s = select_start(entries);
  while (s.remaining != 0) {
    select_pass(entries, select, s);
    if (s.bucket <= kTopKBoundBucket || s.passes == passes(p)) break;
    entries.pass = s.passes;
    histogram<U>(entries);
    grid.sync();
  }
  __shared__ U bound;  // every block's select gives it
  const U b = bound_entries<U>(p, s);
  if (threadIdx.x == 0) bound = b;
  // (Where no entry was listed, bound_list needs nothing of the other blocks.)
  if (p.qualifying_capacity != 0)  // uniform
    grid.sync();
  else
    __syncthreads();
  bound_list<U>(p, bound);
}

}  // namespace
}  // namespace gpusort::cuda::topk

extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKThreads)
    gpusort_topk_init(const gpusort::cuda::TopKParams p) {
  gpusort::cuda::topk::init(p);
}

#define GPUSORT_TOPK_KERNELS(suffix, U)                                             \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKThreads)         \
      gpusort_topk_digits_##suffix(const gpusort::cuda::TopKParams p) {             \
    gpusort::cuda::topk::digits<U>(p);                                              \
  }                                                                                 \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKThreads, 4)      \
      gpusort_topk_least_##suffix(const gpusort::cuda::TopKParams p) {              \
    gpusort::cuda::topk::least<U, false>(p);                                        \
  }                                                                                 \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKThreads, 4)      \
      gpusort_topk_least_lows_##suffix(const gpusort::cuda::TopKParams p) {         \
    gpusort::cuda::topk::least<U, true>(p);                                         \
  }                                                                                 \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKThreads, 3)      \
      gpusort_topk_bound_##suffix(const gpusort::cuda::TopKParams p) {              \
    gpusort::cuda::topk::bound<U>(p);                                               \
  }                                                                                 \
  /* (1: its registers uncapped, none spilled; a block an SM at most anyway) */     \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKThreads, 1)      \
      gpusort_topk_list_order_##suffix(const gpusort::cuda::TopKParams p) {         \
    gpusort::cuda::topk::list_order<U>(p);                                          \
  }                                                                                 \
  extern "C" __global__ void __launch_bounds__(gpusort::cuda::kTopKListSortThreads) \
      gpusort_topk_list_sort_##suffix(const gpusort::cuda::TopKParams p) {          \
    gpusort::cuda::topk::list_sort<U>(p);                                           \
  }

GPUSORT_TOPK_KERNELS(32, uint32_t)
GPUSORT_TOPK_KERNELS(64, unsigned long long)
#undef GPUSORT_TOPK_KERNELS
