// The keys of the emulated kernels' tests (topk_cuda_emulation.cpp, small_sort_cuda_emulation.cpp):
// n keys of a spread from a seed, and the mask of a bit range.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace cuda_emulation {

// "uniform", "few" (5 distinct), "equal", "sorted", "reversed", "narrow12" / "narrow24" (the top
// 12 or 24 bits equal: the first digits' buckets hold every key), "specials" (half of them NaNs of
// both signs and payloads, infinities, zeros of both signs, 1.0), "groupsN" (random values, each
// N times at random places: runs of N equal keys).
template <class U>
std::vector<U> make_keys(const std::string& spread, uint32_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<U> keys(n);
  if (spread.rfind("groups", 0) == 0) {
    const uint32_t group = uint32_t(std::stoul(spread.substr(6)));
    for (uint32_t i = 0; i < n; i += group) {
      const U value = U(rng());
      for (uint32_t j = i; j < n && j < i + group; ++j) keys[j] = value;
    }
    for (uint32_t i = n; i > 1; --i) std::swap(keys[i - 1], keys[rng() % i]);
    return keys;
  }
  for (uint32_t i = 0; i < n; ++i) {
    U r = U(rng());
    if (spread == "few") r = U((rng() % 5) * 0x0101010101010101ull);
    if (spread == "equal") r = U(0x1234567890abcdefull);
    if (spread == "sorted") r = U(i);
    if (spread == "reversed") r = U(~U(i));
    if (spread == "narrow12") r = U((r >> 12) | (U(0xabc) << (sizeof(U) * 8 - 12)));
    if (spread == "narrow24") r = U((r >> 24) | (U(0xabcdef) << (sizeof(U) * 8 - 24)));
    if (spread == "specials" && rng() % 2) {
      static const uint64_t f32[] = {0x7fc00000, 0xffc00000, 0x7f800000, 0xff800000,
                                     0x80000000, 0,          0x3f800000, 0x7fc00001};
      static const uint64_t f64[] = {0x7ff8000000000000ull, 0xfff8000000000000ull,
                                     0x7ff0000000000000ull, 0x8000000000000000ull,
                                     0,                     0x3ff0000000000000ull,
                                     0x7ff0000000000001ull, 0xffffffffffffffffull};
      r = sizeof(U) == 4 ? U(f32[rng() % 8]) : U(f64[rng() % 8]);
    }
    keys[i] = r;
  }
  return keys;
}

// The compared bits [begin_bit, end_bit) of a key, as a mask.
inline unsigned long long range_mask(uint32_t begin_bit, uint32_t end_bit) {
  return (end_bit >= 64 ? ~0ull : (1ull << end_bit) - 1) & ~((1ull << begin_bit) - 1);
}

}  // namespace cuda_emulation
