#version 460
// Top-k per segment: one workgroup takes one segment at a time (grid-stride over the segments),
// the radix select of the whole-array path with the histogram and the select in shared memory,
// then the stable compaction of its min(k, length) results to its place (out_offsets): the keys
// before the k-th in input order, then the first keys equal to it. The segmented sort then sorts
// each segment's results stably. How the segment is read:
//  - cached: a segment of up to CACHED_KEYS keys is read once, into shared memory;
//  - listed: a longer one whose keys below the first digit's bucket and in it fit CACHED_KEYS
//    entries is read twice: for the first digit, then for a list of their positions in input order
//    (the same shared memory), from which the later digits and the compaction read;
//  - else once per digit and once by the compaction.
#include "common.glsl"
#include "topk_common.glsl"
layout(constant_id = TOPK_SEGMENT_ID_OFFSET_WORDS) const uint OFFSET_WORDS = 1;
layout(constant_id = TOPK_SEGMENT_ID_CACHED_KEYS) const uint CACHED_KEYS = 1;

#define PUSH_TOPK_SEGMENT
#include "push.h"

// Keys per invocation in a chunk of the listing read (16 at most: flags in 16-bit halves).
const uint LIST_ITEMS = 8;
// Keys each invocation loads before using them in the per-digit reads.
const uint READS = 4;
shared uint histogram[TOPK_BINS];
#define SCAN_T uint
shared SCAN_T scan_tree[gl_WorkGroupSize.x];
#include "scan.glsl"
// Cached: the segment's keys as the select sees them. Listed: x holds a listed position.
shared uvec2 cached[CACHED_KEYS];
shared uint64_t selected_prefix;
shared uint selected_before, selected_remaining, selected_bucket;

uint offset_at(uint s) {
  if (OFFSET_WORDS == 1) return U32Array(offsets_address).v[s];
  return uint(U64Array(offsets_address).v[s]);
}

void clear_histogram() {
  for (uint d = gl_LocalInvocationID.x; d < TOPK_BINS; d += gl_WorkGroupSize.x) histogram[d] = 0;
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

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint passes = topk_passes();
  for (uint s = linear_workgroup_id(); s < segments; s += group_count) {  // uniform
    const uint begin = offset_at(s), end = max(offset_at(s + 1), begin);
    const uint kept = min(k, end - begin);
    if (kept == 0) continue;
    const uint out_at = U32Array(out_offsets_address).v[s];
    const bool cache = end - begin <= CACHED_KEYS;  // uniform
    if (cache) {
      for (uint i = begin + t; i < end; i += gl_WorkGroupSize.x)
        cached[i - begin] = unpackUint2x32(select_key(keys_address, i));
      barrier();
    }
    uint64_t prefix = 0;
    uint before = 0, remaining = kept, bucket = 0;
    // The first digit, from every key.
    uvec2 digit = topk_digit(0);
    clear_histogram();
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
          atomicAdd(histogram[uint(read[u] >> digit.x) & ((1u << digit.y) - 1u)], 1u);
    }
    select_digit(digit.x, prefix, before, remaining, bucket);
    const uint listed_below = before, listed = before + bucket;
    const bool list = !cache && passes >= 2 && listed <= CACHED_KEYS;  // uniform
    if (list) {
      // The second read: the positions of the keys below the first digit's bucket and in it, in
      // input order (cached[0, before) and cached[before, listed)), and the second digit's
      // histogram of the bucket.
      digit = topk_digit(1);
      const uint above = digit.x + digit.y;
      clear_histogram();
      // Each invocation takes LIST_ITEMS consecutive keys of a chunk (all loaded first), so one
      // scan of the invocations' counts ranks the chunk in input order.
      uint below_at = 0, in_at = 0;
      for (uint chunk = begin; chunk < end; chunk += gl_WorkGroupSize.x * LIST_ITEMS) {
        const uint first = chunk + t * LIST_ITEMS;
        uint64_t chunk_keys[LIST_ITEMS];
        for (uint j = 0; j < LIST_ITEMS; ++j)
          chunk_keys[j] = first + j < end ? select_key(keys_address, first + j) : 0ul;
        uint flags = 0;  // bit j: below the first digit's bucket; bit 16 + j: in it
        for (uint j = 0; j < LIST_ITEMS; ++j) {
          if (first + j >= end) break;
          const uint64_t key = chunk_keys[j];
          if (candidate(key, prefix, above)) {
            flags |= 0x10000u << j;
            atomicAdd(histogram[uint(key >> digit.x) & ((1u << digit.y) - 1u)], 1u);
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
      select_digit(digit.x, prefix, before, remaining, bucket);
      // The later digits from the listed bucket.
      for (uint p = 2; p < passes; ++p) {
        digit = topk_digit(p);
        const uint above_p = digit.x + digit.y;
        clear_histogram();
        for (uint c = listed_below + t; c < listed; c += gl_WorkGroupSize.x) {
          const uint64_t key = select_key(keys_address, cached[c].x);
          if (candidate(key, prefix, above_p))
            atomicAdd(histogram[uint(key >> digit.x) & ((1u << digit.y) - 1u)], 1u);
        }
        select_digit(digit.x, prefix, before, remaining, bucket);
      }
      // The compaction from the list: the keys below the first bucket first (all in the result,
      // in input order), then the bucket's keys before the k-th and the first equal ones.
      const uint64_t kth = prefix;
      const uint need = remaining;
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
    // The later digits from every key (cached or not).
    for (uint p = 1; p < passes; ++p) {
      digit = topk_digit(p);
      const uint above = digit.x + digit.y;
      clear_histogram();
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
            atomicAdd(histogram[uint(read[u] >> digit.x) & ((1u << digit.y) - 1u)], 1u);
      }
      select_digit(digit.x, prefix, before, remaining, bucket);
    }
    // The compaction, in input order, a workgroup's width at a time.
    const uint64_t kth = prefix;
    const uint need = remaining;
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
