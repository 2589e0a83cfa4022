// What the small-array tile sort orders: an element made of a key's compared bits (bits
// [BEGIN_BIT, END_BIT) of its radix-ordered form, shifted down) and its origin slot in the tile.
// Ordering by both is a stable sort of the keys, and every element is distinct, so a
// compare-exchange needs one comparison. 32-bit keys pack both into one 64-bit order word
// (bits << 32 | origin), so that comparison is a single 64-bit compare; 64-bit keys carry the
// origin beside the order word (ELEMENT_ORIGIN_SEPARATE).
// With KEYS_ALONE defined as 32 or 64 (compile-time variants, for keys of that width without
// values, compared whole: the host picks them only then), equal keys cannot be told apart, so
// the origin is dropped and the element is the radix-ordered key itself: for 32-bit keys half
// the shuffles and shared-memory traffic of the 64-bit order word, for 64-bit keys no origin
// beside it and one comparison per exchange.
// Include after keys.glsl and the BEGIN_BIT / END_BIT constants.

#if defined(KEYS_ALONE) && KEYS_ALONE == 32
#define element_order_t uint
#else
#define element_order_t uint64_t
#endif

#ifdef KEYS_ALONE
const bool ELEMENT_ORIGIN_SEPARATE = false;
#else
const bool ELEMENT_ORIGIN_SEPARATE = KEY_WORDS != 1;
#endif
// The element holds the whole radix-ordered key, so the key is rebuilt from it instead of
// being gathered from its origin.
const bool WHOLE_KEY_COMPARED = BEGIN_BIT == 0 && END_BIT == KEY_BITS;

uint64_t compared_bits(uvec2 radix_key) {
  const uint width = END_BIT - BEGIN_BIT;
  if (KEY_WORDS == 1) {
    const uint mask = width >= 32 ? 0xffffffffu : (1u << width) - 1u;
    return uint64_t((radix_key.x >> BEGIN_BIT) & mask);
  }
  const uint64_t mask = width >= 64 ? ~0ul : (1ul << width) - 1ul;
  return (packUint2x32(radix_key) >> BEGIN_BIT) & mask;
}

#ifdef KEYS_ALONE
element_order_t element_order(uint64_t bits, uint origin) { return element_order_t(bits); }

// An empty slot (beyond the tile's count): all ones. It may tie with a key whose radix order is
// all ones and sort before it; the slots below the count then still hold every key's value.
element_order_t absent_element_order(uint origin) { return ~element_order_t(0); }

bool element_precedes(element_order_t order_a, uint origin_a, element_order_t order_b, uint origin_b) {
  return order_a < order_b;
}

// Not defined here: the origin is not kept, and nothing is gathered by it.
uint element_origin(element_order_t order, uint origin) { return origin; }

#if KEYS_ALONE == 32
uvec2 element_radix_key(element_order_t order) { return uvec2(order, 0u); }
#else
uvec2 element_radix_key(element_order_t order) { return unpackUint2x32(order); }
#endif

uint64_t element_bits(element_order_t order) { return uint64_t(order); }
#else
uint64_t element_order(uint64_t bits, uint origin) {
  return ELEMENT_ORIGIN_SEPARATE ? bits : (bits << 32) | uint64_t(origin);
}

// An empty slot (beyond the tile's count): all-ones bits, and its origin (>= count, above every
// key's), so it sorts after every key.
uint64_t absent_element_order(uint origin) {
  return ELEMENT_ORIGIN_SEPARATE ? ~0ul : (0xfffffffful << 32) | uint64_t(origin);
}

bool element_precedes(uint64_t order_a, uint origin_a, uint64_t order_b, uint origin_b) {
  if (!ELEMENT_ORIGIN_SEPARATE) return order_a < order_b;
  return order_a < order_b || (order_a == order_b && origin_a < origin_b);
}

uint element_origin(uint64_t order, uint origin) {
  return ELEMENT_ORIGIN_SEPARATE ? origin : uint(order);
}

// The radix-ordered key of an element; only when WHOLE_KEY_COMPARED.
uvec2 element_radix_key(uint64_t order) {
  return KEY_WORDS == 1 ? uvec2(uint(order >> 32), 0u) : unpackUint2x32(order);
}

// The compared bits of an element, shifted down (above them: zeros, or ones for an absent slot).
uint64_t element_bits(uint64_t order) { return ELEMENT_ORIGIN_SEPARATE ? order : order >> 32; }
#endif
