// What the top-k kernels that read keys share: their specialization constants (the key's layout,
// the compared bits, keys per invocation), the key as the select sees it (radix order, only the
// compared bits), and the state block (constants.h).
#include "constants.h"
#include "sort_key_spec.glsl"
layout(constant_id = TOPK_ID_ITEMS) const uint ITEMS = 8;

#include "keys.glsl"

// The compared bits [BEGIN_BIT, END_BIT) of a radix-ordered key.
uint64_t compared_bits(uvec2 ordered) {
  const uint64_t below_end = END_BIT >= 64 ? ~uint64_t(0) : ((uint64_t(1) << END_BIT) - 1ul);
  const uint64_t below_begin = (uint64_t(1) << BEGIN_BIT) - 1ul;
  return packUint2x32(ordered) & (below_end & ~below_begin);
}

// Key i as the select orders it: the compared bits of its radix order (descending inverted).
uint64_t select_key(uint64_t keys_address, uint i) {
  return compared_bits(to_radix_order(load_key(keys_address, i)));
}

uint state_word(uint64_t state_address, uint word) { return U32Array(state_address).v[word]; }
uint64_t state_prefix(uint64_t state_address) {
  return U64Array(state_address).v[TOPK_STATE_PREFIX / 2];
}

// Digit p of the select (from the top of the compared bits down, the width split evenly into
// passes of at most TOPK_MAX_DIGIT_BITS, as many as RadixSelectTopK::passes()): its lowest bit (x)
// and its width (y).
uint topk_passes() { return (END_BIT - BEGIN_BIT + TOPK_MAX_DIGIT_BITS - 1) / TOPK_MAX_DIGIT_BITS; }
uvec2 topk_digit(uint p) {
  const uint passes = topk_passes();
  uint top = END_BIT, bits = 0;
  for (uint q = 0; q <= p; ++q) {
    bits = (top - BEGIN_BIT + (passes - q) - 1) / (passes - q);
    top -= bits;
  }
  return uvec2(top, bits);
}
