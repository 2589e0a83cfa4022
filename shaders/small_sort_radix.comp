#version 460
// Small-array sort, pass 1, radix form (same role, push constants and outputs as
// small_sort_tile): each workgroup sorts one tile of TILE = workgroup x ITEMS keys with an LSD
// radix sort in shared memory, RADIX_BITS of the compared bits per pass (sort_element.glsl), so
// the work grows with n x passes instead of bitonic's n log^2 n. Each pass is stable:
//   - rank: the tile is cut into rows of LANES consecutive slots, one subgroup per row at a
//     time; RADIX_BITS ballots give each key the lanes of its row with the same digit, hence
//     its rank among them, and lanes 0..DIGITS-1 write their digit's count in the row
//   - scan: an exclusive prefix sum over the counts in (digit, row) order
//   - scatter: each key goes to its (digit, row) offset plus its rank, in shared memory.
// Slots >= count hold the largest element (all-ones bits, origin past the keys), so they stay
// last. Keys are rebuilt from the elements when the whole key is compared, else gathered by
// origin, like values.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KEY_WORDS = 1;
layout(constant_id = 2) const uint KEY_KIND = 0;
layout(constant_id = 3) const uint DESCENDING = 0;
layout(constant_id = 4) const uint VALUE_WORDS = 0;
layout(constant_id = 5) const uint BEGIN_BIT = 0;
layout(constant_id = 6) const uint END_BIT = 32;
layout(constant_id = 7) const uint TILE = 1024;
// Lanes of a subgroup (2^this): the pipeline must fix the subgroup size (the host only picks
// this kernel where it does).
layout(constant_id = 8) const uint LOG2_SUBGROUP_LANES = 5;
// Bits of the compared key, from its top, that make small_sort_merge's buckets (<= the width).
layout(constant_id = 9) const uint BUCKET_BITS = 8;
// Keys per invocation (2^LOG2_ITEMS): a compile-time define, one shader per value, so that
// every register index is a constant and the arrays stay in registers.
#ifndef LOG2_ITEMS
#error "small_sort_radix.comp needs -DLOG2_ITEMS"
#endif

#include "keys.glsl"
#include "sort_element.glsl"

const uint WORKGROUP = gl_WorkGroupSize.x;
const uint ITEMS = 1u << LOG2_ITEMS;  // keys per invocation, compile-time
const uint LANES = 1u << LOG2_SUBGROUP_LANES;
const uint MIN_LANES = 4;  // the host picks this kernel only for subgroups of 4 lanes or more
const uint SUBGROUPS = WORKGROUP / LANES;
const uint ROWS = TILE / LANES;  // row r: slots [r * LANES, (r + 1) * LANES), subgroup r / ITEMS
const uint RADIX_BITS = 4;  // lanes_with_digit takes one ballot per bit
const uint DIGITS = 1u << RADIX_BITS;
const uint COUNTERS = DIGITS * ROWS;
const uint COUNTERS_PER_INVOCATION = (COUNTERS + WORKGROUP - 1) / WORKGROUP;

layout(push_constant) uniform Push {
  uint64_t keys_in_address;
  uint64_t values_in_address;
  uint64_t keys_out_address;
  uint64_t values_out_address;
  uint64_t count_address;
  // 0, or where, per tile, the BUCKETS + 1 slots at which each bucket's keys begin go (the
  // last: the tile's count), for small_sort_merge
  uint64_t bucket_starts_address;
  uint n;
  uint tile_count;
  uint output_raw;
};

// The tile between passes (consecutive lanes read consecutive slots: no padding needed).
shared uint64_t tile_orders[TILE];
shared uint tile_origins[ELEMENT_ORIGIN_SEPARATE ? TILE : 1];
// Per (digit, row), digit-major: the row's count of the digit, then its exclusive prefix sum.
shared uint digit_offsets[COUNTERS];
shared uint subgroup_totals[SUBGROUPS];

void store_slot(uint slot, uint64_t order, uint origin) {
  tile_orders[slot] = order;
  if (ELEMENT_ORIGIN_SEPARATE) tile_origins[slot] = origin;
}

void load_slot(uint slot, out uint64_t order, out uint origin) {
  order = tile_orders[slot];
  origin = ELEMENT_ORIGIN_SEPARATE ? tile_origins[slot] : 0u;
}

// Turns the counts in digit_offsets into their exclusive prefix sum (digit-major order).
// `linear` numbers the invocations subgroup by subgroup. Starts and ends with a barrier.
void scan_digit_counts(uint linear, uint lane) {
  barrier();
  // An invocation's counters are read twice (to sum, then to scan) rather than kept in an
  // array: their number is a specialization constant, and such an array goes to local memory.
  const uint first_counter = linear * COUNTERS_PER_INVOCATION;
  const uint end_counter = min(first_counter + COUNTERS_PER_INVOCATION, COUNTERS);
  uint sum = 0;
  for (uint c = first_counter; c < end_counter; ++c) sum += digit_offsets[c];
  uint before = subgroupExclusiveAdd(sum);
  if (lane == LANES - 1) subgroup_totals[gl_SubgroupID] = before + sum;
  barrier();
  if (SUBGROUPS <= LANES) {
    if (gl_SubgroupID == 0) {
      uint total = lane < SUBGROUPS ? subgroup_totals[lane] : 0u;
      uint total_before = subgroupExclusiveAdd(total);
      if (lane < SUBGROUPS) subgroup_totals[lane] = total_before;
    }
  } else if (linear == 0) {  // more subgroups than lanes (narrow subgroups): one invocation
    uint running = 0;
    for (uint s = 0; s < SUBGROUPS; ++s) {
      uint total = subgroup_totals[s];
      subgroup_totals[s] = running;
      running += total;
    }
  }
  barrier();
  uint offset = subgroup_totals[gl_SubgroupID] + before;
  for (uint c = first_counter; c < end_counter; ++c) {
    uint digit_count = digit_offsets[c];
    digit_offsets[c] = offset;
    offset += digit_count;
  }
  barrier();
}

// The lanes whose digit is `digit`, from the ballots of the digit's bits.
uvec4 lanes_with_digit(uint digit, uvec4 bit0, uvec4 bit1, uvec4 bit2, uvec4 bit3) {
  return ((digit & 1u) != 0 ? bit0 : ~bit0) & ((digit & 2u) != 0 ? bit1 : ~bit1) &
         ((digit & 4u) != 0 ? bit2 : ~bit2) & ((digit & 8u) != 0 ? bit3 : ~bit3);
}

void main() {
  uint tile = linear_workgroup_id();
  if (tile >= tile_count) return;
  uint n_now = element_count(count_address, n);
  uint base = tile * TILE;
  if (base >= n_now) return;  // whole workgroup: an indirect n below max_n
  const uint count = min(TILE, n_now - base);  // keys in this tile

  const uint lane = gl_SubgroupInvocationID;
  const uint linear = gl_SubgroupID * LANES + lane;
  // Slot of register k: row gl_SubgroupID * ITEMS + k, this lane.
  uint64_t orders[ITEMS];
  uint origins[ITEMS];
  // Loads are unconditional (clamped into the array) and the absent slots chosen after: a load
  // under a branch is not issued before the previous one returns.
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    const uint slot = (gl_SubgroupID * ITEMS + k) * LANES + lane;
    origins[k] = slot;
    uvec2 key = load_key(keys_in_address, min(base + slot, n_now - 1));
    orders[k] = slot < count ? element_order(compared_bits(to_radix_order(key)), slot)
                             : absent_element_order(slot);
  }

  const uint passes = (END_BIT - BEGIN_BIT + RADIX_BITS - 1) / RADIX_BITS;
  for (uint pass = 0; pass < passes; ++pass) {
    uint digits[ITEMS], ranks[ITEMS];
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
      const uint row = gl_SubgroupID * ITEMS + k;
      digits[k] = uint(element_bits(orders[k]) >> (pass * RADIX_BITS)) & (DIGITS - 1);
      // Which lanes of the row have each bit of their digit set (RADIX_BITS == 4 ballots).
      const uint digit = digits[k];
      const uvec4 bit0 = subgroupBallot((digit & 1u) != 0), bit1 = subgroupBallot((digit & 2u) != 0),
                  bit2 = subgroupBallot((digit & 4u) != 0), bit3 = subgroupBallot((digit & 8u) != 0);
      ranks[k] = subgroupBallotExclusiveBitCount(lanes_with_digit(digit, bit0, bit1, bit2, bit3));
      // Lane l writes the counts of digits l, l + LANES, ... (a counted loop, so it unrolls).
      [[unroll]] for (uint part = 0; part < DIGITS / MIN_LANES; ++part) {
        const uint counted = part * LANES + lane;
        if (counted < DIGITS)
          digit_offsets[counted * ROWS + row] =
              subgroupBallotBitCount(lanes_with_digit(counted, bit0, bit1, bit2, bit3));
      }
    }
    scan_digit_counts(linear, lane);
    // Every invocation holds its elements in registers: the tile in shared memory is free.
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
      const uint row = gl_SubgroupID * ITEMS + k;
      store_slot(digit_offsets[digits[k] * ROWS + row] + ranks[k], orders[k], origins[k]);
    }
    barrier();
    [[unroll]] for (uint k = 0; k < ITEMS; ++k)
      load_slot((gl_SubgroupID * ITEMS + k) * LANES + lane, orders[k], origins[k]);
  }

  // For small_sort_merge: where each bucket begins in the sorted tile (a binary search per
  // bucket over the tile, which is in shared memory after the last pass).
  if (bucket_starts_address != 0) {
    const uint buckets = 1u << BUCKET_BITS;
    for (uint bucket = linear; bucket <= buckets; bucket += WORKGROUP) {
      uint begin = 0;  // grows while the slot before begin + step holds a smaller bucket
      for (uint step = TILE; step >= 1; step /= 2) {
        uint probe = begin + step;
        if (probe <= count && element_bucket(tile_orders[probe - 1]) < bucket) begin = probe;
      }
      U32Array(bucket_starts_address).v[tile * (buckets + 1) + bucket] = begin;
    }
  }

  // Write out. What is gathered by origin (values; keys when only some bits were compared) is
  // read before any output is written: in place, the origins of one invocation's outputs
  // belong to others.
  const bool gather = VALUE_WORDS != 0 || !WHOLE_KEY_COMPARED;
  uvec2 gathered_keys[ITEMS], values[ITEMS];
  if (gather) {
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
      // Unconditional, clamped (absent slots' origins lie beyond n), as the first loads.
      uint origin = min(base + element_origin(orders[k], origins[k]), n_now - 1);
      if (!WHOLE_KEY_COMPARED) gathered_keys[k] = load_key(keys_in_address, origin);
      if (VALUE_WORDS != 0) values[k] = load_value(values_in_address, origin);
    }
    memoryBarrierBuffer();
    barrier();
  }
  // Conditions, not break or continue: the loop must unroll to keep the arrays in registers.
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    const uint slot = (gl_SubgroupID * ITEMS + k) * LANES + lane;
    if (slot < count) {
      uvec2 key;
      if (WHOLE_KEY_COMPARED) {
        key = element_radix_key(orders[k]);
        if (output_raw != 0) key = from_radix_order(key);
      } else {
        key = output_raw != 0 ? gathered_keys[k] : to_radix_order(gathered_keys[k]);
      }
      store_key(keys_out_address, base + slot, key);
      if (VALUE_WORDS != 0) store_value(values_out_address, base + slot, values[k]);
    }
  }
}
