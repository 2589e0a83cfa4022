// The merge step of the tile sorts (small_sort_merge, segment_merge): a key of a sorted tile finds
// its final place as its slot in its own tile plus, for every other tile, how many keys there
// precede it (for earlier tiles keys <= it, for later tiles keys < it: equal keys keep their
// input order, so the sort stays stable). Each count is a binary search over a range of the
// other tile that the includer bounds; the searches of TILES_PER_ROUND tiles advance together,
// one halving step at a time, so their memory reads overlap.
// Include after keys.glsl, key_compare.glsl, TILE, TILES_PER_ROUND and a function
//   uvec2 merge_search_bounds(uint tile, uint bucket)
// that gives the slots [x, y) of `tile` holding the keys not ordered against ours by `bucket`
// alone (everything before x precedes our key, nothing from y on does).

// How many keys of the tiles below `tiles` other than own_tile precede `key`, counting only the
// rounds of TILES_PER_ROUND tiles that begin at first_tile, first_tile + round_stride, ... (the
// invocations that share one key's searches each take every so-many rounds). Tile t holds its
// sorted keys (radix order) at sorted_keys_address, slots base + t * TILE onwards.
uint keys_preceding_rounds(uvec2 key, uint64_t sorted_keys_address, uint base, uint tiles,
                           uint own_tile, uint bucket, uint first_tile, uint round_stride) {
  uint total = 0;
  for (; first_tile < tiles; first_tile += round_stride) {
    // preceding[r]: how many keys of tile first_tile + r precede ours. It starts at the
    // range's beginning and grows by step while the key at preceding[r] + step - 1 precedes.
    uint preceding[TILES_PER_ROUND], end[TILES_PER_ROUND];
    uint longest = 0;
    [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) {
      uint t = first_tile + r;
      bool searched = t < tiles && t != own_tile;
      // Unsearched tiles read their own tile's bounds (in bounds) and are then emptied.
      uvec2 bounds = merge_search_bounds(searched ? t : own_tile, bucket);
      preceding[r] = searched ? bounds.x : 0;
      end[r] = searched ? bounds.y : 0;
      longest = max(longest, end[r] - preceding[r]);
    }
    // The steps sum to 2 * step - 1 >= longest.
    uint step = longest == 0 ? 0 : 1u << findMSB(longest);
    // A long range often needs no search (equal keys, a few distinct ones): all of it precedes
    // ours when its last key does, none when its first key does not. Both ends are read with the
    // search's first probe, in its round trip, and when every range is settled the search ends
    // there. (Read in a round trip of their own they cost 3 us of 51 at 2^18 on spread keys,
    // where few ranges are settled: docs/design/small-sort.md.) "Precedes ours" is spelled out at
    // each use: one shared helper function measured 1-6 % slower for u64 keys on the H100
    // (commit a6206bf against 2f66db2, `gpusort bench` at 2^12-2^17, 2026-11-24).
    if (longest >= 64) {
      uvec2 firsts[TILES_PER_ROUND], lasts[TILES_PER_ROUND], probes[TILES_PER_ROUND];
      [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) {
        const uint tile_base = base + (first_tile + r) * TILE, probe = preceding[r] + step;
        const bool range = end[r] > preceding[r];
        firsts[r] = load_key(sorted_keys_address, range ? tile_base + preceding[r] : base);
        lasts[r] = load_key(sorted_keys_address, range ? tile_base + end[r] - 1 : base);
        probes[r] = load_key(sorted_keys_address, probe <= end[r] ? tile_base + probe - 1 : base);
      }
      bool open = false;
      [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) {
        if (end[r] > preceding[r]) {
          const bool earlier = first_tile + r < own_tile;
          const uint probe = preceding[r] + step;
          if (earlier ? !key_less(key, lasts[r]) : key_less(lasts[r], key)) {
            preceding[r] = end[r];
          } else if (!(earlier ? !key_less(key, firsts[r]) : key_less(firsts[r], key))) {
            end[r] = preceding[r];
          } else {
            if (probe <= end[r] && (earlier ? !key_less(key, probes[r]) : key_less(probes[r], key)))
              preceding[r] = probe;
            open = true;
          }
        }
      }
      step = open ? step / 2 : 0;
    }
    for (; step >= 1; step /= 2) {
      // The loads are unconditional (a probe beyond the range reads the first key and is
      // ignored): a load under a branch waits for the previous one to return.
      uvec2 others[TILES_PER_ROUND];
      [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) {
        uint probe = preceding[r] + step;
        uint index = base + (probe <= end[r] ? (first_tile + r) * TILE + probe - 1 : 0);
        others[r] = load_key(sorted_keys_address, index);
      }
      [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) {
        uint t = first_tile + r;
        uint probe = preceding[r] + step;
        bool precedes = t < own_tile ? !key_less(key, others[r]) : key_less(others[r], key);
        if (probe <= end[r] && precedes) preceding[r] = probe;
      }
    }
    [[unroll]] for (uint r = 0; r < TILES_PER_ROUND; ++r) total += preceding[r];
  }
  return total;
}

// How many keys of tiles [0, tiles) other than own_tile precede `key`.
uint keys_preceding(uvec2 key, uint64_t sorted_keys_address, uint base, uint tiles, uint own_tile,
                    uint bucket) {
  return keys_preceding_rounds(key, sorted_keys_address, base, tiles, own_tile, bucket, 0,
                               TILES_PER_ROUND);
}
