#include "inputs.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

namespace nvx_onesweep {

const char* dist_name(Dist d) {
  switch (d) {
    case Dist::uniform:
      return "uniform";
    case Dist::equal:
      return "equal";
    case Dist::skew99:
      return "skew99";
    case Dist::sorted:
      return "sorted";
  }
  return "?";
}

bool parse_dist(const std::string& name, Dist& d) {
  for (Dist c : {Dist::uniform, Dist::equal, Dist::skew99, Dist::sorted})
    if (name == dist_name(c)) {
      d = c;
      return true;
    }
  return false;
}

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

template <class K>
std::vector<K> make_keys(Dist dist, uint32_t n, uint64_t seed) {
  constexpr int bits = 8 * sizeof(K);
  std::vector<K> keys(n);
  uint64_t state = seed ^ (uint64_t(n) << 8) ^ uint64_t(bits);
  const K equal = K(0x5A5A5A5A5A5A5A5Aull);
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t r = splitmix64(state);
    switch (dist) {
      case Dist::uniform:
        keys[i] = K(r);
        break;
      case Dist::equal:
        keys[i] = equal;
        break;
      case Dist::skew99: {
        const uint64_t pick = splitmix64(state);
        const K top_byte = K(K(0x5A) << (bits - 8));
        keys[i] = pick % 100 != 0 ? K((K(r) & ~K(K(0xFF) << (bits - 8))) | top_byte) : K(r);
        break;
      }
      case Dist::sorted: {
        // Key i in [i * step, (i + 1) * step) with step = max key / n: non-decreasing.
        const uint64_t step = uint64_t(K(~K(0))) / n;
        keys[i] = K(uint64_t(i) * step + r % step);
        break;
      }
    }
  }
  return keys;
}

template <class K>
void reference_sort(const std::vector<K>& keys, std::vector<K>& sorted,
                    std::vector<uint32_t>& permutation) {
  constexpr int passes = int(sizeof(K));
  const size_t n = keys.size();
  std::vector<std::array<size_t, 256>> counts(passes);
  for (auto& c : counts) c.fill(0);
  for (K k : keys)
    for (int p = 0; p < passes; ++p) ++counts[p][(k >> (8 * p)) & 0xFF];
  sorted = keys;
  permutation.resize(n);
  std::iota(permutation.begin(), permutation.end(), 0u);
  std::vector<K> k2(n);
  std::vector<uint32_t> v2(n);
  for (int p = 0; p < passes; ++p) {
    auto& c = counts[p];
    if (std::count(c.begin(), c.end(), n) == 1) continue;  // every key has this digit
    size_t offset = 0;
    for (auto& x : c) offset += std::exchange(x, offset);
    for (size_t i = 0; i < n; ++i) {
      const size_t at = c[(sorted[i] >> (8 * p)) & 0xFF]++;
      k2[at] = sorted[i];
      v2[at] = permutation[i];
    }
    sorted.swap(k2);
    permutation.swap(v2);
  }
}

template <class K>
std::string cross_check(const std::vector<K>& keys, const std::vector<K>& sorted,
                        const std::vector<uint32_t>& permutation) {
  std::vector<std::pair<K, uint32_t>> pairs(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) pairs[i] = {keys[i], uint32_t(i)};
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < pairs.size(); ++i)
    if (pairs[i].first != sorted[i] || pairs[i].second != permutation[i])
      return "the host radix sort differs from std::stable_sort at index " + std::to_string(i);
  return "";
}

template <class K>
std::string compare(const std::vector<K>& expected, const std::vector<uint32_t>* expected_values,
                    const std::vector<K>& got, const std::vector<uint32_t>* got_values) {
  const auto mismatch = std::mismatch(expected.begin(), expected.end(), got.begin());
  if (mismatch.first != expected.end()) {
    const size_t i = size_t(mismatch.first - expected.begin());
    return "key " + std::to_string(i) + " is " + std::to_string(uint64_t(got[i])) + ", expected " +
           std::to_string(uint64_t(expected[i]));
  }
  if (expected_values && got_values) {
    const auto v =
        std::mismatch(expected_values->begin(), expected_values->end(), got_values->begin());
    if (v.first != expected_values->end()) {
      const size_t i = size_t(v.first - expected_values->begin());
      return "value " + std::to_string(i) + " is " + std::to_string((*got_values)[i]) +
             ", expected " + std::to_string((*expected_values)[i]) +
             " (not the stable permutation)";
    }
  }
  return "";
}

template std::vector<uint32_t> make_keys<uint32_t>(Dist, uint32_t, uint64_t);
template std::vector<uint64_t> make_keys<uint64_t>(Dist, uint32_t, uint64_t);
template void reference_sort<uint32_t>(const std::vector<uint32_t>&, std::vector<uint32_t>&,
                                       std::vector<uint32_t>&);
template void reference_sort<uint64_t>(const std::vector<uint64_t>&, std::vector<uint64_t>&,
                                       std::vector<uint32_t>&);
template std::string cross_check<uint32_t>(const std::vector<uint32_t>&,
                                           const std::vector<uint32_t>&,
                                           const std::vector<uint32_t>&);
template std::string cross_check<uint64_t>(const std::vector<uint64_t>&,
                                           const std::vector<uint64_t>&,
                                           const std::vector<uint32_t>&);
template std::string compare<uint32_t>(const std::vector<uint32_t>&, const std::vector<uint32_t>*,
                                       const std::vector<uint32_t>&, const std::vector<uint32_t>*);
template std::string compare<uint64_t>(const std::vector<uint64_t>&, const std::vector<uint32_t>*,
                                       const std::vector<uint64_t>&, const std::vector<uint32_t>*);

}  // namespace nvx_onesweep
