#version 460
// Top-k, the radix select's pass p: each workgroup selects the prefix of the passes before (from
// their histograms: topk_select.glsl), then histograms digit p of the candidates (the keys whose
// higher compared bits equal that prefix), in shared memory, and adds its counts to pass p's
// histogram. The candidate list: the first pass whose candidates fit the list (pass 1 for spread
// keys; a later one where keys pile into the first digit's buckets, as f32 keys in [0, 1) do)
// lists their positions in its read of every key, and writes each tile's count of keys below the
// prefix (topk_count adds the candidates' own); the later passes then read only the listed keys.
#extension GL_EXT_shader_atomic_int64 : require
#include "common.glsl"
#include "topk_common.glsl"

#define PUSH_TOPK_HISTOGRAM
#include "push.h"

shared uint histogram[TOPK_BINS];
#include "topk_scan.glsl"
#include "topk_select.glsl"
shared uint tile_below, tile_listed, list_base;

void main() {
  const uint group = linear_workgroup_id();
  if (group >= group_count) return;
  const uint n = state_word(state_address, TOPK_STATE_N);
  const uint tile = gl_WorkGroupSize.x * ITEMS;
  const uint t = gl_LocalInvocationID.x;
  // Uniform over the workgroup: nothing to select (k = 0).
  if (state_word(state_address, TOPK_STATE_K) == 0) return;
  uint64_t prefix;
  uint before, remaining, list_pass, listed;
  select_digits(state_address, pass, capacity, prefix, before, remaining, list_pass, listed);
  const bool from_list = list_pass < pass;  // uniform
  const bool listing = list_pass == pass;
  const uvec2 digit = topk_digit(pass);
  const uint bit = digit.x, bits = digit.y;
  const uint bins = 1u << bits;
  for (uint d = t; d < bins; d += gl_WorkGroupSize.x) histogram[d] = 0;
  barrier();
  const uint above = bit + bits;  // the bits from here up are the prefix's
  const uint mask = bins - 1u;
  if (from_list) {
    for (uint c = group * gl_WorkGroupSize.x + t; c < listed; c += group_count * gl_WorkGroupSize.x) {
      const uint64_t key = select_key(keys_address, U32Array(candidates_address).v[c]);
      if (above >= 64 || (key >> above) == (prefix >> above))
        atomicAdd(histogram[uint(key >> bit) & mask], 1u);
    }
  } else {
    // Tiles grid-stride: a workgroup adds many tiles' counts before its one flush, so the global
    // atomics stay about bins x workgroups, not bins x tiles.
    for (uint index = group; index < (listing ? tiles : div_ceil(n, tile));
         index += group_count) {  // uniform
      const uint base = index * tile;
      if (listing) {
        if (t == 0) {
          tile_below = 0;
          tile_listed = 0;
        }
        barrier();
      }
      uint positions[ITEMS];
      uint slots = 0, below = 0;
      // All the invocation's loads first, then their use: ITEMS reads in flight, not one.
      uint64_t tile_keys[ITEMS];
      for (uint j = 0; j < ITEMS; ++j) {
        const uint i = base + j * gl_WorkGroupSize.x + t;
        tile_keys[j] = i < n ? select_key(keys_address, i) : 0ul;
      }
      for (uint j = 0; j < ITEMS; ++j) {
        const uint i = base + j * gl_WorkGroupSize.x + t;
        if (i >= n) break;
        const uint64_t key = tile_keys[j];
        if (above >= 64 || (key >> above) == (prefix >> above)) {
          atomicAdd(histogram[uint(key >> bit) & mask], 1u);
          if (listing) positions[slots++] = i;
        } else if (listing && (key >> above) < (prefix >> above)) {
          ++below;
        }
      }
      if (listing) {
        uint slot = 0;
        if (below != 0) atomicAdd(tile_below, below);
        if (slots != 0) slot = atomicAdd(tile_listed, slots);
        barrier();
        if (t == 0) {
          // Every tile up to the maximum is written (0 past the count): topk_count adds to it.
          U64Array(tile_counts_address).v[index] = uint64_t(tile_below);
          if (tile_listed != 0)
            list_base = atomicAdd(U32Array(state_address).v[TOPK_STATE_CURSOR], tile_listed);
        }
        barrier();
        for (uint j = 0; j < slots; ++j) U32Array(candidates_address).v[list_base + slot + j] = positions[j];
        barrier();  // tile_below, tile_listed and list_base are read before the next tile's
      }
    }
  }
  barrier();
  for (uint d = t; d < bins; d += gl_WorkGroupSize.x) {
    const uint c = histogram[d];
    if (c != 0) atomicAdd(U32Array(histogram_address).v[d], c);
  }
}
