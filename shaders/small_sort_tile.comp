#version 460
// Small-array sort, pass 1: each workgroup sorts one tile of TILE = workgroup x ITEMS keys (a
// power of two) with a bitonic network (flip/disperse form) on (key, origin slot): ordering
// equal keys by where they came from makes it stable. Slots >= count are absent: they sort last
// and never move. Steps are taken where they are cheapest:
//   - pair distances below ITEMS: registers of one invocation (its ITEMS consecutive slots)
//   - distances below SUBGROUP_RUN = lanes x ITEMS: subgroup shuffles, no barrier
//   - larger distances: shared memory, one barrier per step; then the invocations reload
//     their slots and finish the block's smaller distances in registers and shuffles.
// When the tile is the whole array this is the whole sort (in place); otherwise the sorted
// tiles (keys in radix order, values beside them) go to scratch for small_sort_merge.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
#define TILE_ORIGINS_ALWAYS
#include "tile_sort.glsl"

layout(constant_id = 8) const uint LOG2_ITEMS = 2;
// Lanes sorted together by shuffles (2^this): the subgroup size where the pipeline fixes it,
// else 1 (registers only).
layout(constant_id = 9) const uint LOG2_SUBGROUP_LANES = 0;

const uint ITEMS = 1u << LOG2_ITEMS;
const uint SUBGROUP_LANES = 1u << LOG2_SUBGROUP_LANES;

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

const uint SUBGROUP_RUN = SUBGROUP_LANES * ITEMS;

uint count;  // keys in this tile

// Whether (key_a, origin_a) sorts before (key_b, origin_b).
bool sorts_before(uvec2 key_a, uint origin_a, uvec2 key_b, uint origin_b) {
  if (origin_a >= count) return false;
  if (origin_b >= count) return true;
  if (key_less(key_a, key_b)) return true;
  if (key_less(key_b, key_a)) return false;
  return origin_a < origin_b;
}

// One bitonic step over the subgroup's run: element e (lane * ITEMS + register) meets
// e ^ partner_mask; the element whose `lower_bit` is clear keeps the one sorting first.
// keys/origins: an invocation's ITEMS consecutive slots; origin >= count marks an absent slot.
// They are main's locals passed in and out (module-scope arrays measured ~10 % slower on the
// H100; indices must be constants after unrolling, or the arrays go to local memory).
void subgroup_step(inout uvec2 keys[ITEMS], inout uint origins[ITEMS], uint lane, uint partner_mask,
                   uint lower_bit) {
  const uint register_mask = partner_mask & (ITEMS - 1);
  const uint lane_mask = partner_mask / ITEMS;
  if (lane_mask == 0) {
    [[unroll]] for (uint r = 0; r < ITEMS; ++r) {
      uint other = r ^ register_mask;
      if (r < other && sorts_before(keys[other], origins[other], keys[r], origins[r])) {
        uvec2 key = keys[r];
        keys[r] = keys[other];
        keys[other] = key;
        uint origin = origins[r];
        origins[r] = origins[other];
        origins[other] = origin;
      }
    }
    return;
  }
  const bool lower = (lane & (lower_bit / ITEMS)) == 0;
  uvec2 new_keys[ITEMS];
  uint new_origins[ITEMS];
  [[unroll]] for (uint r = 0; r < ITEMS; ++r) {
    uvec2 partner_key = subgroupShuffleXor(keys[r ^ register_mask], lane_mask);
    uint partner_origin = subgroupShuffleXor(origins[r ^ register_mask], lane_mask);
    bool partner_first = sorts_before(partner_key, partner_origin, keys[r], origins[r]);
    bool take_partner = lower ? partner_first : !partner_first;
    new_keys[r] = take_partner ? partner_key : keys[r];
    new_origins[r] = take_partner ? partner_origin : origins[r];
  }
  [[unroll]] for (uint r = 0; r < ITEMS; ++r) {
    keys[r] = new_keys[r];
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
    if (j >= count) continue;  // absent slots never move
    uvec2 key_i = tile_key(i), key_j = tile_key(j);
    uint origin_i = tile_origin(i), origin_j = tile_origin(j);
    if (sorts_before(key_j, origin_j, key_i, origin_i)) swap_tile_slots(i, key_i, j, key_j);
  }
  barrier();
}

void main() {
  uint tile = linear_workgroup_id();
  if (tile >= tile_count) return;
  uint n_now = element_count(count_address, n);
  uint base = tile * TILE;
  if (base >= n_now) return;  // whole workgroup: an indirect n below max_n
  count = min(TILE, n_now - base);

  // Positions follow subgroups, so the lanes of one subgroup own one contiguous run.
  const uint lane = SUBGROUP_LANES > 1 ? gl_SubgroupInvocationID : 0;  // == gl_SubgroupSize - 1 at most
  const uint position = SUBGROUP_LANES > 1 ? gl_SubgroupID * SUBGROUP_LANES + lane : gl_LocalInvocationID.x;
  const uint first = position * ITEMS;
  const uint owned = first < count ? min(ITEMS, count - first) : 0;
  uvec2 keys[ITEMS];
  uint origins[ITEMS];
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    origins[k] = first + k;
    keys[k] = k < owned ? to_radix_order(load_key(keys_in_address, base + first + k)) : uvec2(0u);
  }

  // 1. Sort each subgroup's run (bitonic, flip/disperse form). Counted loops, fully unrolled,
  // so every register index is a constant and the arrays stay in registers.
  [[unroll]] for (uint stage = 1; stage <= LOG2_ITEMS + LOG2_SUBGROUP_LANES; ++stage) {
    const uint block = 1u << stage;
    subgroup_step(keys, origins, lane, block - 1, block / 2);
    [[unroll]] for (uint level = 2; level <= stage; ++level) {
      const uint distance = block >> level;
      subgroup_step(keys, origins, lane, distance, distance);
    }
  }

  // 2. Blocks larger than a subgroup's run: shared-memory steps for distances >= SUBGROUP_RUN,
  // then the distances below it on the reloaded registers.
  for (uint block = 2 * SUBGROUP_RUN; block <= TILE; block *= 2) {
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
      if (k < owned) {
        set_tile_key(first + k, keys[k]);
        set_tile_origin(first + k, origins[k]);
      }
    }
    barrier();
    shared_step(block / 2, true);
    for (uint distance = block / 4; distance >= SUBGROUP_RUN; distance /= 2) shared_step(distance, false);
    [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
      if (k < owned) {
        keys[k] = tile_key(first + k);
        origins[k] = tile_origin(first + k);
      }
    }
    // Every invocation reads only its own slots until the next store: no barrier needed here.
    [[unroll]] for (uint level = 1; level <= LOG2_ITEMS + LOG2_SUBGROUP_LANES; ++level) {
      const uint distance = SUBGROUP_RUN >> level;
      subgroup_step(keys, origins, lane, distance, distance);
    }
  }

  // 3. Write out. Values are read by origin before any is written (in place, the origins of
  // one invocation's outputs belong to others).
  uvec2 values[ITEMS];
  if (VALUE_WORDS != 0) {
    [[unroll]] for (uint k = 0; k < ITEMS; ++k)
      if (k < owned) values[k] = load_value(values_in_address, base + origins[k]);
    memoryBarrierBuffer();
    barrier();
  }
  [[unroll]] for (uint k = 0; k < ITEMS; ++k) {
    if (k >= owned) break;
    store_key(keys_out_address, base + first + k, output_raw != 0 ? from_radix_order(keys[k]) : keys[k]);
    if (VALUE_WORDS != 0) store_value(values_out_address, base + first + k, values[k]);
  }
}
