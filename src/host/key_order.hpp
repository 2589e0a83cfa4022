// The keys' radix order on the host (src/primitives/key_order.h, what the kernels sort by), for the
// CPU's merge of sorted runs: descending inverts the order, then only bits [begin_bit, end_bit)
// take part.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "algorithms/sort_algorithm.hpp"
#include "primitives/key_order.h"

namespace gpusort {

template <class K> inline uint64_t radix_order_of(K key) {
  using Bits = std::conditional_t<sizeof(K) == 4, uint32_t, uint64_t>;
  static_assert(sizeof(K) == sizeof(Bits));
  Bits bits;
  std::memcpy(&bits, &key, sizeof bits);
  constexpr uint32_t kind = std::is_floating_point_v<K> ? key_kind_float
                            : std::is_signed_v<K>       ? key_kind_signed
                                                        : key_kind_unsigned;
  return to_radix_order(bits, kind);
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
