#version 460
// Top-k per segment: one workgroup takes one segment at a time (grid-stride over the segments),
// the radix select of the whole-array path in shared memory over the segment's keys (one read of
// them per digit, or one in all where they fit shared memory: CACHED_KEYS), then the stable compaction of its min(k, length) results to its place
// (out_offsets): the keys before the k-th in input order, then the first keys equal to it. The
// segmented sort then sorts each segment's results stably.
#include "common.glsl"
#include "topk_common.glsl"
layout(constant_id = TOPK_SEGMENT_ID_OFFSET_WORDS) const uint OFFSET_WORDS = 1;
// A segment of up to this many keys is read once, into shared memory, and selected from there.
layout(constant_id = TOPK_SEGMENT_ID_CACHED_KEYS) const uint CACHED_KEYS = 1;

#define PUSH_TOPK_SEGMENT
#include "push.h"

shared uint histogram[TOPK_BINS];
#define SCAN_T uint
shared SCAN_T scan_tree[gl_WorkGroupSize.x];
#include "scan.glsl"
shared uvec2 cached[CACHED_KEYS];  // the segment's keys as the select sees them
shared uint64_t selected_prefix;
shared uint selected_before, selected_remaining;

uint offset_at(uint s) {
  if (OFFSET_WORDS == 1) return U32Array(offsets_address).v[s];
  return uint(U64Array(offsets_address).v[s]);
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint per = TOPK_BINS / gl_WorkGroupSize.x;  // bins per invocation in the select
  const uint width = END_BIT - BEGIN_BIT;
  const uint passes = (width + TOPK_MAX_DIGIT_BITS - 1) / TOPK_MAX_DIGIT_BITS;
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
    uint before = 0, remaining = kept;
    uint top = END_BIT;
    for (uint p = 0; p < passes; ++p) {
      const uint bits = (top - BEGIN_BIT + (passes - p) - 1) / (passes - p);
      const uint bit = top - bits;
      top = bit;
      for (uint d = t; d < TOPK_BINS; d += gl_WorkGroupSize.x) histogram[d] = 0;
      barrier();
      const uint above = bit + bits;
      const uint mask = (1u << bits) - 1u;
      for (uint i = begin + t; i < end; i += gl_WorkGroupSize.x) {
        const uint64_t key =
            cache ? packUint2x32(cached[i - begin]) : select_key(keys_address, i);
        if (above >= 64 || (key >> above) == (prefix >> above))
          atomicAdd(histogram[uint(key >> bit) & mask], 1u);
      }
      barrier();
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
            break;
          }
          c += h;
        }
      }
      barrier();
      prefix = selected_prefix;
      before = selected_before;
      remaining = selected_remaining;
      barrier();  // the shared results are read before the next pass writes them
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
        const uint64_t key =
            cache ? packUint2x32(cached[i - begin]) : select_key(keys_address, i);
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
