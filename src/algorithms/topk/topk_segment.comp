#version 460
// Top-k per segment: one workgroup takes one segment at a time (grid-stride over the segments),
// the radix select of the whole-array path with the histogram and the select in shared memory,
// then the compaction of its min(k, length) results. How the segment is read:
//  - cached: a segment of up to CACHED_KEYS keys is read once, into shared memory;
//  - listed: a longer one is read in full for the digits until the keys below the selected
//    prefix and its candidates fit CACHED_KEYS entries; the next read lists their positions (the
//    same shared memory) and the later digits and the compaction read only the listed keys;
//  - else once per digit and once by the compaction.
// The results, two ways:
//  - SORTED (k at most the workgroup width and what the histogram's memory holds): gathered in
//    any order into shared memory (the keys below the k-th, and the keys equal to it: all of them
//    when the result takes every one, else the first ones by position), then each ranked among
//    the others by (key, position) and written to its place in the segment's output: the first
//    k of the stable sort, with no sort after;
//  - else the stable compaction to the segment's place (out_offsets): the keys before the k-th in
//    input order, then the first keys equal to it; the segmented sort then sorts each segment's
//    results stably.
// BOUND (SORTED, k at most a quarter of the workgroup), before the select: each invocation's
// least key, and the k-th least of those bounds the k-th key from above (those k invocations hold
// k keys at most it). Where the keys at most the bound fit the histogram's memory (spread keys:
// about k plus a few), they are the results' candidates, ranked there and written: no digit, one
// read (cached) or two. Else (keys piled at the bound) the select runs as without it.
#include "common.glsl"
#include "topk_common.glsl"
layout(constant_id = TOPK_SEGMENT_ID_OFFSET_WORDS) const uint OFFSET_WORDS = 1;
layout(constant_id = TOPK_SEGMENT_ID_CACHED_KEYS) const uint CACHED_KEYS = 1;
layout(constant_id = TOPK_SEGMENT_ID_SORTED) const uint SORTED = 0;
// Keys each invocation loads before using them in the reads of the whole segment.
layout(constant_id = TOPK_SEGMENT_ID_READS) const uint READS = 4;
layout(constant_id = TOPK_SEGMENT_ID_BOUND) const uint BOUND = 0;

#define PUSH_TOPK_SEGMENT
#include "push.h"

// Keys per invocation in a chunk of the ordered listing read (16 at most: flags in 16-bit halves).
const uint LIST_ITEMS = 8;
shared uint histogram[TOPK_BINS];
// SORTED: after the last digit the histogram holds the results: positions, then the keys' low
// words, then (64-bit keys) their high words.
const uint RESULT_WORDS = KEY_WORDS + 1;
const uint RESULTS = TOPK_BINS / RESULT_WORDS;
// Cached: the segment's keys as the select sees them. Listed: x holds a listed position.
shared uvec2 cached[CACHED_KEYS];
shared uint64_t selected_prefix;
shared uint selected_before, selected_remaining, selected_bucket;
shared uint list_below_count, list_in_count, result_count;

#include "topk_scan.glsl"

uint offset_at(uint s) {
  if (OFFSET_WORDS == 1) return U32Array(offsets_address).v[s];
  return uint(U64Array(offsets_address).v[s]);
}

void clear_histogram() {
  for (uint d = gl_LocalInvocationID.x; d < TOPK_BINS; d += gl_WorkGroupSize.x) histogram[d] = 0;
  if (gl_LocalInvocationID.x == 0) {
    list_below_count = 0;
    list_in_count = 0;
  }
  barrier();
}

// After a pass's histogram (digit at `bit`): the digit whose bucket holds the remaining-th
// candidate joins the prefix, the candidates below it join `before`; bucket: its count.
void select_digit(uint bit, inout uint64_t prefix, inout uint before, inout uint remaining,
                  out uint bucket) {
  barrier();  // the histogram is complete
  const uint t = gl_LocalInvocationID.x;
  const uint per = TOPK_BINS / gl_WorkGroupSize.x;
  uint sum = 0;
  for (uint b = 0; b < per; ++b) sum += histogram[t * per + b];
  uint total;
  const uint below = workgroup_exclusive_scan(sum, total);
  if (below < remaining && remaining <= below + sum) {
    uint c = below;
    for (uint b = 0; b < per; ++b) {
      const uint h = histogram[t * per + b];
      if (c + h >= remaining) {
        selected_prefix = prefix | (uint64_t(t * per + b) << bit);
        selected_before = before + c;
        selected_remaining = remaining - c;
        selected_bucket = h;
        break;
      }
      c += h;
    }
  }
  barrier();
  prefix = selected_prefix;
  before = selected_before;
  remaining = selected_remaining;
  bucket = selected_bucket;
  barrier();  // read before the next select writes them
}

bool candidate(uint64_t key, uint64_t prefix, uint above) {
  return above >= 64 || (key >> above) == (prefix >> above);
}

void count_digit(uint64_t key, uvec2 digit) {
  atomicAdd(histogram[uint(key >> digit.x) & ((1u << digit.y) - 1u)], 1u);
}

// SORTED: result r of the segment (position i, key as the select sees it).
void put_result(uint r, uint i, uint64_t key) {
  histogram[r] = i;
  const uvec2 words = unpackUint2x32(key);
  histogram[RESULTS + r] = words.x;
  if (KEY_WORDS == 2) histogram[2 * RESULTS + r] = words.y;
}
uint64_t result_key(uint r) {
  return packUint2x32(uvec2(histogram[RESULTS + r], KEY_WORDS == 2 ? histogram[2 * RESULTS + r] : 0u));
}
void gather_result(uint i, uint64_t key, uint64_t kth, bool every_equal) {
  if (key < kth || (every_equal && key == kth)) put_result(atomicAdd(result_count, 1u), i, key);
}

// SORTED: the segment's candidates [0, count) in the histogram's memory, each ranked among them
// by (key, position) and written to its place if among the first `kept`.
void write_ranked(uint count, uint kept, uint out_at) {
  for (uint r = gl_LocalInvocationID.x; r < count; r += gl_WorkGroupSize.x) {
    const uint i = histogram[r];
    const uint64_t key = result_key(r);
    uint rank = 0;
    for (uint o = 0; o < count; ++o) {
      const uint64_t other = result_key(o);
      rank += other < key || (other == key && histogram[o] < i) ? 1u : 0u;
    }
    if (rank < kept) {
      store_key(keys_out_address, out_at + rank, load_key(keys_address, i));
      U32Array(positions_address).v[out_at + rank] = i;
    }
  }
}

// BOUND: the results from the keys at most the bound (`least`: this invocation's least key where
// the segment is cached, else read here), true; false where those keys overflow the histogram's
// memory (nothing written, the histogram's memory to be cleared).
bool bounded_select(uint begin, uint end, bool cache, uint kept, uint out_at, uint64_t least) {
  const uint t = gl_LocalInvocationID.x;
  if (!cache) {
    for (uint first = begin + t; first < end; first += READS * gl_WorkGroupSize.x) {
      uint64_t read[READS];  // the loads first: READS in flight
      for (uint u = 0; u < READS; ++u) {
        const uint i = first + u * gl_WorkGroupSize.x;
        read[u] = i < end ? select_key(keys_address, i) : ~0ul;
      }
      for (uint u = 0; u < READS; ++u) least = read[u] < least ? read[u] : least;
    }
  }
  // The invocations' least keys (an invocation without keys: all ones, at least every key) in
  // the histogram's memory, two words each; the kept-th least of them is the bound.
  const uvec2 words = unpackUint2x32(least);
  histogram[2 * t] = words.x;
  histogram[2 * t + 1] = words.y;
  barrier();
  uint rank = 0;
  for (uint o = 0; o < gl_WorkGroupSize.x; ++o) {
    const uint64_t other = packUint2x32(uvec2(histogram[2 * o], histogram[2 * o + 1]));
    rank += other < least || (other == least && o < t) ? 1u : 0u;
  }
  if (rank == kept - 1) selected_prefix = least;
  if (t == 0) result_count = 0;
  barrier();  // every least key read before the candidates take their memory
  const uint64_t bound = selected_prefix;
  for (uint first = begin + t; first < end; first += READS * gl_WorkGroupSize.x) {
    uint64_t read[READS];  // the loads first: READS in flight
    for (uint u = 0; u < READS; ++u) {
      const uint i = first + u * gl_WorkGroupSize.x;
      read[u] = i >= end ? 0ul
                : cache  ? packUint2x32(cached[i - begin])
                         : select_key(keys_address, i);
    }
    for (uint u = 0; u < READS; ++u) {
      const uint i = first + u * gl_WorkGroupSize.x;
      if (i < end && read[u] <= bound) {
        const uint r = atomicAdd(result_count, 1u);
        if (r < RESULTS) put_result(r, i, read[u]);
      }
    }
  }
  barrier();  // every candidate counted
  const uint count = result_count;  // uniform
  if (count > RESULTS) return false;
  write_ranked(count, kept, out_at);
  barrier();  // the candidates and the cached keys are read before the next segment's
  return true;
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint passes = topk_passes();
  for (uint s = linear_workgroup_id(); s < segments; s += group_count) {  // uniform
    const uint begin = offset_at(s), end = max(offset_at(s + 1), begin);
    const uint kept = min(k, end - begin);
    if (kept == 0) continue;
    const uint out_at = U32Array(out_offsets_address).v[s];
    const bool cache = end - begin <= CACHED_KEYS;  // uniform
    const bool bounded = SORTED != 0 && BOUND != 0 && 4 * kept <= gl_WorkGroupSize.x;  // uniform
    uint64_t least = ~0ul;  // bounded and cached: this invocation's least key
    if (cache) {
      for (uint first = begin + t; first < end; first += READS * gl_WorkGroupSize.x) {
        uint64_t read[READS];  // the loads first: READS in flight
        for (uint u = 0; u < READS; ++u) {
          const uint i = first + u * gl_WorkGroupSize.x;
          read[u] = i < end ? select_key(keys_address, i) : 0ul;
        }
        for (uint u = 0; u < READS; ++u) {
          const uint i = first + u * gl_WorkGroupSize.x;
          if (i < end) {
            cached[i - begin] = unpackUint2x32(read[u]);
            least = read[u] < least ? read[u] : least;
          }
        }
      }
      barrier();
    }
    if (bounded && bounded_select(begin, end, cache, kept, out_at, least)) continue;
    uint64_t prefix = 0;
    uint before = 0, remaining = kept, bucket = 0;
    // Listed: cached[0, listed_below) the keys below the listing's prefix, cached[listed_below,
    // listed) its candidates; in input order unless SORTED.
    bool list = false;
    uint listed_below = 0, listed = 0;
    for (uint p = 0; p < passes; ++p) {
      const uvec2 digit = topk_digit(p);
      const uint above = digit.x + digit.y;
      clear_histogram();
      if (list) {
        for (uint c = listed_below + t; c < listed; c += gl_WorkGroupSize.x) {
          const uint64_t key = select_key(keys_address, cached[c].x);
          if (candidate(key, prefix, above)) count_digit(key, digit);
        }
      } else if (!cache && p > 0 && before + bucket <= CACHED_KEYS) {  // uniform
        // The listing read: the positions of the keys below the prefix and of its candidates,
        // and this digit's histogram of the candidates.
        list = true;
        listed_below = before;
        listed = before + bucket;
        if (SORTED != 0) {  // any order: shared counters
          for (uint first = begin + t; first < end; first += READS * gl_WorkGroupSize.x) {
            uint64_t read[READS];  // the loads first: READS in flight
            for (uint u = 0; u < READS; ++u) {
              const uint i = first + u * gl_WorkGroupSize.x;
              read[u] = i < end ? select_key(keys_address, i) : 0ul;
            }
            for (uint u = 0; u < READS; ++u) {
              const uint i = first + u * gl_WorkGroupSize.x;
              if (i >= end) break;
              if (candidate(read[u], prefix, above)) {
                count_digit(read[u], digit);
                cached[listed_below + atomicAdd(list_in_count, 1u)].x = i;
              } else if ((read[u] >> above) < (prefix >> above)) {
                cached[atomicAdd(list_below_count, 1u)].x = i;
              }
            }
          }
        } else {
          // Each invocation takes LIST_ITEMS consecutive keys of a chunk (all loaded first), so
          // one scan of the invocations' counts ranks the chunk in input order.
          uint below_at = 0, in_at = 0;
          for (uint chunk = begin; chunk < end; chunk += gl_WorkGroupSize.x * LIST_ITEMS) {
            const uint first = chunk + t * LIST_ITEMS;
            uint64_t chunk_keys[LIST_ITEMS];
            for (uint j = 0; j < LIST_ITEMS; ++j)
              chunk_keys[j] = first + j < end ? select_key(keys_address, first + j) : 0ul;
            uint flags = 0;  // bit j: below the prefix; bit 16 + j: a candidate
            for (uint j = 0; j < LIST_ITEMS; ++j) {
              if (first + j >= end) break;
              const uint64_t key = chunk_keys[j];
              if (candidate(key, prefix, above)) {
                flags |= 0x10000u << j;
                count_digit(key, digit);
              } else if ((key >> above) < (prefix >> above)) {
                flags |= 1u << j;
              }
            }
            const uint mine = bitCount(flags & 0xffffu) | (bitCount(flags >> 16) << 16);
            uint total;
            const uint rank = workgroup_exclusive_scan(mine, total);
            uint below_to = below_at + (rank & 0xffffu), in_to = listed_below + in_at + (rank >> 16);
            for (uint j = 0; j < LIST_ITEMS && flags != 0; ++j) {
              if ((flags & (1u << j)) != 0) cached[below_to++].x = first + j;
              else if ((flags & (0x10000u << j)) != 0) cached[in_to++].x = first + j;
            }
            below_at += total & 0xffffu;
            in_at += total >> 16;
          }
        }
      } else {
        // Every key (cached or not).
        for (uint first = begin + t; first < end; first += READS * gl_WorkGroupSize.x) {
          uint64_t read[READS];  // the loads first: READS in flight
          for (uint u = 0; u < READS; ++u) {
            const uint i = first + u * gl_WorkGroupSize.x;
            read[u] = i >= end ? 0ul
                      : cache  ? packUint2x32(cached[i - begin])
                               : select_key(keys_address, i);
          }
          for (uint u = 0; u < READS; ++u)
            if (first + u * gl_WorkGroupSize.x < end && candidate(read[u], prefix, above))
              count_digit(read[u], digit);
        }
      }
      select_digit(digit.x, prefix, before, remaining, bucket);
    }
    // The prefix is the k-th key: `before` keys lie below it, `bucket` equal it, and the result
    // takes the first `need` of those.
    const uint64_t kth = prefix;
    const uint need = remaining;
    if (SORTED != 0) {
      const bool every_equal = need == bucket;  // uniform
      if (t == 0) result_count = 0;
      barrier();  // the histogram is free (select_digit read it)
      if (list) {
        for (uint c = t; c < listed; c += gl_WorkGroupSize.x) {
          const uint i = cached[c].x;
          gather_result(i, select_key(keys_address, i), kth, every_equal);
        }
      } else {
        for (uint first = begin + t; first < end; first += READS * gl_WorkGroupSize.x) {
          uint64_t read[READS];  // the loads first: READS in flight
          for (uint u = 0; u < READS; ++u) {
            const uint i = first + u * gl_WorkGroupSize.x;
            read[u] = i >= end ? 0ul
                      : cache  ? packUint2x32(cached[i - begin])
                               : select_key(keys_address, i);
          }
          for (uint u = 0; u < READS; ++u)
            if (first + u * gl_WorkGroupSize.x < end)
              gather_result(first + u * gl_WorkGroupSize.x, read[u], kth, every_equal);
        }
      }
      if (!every_equal) {
        // The first `need` keys equal to the k-th, by position, after the `before` below it.
        uint equal_at = 0;
        for (uint first = begin; first < end && equal_at < need; first += gl_WorkGroupSize.x) {
          const uint i = first + t;
          bool equal = false;
          if (i < end)
            equal = (cache ? packUint2x32(cached[i - begin]) : select_key(keys_address, i)) == kth;
          uint total;
          const uint rank = workgroup_exclusive_scan(equal ? 1u : 0u, total);
          if (equal && equal_at + rank < need) put_result(before + equal_at + rank, i, kth);
          equal_at += total;
        }
      }
      barrier();  // every result gathered
      write_ranked(kept, kept, out_at);  // each result's place: the results before it
      barrier();  // the results and the cached keys are read before the next segment's
      continue;
    }
    if (list) {
      // The compaction from the list: the keys below the listing's prefix first (all in the
      // result, in input order), then its candidates before the k-th and the first equal ones.
      for (uint c = t; c < listed_below; c += gl_WorkGroupSize.x) {
        const uint i = cached[c].x;
        store_key(keys_out_address, out_at + c, load_key(keys_address, i));
        U32Array(positions_address).v[out_at + c] = i;
      }
      uint less_at = listed_below, equal_at = 0;
      for (uint first = listed_below; first < listed; first += gl_WorkGroupSize.x) {
        const uint c = first + t;
        uint flags = 0, i = 0;
        if (c < listed) {
          i = cached[c].x;
          const uint64_t key = select_key(keys_address, i);
          flags = key < kth ? 1u : (key == kth ? 0x10000u : 0u);
        }
        uint total;
        const uint rank = workgroup_exclusive_scan(flags, total);
        uint to = 0xffffffffu;
        if (flags == 1u) to = less_at + (rank & 0xffffu);
        else if (flags != 0u && equal_at + (rank >> 16) < need) to = before + equal_at + (rank >> 16);
        if (to != 0xffffffffu) {
          store_key(keys_out_address, out_at + to, load_key(keys_address, i));
          U32Array(positions_address).v[out_at + to] = i;
        }
        less_at += total & 0xffffu;
        equal_at += total >> 16;
      }
      barrier();  // the list is read before the next segment's replaces it
      continue;
    }
    // The compaction, in input order, a workgroup's width at a time.
    uint less_at = 0, equal_at = 0;
    for (uint first = begin; first < end && (less_at < before || equal_at < need);
         first += gl_WorkGroupSize.x) {
      const uint i = first + t;
      uint flags = 0;
      if (i < end) {
        const uint64_t key = cache ? packUint2x32(cached[i - begin]) : select_key(keys_address, i);
        flags = key < kth ? 1u : (key == kth ? 0x10000u : 0u);
      }
      uint total;
      const uint rank = workgroup_exclusive_scan(flags, total);
      uint to = 0xffffffffu;
      if (flags == 1u) to = less_at + (rank & 0xffffu);
      else if (flags != 0u && equal_at + (rank >> 16) < need) to = before + equal_at + (rank >> 16);
      if (to != 0xffffffffu) {
        store_key(keys_out_address, out_at + to, load_key(keys_address, i));
        U32Array(positions_address).v[out_at + to] = i;
      }
      less_at += total & 0xffffu;
      equal_at += total >> 16;
    }
    barrier();  // the cached keys are read before the next segment's replace them
  }
}
