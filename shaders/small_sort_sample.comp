#version 460
// Small-array sort in one workgroup by sampling (the single dispatch for up to TILE keys, in
// place). Elements are (compared key bits, input slot) pairs (sort_element.glsl): all distinct,
// so ordering them is a stable sort of the keys, and buckets cut between sampled elements hold
// about n / SAMPLES keys whatever the keys are (all equal, few distinct, skewed).
//   1. Every invocation loads its ITEMS keys (and values) into registers; the first SAMPLES
//      invocations also load one sample each: sample t is a slot drawn from the t-th of SAMPLES
//      equal strata of the input, at a hashed offset (so periodic inputs are sampled evenly).
//   2. The samples are ranked by counting (LANES = WORKGROUP / SAMPLES invocations a sample),
//      and put in order: the splitters.
//   3. Each element's bucket is the number of splitters at or below it (a binary search); its
//      place in the bucket comes from an atomic count, the buckets' starts from a scan.
//   4. The elements go to their buckets in shared memory; each then counts the elements of its
//      bucket that precede it, which gives its final position.
//   5. The positions are handed back to the invocations holding the keys, which write them.
// Every global read happens in 1 and every write in 5, after barriers: in place is safe.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KEY_WORDS = 1;
layout(constant_id = 2) const uint KEY_KIND = 0;
layout(constant_id = 3) const uint DESCENDING = 0;
layout(constant_id = 4) const uint VALUE_WORDS = 0;
layout(constant_id = 5) const uint BEGIN_BIT = 0;
layout(constant_id = 6) const uint END_BIT = 32;
layout(constant_id = 7) const uint TILE = 1024;  // WORKGROUP x ITEMS, at most 2^16
// Samples (2^this): a power of two, at most the workgroup size and 2^10.
layout(constant_id = 8) const uint LOG2_SAMPLES = 6;
// Keys per invocation (2^LOG2_ITEMS): a define, one shader per value, so that the register
// arrays unroll (small_sort_tile.comp says why).
#ifndef LOG2_ITEMS
#error "small_sort_sample.comp needs -DLOG2_ITEMS"
#endif
const uint ITEMS = 1u << LOG2_ITEMS;
const uint BUCKET_BITS = 0;  // sort_element.glsl's merge buckets: not used here

#include "keys.glsl"
#include "sort_element.glsl"

layout(push_constant) uniform Push {
  uint64_t keys_address;
  uint64_t values_address;
  uint64_t count_address;
  uint n;
};

const uint WORKGROUP = gl_WorkGroupSize.x;
const uint SAMPLES = 1u << LOG2_SAMPLES;
const uint LANES = WORKGROUP / SAMPLES;  // invocations that rank one sample

// The elements by bucket: their order words (for 32-bit keys the bucket sits in bits 16..31,
// between the key bits and the slot, which leaves the order within a bucket unchanged), and for
// 64-bit keys their slot | bucket << 16. Reused in step 5 for the final positions, by slot.
shared uint64_t member_order[TILE];
shared uint member_origin[ELEMENT_ORIGIN_SEPARATE ? TILE : 1];
// Samples by index t: 32-bit keys: bits << 32 | t << 16 | slot (the slot grows with t, so this
// orders them by (element, t)); 64-bit keys: the bits, with the slot and t beside.
shared uint64_t sample_word[SAMPLES];
shared uint sample_origin[SAMPLES];
shared uint sample_rank[SAMPLES];
// Splitter r: the element of rank r among the samples (r = 0 bounds nothing).
shared uint64_t splitter_order[SAMPLES];
shared uint splitter_origin[ELEMENT_ORIGIN_SEPARATE ? SAMPLES : 1];
shared uint bucket_count[SAMPLES];
shared uint bucket_start[SAMPLES + 1];

// Sample t's slot: the t-th stratum's start plus a hashed share of its width.
uint sample_slot(uint t, uint count) {
  const uint offset = (t * 0x9e3779b9u) >> 24;  // 0..255
  return uint((uint64_t((t << 8) + offset) * count) >> (8 + LOG2_SAMPLES));
}

bool sample_precedes(uint a, uint b) {
  if (!ELEMENT_ORIGIN_SEPARATE) return sample_word[a] < sample_word[b];
  return sample_word[a] < sample_word[b] || (sample_word[a] == sample_word[b] && a < b);
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint count = element_count(count_address, n);
  if (count <= 1) return;

  // 1. Loads: unconditional (clamped), the absent slots masked after.
  uvec2 keys[ITEMS], values[ITEMS];
  uint64_t orders[ITEMS];
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    const uint slot = k * WORKGROUP + lid;
    keys[k] = load_key(keys_address, min(slot, count - 1));
    if (VALUE_WORDS != 0) values[k] = load_value(values_address, min(slot, count - 1));
    orders[k] = element_order(compared_bits(to_radix_order(keys[k])), slot);
  }
  if (lid < SAMPLES) {
    const uint slot = sample_slot(lid, count);
    const uint64_t bits = compared_bits(to_radix_order(load_key(keys_address, slot)));
    sample_word[lid] = ELEMENT_ORIGIN_SEPARATE ? bits : (bits << 32) | uint64_t(lid << 16) | slot;
    sample_origin[lid] = slot;
    sample_rank[lid] = 0;
    bucket_count[lid] = 0;
  }
  memoryBarrierBuffer();
  barrier();

  // 2. Rank the samples, then lay them out in order.
  {
    const uint t = lid / LANES;
    uint before = 0;
    for (uint other = lid % LANES; other < SAMPLES; other += LANES)
      before += sample_precedes(other, t) ? 1u : 0u;
    atomicAdd(sample_rank[t], before);
  }
  barrier();
  if (lid < SAMPLES) {
    const uint rank = sample_rank[lid];
    const uint slot = sample_origin[lid];
    splitter_order[rank] = ELEMENT_ORIGIN_SEPARATE ? sample_word[lid] : (sample_word[lid] & ~0xffff0000ul);
    if (ELEMENT_ORIGIN_SEPARATE) splitter_origin[rank] = slot;
  }
  barrier();

  // 3. Buckets: the splitters 1 .. SAMPLES - 1 at or below the element (a binary search), and a
  // place in the bucket from its count.
  uint buckets[ITEMS], places[ITEMS];
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    const uint slot = k * WORKGROUP + lid;
    uint bucket = 0;
    for (uint step = SAMPLES / 2; step >= 1; step /= 2) {
      const uint probe = bucket + step;
      const uint probe_origin = ELEMENT_ORIGIN_SEPARATE ? splitter_origin[probe] : 0u;
      if (!element_precedes(orders[k], slot, splitter_order[probe], probe_origin)) bucket = probe;
    }
    buckets[k] = bucket;
    places[k] = slot < count ? atomicAdd(bucket_count[bucket], 1u) : 0u;
  }
  barrier();
  // The buckets' starts: an exclusive scan by the first subgroup.
  if (gl_SubgroupID == 0) {
    const uint per = div_ceil(SAMPLES, gl_SubgroupSize), first = gl_SubgroupInvocationID * per;
    uint sum = 0;
    for (uint b = first; b < min(first + per, SAMPLES); ++b) sum += bucket_count[b];
    uint start = subgroupExclusiveAdd(sum);
    for (uint b = first; b < min(first + per, SAMPLES); ++b) {
      bucket_start[b] = start;
      start += bucket_count[b];
    }
    if (gl_SubgroupInvocationID == 0) bucket_start[SAMPLES] = count;
  }
  barrier();

  // 4. Into the buckets, then each element's rank within its bucket.
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    const uint slot = k * WORKGROUP + lid;
    if (slot < count) {
      const uint member = bucket_start[buckets[k]] + places[k];
      if (ELEMENT_ORIGIN_SEPARATE) {
        member_order[member] = orders[k];
        member_origin[member] = slot | (buckets[k] << 16);
      } else {
        member_order[member] = orders[k] | (uint64_t(buckets[k]) << 16);
      }
    }
  }
  barrier();
  // By member: neighbouring invocations mostly share a bucket, so their loops run together.
  uint positions[ITEMS], origins[ITEMS];
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    const uint member = k * WORKGROUP + lid;
    positions[k] = 0;
    origins[k] = 0;
    if (member < count) {
      const uint64_t order = member_order[member];
      const uint tag = ELEMENT_ORIGIN_SEPARATE ? member_origin[member] : uint(order);
      const uint bucket = tag >> 16;
      const uint begin = bucket_start[bucket], end = bucket_start[bucket + 1];
      uint before = 0;
      for (uint other = begin; other < end; ++other) {
        if (ELEMENT_ORIGIN_SEPARATE)
          before += element_precedes(member_order[other], member_origin[other], order, tag) ? 1u : 0u;
        else
          before += member_order[other] < order ? 1u : 0u;
      }
      positions[k] = begin + before;
      origins[k] = tag & 0xffffu;
    }
  }
  barrier();

  // 5. Each position to the invocation holding the key, which writes key and value.
  [[unroll]] for (uint k = 0; k < ITEMS; ++k)
    if (k * WORKGROUP + lid < count) member_order[origins[k]] = uint64_t(positions[k]);
  barrier();
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    const uint slot = k * WORKGROUP + lid;
    if (slot < count) {
      const uint position = uint(member_order[slot]);
      store_key(keys_address, position, keys[k]);
      if (VALUE_WORDS != 0) store_value(values_address, position, values[k]);
    }
  }
}
