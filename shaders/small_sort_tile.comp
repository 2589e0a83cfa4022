#version 460
// Small-array sort, pass 1: each workgroup sorts one tile of TILE = workgroup x ITEMS keys (a
// power of two) with a bitonic network (flip/disperse form) on sort elements: the compared key
// bits and the origin slot (sort_element.glsl). Ordering equal keys by where they came from
// makes it stable; slots >= count hold the largest element, so they sort last. Steps are taken
// where they are cheapest:
//   - pair distances below ITEMS: registers of one invocation (its ITEMS consecutive slots)
//   - distances below SUBGROUP_RUN = lanes x ITEMS: subgroup shuffles, no barrier
//   - larger distances: shared memory, one barrier per step; then the invocations reload
//     their slots and finish the block's smaller distances in registers and shuffles.
// When the tile is the whole array this is the whole sort (in place); otherwise the sorted
// tiles (keys in radix order, values beside them) and where each merge bucket begins in each go
// to scratch for small_sort_merge. Keys are rebuilt from the elements when the whole key is
// compared, else gathered by origin, like values.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KEY_WORDS = 1;
layout(constant_id = 2) const uint KEY_KIND = 0;
layout(constant_id = 3) const uint DESCENDING = 0;
layout(constant_id = 4) const uint VALUE_WORDS = 0;
layout(constant_id = 5) const uint BEGIN_BIT = 0;
layout(constant_id = 6) const uint END_BIT = 32;
layout(constant_id = 7) const uint TILE = 1024;
// Lanes sorted together by shuffles (2^this): the subgroup size where the pipeline fixes it,
// else 1 (registers only).
layout(constant_id = 8) const uint LOG2_SUBGROUP_LANES = 0;
// Bits of the compared key, from its top, that make small_sort_merge's buckets (<= the width).
layout(constant_id = 9) const uint BUCKET_BITS = 8;
// Keys per invocation (2^LOG2_ITEMS): a compile-time define, one shader per value
// (CMakeLists.txt), so that the loops over registers unroll in the SPIR-V and every array index
// is a constant (with a specialization constant the SPIR-V kept the arrays in function memory,
// indexed by loop counters, and 4 keys per invocation measured 2x slower than 1 on the H100).
#ifndef LOG2_ITEMS
#error "small_sort_tile.comp needs -DLOG2_ITEMS"
#endif

#include "keys.glsl"
#include "sort_element.glsl"

const uint WORKGROUP = gl_WorkGroupSize.x;
const uint ITEMS = 1u << LOG2_ITEMS;  // keys per invocation, compile-time
const uint SUBGROUP_LANES = 1u << LOG2_SUBGROUP_LANES;
const uint SUBGROUP_RUN = SUBGROUP_LANES * ITEMS;

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

// The tile in shared memory between the steps whose pair distance exceeds a subgroup's run.
// One padding element after every 16 orders (32 origins) keeps the stores and reloads of an
// invocation's ITEMS consecutive slots (a stride of ITEMS elements) free of bank conflicts.
uint padded_order(uint slot) { return slot + (slot >> 4); }
uint padded_origin(uint slot) { return slot + (slot >> 5); }
shared uint64_t tile_orders[TILE + TILE / 16];
shared uint tile_origins[ELEMENT_ORIGIN_SEPARATE ? TILE + TILE / 32 : 1];

void store_slot(uint slot, uint64_t order, uint origin) {
  tile_orders[padded_order(slot)] = order;
  if (ELEMENT_ORIGIN_SEPARATE) tile_origins[padded_origin(slot)] = origin;
}

void load_slot(uint slot, out uint64_t order, out uint origin) {
  order = tile_orders[padded_order(slot)];
  origin = ELEMENT_ORIGIN_SEPARATE ? tile_origins[padded_origin(slot)] : 0u;
}

uint64_t shuffle_xor_u64(uint64_t x, uint lane_mask) {
  return packUint2x32(subgroupShuffleXor(unpackUint2x32(x), lane_mask));
}

// The steps below work on an invocation's ITEMS consecutive slots (orders/origins), element
// e = lane * ITEMS + register of the subgroup's run. The arrays are main's locals passed in and
// out; every index is a constant after unrolling.

void exchange_if_second_first(inout uint64_t orders[ITEMS], inout uint origins[ITEMS], uint a,
                              uint b) {
  if (element_precedes(orders[b], origins[b], orders[a], origins[a])) {
    uint64_t order = orders[a];
    orders[a] = orders[b];
    orders[b] = order;
    if (ELEMENT_ORIGIN_SEPARATE) {
      uint origin = origins[a];
      origins[a] = origins[b];
      origins[b] = origin;
    }
  }
}

// Disperse steps inside the registers at distances from `distance` down to 1.
void register_disperse(inout uint64_t orders[ITEMS], inout uint origins[ITEMS],
                       const uint distance) {
  [[unroll]] for (uint level = 0; level < LOG2_ITEMS; ++level) {
    const uint d = (ITEMS / 2) >> level;
    [[unroll]] for (uint r = 0; r < ITEMS; ++r)
      if (d <= distance && (r & d) == 0) exchange_if_second_first(orders, origins, r, r | d);
  }
}

// Bitonic steps inside the registers: flip over blocks of `block` registers, then disperse at
// every distance below block / 2.
void register_merge(inout uint64_t orders[ITEMS], inout uint origins[ITEMS], const uint block) {
  [[unroll]] for (uint r = 0; r < ITEMS; ++r)
    if ((r & (block / 2)) == 0) exchange_if_second_first(orders, origins, r, r ^ (block - 1));
  register_disperse(orders, origins, block / 4);
}

// One step across lanes: register r of this lane meets register r (disperse) or ITEMS - 1 - r
// (flip) of lane ^ lane_mask; the lane with `lower_lane_bit` clear keeps the element sorting
// first.
void lane_step(inout uint64_t orders[ITEMS], inout uint origins[ITEMS], uint lane, uint lane_mask,
               uint lower_lane_bit, const bool flip) {
  const bool lower = (lane & lower_lane_bit) == 0;
  uint64_t new_orders[ITEMS];
  uint new_origins[ITEMS];
  [[unroll]] for (uint r = 0; r < ITEMS; ++r) {
    const uint partner = flip ? ITEMS - 1 - r : r;
    uint64_t partner_order = shuffle_xor_u64(orders[partner], lane_mask);
    uint partner_origin = 0;
    if (ELEMENT_ORIGIN_SEPARATE) partner_origin = subgroupShuffleXor(origins[partner], lane_mask);
    // Elements are distinct (origins are), so "not first" means "second".
    bool partner_first = element_precedes(partner_order, partner_origin, orders[r], origins[r]);
    bool take_partner = lower == partner_first;
    new_orders[r] = take_partner ? partner_order : orders[r];
    new_origins[r] = take_partner ? partner_origin : origins[r];
  }
  [[unroll]] for (uint r = 0; r < ITEMS; ++r) {
    orders[r] = new_orders[r];
    origins[r] = new_origins[r];
  }
}

// Disperse steps at lane distances from lane_distance down to 1, then inside the registers.
void lane_disperse(inout uint64_t orders[ITEMS], inout uint origins[ITEMS], uint lane,
                   uint lane_distance) {
  for (uint d = lane_distance; d >= 1; d /= 2) lane_step(orders, origins, lane, d, d, false);
  register_disperse(orders, origins, ITEMS / 2);
}

const uint PAIRS_PER_INVOCATION = (TILE / 2 + WORKGROUP - 1) / WORKGROUP;

// One step over the tile in shared memory: flip (slot s of a block's lower half against the
// mirrored slot) or disperse (s against s + half), for half >= SUBGROUP_RUN. Ends with a barrier.
void shared_step(uint half_block, bool flip) {
  [[unroll]] for (uint k = 0; k < PAIRS_PER_INVOCATION; ++k) {
    uint pair = k * WORKGROUP + gl_LocalInvocationID.x;
    if (pair >= TILE / 2) break;
    uint offset = pair & (half_block - 1);
    uint block_begin = (pair - offset) * 2;
    uint i = block_begin + offset;
    uint j = flip ? block_begin + 2 * half_block - 1 - offset : i + half_block;
    uint64_t order_i, order_j;
    uint origin_i, origin_j;
    load_slot(i, order_i, origin_i);
    load_slot(j, order_j, origin_j);
    if (element_precedes(order_j, origin_j, order_i, origin_i)) {
      store_slot(i, order_j, origin_j);
      store_slot(j, order_i, origin_i);
    }
  }
  barrier();
}

void main() {
  uint tile = linear_workgroup_id();
  if (tile >= tile_count) return;
  uint n_now = element_count(count_address, n);
  uint base = tile * TILE;
  if (base >= n_now) return;  // whole workgroup: an indirect n below max_n
  const uint count = min(TILE, n_now - base);  // keys in this tile

  // Positions follow subgroups, so the lanes of one subgroup own one contiguous run.
  const uint lane = SUBGROUP_LANES > 1 ? gl_SubgroupInvocationID : 0;  // == gl_SubgroupSize - 1 at most
  const uint position = SUBGROUP_LANES > 1 ? gl_SubgroupID * SUBGROUP_LANES + lane : gl_LocalInvocationID.x;
  const uint first = position * ITEMS;
  const uint owned = first < count ? min(ITEMS, count - first) : 0;
  uint64_t orders[ITEMS];
  uint origins[ITEMS];
  // Loads are unconditional (clamped into the array) and the absent slots chosen after: a load
  // under a branch is not issued before the previous one returns, and each is a trip to memory.
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    origins[k] = first + k;
    uvec2 key = load_key(keys_in_address, min(base + first + k, n_now - 1));
    orders[k] = k < owned ? element_order(compared_bits(to_radix_order(key)), first + k)
                          : absent_element_order(first + k);
  }

  // 1. Sort each subgroup's run (bitonic, flip/disperse form): blocks inside the registers,
  // then blocks across lanes (flip, then disperse down to the registers).
  [[unroll]] for (uint stage = 1; stage <= LOG2_ITEMS; ++stage)
    register_merge(orders, origins, 1u << stage);
  for (uint lane_block = 2; lane_block <= SUBGROUP_LANES; lane_block *= 2) {
    lane_step(orders, origins, lane, lane_block - 1, lane_block / 2, true);
    lane_disperse(orders, origins, lane, lane_block / 4);
  }

  // 2. Blocks larger than a subgroup's run: shared-memory steps for distances >= SUBGROUP_RUN,
  // then the distances below it on the reloaded registers.
  for (uint block = 2 * SUBGROUP_RUN; block <= TILE; block *= 2) {
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) store_slot(first + k, orders[k], origins[k]);
    barrier();
    shared_step(block / 2, true);
    for (uint distance = block / 4; distance >= SUBGROUP_RUN; distance /= 2) shared_step(distance, false);
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) load_slot(first + k, orders[k], origins[k]);
    // Every invocation reads only its own slots until the next store: no barrier needed here.
    lane_disperse(orders, origins, lane, SUBGROUP_LANES / 2);
  }

  // 3. For small_sort_merge: where each bucket begins in the sorted tile (a binary search per
  // bucket over the tile in shared memory).
  if (bucket_starts_address != 0) {
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) store_slot(first + k, orders[k], origins[k]);
    barrier();
    const uint buckets = 1u << BUCKET_BITS;
    for (uint bucket = gl_LocalInvocationID.x; bucket <= buckets; bucket += WORKGROUP) {
      uint begin = 0;  // grows while the slot before begin + step holds a smaller bucket
      for (uint step = TILE; step >= 1; step /= 2) {
        uint probe = begin + step;
        if (probe <= count && element_bucket(tile_orders[padded_order(probe - 1)]) < bucket)
          begin = probe;
      }
      U32Array(bucket_starts_address).v[tile * (buckets + 1) + bucket] = begin;
    }
  }

  // 4. Write out. What is gathered by origin (values; keys when only some bits were compared)
  // is read before any output is written: in place, the origins of one invocation's outputs
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
    if (k < owned) {
      uvec2 key;
      if (WHOLE_KEY_COMPARED) {
        key = element_radix_key(orders[k]);
        if (output_raw != 0) key = from_radix_order(key);
      } else {
        key = output_raw != 0 ? gathered_keys[k] : to_radix_order(gathered_keys[k]);
      }
      store_key(keys_out_address, base + first + k, key);
      if (VALUE_WORDS != 0) store_value(values_out_address, base + first + k, values[k]);
    }
  }
}
