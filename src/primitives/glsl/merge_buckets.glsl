// The small-array sort's merge buckets (small_sort_tile writes where each begins in each tile,
// small_sort_merge searches only its key's bucket of every other tile). A key's bucket is
//   clamp((x - origin) >> shift, 0, BUCKETS - 1)
// of its compared bits x: monotone in x whatever origin and shift are, so keys of a lower bucket
// always precede and the merge stays exact. origin and shift follow the keys: small_sort_tile
// chooses them from a sample of the whole input (every workgroup the same), so that the middle
// keys (all but about 1 % at each end) spread over the buckets even when they share their top
// bits: keys below 2^k, or 99 % of them with one top byte. Fixed top bits (origin 0, shift
// width - BUCKET_BITS) put such keys into a few buckets, where each search takes 8-11 steps
// instead of one (docs/design/small-sort.md).
// Include after sort_element.glsl and the BUCKET_BITS constant (with MERGE_BUCKET_CHOICE, after
// bitonic_tile.glsl too). The parameters live in three words (origin low, origin high, shift) at
// a buffer address.

const uint BUCKETS = 1u << BUCKET_BITS;
// Without ADAPTIVE_BUCKETS (a specialization constant whose id the includer defines), origin 0
// and shift width - BUCKET_BITS: the buckets are the top compared bits, which costs no sample.
layout(constant_id = ADAPTIVE_BUCKETS_ID) const bool ADAPTIVE_BUCKETS = false;
uint64_t bucket_origin = 0;
uint bucket_shift = END_BIT - BEGIN_BIT - BUCKET_BITS;

uint merge_bucket(uint64_t bits) {
  if (bits < bucket_origin) return 0;
  return uint(min((bits - bucket_origin) >> bucket_shift, uint64_t(BUCKETS - 1)));
}

void load_merge_buckets(uint64_t params_address) {
  if (!ADAPTIVE_BUCKETS) return;
  bucket_origin = packUint2x32(uvec2(U32Array(params_address).v[0], U32Array(params_address).v[1]));
  bucket_shift = U32Array(params_address).v[2];
}

// findMSB of a 64-bit value (-1 for 0).
int find_msb64(uint64_t v) {
  const uint high = uint(v >> 32);
  return high != 0 ? 32 + findMSB(high) : findMSB(uint(v));
}

#ifdef MERGE_BUCKET_CHOICE
// The sample: one key per invocation, from each of WORKGROUP equal strata of the input, at a
// hashed offset in its stratum. Each subgroup sorts its keys across its lanes and publishes the
// (gl_SubgroupSize / 16 + 1)-th least and greatest (the 3rd of 32: a few outliers in a subgroup
// do not move them); the medians of those over the subgroups bound the window the buckets cover
// (keys outside it go to the end buckets). Nothing but the subgroups' two keys crosses
// invocations, so the choice costs no barrier of its own (it rides on the tile's last one).
// Per subgroup (at least 4 lanes each): its low and high sampled key.
shared uint64_t sample_extremes[2 * (WORKGROUP / 4)];

uint sample_slot(uint j, uint count) {
  const uint offset = (j * 0x9e3779b9u) >> 24;  // 0..255
  return uint((uint64_t(j) * 256u + offset) * count / (uint64_t(WORKGROUP) * 256u));
}

uint64_t shuffle64(uint64_t v, uint lane) {
  return packUint2x32(subgroupShuffle(unpackUint2x32(v), lane));
}

// Both components sorted ascending across the subgroup's lanes (a bitonic network of shuffles).
u64vec2 subgroup_sorted(u64vec2 v) {
  const uint lane = gl_SubgroupInvocationID;
  for (uint size = 2; size <= gl_SubgroupSize; size *= 2)
    for (uint stride = size / 2; stride >= 1; stride /= 2) {
      const u64vec2 other = u64vec2(shuffle_xor_u64(v.x, stride), shuffle_xor_u64(v.y, stride));
      const bool keep_low = ((lane & stride) == 0) == ((lane & size) == 0);
      v = keep_low ? min(v, other) : max(v, other);
    }
  return v;
}

// Loads this invocation's sample key and writes its subgroup's low and high key to shared
// memory; a barrier must follow before choose_merge_buckets.
void publish_sample_extremes(uint64_t keys_address, uint count) {
  const uint64_t bits = compared_bits(to_radix_order(load_key(keys_address, sample_slot(gl_LocalInvocationID.x, count))));
  const uint64_t sorted = subgroup_sorted(u64vec2(bits, 0)).x;
  const uint skip = gl_SubgroupSize / 16;
  const uint64_t low = shuffle64(sorted, skip), high = shuffle64(sorted, gl_SubgroupSize - 1 - skip);
  if (subgroupElect()) {
    sample_extremes[2 * gl_SubgroupID] = low;
    sample_extremes[2 * gl_SubgroupID + 1] = high;
  }
}

// The medians of sample_extremes[2 s] and [2 s + 1] over the subgroups s (the lower one for an
// even count). Every subgroup computes the same: with no more subgroups than lanes, by sorting
// across its lanes (absent entries the largest); else each lane ranks every gl_SubgroupSize-th
// entry and the one holding the wanted rank hands it round.
u64vec2 median_extremes() {
  const uint entries = gl_NumSubgroups, wanted = (entries - 1) / 2, lane = gl_SubgroupInvocationID;
  if (entries <= gl_SubgroupSize) {
    const u64vec2 v = lane < entries ? u64vec2(sample_extremes[2 * lane], sample_extremes[2 * lane + 1])
                                     : u64vec2(~0ul);
    const u64vec2 sorted = subgroup_sorted(v);
    return u64vec2(shuffle64(sorted.x, wanted), shuffle64(sorted.y, wanted));
  }
  u64vec2 found = u64vec2(0);
  bvec2 has = bvec2(false);
  for (uint e = lane; e < entries; e += gl_SubgroupSize) {
    const u64vec2 v = u64vec2(sample_extremes[2 * e], sample_extremes[2 * e + 1]);
    uvec2 rank = uvec2(0);
    for (uint j = 0; j < entries; ++j) {
      const u64vec2 w = u64vec2(sample_extremes[2 * j], sample_extremes[2 * j + 1]);
      rank.x += w.x < v.x || (w.x == v.x && j < e) ? 1u : 0u;
      rank.y += w.y < v.y || (w.y == v.y && j < e) ? 1u : 0u;
    }
    if (rank.x == wanted) found.x = v.x, has.x = true;
    if (rank.y == wanted) found.y = v.y, has.y = true;
  }
  return u64vec2(shuffle64(found.x, subgroupBallotFindLSB(subgroupBallot(has.x))),
                 shuffle64(found.y, subgroupBallotFindLSB(subgroupBallot(has.y))));
}

// Sets bucket_origin and bucket_shift from the published extremes (after a barrier): the window
// [median least, median greatest] cut into BUCKETS equal power-of-two steps.
void choose_merge_buckets() {
  const u64vec2 window = median_extremes();
  bucket_origin = window.x;
  bucket_shift = uint(max(find_msb64(window.y - window.x) + 1 - int(BUCKET_BITS), 0));
}

void store_merge_buckets(uint64_t params_address) {
  U32Array(params_address).v[0] = uint(bucket_origin);
  U32Array(params_address).v[1] = uint(bucket_origin >> 32);
  U32Array(params_address).v[2] = bucket_shift;
}
#endif
