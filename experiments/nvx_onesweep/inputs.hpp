// Inputs (key distributions), the host reference (a stable LSD radix sort, checked against
// std::stable_sort up to a size) and the whole-output checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvx_onesweep {

enum class Dist { uniform, equal, skew99, sorted };
const char* dist_name(Dist d);
bool parse_dist(const std::string& name, Dist& d);

// n keys of 32 or 64 bits (K = uint32_t or uint64_t):
//   uniform  independent uniform bits
//   equal    every key 0x5A5A5A5A (both words for 64-bit keys)
//   skew99   99 % of the keys have the top byte 0x5A (one bucket of the last pass), the rest
//            uniform (as gpusort bench's -skew99 configurations)
//   sorted   non-decreasing keys spread over the whole range
template <class K>
std::vector<K> make_keys(Dist dist, uint32_t n, uint64_t seed);

// The stable sort of (keys, 0..n-1) by key: sorted keys and the stable permutation.
template <class K>
void reference_sort(const std::vector<K>& keys, std::vector<K>& sorted,
                    std::vector<uint32_t>& permutation);

// std::stable_sort of (key, index) pairs: the cross-check of reference_sort. Returns "" when both
// agree, else the first difference.
template <class K>
std::string cross_check(const std::vector<K>& keys, const std::vector<K>& sorted,
                        const std::vector<uint32_t>& permutation);

// "" when `got` (and `got_values`, if not null) equal the reference, else the first difference.
template <class K>
std::string compare(const std::vector<K>& expected, const std::vector<uint32_t>* expected_values,
                    const std::vector<K>& got, const std::vector<uint32_t>* got_values);

}  // namespace nvx_onesweep
