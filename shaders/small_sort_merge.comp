#version 460
// Small-array sort, pass 2: every key of the sorted tiles (small_sort_tile) finds its final
// position directly: its slot in its own tile plus, for every other tile, how many keys there
// precede it (for earlier tiles keys <= it, for later tiles keys < it: equal keys keep their
// input order, so the sort stays stable). Each count is a binary search, first over the tile's
// samples in shared memory, then over one window of the tile; the searches of TILES_PER_ROUND
// tiles advance together, one halving step at a time, so their memory reads overlap.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KEY_WORDS = 1;
layout(constant_id = 2) const uint KEY_KIND = 0;
layout(constant_id = 3) const uint DESCENDING = 0;
layout(constant_id = 4) const uint VALUE_WORDS = 0;
layout(constant_id = 5) const uint BEGIN_BIT = 0;
layout(constant_id = 6) const uint END_BIT = 32;
layout(constant_id = 7) const uint TILE = 1024;
layout(constant_id = 8) const uint MAX_TILES = 32;  // sizes the samples in shared memory
// Sorted keys per sample (a power of two <= TILE), and the smallest power of two >= the samples
// of a whole tile.
layout(constant_id = 9) const uint SAMPLE_STRIDE = 32;
layout(constant_id = 10) const uint SAMPLES_CEIL_POW2 = 32;
// Tiles whose searches advance together (a compile-time define, one shader per value in
// CMakeLists.txt): their counters are an array that must stay in registers, so every index
// has to be a constant in the SPIR-V (as a specialization constant the driver kept it in local
// memory).
#ifndef TILES_PER_ROUND
#error "small_sort_merge.comp needs -DTILES_PER_ROUND"
#endif

#include "keys.glsl"
#include "key_compare.glsl"

layout(push_constant) uniform Push {
  uint64_t sorted_keys_address;  // radix order, tile by tile
  uint64_t sorted_values_address;
  uint64_t samples_address;  // every SAMPLE_STRIDE-th sorted key of each tile (small_sort_tile)
  uint64_t keys_address;
  uint64_t values_address;
  uint64_t count_address;
  uint n;
};

// The samples of every tile, loaded once per workgroup: the first steps of every search run
// on them in shared memory, and only the last log2(SAMPLE_STRIDE) steps read the tile itself,
// all within one SAMPLE_STRIDE-key window (mostly one cache line, so L1 hits after the first).
const uint SAMPLES_PER_TILE = TILE / SAMPLE_STRIDE;
shared uint tile_samples[(MAX_TILES * SAMPLES_PER_TILE + 1) * KEY_WORDS];

uvec2 sample_key(uint index) {
  if (KEY_WORDS == 1) return uvec2(tile_samples[index], 0u);
  return uvec2(tile_samples[2 * index], tile_samples[2 * index + 1]);
}

void main() {
  const uint first_key = linear_workgroup_id() * gl_WorkGroupSize.x;
  uint n_now = element_count(count_address, n);
  if (first_key >= n_now) return;  // whole workgroup: an indirect n below max_n
  uint tiles = div_ceil(n_now, TILE);
  // Samples of a partial last tile exist only where the tile has keys.
  uint sample_count = (n_now / TILE) * SAMPLES_PER_TILE + (n_now % TILE) / SAMPLE_STRIDE;
  for (uint s = gl_LocalInvocationID.x; s < sample_count; s += gl_WorkGroupSize.x) {
    uvec2 sample_value = load_key(samples_address, s);
    tile_samples[s * KEY_WORDS] = sample_value.x;
    if (KEY_WORDS == 2) tile_samples[s * KEY_WORDS + 1] = sample_value.y;
  }
  barrier();

  uint i = first_key + gl_LocalInvocationID.x;
  if (i >= n_now) return;
  uint own_tile = i / TILE;
  uvec2 key = load_key(sorted_keys_address, i);
  uint position = i - own_tile * TILE;
  for (uint first_tile = 0; first_tile < tiles; first_tile += TILES_PER_ROUND) {
    // preceding[r]: how many keys of tile first_tile + r precede ours. It grows by step while
    // the key at preceding[r] + step - 1 precedes ours: first in units of SAMPLE_STRIDE keys
    // over the samples, then key by key over the tile.
    uint preceding[TILES_PER_ROUND], length[TILES_PER_ROUND], samples[TILES_PER_ROUND];
    [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) {
      uint t = first_tile + r;
      preceding[r] = 0;
      length[r] = t < tiles && t != own_tile ? min(TILE, n_now - t * TILE) : 0;  // 0: not searched
      samples[r] = length[r] / SAMPLE_STRIDE;
    }
    // Over the samples: the steps sum to 2 SAMPLES_CEIL_POW2 - 1 >= SAMPLES_PER_TILE.
    for (uint step = SAMPLES_CEIL_POW2; step >= 1; step /= 2) {
      [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) {
        uint t = first_tile + r;
        uint probe = preceding[r] + step;
        uvec2 other = sample_key(probe <= samples[r] ? t * SAMPLES_PER_TILE + probe - 1 : 0);
        bool precedes = t < own_tile ? !key_less(key, other) : key_less(other, key);
        if (probe <= samples[r] && precedes) preceding[r] = probe;
      }
    }
    // Over the window after the last preceding sample: the steps sum to SAMPLE_STRIDE - 1.
    [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) preceding[r] *= SAMPLE_STRIDE;
    for (uint step = SAMPLE_STRIDE / 2; step >= 1; step /= 2) {
      // The loads are unconditional (a probe beyond the tile reads key 0 and is ignored): a
      // load under a branch waits for the previous one to return.
      uvec2 others[TILES_PER_ROUND];
      [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) {
        uint probe = preceding[r] + step;
        others[r] = load_key(sorted_keys_address, probe <= length[r] ? (first_tile + r) * TILE + probe - 1 : 0);
      }
      [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) {
        uint t = first_tile + r;
        uint probe = preceding[r] + step;
        bool precedes = t < own_tile ? !key_less(key, others[r]) : key_less(others[r], key);
        if (probe <= length[r] && precedes) preceding[r] = probe;
      }
    }
    [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) position += preceding[r];
  }
  store_key(keys_address, position, from_radix_order(key));
  if (VALUE_WORDS != 0) store_value(values_address, position, load_value(sorted_values_address, i));
}
