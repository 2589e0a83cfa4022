#version 460
// Onesweep, one pass per digit. Each workgroup:
//   1. takes the next tile index from the pass's atomic counter (so it only ever waits on
//      tiles that some running workgroup already owns), or its own id where the device table says
//      that workgroups start in id order (CLAIM_BY_ID), and loads its tile, each subgroup a
//      contiguous chunk, KEYS_PER_THREAD keys per invocation, coalesced;
//   2. ranks the keys by digit: subgroup ballots find equal digits, a per-subgroup digit counter
//      in shared memory gives each key its place among earlier keys of the same digit;
//   3. publishes the tile's digit counts to the look-back table and places the keys in tile order
//      (stable by digit) in shared memory;
//   4. looks back over predecessors for each digit's exclusive prefix (src/primitives/glsl/lookback.glsl) and
//      publishes the inclusive one;
//   5. writes keys (then values) from shared memory to digit offset + prefix + place: runs of one
//      digit are contiguous, so the writes coalesce.
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#ifdef CLOCK_PROFILE
// Profiling only (dev/onesweep/onesweep_clock.cpp): invocation 0 of each workgroup writes its
// SM and the SM clock at the tile's phase boundaries to the buffer at values_b (keys alone).
#extension GL_ARB_shader_clock : require
#extension GL_NV_shader_sm_builtins : require
#endif
#include "constants.h"
#define WIDE_INDICES_ID ONESWEEP_PASS_ID_WIDE_INDICES  // 1 where n > 2^31 (common.glsl)
#include "common.glsl"
#include "onesweep_common.glsl"

// Sizes the per-subgroup counters.
layout(constant_id = ONESWEEP_PASS_ID_MIN_SUBGROUP_SIZE) const uint MIN_SUBGROUP_SIZE = 32;
// Width of ballot masks.
layout(constant_id = ONESWEEP_PASS_ID_MAX_SUBGROUP_SIZE) const uint MAX_SUBGROUP_SIZE = 32;
layout(constant_id = ONESWEEP_PASS_ID_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 15;
// Look-back rounds before the fallback.
layout(constant_id = ONESWEEP_PASS_ID_SPIN_LIMIT) const uint SPIN_LIMIT = 64;
// Testing the fallback: tiles p with p % PUBLISH_REFUSAL_PERIOD == PERIOD - 1 never publish
// (0: every tile publishes).
layout(constant_id = ONESWEEP_PASS_ID_PUBLISH_REFUSAL_PERIOD) const uint PUBLISH_REFUSAL_PERIOD = 0;
// Predecessors read at once per look-back round.
layout(constant_id = ONESWEEP_PASS_ID_LOOKBACK_WINDOW) const uint LOOKBACK_WINDOW = 16;
// 1: full tiles run their own copy of the tile code, without bounds checks. On the H100 that
// made 64-bit keys 9 % and pairs 3 % faster, and 32-bit keys alone 3 % slower
// (docs/design/onesweep.md).
layout(constant_id = ONESWEEP_PASS_ID_FULL_TILE_COPY) const uint FULL_TILE_COPY = 1;
// 1: each workgroup requests the keys of the tile its own id names before its claim returns
// (workgroups start, and so claim, mostly in id order); a wrong guess loads again.
layout(constant_id = ONESWEEP_PASS_ID_GUESS_TILE) const uint GUESS_TILE = 1;
// Profiling only (wrong results): leave out a step to see what it costs.
layout(constant_id = ONESWEEP_PASS_ID_PROFILE_OMIT) const uint PROFILE_OMIT = 0;
const uint PROFILE_OMIT_LOOKBACK = 1, PROFILE_OMIT_STORES = 2, PROFILE_OMIT_RANKING = 4,
           PROFILE_OMIT_RANK_ATOMICS = 8, PROFILE_OMIT_RANK_BALLOTS = 16, PROFILE_OMIT_MAPPING = 32;

#define PUSH_ONESWEEP_PASS
#include "push.h"

const uint TILE = gl_WorkGroupSize.x * KEYS_PER_THREAD;
const uint MAX_SUBGROUPS = gl_WorkGroupSize.x / MIN_SUBGROUP_SIZE;
const uint DIGITS_PER_INVOCATION = (RADIX + gl_WorkGroupSize.x - 1) / gl_WorkGroupSize.x;

// Per subgroup and digit: its keys' count, then the subgroup's start within the digit's run.
// Two 16-bit counters per word (a tile has fewer than 2^16 keys).
const uint COUNTER_WORDS = RADIX / 2;
const uint COUNTERS = MAX_SUBGROUPS * COUNTER_WORDS;
// 1: the counters live at the start of the exchange array (one 32-bit word per key/value): they
// are read for the last time before the first key goes in, and the room saved goes to bigger
// tiles, at the cost of one barrier. On the H100 that made 32-bit keys alone 5 % faster (tiles of
// 512 x 20) and pairs 3 % slower at the same tile (docs/design/onesweep.md).
layout(constant_id = ONESWEEP_PASS_ID_COUNTERS_IN_EXCHANGE) const uint COUNTERS_IN_EXCHANGE = 0;
// 1: the partition pass of src/algorithms/partition_sort/partition_sort.cpp: the digit is the one
// partition_plan.comp chose on the GPU (control words CONTROL_PARTITION_*; no choice: every
// workgroup returns), read from the caller's keys and written to the scratch copy, both in the
// caller's encoding (a stable scatter into buckets by that digit).
layout(constant_id = ONESWEEP_PASS_ID_PARTITION_PASS) const uint PARTITION_PASS = 0;
// 1: workgroup i sorts tile i (no claim on the pass's atomic counter, whose round trip every
// tile waited for). Then a workgroup may wait on a tile whose workgroup has not started; the
// look-back's fallback recounts such a tile after SPIN_LIMIT rounds, so the sort stays correct
// without that assumption, and fast where workgroups start in id order (the device table).
layout(constant_id = ONESWEEP_PASS_ID_CLAIM_BY_ID) const uint CLAIM_BY_ID = 0;
// 1 (not in the partition pass): the plan dispatches fewer workgroups than tiles (about one per
// SM, the device table's persistent groups) and each sorts tile after tile, skipping a launch and
// a claim's wait per tile. Workgroup i sorts tile i first; then, with CLAIM_BY_ID, tiles
// i + the grid, i + 2 x the grid, ... (a fixed share: one late workgroup holds back every round;
// profiling only), else each takes the grid + the count it claims from the pass's counter while
// it ranks the current tile, so the claim's round trip hides behind the ranking and a workgroup
// that runs late just sorts fewer tiles (docs/design/onesweep.md).
layout(constant_id = ONESWEEP_PASS_ID_PERSISTENT) const uint PERSISTENT = 0;
// 1 (with PERSISTENT, 32-bit keys): the next tile's keys are requested right after the
// look-back, so that their latency hides behind this tile's stores.
layout(constant_id = ONESWEEP_PASS_ID_PREFETCH_NEXT) const uint PREFETCH_NEXT = 0;
const uint EXCHANGE_WORDS = COUNTERS_IN_EXCHANGE != 0 && COUNTERS > TILE ? COUNTERS : TILE;
shared uint exchange[EXCHANGE_WORDS];
shared uint separate_counters[COUNTERS_IN_EXCHANGE != 0 ? 1 : COUNTERS];
uint counter_get(uint i) { return COUNTERS_IN_EXCHANGE != 0 ? exchange[i] : separate_counters[i]; }
void counter_set(uint i, uint value) {
  if (COUNTERS_IN_EXCHANGE != 0) exchange[i] = value;
  else separate_counters[i] = value;
}
uint counter_add(uint i, uint value) {
  return COUNTERS_IN_EXCHANGE != 0 ? atomicAdd(exchange[i], value) : atomicAdd(separate_counters[i], value);
}
uint counter_word(uint subgroup, uint digit) { return subgroup * COUNTER_WORDS + (digit >> 1); }
uint counter_shift(uint digit) { return (digit & 1u) * 16u; }
uint read_counter(uint subgroup, uint digit) {
  return (counter_get(counter_word(subgroup, digit)) >> counter_shift(digit)) & 0xffffu;
}
shared uint tile_digit_total[RADIX];                       // the tile's count of each digit
shared uint tile_digit_starts[RADIX];                      // where each digit begins in the tile
shared uint digit_global_shift[RADIX];                     // global index - tile position
shared uint fallback_digit_counts[RADIX];
shared uint scan_subgroup_totals[MAX_SUBGROUPS];
shared uint partition_shared;
shared uint next_tile_shared;  // a persistent workgroup's claimed next tile

#ifdef CLOCK_PROFILE
// Record per tile and pass: SM, then the clock at main's start, after the claim, after the keys
// arrived, after ranking, after the counts' publish and scan, after the look-back, at the end.
// Then: the clock when digit 0's walk ended, digit 0's window reads, whether the guessed tile
// was the one claimed, the clock when the look-back began.
const uint CLOCK_FIELDS = 12;
uint clock_record = 0, clock_reads = 0;
void clock_mark(uint field) {
  if (gl_LocalInvocationID.x != 0) return;
  U32Array(values_b).v[clock_record + field] = field == 0 ? gl_SMIDNV : clock2x32ARB().x;
}
void clock_put(uint field, uint value) {
  if (gl_LocalInvocationID.x == 0) U32Array(values_b).v[clock_record + field] = value;
}
// The fields of main's start, kept until the tile (and so the record's place) is known.
uint clock_start;
#define CLOCK_MARK(field) clock_mark(field)
#else
#define CLOCK_MARK(field)
#endif

// This pass's digit: the recorded one, or the partition pass's choice.
uint pass, bit, digit_bits;
uint64_t digit_offsets_address;
// This sort's tiles and the keys of its last one (n up to 2^32 keys, so every index fits a uint):
// kept in 32 bits, because a 64-bit count live through the pass cost the H100 1-2 % and 14
// registers for 64-bit keys (docs/design/onesweep.md).
uint tile_total, last_tile_size;
uint tile_size_of(uint tile) { return tile + 1 == tile_total ? last_tile_size : TILE; }
uint64_t keys_in;
bool input_raw;
// Where this pass reads its keys (keys_in, input_raw), from plan bits PLAN_INPUT_BITS.
const uint PLAN_INPUT_BITS = PLAN_ACTIVE | PLAN_FIRST | PLAN_INPUT_ALT;
uint plan_guess;
void set_input(uint plan) {
  keys_in = (plan & PLAN_INPUT_ALT) != 0 ? keys_b : keys_a;
  input_raw = (plan & PLAN_FIRST) != 0 && (PROFILE_OMIT & PROFILE_OMIT_MAPPING) == 0;
}
// The current tile (set by main).
uint tile_index, tile_begin, tile_size;

// Whether tile position i holds a key: always in a full tile (known at compile time in the
// full-tile copy of the code, which then carries no bounds checks).
bool in_tile(bool full, uint i) { return full || i < tile_size; }

uint key_digit_of(uvec2 ordered) {
  // 32-bit shifts where the digit lies within one word (always for 32-bit keys).
  uint mask = (1u << digit_bits) - 1u;
  if (KEY_WORDS == 1 || bit + digit_bits <= 32) return (ordered.x >> bit) & mask;
  if (bit >= 32) return (ordered.y >> (bit - 32)) & mask;
  return key_digit(ordered, bit, digit_bits);
}

uvec2 load_ordered_key(uint i) {
  uvec2 key = load_key(keys_in, i);
  return input_raw ? to_radix_order(key) : key;
}

// The fallback's recount of one tile's digits (see lookback.glsl).
void count_partition_digits(uint tile_index) {
  uint t = gl_LocalInvocationID.x;
  for (uint d = t; d < RADIX; d += gl_WorkGroupSize.x) fallback_digit_counts[d] = 0;
  barrier();
  uint begin = tile_index * TILE, size = tile_size_of(tile_index);
  for (uint i = t; i < size; i += gl_WorkGroupSize.x)
    atomicAdd(fallback_digit_counts[key_digit_of(load_ordered_key(begin + i))], 1u);
  barrier();
}

#include "lookback.glsl"

// A tile's keys, each subgroup a contiguous chunk (`chunk`: its first index + the lane),
// KEYS_PER_THREAD keys per invocation, coalesced; mapped to radix order on the pass that
// reads the caller's keys.
void load_tile_keys(bool full, bool map_to_radix_order, uint chunk, out uvec2 keys[KEYS_PER_THREAD]) {
  [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
    uint i = chunk + k * gl_SubgroupSize;
    uvec2 key = in_tile(full, i) ? load_key(keys_in, tile_begin + i) : uvec2(0u);
    keys[k] = map_to_radix_order ? to_radix_order(key) : key;
  }
}

// Stores the tile's keys from `exchange` (tile order; the high words there for 64-bit keys, the
// low words in low_words) to their global places, which it returns in targets; mapped back
// from radix order on the pass that writes the final keys.
void store_tile_keys(bool full, bool map_from_radix_order, uint64_t keys_out,
                     uint low_words[KEYS_PER_THREAD], out uint targets[KEYS_PER_THREAD]) {
  uint t = gl_LocalInvocationID.x;
  [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
    uint j = t + k * gl_WorkGroupSize.x;
    if (in_tile(full, j)) {
      uvec2 key = KEY_WORDS == 2 ? uvec2(low_words[k], exchange[j]) : uvec2(exchange[j], 0u);
      targets[k] = digit_global_shift[key_digit_of(key)] + j;
      if ((PROFILE_OMIT & PROFILE_OMIT_STORES) == 0)
        store_key(keys_out, targets[k], map_from_radix_order ? from_radix_order(key) : key);
    }
  }
}
// The current tile's keys for this pass: mapping or not is decided once per pass (uniformly),
// outside the per-key code; a per-key select slowed every pass of mapped key types by 40-70 % on
// the H100 (docs/design/onesweep.md).
void load_current_tile_keys(bool full, out uvec2 keys[KEYS_PER_THREAD]) {
  uint chunk = gl_SubgroupID * gl_SubgroupSize * KEYS_PER_THREAD + gl_SubgroupInvocationID;
  if (input_raw) load_tile_keys(full, true, chunk, keys);
  else load_tile_keys(full, false, chunk, keys);
}
#include "rank.glsl"

// Exclusive scan over the RADIX digits of `tile_digit_total` (indexed by digit), DIGITS_PER_INVOCATION
// consecutive digits per invocation, into tile_digit_starts.
void scan_tile_digits() {
  uint t = gl_LocalInvocationID.x;
  uint first = t * DIGITS_PER_INVOCATION;
  uint sum = 0;
  for (uint k = 0; k < DIGITS_PER_INVOCATION; ++k)
    if (first + k < RADIX) sum += tile_digit_total[first + k];
  uint prefix = subgroupExclusiveAdd(sum);
  if (gl_SubgroupInvocationID == gl_SubgroupSize - 1) scan_subgroup_totals[gl_SubgroupID] = prefix + sum;
  barrier();
  for (uint s = 0; s < gl_SubgroupID; ++s) prefix += scan_subgroup_totals[s];
  for (uint k = 0; k < DIGITS_PER_INVOCATION; ++k)
    if (first + k < RADIX) {
      tile_digit_starts[first + k] = prefix;
      prefix += tile_digit_total[first + k];
    }
  barrier();
}

// A persistent workgroup's next tile's keys (see PREFETCH_NEXT), requested while the current
// tile is still being sorted.
void prefetch_tile_keys(uint next, out uvec2 keys[KEYS_PER_THREAD]) {
  uint begin = tile_begin, size = tile_size;
  tile_begin = next * TILE;
  tile_size = tile_size_of(next);
  load_current_tile_keys(false, keys);
  tile_begin = begin;
  tile_size = size;
}

bool persistent() { return PERSISTENT != 0 && PARTITION_PASS == 0; }
bool claims_next() { return persistent() && CLAIM_BY_ID == 0; }
bool prefetches_next() { return persistent() && PREFETCH_NEXT != 0 && KEY_WORDS == 1; }

// Before a tile: zero the per-subgroup counters and the look-back's round word (a barrier must
// follow, and precede the first tile's ranking).
void clear_tile_state() {
  for (uint i = gl_LocalInvocationID.x; i < COUNTERS; i += gl_WorkGroupSize.x) counter_set(i, 0);
  look_back_prepare();
}

// Ranks, looks back and stores the current tile (steps 1-5 above). A persistent workgroup also
// finds its next tile (`next`; tile_total or more: none), and where it prefetches, requests that
// tile's keys into `keys`.
void sort_tile(bool full, bool output_raw, uint64_t keys_out, uint64_t values_in, uint64_t values_out,
               uint digit_offset[DIGITS_PER_INVOCATION], bool keys_loaded, inout uvec2 keys[KEYS_PER_THREAD],
               out uint next) {
  uint t = gl_LocalInvocationID.x;
  // The next claim, in flight while this tile ranks (one invocation; shared after the ranking).
  uint claimed = 0;
  if (claims_next() && t == 0)
    claimed = atomicAdd(U32Array(control_address).v[CONTROL_PARTITION_COUNTER + pass], 1u);
  bool publishes = PUBLISH_REFUSAL_PERIOD == 0 || tile_index % PUBLISH_REFUSAL_PERIOD != PUBLISH_REFUSAL_PERIOD - 1;
  // 1-2. Load the subgroup's chunk and rank each key among equal digits of the chunk.
  uint subgroup = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  uint chunk = subgroup * gl_SubgroupSize * KEYS_PER_THREAD + lane;
  uint places[KEYS_PER_THREAD];
  if (!keys_loaded) load_current_tile_keys(full, keys);
#ifdef CLOCK_PROFILE
  {  // wait for this invocation's keys, then for every invocation's
    uint sum = 0;
    [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) sum += keys[k].x;
    if (sum == 0x9e3779b9u) tile_digit_total[0] = sum;
    barrier();
    CLOCK_MARK(3);
  }
#endif
  // Each key in turn (item order, which keeps equal digits in input order): the lanes holding
  // its digit (ballots), the leader's addition of their count to the subgroup's digit counter,
  // and the counter's old value shuffled to them. One key's ranking state is live at a time, as
  // in CUB; on the H100 that beat three sweeps over all keys (ballots, then atomics, then
  // shuffles) by 2-3 % for 32-bit keys and pairs and 7 % for 64-bit keys, in fewer registers
  // (docs/design/onesweep.md). The shuffle needs the atomic's result, so item k's
  // additions all precede item k + 1's.
  [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
    bool valid = in_tile(full, chunk + k * gl_SubgroupSize);
    uint digit = key_digit_of(keys[k]);
    uvec4 peers = (PROFILE_OMIT & PROFILE_OMIT_RANK_BALLOTS) != 0 ? uvec4(1u << lane, 0u, 0u, 0u)
                                                                  : subgroup_digit_peers(digit, valid, full);
    uint below = lane_mask_count(peers & gl_SubgroupLtMask);
    uint counter = 0;
    if ((PROFILE_OMIT & PROFILE_OMIT_RANK_ATOMICS) == 0 && valid && below == 0)
      counter = (counter_add(counter_word(subgroup, digit), lane_mask_count(peers) << counter_shift(digit)) >>
                 counter_shift(digit)) & 0xffffu;
    places[k] = (PROFILE_OMIT & PROFILE_OMIT_RANKING) != 0
                    ? k * gl_SubgroupSize + lane
                    : subgroupShuffle(counter, valid ? lane_mask_lowest(peers) : 0u) + below;
  }
  if (claims_next() && t == 0) next_tile_shared = claimed;
  barrier();
  CLOCK_MARK(4);

  // 3. Tile digit counts (and each subgroup's start within its digit), published at once so that
  // successors can pass over this tile before its look-back ends.
  // One invocation per counter word, i.e. per pair of digits (even in the low half).
  for (uint w = t; w < COUNTER_WORDS; w += gl_WorkGroupSize.x) {
    uint running = 0;  // both digits' running counts, packed like the counters
    for (uint s = 0; s < gl_NumSubgroups; ++s) {
      uint c = counter_get(s * COUNTER_WORDS + w);
      counter_set(s * COUNTER_WORDS + w, running);
      running += c;
    }
    for (uint h = 0; h < 2; ++h) {
      uint d = 2 * w + h, total = (running >> (16 * h)) & 0xffffu;
      tile_digit_total[d] = total;
      if (publishes) lookback_publish(lookback_address, tile_index, d, first_tag + tile_index, tile_index == 0, total);
    }
  }
  barrier();
  scan_tile_digits();
  CLOCK_MARK(5);
  [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k)
    if ((PROFILE_OMIT & PROFILE_OMIT_RANKING) == 0 && in_tile(full, chunk + k * gl_SubgroupSize)) {
      uint digit = key_digit_of(keys[k]);
      places[k] += tile_digit_starts[digit] + read_counter(subgroup, digit);
    }

  // Keys go through shared memory one 32-bit word at a time (low word, then high word of 64-bit
  // keys), then values the same way; each invocation keeps only its keys' targets in registers.
  // The low words go to shared memory before the look-back, so that the keys need no registers
  // while it waits.
  uint targets[KEYS_PER_THREAD];
  uint low_words[KEYS_PER_THREAD];
  if (COUNTERS_IN_EXCHANGE != 0) barrier();  // the counters, read above, share its memory
  [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k)
    if (in_tile(full, chunk + k * gl_SubgroupSize)) exchange[places[k]] = keys[k].x;

  // The values' (low) words are requested now so that their latency hides behind the look-back.
  uint value_words[KEYS_PER_THREAD];
  if (VALUE_WORDS != 0)
    [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
      uint i = chunk + k * gl_SubgroupSize;
      value_words[k] = in_tile(full, i) ? load_element_word(values_in, tile_begin + i, VALUE_WORDS, 0) : 0u;
    }

  // 4. Look back for each digit's count in all earlier tiles (the keys wait in shared memory).
  uint exclusive[DIGITS_PER_INVOCATION];
  if ((PROFILE_OMIT & PROFILE_OMIT_LOOKBACK) != 0)
    for (uint k = 0; k < DIGITS_PER_INVOCATION; ++k) exclusive[k] = 0;
  else {
    CLOCK_MARK(11);
    look_back(lookback_address, tile_index, first_tag, control_address + CONTROL_FALLBACKS * 4, exclusive);
  }
  for (uint k = 0; k < DIGITS_PER_INVOCATION; ++k) {
    uint d = t + k * gl_WorkGroupSize.x;
    if (d >= RADIX) continue;
    if (publishes && tile_index != 0)
      lookback_publish(lookback_address, tile_index, d, first_tag + tile_index, true, exclusive[k] + tile_digit_total[d]);
    digit_global_shift[d] = digit_offset[k] + exclusive[k] - tile_digit_starts[d];
  }

  barrier();
  CLOCK_MARK(6);
  uint grid = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
  next = !persistent() ? tile_total : grid + (CLAIM_BY_ID != 0 ? tile_index : next_tile_shared);
  if (prefetches_next() && next < tile_total) prefetch_tile_keys(next, keys);
  if (KEY_WORDS == 2) {
    [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
      uint j = t + k * gl_WorkGroupSize.x;
      if (in_tile(full, j)) low_words[k] = exchange[j];
    }
    barrier();
    [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k)
      if (in_tile(full, chunk + k * gl_SubgroupSize)) exchange[places[k]] = keys[k].y;
    barrier();
  }
  if (output_raw) store_tile_keys(full, true, keys_out, low_words, targets);
  else store_tile_keys(full, false, keys_out, low_words, targets);
#ifdef CLOCK_PROFILE
  barrier();
  CLOCK_MARK(7);
  clock_put(9, clock_reads);
#endif
  if (VALUE_WORDS == 0) return;
  barrier();
  [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
    uint i = chunk + k * gl_SubgroupSize;
    if (in_tile(full, i)) exchange[places[k]] = value_words[k];
  }
  barrier();
  if (VALUE_WORDS == 2) {
    [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
      uint j = t + k * gl_WorkGroupSize.x;
      if (in_tile(full, j)) low_words[k] = exchange[j];
    }
    barrier();
    [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
      uint i = chunk + k * gl_SubgroupSize;
      if (in_tile(full, i)) exchange[places[k]] = load_element_word(values_in, tile_begin + i, 2, 1);
    }
    barrier();
  }
  [[unroll]] for (uint k = 0; k < KEYS_PER_THREAD; ++k) {
    uint j = t + k * gl_WorkGroupSize.x;
    if (in_tile(full, j))
      store_value(values_out, targets[k], VALUE_WORDS == 2 ? uvec2(low_words[k], exchange[j]) : uvec2(exchange[j], 0u));
  }
}

void main() {
  U32Array control = U32Array(control_address);
  uint plan;
  if (PARTITION_PASS != 0) {
    uint chosen = control.v[CONTROL_PARTITION_DIGIT];
    if (chosen == 0) return;  // the plan took Onesweep's passes instead
    pass = chosen - 1;
    bit = control.v[CONTROL_PARTITION_BIT];
    digit_bits = control.v[CONTROL_PARTITION_BITS];
    digit_offsets_address = recorded_digit_offsets + pass * RADIX * 4;
    plan = PLAN_ACTIVE | PLAN_FIRST | PLAN_LAST;
    plan_guess = plan & PLAN_INPUT_BITS;
  } else {
    pass = recorded_pass, bit = recorded_bit, digit_bits = recorded_digit_bits;
    digit_offsets_address = recorded_digit_offsets;
    plan = control.v[CONTROL_PLAN + pass];
    // The plan word is read below, after the tile's keys are requested: until then the keys come
    // from where they are when no earlier pass was skipped (a wrong guess loads them again).
    plan_guess = PLAN_ACTIVE | (pass == 0 ? PLAN_FIRST : 0u) | ((pass & 1u) != 0 ? PLAN_INPUT_ALT : 0u);
  }
  set_input(plan_guess);
  uint64_t key_count = element_count64(count_address, n);
  uint last_index = uint(key_count - 1);  // 32-bit divisions: a 64-bit one costs registers
  tile_total = key_count == 0 ? 0u : last_index / TILE + 1u;
  last_tile_size = last_index % TILE + 1u;

  uint t = gl_LocalInvocationID.x;
#ifdef CLOCK_PROFILE
  clock_start = clock2x32ARB().x;
#endif
  if (t == 0 && CLAIM_BY_ID == 0 && !persistent()) partition_shared = atomicAdd(U32Array(control_address).v[CONTROL_PARTITION_COUNTER + pass], 1u);
  clear_tile_state();
  // Fetched early: its latency then hides behind the tile's loads.
  uint digit_offset[DIGITS_PER_INVOCATION];
  for (uint k = 0; k < DIGITS_PER_INVOCATION; ++k) {
    uint d = t + k * gl_WorkGroupSize.x;
    digit_offset[k] = d < RADIX ? U32Array(digit_offsets_address).v[d] : 0u;
  }
  uvec2 keys[KEYS_PER_THREAD];
  uint guess = linear_workgroup_id();
  if (GUESS_TILE != 0 && guess < tile_total) {
    tile_begin = guess * TILE;
    tile_size = tile_size_of(guess);
    load_current_tile_keys(false, keys);
  }
  barrier();
  // A skipped pass (every key has the same digit), or one the partition sort switched off, gets no
  // workgroups from its indirect command; the plan word says so too.
  if ((plan & PLAN_ACTIVE) == 0) return;
  bool keys_where_guessed = (plan & PLAN_INPUT_BITS) == plan_guess;
  set_input(plan);
  bool input_alt = (plan & PLAN_INPUT_ALT) != 0;
  bool output_raw = (plan & PLAN_LAST) != 0 && (PROFILE_OMIT & PROFILE_OMIT_MAPPING) == 0;
  uint64_t keys_out = input_alt ? keys_a : keys_b;
  uint64_t values_in = input_alt ? values_b : values_a;
  uint64_t values_out = input_alt ? values_a : values_b;
  tile_index = CLAIM_BY_ID != 0 || persistent() ? linear_workgroup_id() : partition_shared;
  // Claims beyond the count's tiles: the last row of an x * y split (the plan dispatches the
  // count's tiles), or the partition pass's grid for max_n.
  if (tile_index >= tile_total) return;
  bool keys_loaded = GUESS_TILE != 0 && tile_index == guess && keys_where_guessed;
  for (;;) {
    tile_begin = tile_index * TILE;
    tile_size = tile_size_of(tile_index);
#ifdef CLOCK_PROFILE
    clock_record = (pass * tile_total + tile_index) * CLOCK_FIELDS;
    CLOCK_MARK(0);
    CLOCK_MARK(2);
    clock_put(1, clock_start);
    clock_put(10, keys_loaded ? 1u : 0u);
#endif
    uint next;
    if (FULL_TILE_COPY != 0 && tile_size == TILE)
      sort_tile(true, output_raw, keys_out, values_in, values_out, digit_offset, keys_loaded, keys, next);
    else sort_tile(false, output_raw, keys_out, values_in, values_out, digit_offset, keys_loaded, keys, next);
    if (next >= tile_total) return;
    // A persistent workgroup's next tile: its counters start from zero again.
    tile_index = next;
    keys_loaded = prefetches_next();
#ifdef CLOCK_PROFILE
    clock_start = clock2x32ARB().x;
#endif
    barrier();
    clear_tile_state();
    barrier();
  }
}

