// Decoupled look-back over a fixed-size circular table of tile states, with a decoupled fallback.
//
// Entry (one uint64 per slot and digit): bits 63..33 the tag (the tile_index's sequence number in
// this sort: unique per pass and tile_index, 0 = never written), bit 32 the "inclusive" flag, bits
// 31..0 a count. Writers only use atomicMax, so a newer tag always wins, an inclusive prefix
// replaces the partial count of the same tile_index, and an entry of a later tile_index (the slot
// reused) is never overwritten by an earlier one. A reader that finds:
//   its tag           -> uses the count (partial: keep looking back; inclusive: done),
//   an older tag      -> not published yet: spins, and after SPIN_LIMIT rounds counts the
//                        predecessor's keys itself (fallback) and inserts that partial count,
//   a newer tag       -> the slot was reused: counts the predecessor's keys itself at once.
// So no forward progress of other workgroups is assumed and the table never needs clearing
// between passes. All accesses are device-scope atomics; an entry carries all it publishes, so
// relaxed ordering suffices.
//
// Include after defining RADIX, LOOKBACK_SLOTS, SPIN_LIMIT, DIGITS_PER_INVOCATION,
// `shared uint fallback_digit_counts[RADIX]` and `void count_partition_digits(uint tile_index)`,
// which fills fallback_digit_counts with the tile_index's digit histogram (all invocations call
// it; it contains barriers).

const uint64_t LOOKBACK_INCLUSIVE = 1ul << 32;

layout(buffer_reference, std430, buffer_reference_align = 8) buffer LookbackTable { uint64_t v[]; };

uint64_t lookback_entry(uint tag, bool inclusive, uint count) {
  return (uint64_t(tag) << 33) | (inclusive ? LOOKBACK_INCLUSIVE : 0ul) | uint64_t(count);
}
uint lookback_tag(uint64_t entry) { return uint(entry >> 33); }

uint lookback_index(uint tile_index, uint digit) { return (tile_index % LOOKBACK_SLOTS) * RADIX + digit; }

void lookback_publish(uint64_t table, uint tile_index, uint digit, uint tag, bool inclusive, uint count) {
  atomicMax(LookbackTable(table).v[lookback_index(tile_index, digit)], lookback_entry(tag, inclusive, count));
}

uint64_t lookback_read(uint64_t table, uint tile_index, uint digit) {
  return atomicLoad(LookbackTable(table).v[lookback_index(tile_index, digit)], gl_ScopeDevice,
                    gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}

shared uint lookback_vote;

// Bitwise OR of `bits` over the workgroup (three barriers; all invocations call it).
uint workgroup_or(uint bits) {
  barrier();
  if (gl_LocalInvocationID.x == 0) lookback_vote = 0;
  barrier();
  if (bits != 0) atomicOr(lookback_vote, bits);
  barrier();
  return lookback_vote;
}

const uint VOTE_MISSING = 1u;
const uint VOTE_REUSED = 2u;
const uint VOTE_NOT_DONE = 4u;

// Sums, for the digits d = gl_LocalInvocationID.x + k * gl_WorkGroupSize.x, the counts of all
// tile_total before `tile_index` (tags first_tag + tile_index index) into exclusive[k].
void look_back(uint64_t table, uint tile_index, uint first_tag, out uint exclusive[DIGITS_PER_INVOCATION]) {
  uint t = gl_LocalInvocationID.x;
  uint done = 0;  // bit k: digit k has reached an inclusive prefix (or the first tile_index)
  uint mine = 0;
  for (uint k = 0; k < DIGITS_PER_INVOCATION; ++k) {
    exclusive[k] = 0;
    if (t + k * gl_WorkGroupSize.x < RADIX) mine |= 1u << k;
  }
  if (tile_index == 0) return;
  uint predecessor = tile_index - 1;
  uint spins = 0;
  while (true) {
    uint tag = first_tag + predecessor;
    uint64_t seen[DIGITS_PER_INVOCATION];
    uint missing = 0;
    bool reused = false;
    for (uint k = 0; k < DIGITS_PER_INVOCATION; ++k) {
      seen[k] = 0;
      if ((mine & ~done & (1u << k)) == 0) continue;
      seen[k] = lookback_read(table, predecessor, t + k * gl_WorkGroupSize.x);
      uint seen_tag = lookback_tag(seen[k]);
      if (seen_tag != tag) missing |= 1u << k;
      if (seen_tag > tag) reused = true;
    }
    uint vote = workgroup_or((missing != 0 ? VOTE_MISSING : 0u) | (reused ? VOTE_REUSED : 0u));
    if (vote == VOTE_MISSING && spins < SPIN_LIMIT) {
      ++spins;
      continue;
    }
    if ((vote & VOTE_MISSING) != 0) {
      // Decoupled fallback: count the predecessor's keys here and offer the counts to others.
      count_partition_digits(predecessor);
      for (uint k = 0; k < DIGITS_PER_INVOCATION; ++k) {
        if ((missing & (1u << k)) == 0) continue;
        uint digit = t + k * gl_WorkGroupSize.x;
        seen[k] = lookback_entry(tag, false, fallback_digit_counts[digit]);
        lookback_publish(table, predecessor, digit, tag, false, fallback_digit_counts[digit]);
      }
    }
    for (uint k = 0; k < DIGITS_PER_INVOCATION; ++k) {
      if ((mine & ~done & (1u << k)) == 0) continue;
      exclusive[k] += uint(seen[k]);
      if ((seen[k] & LOOKBACK_INCLUSIVE) != 0 || predecessor == 0) done |= 1u << k;
    }
    if (workgroup_or(done != mine ? VOTE_NOT_DONE : 0u) == 0) break;
    --predecessor;
    spins = 0;
  }
}
