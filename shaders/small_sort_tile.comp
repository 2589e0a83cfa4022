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
// tiles (keys in radix order, values beside them) go to scratch for small_sort_merge. Keys are
// rebuilt from the elements when the whole key is compared, else gathered by origin, like values.
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
layout(constant_id = 8) const uint LOG2_ITEMS = 2;
// Lanes sorted together by shuffles (2^this): the subgroup size where the pipeline fixes it,
// else 1 (registers only).
layout(constant_id = 9) const uint LOG2_SUBGROUP_LANES = 0;

#include "keys.glsl"
#include "sort_element.glsl"

const uint WORKGROUP = gl_WorkGroupSize.x;
const uint ITEMS = 1u << LOG2_ITEMS;
const uint SUBGROUP_LANES = 1u << LOG2_SUBGROUP_LANES;
const uint SUBGROUP_RUN = SUBGROUP_LANES * ITEMS;

layout(push_constant) uniform Push {
  uint64_t keys_in_address;
  uint64_t values_in_address;
  uint64_t keys_out_address;
  uint64_t values_out_address;
  uint64_t count_address;
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

// One bitonic step over the subgroup's run: element e (lane * ITEMS + register) meets
// e ^ partner_mask; the element whose `lower_bit` is clear keeps the one sorting first.
// orders/origins: an invocation's ITEMS consecutive slots. They are main's locals passed in and
// out (module-scope arrays measured ~10 % slower on the H100; indices must be constants after
// unrolling, or the arrays go to local memory).
void subgroup_step(inout uint64_t orders[ITEMS], inout uint origins[ITEMS], uint lane,
                   uint partner_mask, uint lower_bit) {
  const uint register_mask = partner_mask & (ITEMS - 1);
  const uint lane_mask = partner_mask / ITEMS;
  if (lane_mask == 0) {
    [[unroll]] for (uint r = 0; r < ITEMS; ++r) {
      uint other = r ^ register_mask;
      if (r < other && element_precedes(orders[other], origins[other], orders[r], origins[r])) {
        uint64_t order = orders[r];
        orders[r] = orders[other];
        orders[other] = order;
        if (ELEMENT_ORIGIN_SEPARATE) {
          uint origin = origins[r];
          origins[r] = origins[other];
          origins[other] = origin;
        }
      }
    }
    return;
  }
  const bool lower = (lane & (lower_bit / ITEMS)) == 0;
  uint64_t new_orders[ITEMS];
  uint new_origins[ITEMS];
  [[unroll]] for (uint r = 0; r < ITEMS; ++r) {
    uint64_t partner_order = shuffle_xor_u64(orders[r ^ register_mask], lane_mask);
    uint partner_origin = 0;
    if (ELEMENT_ORIGIN_SEPARATE) partner_origin = subgroupShuffleXor(origins[r ^ register_mask], lane_mask);
    // Elements are distinct (origins are), so "not first" means "second".
    bool take_partner = lower == element_precedes(partner_order, partner_origin, orders[r], origins[r]);
    new_orders[r] = take_partner ? partner_order : orders[r];
    new_origins[r] = take_partner ? partner_origin : origins[r];
  }
  [[unroll]] for (uint r = 0; r < ITEMS; ++r) {
    orders[r] = new_orders[r];
    origins[r] = new_origins[r];
  }
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
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    origins[k] = first + k;
    orders[k] = k < owned ? element_order(compared_bits(to_radix_order(load_key(keys_in_address, base + first + k))), first + k)
                          : absent_element_order(first + k);
  }

  // 1. Sort each subgroup's run (bitonic, flip/disperse form). Counted loops, fully unrolled,
  // so every register index is a constant and the arrays stay in registers.
  [[unroll]] for (uint stage = 1; stage <= LOG2_ITEMS + LOG2_SUBGROUP_LANES; ++stage) {
    const uint block = 1u << stage;
    subgroup_step(orders, origins, lane, block - 1, block / 2);
    [[unroll]] for (uint level = 2; level <= stage; ++level) {
      const uint distance = block >> level;
      subgroup_step(orders, origins, lane, distance, distance);
    }
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
    [[unroll]] for (uint level = 1; level <= LOG2_ITEMS + LOG2_SUBGROUP_LANES; ++level) {
      const uint distance = SUBGROUP_RUN >> level;
      subgroup_step(orders, origins, lane, distance, distance);
    }
  }

  // 3. Write out. What is gathered by origin (values; keys when only some bits were compared)
  // is read before any output is written: in place, the origins of one invocation's outputs
  // belong to others.
  const bool gather = VALUE_WORDS != 0 || !WHOLE_KEY_COMPARED;
  uvec2 gathered_keys[ITEMS], values[ITEMS];
  if (gather) {
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
      if (k < owned) {
        uint origin = base + element_origin(orders[k], origins[k]);
        if (!WHOLE_KEY_COMPARED) gathered_keys[k] = load_key(keys_in_address, origin);
        if (VALUE_WORDS != 0) values[k] = load_value(values_in_address, origin);
      }
    }
    memoryBarrierBuffer();
    barrier();
  }
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    if (k >= owned) break;
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
