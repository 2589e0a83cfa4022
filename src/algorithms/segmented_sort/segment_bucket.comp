#version 460
// Segmented sort, fast path, the medium classes' step 2 (one workgroup per medium segment, one
// dispatch per medium class, sized by segment_plan): a stable MSD scatter of the segment into
// 256 buckets by the 8 highest bits of its keys that differ (the buckets then hold ~1/256 of
// the segment each: small pieces that the tile classes sort on chip, after a second
// segment_classify over them). The keys (and values) go to scratch in the caller's encoding,
// each bucket at its place in the segment, and the buckets' bounds to the piece table:
// 257 entries per medium segment (bucket starts, then the segment's end), absolute positions,
// at a slot taken from an atomic counter. Steps, over the segment's keys (three reads: the
// segment is small enough to stay in the L2 cache):
//   1. which compared bits differ from the first key's (OR of the XORs): the digit is the 8 bits
//      below the highest one (all keys equal: one bucket); in the same read, the histogram of the
//      top 8 compared bits, taken again by the chosen digit where that differs;
//   2. the histogram's exclusive scan: the bucket starts;
//   3. rounds of WORKGROUP x KEYS_PER_THREAD keys, each subgroup a contiguous chunk of them in
//      input order: each key's place among the earlier keys of its digit in its subgroup's chunk
//      (ballots, rank.glsl), the subgroups' counts scanned per digit after the round, the keys
//      (then the values) put in digit order in shared memory, and each digit's run written to
//      its bucket after the earlier rounds' keys; a key alone in its bucket is sorted already:
//      its input position is noted, and after the last round it (and its value) is read again
//      and written to the outputs (in place, the outputs are the segment the rounds read);
//   4. the buckets (pieces) of two or more keys appended to the second level's class lists, as
//      segment_classify appends segments: the second level sorts them without a classify of its
//      own (its counters were zeroed beside the first level's).
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#include "constants.h"
#include "sort_key_spec.glsl"
// Sizes the per-subgroup counters.
layout(constant_id = SEGMENT_BUCKET_ID_MIN_SUBGROUP_SIZE) const uint MIN_SUBGROUP_SIZE = 32;
// Width of ballot masks.
layout(constant_id = SEGMENT_BUCKET_ID_MAX_SUBGROUP_SIZE) const uint MAX_SUBGROUP_SIZE = 32;
layout(constant_id = SEGMENT_BUCKET_ID_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;
// The class's largest segment.
layout(constant_id = SEGMENT_BUCKET_ID_LOG2_SEGMENT_SLOTS) const uint LOG2_SEGMENT_SLOTS = 14;
// 1: u32 offsets, 2: u64.
layout(constant_id = SEGMENT_BUCKET_ID_OFFSET_WORDS) const uint OFFSET_WORDS = 1;
// The second level's classes (segment_classes.glsl).
layout(constant_id = SEGMENT_BUCKET_ID_LOG2_FIRST_CLASS_SLOTS) const uint LOG2_FIRST_CLASS_SLOTS = 3;
layout(constant_id = SEGMENT_BUCKET_ID_CLASS_COUNT) const uint CLASS_COUNT = 1;
const uint DIGIT_BITS = 8;
const uint RADIX = 1u << DIGIT_BITS;
const uint PIECE_STRIDE = RADIX + 1;  // piece table entries per medium segment

#include "keys.glsl"
#include "sort_element.glsl"
#include "rank.glsl"
#include "segment_classes.glsl"
#include "segment_lists.glsl"

#define PUSH_SEGMENT_BUCKET
#include "push.h"

const uint WORKGROUP = gl_WorkGroupSize.x;
const uint MAX_SUBGROUPS = WORKGROUP / MIN_SUBGROUP_SIZE;
shared uint subgroup_counts[MAX_SUBGROUPS * RADIX];  // [subgroup][digit] of the current round
shared uint bucket_next[RADIX];  // where the digit's next round begins in the segment
shared uint round_starts[RADIX];  // the round's digit counts, then where their runs begin
shared uint global_shift[RADIX];  // a digit's place in the segment - its place in the round
shared uint bucket_sizes[RADIX];
shared uint lone_sources[RADIX];  // a bucket's key's place in the segment where it is alone
const uint ROUND_KEYS = WORKGROUP * KEYS_PER_THREAD;
shared uint exchange[ROUND_KEYS];
shared uint differing[2];
shared uint slot_shared;
shared uint scan_totals[MAX_SUBGROUPS];

uint64_t offset_at(uint s) {
  if (OFFSET_WORDS == 1) return uint64_t(U32Array(offsets_address).v[s]);
  return U64Array(offsets_address).v[s];
}

uint shift;  // the digit's lowest compared bit
uint begin, size;

uint64_t key_bits_at(uint i) { return compared_bits(to_radix_order(load_key(keys_address, begin + i))); }
uint digit_of(uint64_t bits) { return uint(bits >> shift) & (RADIX - 1u); }

// Adds this invocation's share of the segment's keys to round_starts by digit (the current
// shift), KEYS_PER_THREAD loads in flight before their counts (the keys come from memory here:
// one at a time, each waited for). Returns the OR of their compared bits XOR first_bits.
uvec2 count_digits(uint64_t first_bits) {
  const uint t = gl_LocalInvocationID.x;
  uvec2 diff = uvec2(0);
  for (uint batch = 0; batch < size; batch += ROUND_KEYS) {
    uint64_t batch_bits[KEYS_PER_THREAD];
    [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k)
      batch_bits[k] = key_bits_at(min(batch + k * WORKGROUP + t, size - 1));
    [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
      if (batch + k * WORKGROUP + t < size) {
        diff |= unpackUint2x32(batch_bits[k] ^ first_bits);
        atomicAdd(round_starts[digit_of(batch_bits[k])], 1u);
      }
    }
  }
  return diff;
}

// Exclusive scan of round_starts in place.
void scan_digits() {
  const uint t = gl_LocalInvocationID.x;
  const uint per = div_ceil(RADIX, WORKGROUP), first = t * per;
  uint sum = 0;
  for (uint k = 0; k < per; ++k)
    if (first + k < RADIX) sum += round_starts[first + k];
  uint prefix = subgroupExclusiveAdd(sum);
  if (gl_SubgroupInvocationID == gl_SubgroupSize - 1) scan_totals[gl_SubgroupID] = prefix + sum;
  barrier();
  for (uint s = 0; s < gl_SubgroupID; ++s) prefix += scan_totals[s];
  barrier();
  for (uint k = 0; k < per; ++k)
    if (first + k < RADIX) {
      const uint count = round_starts[first + k];
      round_starts[first + k] = prefix;
      prefix += count;
    }
  barrier();
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint listed = min(U32Array(listed_address).v[0], list_capacity);
  const uint entry = linear_workgroup_id();
  if (entry >= listed) return;  // whole workgroup
  const uint s = U32Array(list_address).v[entry];
  // Clamped as segment_classify clamps them.
  const uint64_t b = min(offset_at(s), uint64_t(max_n));
  begin = uint(b);
  size = uint(min(clamp(offset_at(s + 1), b, uint64_t(max_n)) - b, uint64_t(1u << LOG2_SEGMENT_SLOTS)));

  // 1. The differing bits.
  if (t < 2) differing[t] = 0;
  for (uint d = t; d < RADIX; d += WORKGROUP) round_starts[d] = 0;
  for (uint i = t; i < MAX_SUBGROUPS * RADIX; i += WORKGROUP) subgroup_counts[i] = 0;
  if (t == 0) slot_shared = atomicAdd(U32Array(piece_counter_address).v[0], 1u);
  barrier();
  // The histogram by the compared bits' top digit is taken in the same read, and again only
  // where the top bits of the compared width do not differ.
  const uint64_t first_bits = key_bits_at(0);
  const uint width = END_BIT - BEGIN_BIT;
  shift = max(width, DIGIT_BITS) - DIGIT_BITS;
  uvec2 diff = subgroupOr(count_digits(first_bits));
  if (subgroupElect()) {
    atomicOr(differing[0], diff.x);
    atomicOr(differing[1], diff.y);
  }
  barrier();
  const uint msb = differing[1] != 0 ? 32u + uint(findMSB(differing[1]))
                   : differing[0] != 0 ? uint(findMSB(differing[0])) : 0u;
  const uint chosen_shift = max(msb + 1u, DIGIT_BITS) - DIGIT_BITS;
  if (chosen_shift != shift) {  // uniform
    shift = chosen_shift;
    for (uint d = t; d < RADIX; d += WORKGROUP) round_starts[d] = 0;
    barrier();
    count_digits(first_bits);
  }
  barrier();
  scan_digits();
  for (uint d = t; d < RADIX; d += WORKGROUP) {
    bucket_next[d] = round_starts[d];
    bucket_sizes[d] = (d + 1 < RADIX ? round_starts[d + 1] : size) - round_starts[d];
  }
  barrier();  // bucket_sizes: every invocation reads them in the rounds
  const uint slot = slot_shared;
  if (slot >= piece_capacity) return;  // only overlapping (bad) offsets get here
  for (uint d = t; d <= RADIX; d += WORKGROUP)
    U32Array(pieces_address).v[slot * PIECE_STRIDE + d] = begin + (d < RADIX ? round_starts[d] : size);

  // 3. Rounds of the stable scatter.
  const uint subgroup = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  for (uint round_begin = 0; round_begin < size; round_begin += ROUND_KEYS) {
    const uint round_size = min(ROUND_KEYS, size - round_begin);
    const uint chunk = subgroup * gl_SubgroupSize * KEYS_PER_THREAD + lane;  // in the round
    uint digits[KEYS_PER_THREAD], places[KEYS_PER_THREAD];
    uvec2 keys[KEYS_PER_THREAD];
    [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
      const uint i = round_begin + min(chunk + k * gl_SubgroupSize, round_size - 1);
      keys[k] = load_key(keys_address, begin + i);
      digits[k] = digit_of(compared_bits(to_radix_order(keys[k])));
      if (chunk + k * gl_SubgroupSize < round_size && bucket_sizes[digits[k]] == 1)
        lone_sources[digits[k]] = i;
    }
    // In item order, so that equal digits keep their input order; a digit's leader (its lowest
    // lane) alone reads and advances the subgroup's counter.
    [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
      const bool valid = chunk + k * gl_SubgroupSize < round_size;
      const uvec4 peers = subgroup_digit_peers(digits[k], valid, false);
      const uint leader = valid ? lane_mask_lowest(peers) : 0u;
      uint earlier = 0;
      if (valid && leader == lane) {
        const uint c = subgroup * RADIX + digits[k];
        earlier = subgroup_counts[c];
        subgroup_counts[c] = earlier + lane_mask_count(peers);
      }
      places[k] = subgroupShuffle(earlier, leader) + lane_mask_count(peers & gl_SubgroupLtMask);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
    }
    barrier();
    // Per digit: each subgroup's start within the digit's run of the round, the run's length.
    for (uint d = t; d < RADIX; d += WORKGROUP) {
      uint running = 0;
      for (uint g = 0; g < gl_NumSubgroups; ++g) {
        const uint count = subgroup_counts[g * RADIX + d];
        subgroup_counts[g * RADIX + d] = running;
        running += count;
      }
      round_starts[d] = running;
    }
    barrier();
    scan_digits();  // where each digit's run begins in the round
    for (uint d = t; d < RADIX; d += WORKGROUP) {
      const uint count = (d + 1 < RADIX ? round_starts[d + 1] : round_size) - round_starts[d];
      global_shift[d] = bucket_next[d] - round_starts[d];
      bucket_next[d] += count;
    }
    // The round's keys in digit order through shared memory, so that each digit's run is
    // written by consecutive invocations (scattered single-key writes would cost whole sectors).
    [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
      if (chunk + k * gl_SubgroupSize < round_size)
        places[k] += round_starts[digits[k]] + subgroup_counts[subgroup * RADIX + digits[k]];
    }
    uint targets[KEYS_PER_THREAD];
    [[unroll]] for (uint w = 0; w < KEY_WORDS; ++w) {
      [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k)
        if (chunk + k * gl_SubgroupSize < round_size) exchange[places[k]] = keys[k][w];
      barrier();
      [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
        const uint j = t + k * WORKGROUP;
        if (j < round_size) {
          if (w == 0) keys[k].x = exchange[j];
          else keys[k].y = exchange[j];
        }
      }
      barrier();
    }
    [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
      const uint j = t + k * WORKGROUP;
      if (j < round_size) {
        targets[k] = begin + global_shift[digit_of(compared_bits(to_radix_order(keys[k])))] + j;
        store_key(bucket_keys_address, targets[k], keys[k]);
      }
    }
    [[unroll]] for (uint w = 0; w < VALUE_WORDS; ++w) {
      [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
        const uint i = chunk + k * gl_SubgroupSize;
        if (i < round_size)
          exchange[places[k]] = U32Array(values_address).v[(begin + round_begin + i) * VALUE_WORDS + w];
      }
      barrier();
      [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
        const uint j = t + k * WORKGROUP;
        if (j < round_size) U32Array(bucket_values_address).v[targets[k] * VALUE_WORDS + w] = exchange[j];
      }
      barrier();
    }
    for (uint i = t; i < gl_NumSubgroups * RADIX; i += WORKGROUP) subgroup_counts[i] = 0;
    barrier();
  }

  // The keys alone in their buckets, read again from the segment, all before any is written
  // (in place they overwrite it); the rounds' last barrier is behind. A workgroup has at least
  // RADIX / 4 invocations (clamp_workgroup: 64).
  uvec2 lone_keys[4], lone_values[4];
  [[unroll]] for (uint r = 0; r < 4; ++r) {
    const uint d = t + r * WORKGROUP;
    if (d < RADIX && bucket_sizes[d] == 1) {
      lone_keys[r] = load_key(keys_address, begin + lone_sources[d]);
      lone_values[r] = load_value(values_address, begin + lone_sources[d]);
    }
  }
  memoryBarrierBuffer();
  barrier();
  [[unroll]] for (uint r = 0; r < 4; ++r) {
    const uint d = t + r * WORKGROUP;
    if (d < RADIX && bucket_sizes[d] == 1) {
      store_key(keys_out_address, begin + bucket_next[d] - 1, lone_keys[r]);
      store_value(values_out_address, begin + bucket_next[d] - 1, lone_values[r]);
    }
  }

  // 4. The pieces to the second level's lists (whole subgroups iterate together: RADIX and
  // WORKGROUP are powers of two, and a subgroup is no larger than RADIX).
  for (uint d = t; d < RADIX; d += WORKGROUP) {
    const uint piece_size = bucket_sizes[d];
    const uint c = piece_size >= 2 ? class_of_size(piece_size) : NO_CLASS;
    const uint position = list_slot(piece_counters_address, c);
    if (c != NO_CLASS && position < class_list_capacity(c, max_n, piece_segments))
      U32Array(piece_lists_address).v[class_list_begin(c, max_n, piece_segments) + position] =
          slot * PIECE_STRIDE + d;
  }
}
