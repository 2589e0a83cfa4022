// The keys' radix order on the host: exactly what the shaders sort by (src/primitives/glsl/keys.glsl),
// for the CPU's merge of sorted runs. Floats: all bits flipped when negative, else the sign bit
// (IEEE-754 totalOrder, NaNs of both signs included); signed integers: the sign bit flipped;
// descending: the order inverted; then only bits [begin_bit, end_bit) take part.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "algorithms/sort_algorithm.hpp"

namespace gpusort {

template <class K> inline uint64_t radix_order_of(K key) {
  using Bits = std::conditional_t<sizeof(K) == 4, uint32_t, uint64_t>;
  static_assert(sizeof(K) == sizeof(Bits));
  Bits bits;
  std::memcpy(&bits, &key, sizeof bits);
  constexpr Bits sign = Bits(1) << (sizeof(Bits) * 8 - 1);
  if constexpr (std::is_floating_point_v<K>)
    bits = (bits & sign) ? Bits(~bits) : Bits(bits | sign);
  else if constexpr (std::is_signed_v<K>)
    bits ^= sign;
  return bits;
}

// The part of a key that a sort compares: keys compare as these unsigned numbers do.
struct KeyField {
  uint64_t invert = 0;  // all ones for descending
  uint32_t shift = 0;   // begin_bit
  uint64_t mask = ~uint64_t(0);

  explicit KeyField(const SortSpec& spec)
      : invert(spec.descending ? ~uint64_t(0) : 0),
        shift(spec.begin_bit),
        mask(spec.end_bit - spec.begin_bit == 64 ? ~uint64_t(0)
                                                 : (uint64_t(1) << (spec.end_bit - spec.begin_bit)) - 1) {}

  template <class K> uint64_t operator()(K key) const {
    return ((radix_order_of(key) ^ invert) >> shift) & mask;
  }
};

}  // namespace gpusort
