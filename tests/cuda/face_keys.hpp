// What the CUDA face's GPU test program (cuda_face_test.cu, topk_cases.cu) shares: the key types
// it covers, their radix order and NumPy's canonical form, and the runtime's error check.
#pragma once

#include <cuda_runtime.h>
#include <gpusort/gpusort.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "primitives/key_order.h"

namespace face_test {

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}

// A key type: its name, the C API's enumerator, its bytes and kind (0 unsigned, 1 signed,
// 2 float; key_order.h). Keys travel as raw bits, the low `bytes` of a u64.
struct KeyType {
  const char* name;
  gpusort_key_type key;
  uint32_t bytes, kind;
};
inline constexpr KeyType key_types[] = {
    {"u32", GPUSORT_KEY_U32, 4, 0}, {"i32", GPUSORT_KEY_I32, 4, 1}, {"f32", GPUSORT_KEY_F32, 4, 2},
    {"u64", GPUSORT_KEY_U64, 8, 0}, {"i64", GPUSORT_KEY_I64, 8, 1}, {"f64", GPUSORT_KEY_F64, 8, 2}};

// The key's radix order (ascending, the full width).
inline uint64_t radix(const KeyType& t, uint64_t bits) {
  return t.bytes == 4 ? uint64_t(gpusort::to_radix_order<uint32_t>(uint32_t(bits), t.kind))
                      : gpusort::to_radix_order<uint64_t>(bits, t.kind);
}

// NumPy's order: -0.0 as +0.0, every NaN as the default quiet NaN (then compared by totalOrder).
inline uint64_t canonical(const KeyType& t, uint64_t bits) {
  const uint64_t sign = t.bytes == 4 ? 0x80000000ull : 0x8000000000000000ull;
  const uint64_t infinity = t.bytes == 4 ? 0x7f800000ull : 0x7ff0000000000000ull;
  const uint64_t nan = t.bytes == 4 ? 0x7fc00000ull : 0x7ff8000000000000ull;
  if ((bits & ~sign & (t.bytes == 4 ? 0xffffffffull : ~0ull)) > infinity) return nan;
  return bits == sign ? 0 : bits;
}

}  // namespace face_test
