// The bitonic network of the small-array tile sorts (src/algorithms/small_sort/small_sort_tile.comp,
// src/algorithms/segmented_sort/segment_sort_tile.comp) on sort elements (sort_element.glsl), each invocation holding
// ITEMS consecutive slots in registers. Steps are taken where they are cheapest:
//   - pair distances below ITEMS: registers of one invocation (its ITEMS consecutive slots)
//   - distances below SUBGROUP_RUN = lanes x ITEMS: subgroup shuffles, no barrier
//   - larger distances: shared memory, one barrier per step; then the invocations reload
//     their slots and finish the block's smaller distances in registers and shuffles.
// sort_tile_blocks() sorts every aligned block of a given power-of-two size of the tile
// independently (the flip/disperse form never pairs slots of different blocks below that size):
// the whole tile, or several segments packed one per block.
// Include after keys.glsl and sort_element.glsl, with TILE (slots, a power of two),
// LOG2_SUBGROUP_LANES and the compile-time LOG2_ITEMS defined; the kernel enables
// GL_EXT_control_flow_attributes and GL_KHR_shader_subgroup_shuffle.

const uint WORKGROUP = gl_WorkGroupSize.x;
const uint ITEMS = 1u << LOG2_ITEMS;  // keys per invocation, compile-time
const uint SUBGROUP_LANES = 1u << LOG2_SUBGROUP_LANES;
const uint SUBGROUP_RUN = SUBGROUP_LANES * ITEMS;

// The tile in shared memory between the steps whose pair distance exceeds a subgroup's run.
// One padding element after every 32 words (16 64-bit orders, 32 origins or 32-bit orders) keeps
// the stores and reloads of an invocation's ITEMS consecutive slots (a stride of ITEMS elements)
// free of bank conflicts.
#if defined(KEYS_ALONE) && KEYS_ALONE == 32
uint padded_order(uint slot) { return slot + (slot >> 5); }
shared uint tile_orders[TILE + TILE / 32];
#else
uint padded_order(uint slot) { return slot + (slot >> 4); }
shared uint64_t tile_orders[TILE + TILE / 16];
#endif
uint padded_origin(uint slot) { return slot + (slot >> 5); }
shared uint tile_origins[ELEMENT_ORIGIN_SEPARATE ? TILE + TILE / 32 : 1];

void store_slot(uint slot, element_order_t order, uint origin) {
  tile_orders[padded_order(slot)] = order;
  if (ELEMENT_ORIGIN_SEPARATE) tile_origins[padded_origin(slot)] = origin;
}

void load_slot(uint slot, out element_order_t order, out uint origin) {
  order = tile_orders[padded_order(slot)];
  origin = ELEMENT_ORIGIN_SEPARATE ? tile_origins[padded_origin(slot)] : 0u;
}

uint64_t shuffle_xor_u64(uint64_t x, uint lane_mask) {
  return packUint2x32(subgroupShuffleXor(unpackUint2x32(x), lane_mask));
}

element_order_t shuffle_xor_order(element_order_t x, uint lane_mask) {
#if defined(KEYS_ALONE) && KEYS_ALONE == 32
  return subgroupShuffleXor(x, lane_mask);
#else
  return shuffle_xor_u64(x, lane_mask);
#endif
}

// The steps below work on an invocation's ITEMS consecutive slots (orders/origins), element
// e = lane * ITEMS + register of the subgroup's run. The arrays are main's locals passed in and
// out; every index is a constant after unrolling.

void exchange_if_second_first(inout element_order_t orders[ITEMS], inout uint origins[ITEMS], uint a,
                              uint b) {
  if (element_precedes(orders[b], origins[b], orders[a], origins[a])) {
    element_order_t order = orders[a];
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
void register_disperse(inout element_order_t orders[ITEMS], inout uint origins[ITEMS],
                       const uint distance) {
  [[unroll]] for (uint level = 0; level < LOG2_ITEMS; ++level) {
    const uint d = (ITEMS / 2) >> level;
    [[unroll]] for (uint r = 0; r < ITEMS; ++r)
      if (d <= distance && (r & d) == 0) exchange_if_second_first(orders, origins, r, r | d);
  }
}

// Bitonic steps inside the registers: flip over blocks of `block` registers, then disperse at
// every distance below block / 2.
void register_merge(inout element_order_t orders[ITEMS], inout uint origins[ITEMS], const uint block) {
  [[unroll]] for (uint r = 0; r < ITEMS; ++r)
    if ((r & (block / 2)) == 0) exchange_if_second_first(orders, origins, r, r ^ (block - 1));
  register_disperse(orders, origins, block / 4);
}

// One step across lanes: register r of this lane meets register r (disperse) or ITEMS - 1 - r
// (flip) of lane ^ lane_mask; the lane with `lower_lane_bit` clear keeps the element sorting
// first.
void lane_step(inout element_order_t orders[ITEMS], inout uint origins[ITEMS], uint lane, uint lane_mask,
               uint lower_lane_bit, const bool flip) {
  const bool lower = (lane & lower_lane_bit) == 0;
  element_order_t new_orders[ITEMS];
  uint new_origins[ITEMS];
  [[unroll]] for (uint r = 0; r < ITEMS; ++r) {
    const uint partner = flip ? ITEMS - 1 - r : r;
    element_order_t partner_order = shuffle_xor_order(orders[partner], lane_mask);
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
void lane_disperse(inout element_order_t orders[ITEMS], inout uint origins[ITEMS], uint lane,
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
    element_order_t order_i, order_j;
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


// Sorts every aligned block of `block_size` slots (a power of two, ITEMS..TILE) of the tile
// ascending by element: first each subgroup's run (blocks inside the registers, then across
// lanes), then blocks larger than a run through shared memory (distances >= SUBGROUP_RUN) and the
// distances below it on the reloaded registers. `block_size` must be the same in the whole
// workgroup (the shared steps have barriers). Leaves the slots in the registers.
void sort_tile_blocks(inout element_order_t orders[ITEMS], inout uint origins[ITEMS], uint lane,
                      uint first, uint block_size) {
  [[unroll]] for (uint stage = 1; stage <= LOG2_ITEMS; ++stage)
    register_merge(orders, origins, 1u << stage);
  const uint lane_blocks = min(SUBGROUP_LANES, block_size / ITEMS);
  for (uint lane_block = 2; lane_block <= lane_blocks; lane_block *= 2) {
    lane_step(orders, origins, lane, lane_block - 1, lane_block / 2, true);
    lane_disperse(orders, origins, lane, lane_block / 4);
  }
  for (uint block = 2 * SUBGROUP_RUN; block <= block_size; block *= 2) {
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) store_slot(first + k, orders[k], origins[k]);
    barrier();
    shared_step(block / 2, true);
    for (uint distance = block / 4; distance >= SUBGROUP_RUN; distance /= 2) shared_step(distance, false);
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) load_slot(first + k, orders[k], origins[k]);
    // Every invocation reads only its own slots until the next store: no barrier needed here.
    lane_disperse(orders, origins, lane, SUBGROUP_LANES / 2);
  }
}
