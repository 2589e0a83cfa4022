// Keys and values as the sorts see them. Include after declaring the specialization constants
//   KEY_WORDS (1: 32-bit keys, 2: 64-bit), KEY_KIND (0 unsigned, 1 signed, 2 float),
//   DESCENDING (0/1), VALUE_WORDS (0: no values, 1: 4-byte, 2: 8-byte).
// A key is held as uvec2 (x: low word, y: high word, y = 0 for 32-bit keys). Radix order is the
// unsigned order of the mapped bits: the sorts map keys on their first read and back on their
// last write, so no separate pass is spent on it.

const uint KEY_KIND_UNSIGNED = 0;
const uint KEY_KIND_SIGNED = 1;
const uint KEY_KIND_FLOAT = 2;
const uint KEY_BITS = 32 * KEY_WORDS;

// Element i of an array of keys or values; with WIDE_INDICES (common.glsl) i may pass 2^31.
uvec2 load_key(uint64_t address, uint i) {
  if (WIDE_INDICES != 0)
    return KEY_WORDS == 1 ? uvec2(U32Array(element_at(address, i, 1)).v[0], 0u)
                          : U32x2Array(element_at(address, i, 2)).v[0];
  if (KEY_WORDS == 1) return uvec2(U32Array(address).v[i], 0u);
  return U32x2Array(address).v[i];
}

void store_key(uint64_t address, uint i, uvec2 key) {
  if (WIDE_INDICES != 0) {
    if (KEY_WORDS == 1) U32Array(element_at(address, i, 1)).v[0] = key.x;
    else U32x2Array(element_at(address, i, 2)).v[0] = key;
  } else if (KEY_WORDS == 1) {
    U32Array(address).v[i] = key.x;
  } else {
    U32x2Array(address).v[i] = key;
  }
}

uvec2 load_value(uint64_t address, uint i) {
  if (VALUE_WORDS == 0) return uvec2(0u);
  if (WIDE_INDICES != 0)
    return VALUE_WORDS == 1 ? uvec2(U32Array(element_at(address, i, 1)).v[0], 0u)
                            : U32x2Array(element_at(address, i, 2)).v[0];
  if (VALUE_WORDS == 1) return uvec2(U32Array(address).v[i], 0u);
  return U32x2Array(address).v[i];
}

void store_value(uint64_t address, uint i, uvec2 value) {
  if (VALUE_WORDS == 0) return;
  if (WIDE_INDICES != 0) {
    if (VALUE_WORDS == 1) U32Array(element_at(address, i, 1)).v[0] = value.x;
    else U32x2Array(element_at(address, i, 2)).v[0] = value;
  } else if (VALUE_WORDS == 1) {
    U32Array(address).v[i] = value.x;
  } else {
    U32x2Array(address).v[i] = value;
  }
}

uint key_top_word(uvec2 key) { return KEY_WORDS == 1 ? key.x : key.y; }

uvec2 key_word_mask() { return KEY_WORDS == 1 ? uvec2(0xffffffffu, 0u) : uvec2(0xffffffffu); }

// Floats follow IEEE-754 totalOrder: negative values (sign set, NaNs included) have all bits
// flipped, the rest only the sign bit. Signed integers flip the sign bit. Descending inverts.
const uvec2 KEY_SIGN_BIT = KEY_WORDS == 1 ? uvec2(0x80000000u, 0u) : uvec2(0u, 0x80000000u);

// Branch-free float flip: all bits where `spread` (the sign spread over a word by an arithmetic
// shift) is all ones, else only the sign bit.
uvec2 float_flip(uint spread) {
  return KEY_WORDS == 1 ? uvec2(spread | 0x80000000u, 0u) : uvec2(spread, spread | 0x80000000u);
}

uvec2 to_radix_order(uvec2 raw) {
  uvec2 ordered = raw;
  if (KEY_KIND == KEY_KIND_FLOAT) {
    ordered ^= float_flip(uint(int(key_top_word(raw)) >> 31));  // all ones for a negative float
  } else if (KEY_KIND == KEY_KIND_SIGNED) {
    ordered ^= KEY_SIGN_BIT;
  }
  if (DESCENDING != 0) ordered = ~ordered;
  return ordered & key_word_mask();
}

uvec2 from_radix_order(uvec2 ordered) {
  if (DESCENDING != 0) ordered = ~ordered;
  ordered &= key_word_mask();
  if (KEY_KIND == KEY_KIND_FLOAT) {
    ordered ^= float_flip(~uint(int(key_top_word(ordered)) >> 31));  // all ones for a negative float
  } else if (KEY_KIND == KEY_KIND_SIGNED) {
    ordered ^= KEY_SIGN_BIT;
  }
  return ordered & key_word_mask();
}

// Bits [bit, bit + bits) of a radix-ordered key; bits <= 32, and the field may straddle words.
uint key_digit(uvec2 ordered, uint bit, uint bits) {
  uint64_t wide = packUint2x32(ordered);
  uint mask = bits >= 32u ? 0xffffffffu : ((1u << bits) - 1u);
  return uint(wide >> bit) & mask;
}
