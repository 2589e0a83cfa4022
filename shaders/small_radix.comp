#version 460
// Small-array radix sort: one workgroup sorts up to one tile (workgroup x ITEMS keys) in place,
// in one dispatch, LSD with 8-bit digits over [BEGIN_BIT, END_BIT), everything in shared memory.
//   1. Load: keys (mapped to radix order) and values into registers, each subgroup a contiguous
//      chunk (item k of a lane: chunk + k x subgroup size, coalesced); slots past the count get
//      the largest key, so they sort last and stay last. The bits that vary among the keys
//      (workgroup AND / OR) say which digits are worth a pass: the others are skipped.
//   2. Per pass: rank each key among equal digits of its subgroup (ballots, a per-subgroup digit
//      counter in shared memory, item by item, so stably: include/rank.glsl, as Onesweep does),
//      scan the counters digit-major over the workgroup (which gives every (digit, subgroup) its
//      first place in the tile), scatter keys and their origins (input slots) to shared memory,
//      and reload them in the chunk layout for the next pass.
//   3. Write the keys back (mapped from radix order); values, held in registers since the load,
//      go through shared memory to the slot of their origin, so every value is written once.
// Host side: src/algorithms/small_radix.cpp.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KEY_WORDS = 1;
layout(constant_id = 2) const uint KEY_KIND = 0;
layout(constant_id = 3) const uint DESCENDING = 0;
layout(constant_id = 4) const uint VALUE_WORDS = 0;
layout(constant_id = 5) const uint BEGIN_BIT = 0;
layout(constant_id = 6) const uint END_BIT = 32;
layout(constant_id = 7) const uint MIN_SUBGROUP_SIZE = 32;  // sizes the per-subgroup counters
layout(constant_id = 8) const uint MAX_SUBGROUP_SIZE = 32;  // width of ballot masks
// Keys per invocation (2^LOG2_ITEMS): a compile-time define, one shader per value
// (CMakeLists.txt), so that the loops over registers unroll and every array index is a constant
// (see small_sort_tile.comp: with a specialization constant the arrays went to memory).
#ifndef LOG2_ITEMS
#error "small_radix.comp needs -DLOG2_ITEMS"
#endif
const uint ITEMS = 1u << LOG2_ITEMS;

const uint RADIX = 256;
const uint DIGIT_BITS = 8;

#include "keys.glsl"
#include "rank.glsl"

layout(push_constant) uniform Push {
  uint64_t keys_address;    // read and written in place
  uint64_t values_address;  // likewise (0 without values)
  uint64_t count_address;   // 0, or a u32 on the GPU: the count, at most n
  uint n;                   // the count (count_address == 0), else max_n; at most TILE
};

const uint TILE = gl_WorkGroupSize.x * ITEMS;
const uint MAX_SUBGROUPS = gl_WorkGroupSize.x / MIN_SUBGROUP_SIZE;
// Per digit and subgroup, digit-major (entry digit x subgroups + subgroup), two 16-bit counters
// per word (a tile has fewer than 2^16 keys): the subgroup's count of the digit while ranking,
// then, scanned, where its keys of that digit begin in the tile.
shared uint counters[MAX_SUBGROUPS * RADIX / 2];
// The tile between passes: the keys' low words, their high words (64-bit keys), then their
// origins (with values). Also holds what lives only between two of its uses: each subgroup's
// AND / OR of the keys at the start, the scan's subgroup totals, the values at the end.
const uint ORIGIN_WORDS = VALUE_WORDS != 0 ? 1 : 0;
shared uint exchange[TILE * (KEY_WORDS + ORIGIN_WORDS)];

// Entry (digit, subgroup) of the counters: its word, and its shift within the word.
uint counter_entry(uint digit, uint subgroup) { return digit * gl_NumSubgroups + subgroup; }
uint read_counter(uint entry) { return (counters[entry >> 1] >> ((entry & 1u) * 16u)) & 0xffffu; }
// Adds `value` to the entry, returns its previous value.
uint add_counter(uint entry, uint value) {
  uint shift = (entry & 1u) * 16u;
  return (atomicAdd(counters[entry >> 1], value << shift) >> shift) & 0xffffu;
}
uint counter_words() { return gl_NumSubgroups * RADIX / 2; }
void clear_counters() {
  for (uint w = gl_LocalInvocationID.x; w < counter_words(); w += gl_WorkGroupSize.x) counters[w] = 0;
}

// Exclusive scan of the counters in entry order (digit-major), in place, each invocation a run of
// consecutive words: afterwards entry (digit, subgroup) holds the number of keys of smaller digits
// plus those of the digit in earlier subgroups. Ends with a barrier.
void scan_counters() {
  const uint words = counter_words();
  const uint per_invocation = div_ceil(words, gl_WorkGroupSize.x);
  const uint first = gl_LocalInvocationID.x * per_invocation;
  const uint end = min(first + per_invocation, words);
  uint sum = 0;
  for (uint w = first; w < end; ++w) sum += (counters[w] & 0xffffu) + (counters[w] >> 16);
  uint prefix = subgroupExclusiveAdd(sum);
  // The subgroup totals go to the exchange, free from the last reload to the next scatter.
  if (gl_SubgroupInvocationID == gl_SubgroupSize - 1) exchange[gl_SubgroupID] = prefix + sum;
  barrier();
  // Plus the totals of the earlier subgroups, read a subgroup's width at a time and added across
  // the lanes (one round where there are at most as many subgroups as lanes: 1024 / 32).
  uint earlier = 0;
  for (uint base = 0; base < gl_SubgroupID; base += gl_SubgroupSize) {
    const uint s = base + gl_SubgroupInvocationID;
    earlier += s < gl_SubgroupID ? exchange[s] : 0u;
  }
  prefix += subgroupAdd(earlier);
  for (uint w = first; w < end; ++w) {
    uint word = counters[w], low = word & 0xffffu;
    counters[w] = prefix | ((prefix + low) << 16);
    prefix += low + (word >> 16);
  }
  barrier();
}

// Bits [bit, bit + bits) of a key in radix order (bits <= 8).
uint digit_of(uvec2 key, uint bit, uint bits) {
  uint mask = (1u << bits) - 1u;
  if (KEY_WORDS == 1 || bit + bits <= 32) return (key.x >> bit) & mask;
  if (bit >= 32) return (key.y >> (bit - 32)) & mask;
  return key_digit(key, bit, bits);
}

void main() {
  const uint count = min(element_count(count_address, n), TILE);
  if (count <= 1) return;
  const uint subgroup = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  // Item k of this invocation is tile slot chunk + k x gl_SubgroupSize, in every pass.
  const uint chunk = subgroup * gl_SubgroupSize * ITEMS + lane;

  // 1. Load. Loads are unconditional (clamped into the array), the absent slots chosen after: a
  // load under a branch waits for the previous one (small_sort_tile.comp).
  uvec2 keys[ITEMS], values[ITEMS];
  uint origins[ITEMS];
  uvec2 all_and = key_word_mask(), all_or = uvec2(0u);
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    const uint slot = chunk + k * gl_SubgroupSize, from = min(slot, count - 1);
    const uvec2 key = to_radix_order(load_key(keys_address, from));
    if (VALUE_WORDS != 0) values[k] = load_value(values_address, from);
    origins[k] = slot;
    const bool present = slot < count;
    keys[k] = present ? key : key_word_mask();
    if (present) {
      all_and &= key;
      all_or |= key;
    }
  }
  all_and = subgroupAnd(all_and);
  all_or = subgroupOr(all_or);
  if (lane == 0) {
    exchange[4 * subgroup] = all_and.x;
    exchange[4 * subgroup + 1] = all_and.y;
    exchange[4 * subgroup + 2] = all_or.x;
    exchange[4 * subgroup + 3] = all_or.y;
  }
  clear_counters();
  // Sorting in place: every load above precedes every store at the end.
  memoryBarrierBuffer();
  barrier();
  // The bits where the present keys differ (uniform over the workgroup): a pass whose digit has
  // none of them would keep every key where it is.
  uvec2 varying_bits = uvec2(0u);
  {
    uvec2 and_keys = key_word_mask(), or_keys = uvec2(0u);
    for (uint base = 0; base < gl_NumSubgroups; base += gl_SubgroupSize) {
      const uint s = base + lane;
      if (s < gl_NumSubgroups) {
        and_keys &= uvec2(exchange[4 * s], exchange[4 * s + 1]);
        or_keys |= uvec2(exchange[4 * s + 2], exchange[4 * s + 3]);
      }
    }
    varying_bits = subgroupAnd(and_keys) ^ subgroupOr(or_keys);
  }

  // 2. The passes; the counters are clear at the start of each.
  bool moved = false;
  const uint passes = div_ceil(END_BIT - BEGIN_BIT, DIGIT_BITS);
  for (uint pass = 0; pass < passes; ++pass) {
    const uint bit = BEGIN_BIT + pass * DIGIT_BITS, bits = min(DIGIT_BITS, END_BIT - bit);
    if (key_digit(varying_bits, bit, bits) == 0) continue;
    moved = true;
    // Each item in turn (item order keeps equal digits in slot order): the lanes holding its
    // digit, the lowest of them adds their count to the subgroup's counter, the counter's old
    // value is shuffled to them. Every slot takes part (absent ones hold the largest key).
    uint places[ITEMS];
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
      const uint digit = digit_of(keys[k], bit, bits);
      const uvec4 peers = subgroup_digit_peers(digit, true, true);
      const uint below = lane_mask_count(peers & gl_SubgroupLtMask);
      uint before = 0;
      if (below == 0) before = add_counter(counter_entry(digit, subgroup), lane_mask_count(peers));
      places[k] = subgroupShuffle(before, lane_mask_lowest(peers)) + below;
    }
    barrier();
    scan_counters();
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
      places[k] += read_counter(counter_entry(digit_of(keys[k], bit, bits), subgroup));
      exchange[places[k]] = keys[k].x;
      if (KEY_WORDS == 2) exchange[TILE + places[k]] = keys[k].y;
      if (VALUE_WORDS != 0) exchange[KEY_WORDS * TILE + places[k]] = origins[k];
    }
    barrier();
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
      const uint slot = chunk + k * gl_SubgroupSize;
      keys[k] = uvec2(exchange[slot], KEY_WORDS == 2 ? exchange[TILE + slot] : 0u);
      if (VALUE_WORDS != 0) origins[k] = exchange[KEY_WORDS * TILE + slot];
    }
    // Every counter has been read (before the barrier above).
    clear_counters();
    barrier();
  }
  if (!moved) return;  // every key's digits are equal: the input is sorted

  // 3. Write back: keys in the chunk layout (coalesced per subgroup); values through the exchange
  // (every reload precedes the last barrier), each to the slot of its key's origin.
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    const uint slot = chunk + k * gl_SubgroupSize;
    if (slot < count) store_key(keys_address, slot, from_radix_order(keys[k]));
  }
  if (VALUE_WORDS == 0) return;
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    const uint slot = chunk + k * gl_SubgroupSize;
    exchange[slot] = values[k].x;
    if (VALUE_WORDS == 2) exchange[TILE + slot] = values[k].y;
  }
  barrier();
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    const uint slot = chunk + k * gl_SubgroupSize, origin = origins[k];
    if (slot < count)
      store_value(values_address, slot, uvec2(exchange[origin], VALUE_WORDS == 2 ? exchange[TILE + origin] : 0u));
  }
}
