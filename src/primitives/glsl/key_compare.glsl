// The order of the comparison sorts: radix-ordered keys (keys.glsl) compared on bits
// [BEGIN_BIT, END_BIT) only. Include after keys.glsl and the BEGIN_BIT / END_BIT constants.
bool key_less(uvec2 a, uvec2 b) {
  const uint width = END_BIT - BEGIN_BIT;
  if (KEY_WORDS == 1) {
    const uint mask = width >= 32 ? 0xffffffffu : (1u << width) - 1u;
    return ((a.x >> BEGIN_BIT) & mask) < ((b.x >> BEGIN_BIT) & mask);
  }
  const uint64_t mask = width >= 64 ? ~0ul : (1ul << width) - 1ul;
  return ((packUint2x32(a) >> BEGIN_BIT) & mask) < ((packUint2x32(b) >> BEGIN_BIT) & mask);
}
