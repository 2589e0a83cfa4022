#version 460
// Small-array sort, pass 1: each workgroup sorts one tile of TILE = workgroup x ITEMS keys in
// shared memory, stably: every invocation sorts its ITEMS consecutive slots in registers
// (odd-even transposition), then runs of ITEMS, 2 ITEMS, ... are merged pairwise, each
// invocation finding where its ITEMS outputs start on the merge path by binary search. When
// the tile is the whole array this is the whole sort; otherwise the sorted tiles (keys in radix
// order, values beside them) go to scratch for small_sort_merge.
#include "common.glsl"
#include "tile_sort.glsl"

layout(constant_id = 8) const uint ITEMS = 4;

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

void main() {
  uint tile = linear_workgroup_id();
  if (tile >= tile_count) return;
  uint n_now = element_count(count_address, n);
  uint base = tile * TILE;
  if (base >= n_now) return;  // whole workgroup: an indirect n below max_n
  uint count = min(TILE, n_now - base);
  load_tile(keys_in_address, base, count, true);

  // Sort this invocation's slots [first, first + ITEMS) in registers; slots >= count are absent.
  const uint first = gl_LocalInvocationID.x * ITEMS;
  const uint owned = first < count ? min(ITEMS, count - first) : 0;
  uvec2 keys[ITEMS];
  uint origins[ITEMS];
  for (uint k = 0; k < ITEMS; ++k) {
    if (k < owned) {
      keys[k] = tile_key(first + k);
      origins[k] = VALUE_WORDS != 0 ? tile_origin[first + k] : 0;
    }
  }
  for (uint round = 0; round < ITEMS; ++round) {
    for (uint k = round & 1; k + 1 < ITEMS; k += 2) {
      if (k + 1 < owned && key_less(keys[k + 1], keys[k])) {
        uvec2 key = keys[k];
        keys[k] = keys[k + 1];
        keys[k + 1] = key;
        uint origin = origins[k];
        origins[k] = origins[k + 1];
        origins[k + 1] = origin;
      }
    }
  }
  barrier();  // every invocation has read its slots
  for (uint k = 0; k < owned; ++k) {
    set_tile_key(first + k, keys[k]);
    if (VALUE_WORDS != 0) tile_origin[first + k] = origins[k];
  }
  barrier();

  // Merge sorted runs of `run` slots pairwise until one run covers the tile. ITEMS divides run,
  // so an invocation's outputs never straddle two merges. Ties take the left run: stable.
  for (uint run = ITEMS; run < count; run *= 2) {
    uint left = first / (2 * run) * (2 * run);
    uint middle = min(left + run, count), right = min(left + 2 * run, count);
    uint produced = 0;
    if (first < count) {
      uint diagonal = first - left;
      uint left_length = middle - left, right_length = right - middle;
      // Find how many of the first `diagonal` outputs come from the left run.
      uint low = diagonal > right_length ? diagonal - right_length : 0;
      uint high = min(diagonal, left_length);
      while (low < high) {
        uint mid = (low + high) / 2;
        if (key_less(tile_key(middle + diagonal - 1 - mid), tile_key(left + mid))) high = mid;
        else low = mid + 1;
      }
      uint a = left + low, b = middle + diagonal - low;
      uvec2 key_a = a < middle ? tile_key(a) : uvec2(0u), key_b = b < right ? tile_key(b) : uvec2(0u);
      for (uint k = 0; k < ITEMS; ++k) {
        if (first + k >= right) break;
        bool take_a = b >= right || (a < middle && !key_less(key_b, key_a));
        if (take_a) {
          keys[k] = key_a;
          if (VALUE_WORDS != 0) origins[k] = tile_origin[a];
          ++a;
          if (a < middle) key_a = tile_key(a);
        } else {
          keys[k] = key_b;
          if (VALUE_WORDS != 0) origins[k] = tile_origin[b];
          ++b;
          if (b < right) key_b = tile_key(b);
        }
        ++produced;
      }
    }
    barrier();  // every invocation has read the runs
    for (uint k = 0; k < produced; ++k) {
      set_tile_key(first + k, keys[k]);
      if (VALUE_WORDS != 0) tile_origin[first + k] = origins[k];
    }
    barrier();
  }
  store_tile(keys_out_address, values_in_address, values_out_address, base, count, output_raw != 0);
}
