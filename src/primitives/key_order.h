// Keys to radix order and back, one definition for the host (C++) and the CUDA kernels (nvcc):
// floats by IEEE-754 totalOrder (all bits flipped when negative, else the sign bit; NaNs of both
// signs included), signed integers with the sign bit flipped, unsigned keys as they are. Keys
// then compare as these unsigned numbers do; descending inverts them. The GLSL kernels have the
// same mapping in src/primitives/glsl/keys.glsl, the WebGPU kernels in web/.
#pragma once

#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define GPUSORT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define GPUSORT_HOST_DEVICE inline
#endif

namespace gpusort {

// SortSpec::key_kind (and keys.glsl's KEY_KIND).
inline constexpr uint32_t key_kind_unsigned = 0, key_kind_signed = 1, key_kind_float = 2;
// Floats in NumPy's order (to_numpy_radix_order below): a kind of the CUDA face's Onesweep passes
// alone, which keep the keys as they are and map them for each digit (the mapping is not one to
// one: every NaN maps to one number).
inline constexpr uint32_t key_kind_numpy_float = 3;

// Bits is uint32_t or an unsigned 64-bit type: the key's bits.
template <class Bits> GPUSORT_HOST_DEVICE constexpr Bits to_radix_order(Bits raw, uint32_t kind) {
  constexpr uint32_t top = uint32_t(sizeof(Bits) * 8 - 1);
  constexpr Bits sign = Bits(1) << top;
  // All ones where the sign bit is set (the sign shifted arithmetically), else 0.
  const Bits negative = Bits(std::make_signed_t<Bits>(raw) >> top);
  if (kind == key_kind_float) return raw ^ (negative | sign);
  if (kind == key_kind_signed) return raw ^ sign;
  return raw;
}

template <class Bits>
GPUSORT_HOST_DEVICE constexpr Bits from_radix_order(Bits ordered, uint32_t kind) {
  constexpr uint32_t top = uint32_t(sizeof(Bits) * 8 - 1);
  constexpr Bits sign = Bits(1) << top;
  // All ones where the sign bit is clear (the key was negative), else 0.
  const Bits negative = Bits(~(std::make_signed_t<Bits>(ordered) >> top));
  if (kind == key_kind_float) return ordered ^ (negative | sign);
  if (kind == key_kind_signed) return ordered ^ sign;
  return ordered;
}

// NumPy's float order (the Python module's default) from totalOrder: sort the canonical keys
// stably, -0.0 as +0.0 and every NaN as the default positive quiet NaN (after +inf in
// totalOrder), and write the original zeros' and NaNs' bits back over their runs. The Python host
// path (python/src/core_module.cpp) and the CUDA face's numpy_float_order
// (src/primitives/cuda/float_order.cu) both do. Bits is uint32_t (f32) or a 64-bit unsigned (f64).
template <class Bits> struct FloatKeyBits {
  static constexpr int width = int(sizeof(Bits) * 8);
  static constexpr Bits sign = Bits(1) << (width - 1);
  static constexpr Bits magnitude = ~sign;
  // All exponent bits set, mantissa 0: +inf. A magnitude above it is a NaN.
  static constexpr Bits infinity = width == 32 ? Bits(0x7f800000u) : Bits(0x7ff0000000000000ull);
  // The default quiet NaN, positive: what every NaN becomes while sorting.
  static constexpr Bits canonical_nan =
      width == 32 ? Bits(0x7fc00000u) : Bits(0x7ff8000000000000ull);

  static GPUSORT_HOST_DEVICE constexpr bool is_nan(Bits bits) {
    return (bits & magnitude) > infinity;
  }
  static GPUSORT_HOST_DEVICE constexpr bool is_zero(Bits bits) { return (bits & magnitude) == 0; }
  // What the key sorts as in NumPy's order.
  static GPUSORT_HOST_DEVICE constexpr Bits canonical(Bits bits) {
    if (is_nan(bits)) return canonical_nan;
    return bits == sign ? Bits(0) : bits;
  }
};

// A float in NumPy's order as radix order: its canonical key's.
template <class Bits>
GPUSORT_HOST_DEVICE constexpr Bits to_numpy_radix_order(Bits raw) {
  return to_radix_order(FloatKeyBits<Bits>::canonical(raw), key_kind_float);
}

static_assert(FloatKeyBits<uint32_t>::canonical(0xffc00001u) == 0x7fc00000u);  // -NaN
static_assert(FloatKeyBits<uint32_t>::canonical(0x80000000u) == 0u);          // -0.0f
static_assert(to_radix_order(0x80000000u, key_kind_float) == 0x7fffffffu);  // -0.0f
static_assert(to_radix_order(0x3f800000u, key_kind_float) == 0xbf800000u);  // 1.0f
static_assert(from_radix_order(0x7fffffffu, key_kind_float) == 0x80000000u);
static_assert(from_radix_order(0xbf800000u, key_kind_float) == 0x3f800000u);
static_assert(to_radix_order(0u, key_kind_signed) == 0x80000000u);
static_assert(to_numpy_radix_order(0x80000000u) == 0x80000000u);  // -0.0f as +0.0f
static_assert(to_numpy_radix_order(0xffc00001u) == 0xffc00000u);  // -NaN as the canonical NaN
static_assert(to_numpy_radix_order(0xff800000u) == 0x007fffffu);  // -inf

}  // namespace gpusort
