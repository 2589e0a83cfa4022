// Bitonic sorting network in the flip/disperse form over one shared-memory tile (tile_sort.glsl).
// Every comparator puts the smaller key at the lower slot, so slots >= count behave as +inf keys
// that never move: comparators reaching them are skipped, and any n sorts without padding.

// Comparators per invocation and step; their loops are unrolled (constant length).
const uint PAIRS_PER_INVOCATION = (TILE / 2 + WORKGROUP - 1) / WORKGROUP;

// Orders slots i < j.
void bitonic_compare_exchange(uint i, uint j, uint count) {
  if (j >= count) return;
  uvec2 key_i = tile_key(i), key_j = tile_key(j);
  if (key_less(key_j, key_i)) swap_tile_slots(i, key_i, j, key_j);
}

// Flip over blocks of 2 * half slots: slot s of a block's lower half against slot 2*half-1-s.
void bitonic_flip(uint half_block, uint count) {
  [[unroll]] for (uint k = 0; k < PAIRS_PER_INVOCATION; ++k) {
    uint pair = k * WORKGROUP + gl_LocalInvocationID.x;
    if (pair >= TILE / 2) break;
    uint offset = pair & (half_block - 1);
    uint block_begin = (pair - offset) * 2;
    bitonic_compare_exchange(block_begin + offset, block_begin + 2 * half_block - 1 - offset, count);
  }
  barrier();
}

// Disperse steps with pair distances half_block, half_block/2, ..., 1.
void bitonic_disperse(uint half_block, uint count) {
  for (uint half_span = half_block; half_span >= 1; half_span /= 2) {
    [[unroll]] for (uint k = 0; k < PAIRS_PER_INVOCATION; ++k) {
      uint pair = k * WORKGROUP + gl_LocalInvocationID.x;
      if (pair >= TILE / 2) break;
      uint offset = pair & (half_span - 1);
      uint i = (pair - offset) * 2 + offset;
      bitonic_compare_exchange(i, i + half_span, count);
    }
    barrier();
  }
}
