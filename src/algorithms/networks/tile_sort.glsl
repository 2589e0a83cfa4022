// Shared by the comparison sorts bitonic and odd-even transposition:
// a tile of up to TILE keys held in shared memory in radix order and, when values are sorted,
// each key's origin (its slot when loaded), so values move once, by a gather, when the tile is
// written back. Include after common.glsl; declares the tile kernels' specialization constants
// (primitives/glsl/tile_constants.h): the workgroup size, KEY_WORDS, KEY_KIND, DESCENDING,
// VALUE_WORDS (see keys.glsl), BEGIN_BIT, END_BIT (the compared bit range of the radix-ordered
// key), then TILE.
#include "constants.h"
#include "sort_key_spec.glsl"
layout(constant_id = TILE_ID_TILE) const uint TILE = 1024;

#include "keys.glsl"
#include "key_compare.glsl"

const uint WORKGROUP = gl_WorkGroupSize.x;
// Tile slots each invocation owns when the tile is walked workgroup-strided.
const uint STRIDED_ITEMS = (TILE + WORKGROUP - 1) / WORKGROUP;

// Keys occupy the first region, origins (only when values are sorted) the second. Each region
// skips one word after every 32 (padded_word), so the strided accesses of the sorts (one
// invocation per 2, 4 or 8 consecutive slots) fall into distinct banks. One array, sized
// exactly as tile_shared_words() on the host says.
uint padded_word(uint word) { return word + (word >> 5); }
const uint KEY_REGION = TILE * KEY_WORDS + (TILE * KEY_WORDS) / 32;
// Origins are kept when values are sorted.
const bool TILE_HAS_ORIGINS = VALUE_WORDS != 0;
const uint ORIGIN_REGION = TILE_HAS_ORIGINS ? TILE + TILE / 32 : 0;
shared uint tile_words[KEY_REGION + ORIGIN_REGION];

uvec2 tile_key(uint slot) {
  if (KEY_WORDS == 1) return uvec2(tile_words[padded_word(slot)], 0u);
  uint word = padded_word(2 * slot);  // both words share a 32-word row
  return uvec2(tile_words[word], tile_words[word + 1]);
}

void set_tile_key(uint slot, uvec2 key) {
  if (KEY_WORDS == 1) {
    tile_words[padded_word(slot)] = key.x;
  } else {
    uint word = padded_word(2 * slot);
    tile_words[word] = key.x;
    tile_words[word + 1] = key.y;
  }
}

uint tile_origin(uint slot) { return tile_words[KEY_REGION + padded_word(slot)]; }
void set_tile_origin(uint slot, uint origin) { tile_words[KEY_REGION + padded_word(slot)] = origin; }

// Swaps the keys (and origins) of two slots.
void swap_tile_slots(uint i, uvec2 key_i, uint j, uvec2 key_j) {
  set_tile_key(i, key_j);
  set_tile_key(j, key_i);
  if (TILE_HAS_ORIGINS) {
    uint origin = tile_origin(i);
    set_tile_origin(i, tile_origin(j));
    set_tile_origin(j, origin);
  }
}

// Loads keys [base, base + count) into slots [0, count), mapped to radix order when `raw`.
// Ends with a barrier.
void load_tile(uint64_t keys_address, uint base, uint count, bool raw) {
  for (uint slot = gl_LocalInvocationID.x; slot < count; slot += WORKGROUP) {
    uvec2 key = load_key(keys_address, base + slot);
    set_tile_key(slot, raw ? to_radix_order(key) : key);
    if (TILE_HAS_ORIGINS) set_tile_origin(slot, slot);
  }
  barrier();
}

// Writes slots [0, count) to [base, base + count) of keys_out, mapped back from radix order when
// `raw`; the value of slot s is values_in[base + tile_origin[s]]. values_in may be values_out:
// every invocation reads all its values before the barrier and writes only after it, and the
// range belongs to this workgroup alone.
void store_tile(uint64_t keys_out, uint64_t values_in, uint64_t values_out, uint base, uint count,
                bool raw) {
  uvec2 values[STRIDED_ITEMS];
  if (VALUE_WORDS != 0) {
    [[unroll]] for (uint k = 0; k < STRIDED_ITEMS; ++k) {
      uint slot = k * WORKGROUP + gl_LocalInvocationID.x;
      if (slot < count) values[k] = load_value(values_in, base + tile_origin(slot));
    }
    memoryBarrierBuffer();
    barrier();
  }
  [[unroll]] for (uint k = 0; k < STRIDED_ITEMS; ++k) {
    uint slot = k * WORKGROUP + gl_LocalInvocationID.x;
    if (slot >= count) break;
    uvec2 key = tile_key(slot);
    store_key(keys_out, base + slot, raw ? from_radix_order(key) : key);
    if (VALUE_WORDS != 0) store_value(values_out, base + slot, values[k]);
  }
}
