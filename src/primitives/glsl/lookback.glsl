// Decoupled look-back over a fixed-size circular table of tile states, with a decoupled fallback.
//
// Entry (one uint64 per slot and digit): bits 63..33 the tag (the tile's sequence number in
// this sort: unique per pass and tile, 0 = never written), bit 32 the "inclusive" flag, bits
// 31..0 a count. Writers only use atomicMax, so a newer tag always wins, an inclusive prefix
// replaces the partial count of the same tile, and an entry of a later tile (the slot
// reused) is never overwritten by an earlier one. A reader that finds:
//   its tag           -> uses the count (partial: keep looking back; inclusive: done),
//   an older tag      -> not published yet: spins, and after SPIN_LIMIT rounds counts the
//                        predecessor's keys itself (fallback) and inserts that partial count,
//   a newer tag       -> the slot was reused: counts the predecessor's keys itself at once.
// So no forward progress of other workgroups is assumed and the table never needs clearing
// between passes (onesweep_clear.comp zeroes it once per sort, so that no entry of an earlier sort
// can carry a valid tag). The tags take the place of a tail counter: a slot may be reused as soon
// as its next tile comes (a table length later), and a reader that still needed the old
// entry notices the newer tag and recounts instead of reading a wrong count.
// All accesses are device-scope 64-bit atomics, so tag and count are always read together; an
// entry carries all it publishes (the recount reads keys an earlier dispatch wrote), so relaxed
// ordering suffices.
//
// Include after defining RADIX, lookback_slot_mask (table length in tiles, a power of two, - 1),
// LOOKBACK_WINDOW, SPIN_LIMIT, DIGITS_PER_INVOCATION, `shared uint fallback_digit_counts[RADIX]` and `void count_partition_digits(uint tile_index)`,
// which fills fallback_digit_counts with the tile's digit histogram (all invocations call
// it; it contains barriers).

const uint64_t LOOKBACK_INCLUSIVE = 1ul << 32;

layout(buffer_reference, std430, buffer_reference_align = 8) buffer LookbackTable { uint64_t v[]; };

uint64_t lookback_entry(uint tag, bool inclusive, uint count) {
  return (uint64_t(tag) << 33) | (inclusive ? LOOKBACK_INCLUSIVE : 0ul) | uint64_t(count);
}
uint lookback_tag(uint64_t entry) { return uint(entry >> 33); }

uint lookback_index(uint tile_index, uint digit) { return (tile_index & lookback_slot_mask) * RADIX + digit; }

void lookback_publish(uint64_t table, uint tile_index, uint digit, uint tag, bool inclusive, uint count) {
  atomicMax(LookbackTable(table).v[lookback_index(tile_index, digit)], lookback_entry(tag, inclusive, count));
}

uint64_t lookback_read(uint64_t table, uint tile_index, uint digit) {
  return atomicLoad(LookbackTable(table).v[lookback_index(tile_index, digit)], gl_ScopeDevice,
                    gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}

// The latest stalled predecessor (+ 1) of a look-back round, one word per round parity: a round
// clears the next round's word before its only barrier, so a round costs one barrier.
shared uint lookback_stalled[2];

// Call before a barrier that precedes look_back().
void look_back_prepare() {
  if (gl_LocalInvocationID.x == 0) lookback_stalled[0] = 0;
}

// Sums, for the digits d = gl_LocalInvocationID.x + k * gl_WorkGroupSize.x, the counts of all
// partitions before `tile_index` (tags first_tag + tile index) into exclusive[k]; counts each
// fallback in the u32 at fallback_counter.
// Each digit walks back on its own, LOOKBACK_WINDOW entries per round of reads so that a long
// chain of partial counts costs few memory latencies, until it meets an inclusive prefix or the
// first tile. A digit whose predecessor stays unpublished for SPIN_LIMIT rounds (or whose slot
// was reused) stops; then the workgroup recounts the latest such predecessor (the fallback) and
// the walks resume.
void look_back(uint64_t table, uint tile_index, uint first_tag, uint64_t fallback_counter,
               out uint exclusive[DIGITS_PER_INVOCATION]) {
  uint t = gl_LocalInvocationID.x;
  // next[k]: 1 + the predecessor digit k reads next; 0 once its prefix is complete.
  uint next[DIGITS_PER_INVOCATION];
  for (uint k = 0; k < DIGITS_PER_INVOCATION; ++k) {
    exclusive[k] = 0;
    next[k] = t + k * gl_WorkGroupSize.x < RADIX ? tile_index : 0u;
  }
  for (uint round = 0;; ++round) {
    uint stalled = 0;
    for (uint k = 0; k < DIGITS_PER_INVOCATION; ++k) {
      uint digit = t + k * gl_WorkGroupSize.x;
      uint spins = 0;
      while (next[k] != 0) {
        uint newest = next[k] - 1;
#ifdef CLOCK_PROFILE
        if (k == 0) ++clock_reads;
#endif
        uint64_t seen[LOOKBACK_WINDOW];
        [[unroll]] for (uint w = 0; w < LOOKBACK_WINDOW; ++w)
          seen[w] = w <= newest ? lookback_read(table, newest - w, digit) : 0ul;
        bool waiting = false, reused = false;
        [[unroll]] for (uint w = 0; w < LOOKBACK_WINDOW; ++w) {
          if (waiting || next[k] == 0 || w > newest) break;
          uint tag = first_tag + newest - w;
          uint seen_tag = lookback_tag(seen[w]);
          if (seen_tag != tag) {
            waiting = true;
            reused = seen_tag > tag;
            break;
          }
          exclusive[k] += uint(seen[w]);
          next[k] = (seen[w] & LOOKBACK_INCLUSIVE) != 0 ? 0u : newest - w;
        }
        if (!waiting) {
          spins = 0;
        } else if (reused || ++spins >= SPIN_LIMIT) {
          stalled = max(stalled, next[k]);
          break;
        }
      }
#ifdef CLOCK_PROFILE
      if (k == 0 && next[k] == 0) CLOCK_MARK(8);
#endif
    }
    // Every read of the next round's word (two rounds ago) ended before the fallback's barriers.
    if (t == 0) lookback_stalled[(round + 1) & 1] = 0;
    if (stalled != 0) atomicMax(lookback_stalled[round & 1], stalled);
    barrier();
    uint recount = lookback_stalled[round & 1];
    if (recount == 0) break;
    // Decoupled fallback: count the predecessor's keys here and offer the counts to others.
    uint predecessor = recount - 1;
    if (t == 0) atomicAdd(U32Array(fallback_counter).v[0], 1u);
    count_partition_digits(predecessor);
    for (uint k = 0; k < DIGITS_PER_INVOCATION; ++k) {
      if (next[k] != recount) continue;
      uint digit = t + k * gl_WorkGroupSize.x;
      uint c = fallback_digit_counts[digit];
      lookback_publish(table, predecessor, digit, first_tag + predecessor, false, c);
      exclusive[k] += c;
      next[k] = predecessor;
    }
  }
}
