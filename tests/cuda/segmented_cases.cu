// The segmented sort and argsort on the CUDA face on the GPU (gpusort_cuda_segmented_sort,
// gpusort_cuda_segmented_argsort): every key type, keys alone and with 4- and 8-byte values, u32
// and u64 indices, u32 and u64 offsets, both orders, bit ranges, distributions (uniform, few
// distinct, all equal, float specials), layouts (one segment, equal lengths, random lengths with
// empty ones first, last and between, many segments of 0-3 keys), sizes from 0 to 2^20 + 7. Every
// output is compared whole with std::stable_sort of each segment (keys by their bits). Called by
// cuda_face_test.cu's main.
#include <cuda_runtime.h>
#include <gpusort/gpusort.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "face_keys.hpp"

namespace {

using face_test::cuda_check;
using face_test::radix;
using Type = face_test::KeyType;

int* failures_ = nullptr;
int* checks_ = nullptr;

enum Layout { one, equal_lengths, random_lengths, tiny };
const char* layout_names[] = {"one segment", "equal lengths", "random lengths", "tiny"};

std::vector<uint64_t> make_offsets(Layout layout, uint64_t n, std::mt19937_64& rng) {
  std::vector<uint64_t> offsets = {0};
  switch (layout) {
    case one: break;
    case equal_lengths: {
      const uint64_t length = std::max<uint64_t>(1, n / 64);
      for (uint64_t at = length; at < n; at += length) offsets.push_back(at);
      break;
    }
    case random_lengths:
      offsets.push_back(0);  // an empty first segment
      for (uint64_t at = 0; at < n;) {
        at = std::min<uint64_t>(n, at + rng() % (n / 8 + 2));
        offsets.push_back(at);
        if (rng() % 4 == 0) offsets.push_back(at);  // an empty one
      }
      break;
    case tiny:
      for (uint64_t at = 0; at < n;) {
        at = std::min<uint64_t>(n, at + rng() % 4);
        offsets.push_back(at);
      }
      break;
  }
  if (offsets.back() != n || offsets.size() == 1) offsets.push_back(n);
  if (layout != one) offsets.push_back(n);  // an empty last segment
  return offsets;
}

struct Case {
  const Type* type;
  uint32_t value_bytes;  // 0, 4, 8; argsort: index bytes
  bool argsort, descending;
  uint32_t begin_bit, end_bit;
  int distribution;  // 0 uniform, 1 few, 2 equal, 3 specials
  Layout layout;
  uint32_t offset_bytes;
  uint64_t n;
};

void fail(const Case& c, uint64_t segments, const std::string& what) {
  if (++*failures_ <= 30)
    std::fprintf(stderr, "FAIL segmented %s %s%u n=%llu %s (%llu segments, u%u offsets) %s bits [%u,%u) dist %d: %s\n",
                 c.type->name, c.argsort ? "argsort idx" : "values ", c.value_bytes,
                 (unsigned long long)c.n, layout_names[c.layout], (unsigned long long)segments,
                 c.offset_bytes * 8, c.descending ? "desc" : "asc", c.begin_bit, c.end_bit,
                 c.distribution, what.c_str());
}

void run(const Case& c, uint64_t seed) {
  ++*checks_;
  std::mt19937_64 rng(seed);
  const uint32_t kb = c.type->bytes;
  const uint64_t mask = kb == 4 ? 0xffffffffull : ~0ull;
  std::vector<uint64_t> k(c.n);
  for (uint64_t& key : k) {
    key = rng() & mask;
    if (c.distribution == 1) key = (rng() % 5) * 0x0101010101010101ull & mask;
    if (c.distribution == 2) key = 0x1234567890abcdefull & mask;
    if (c.distribution == 3 && rng() % 2) {
      static const uint64_t f32[] = {0x7fc00000, 0xffc00000, 0x7f800000, 0xff800000, 0x80000000, 0};
      static const uint64_t f64[] = {0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000000ull,
                                     0xfff0000000000000ull, 0x8000000000000000ull, 0};
      key = kb == 4 ? f32[rng() % 6] : f64[rng() % 6];
    }
  }
  const std::vector<uint64_t> offsets = make_offsets(c.layout, c.n, rng);
  const uint64_t segments = offsets.size() - 1;
  // The reference: positions sorted stably by (segment, compared bits).
  const uint32_t width = kb * 8, end = c.end_bit ? c.end_bit : width;
  const uint64_t field = end - c.begin_bit == 64 ? ~0ull : ((1ull << (end - c.begin_bit)) - 1);
  std::vector<uint64_t> compared(c.n);
  std::vector<uint32_t> segment_of(c.n);
  for (uint64_t s = 0; s < segments; ++s)
    for (uint64_t i = offsets[s]; i < offsets[s + 1]; ++i) segment_of[i] = uint32_t(s);
  for (uint64_t i = 0; i < c.n; ++i) {
    uint64_t o = radix(*c.type, k[i]);
    if (c.descending) o = ~o & mask;
    compared[i] = (o >> c.begin_bit) & field;
  }
  std::vector<uint32_t> p(c.n);
  std::iota(p.begin(), p.end(), 0u);
  std::stable_sort(p.begin(), p.end(), [&](uint32_t a, uint32_t b) {
    return segment_of[a] != segment_of[b] ? segment_of[a] < segment_of[b] : compared[a] < compared[b];
  });

  std::vector<unsigned char> keys(c.n * kb), values(c.n * 8), offset_bytes(offsets.size() * c.offset_bytes);
  for (uint64_t i = 0; i < c.n; ++i) std::memcpy(&keys[i * kb], &k[i], kb);
  for (uint64_t i = 0; i < c.n; ++i) {
    const uint64_t v = 0x9e3779b97f4a7c15ull * (i + 1);
    std::memcpy(&values[i * 8], &v, 8);
  }
  const uint32_t vb = c.value_bytes;
  std::vector<unsigned char> given(c.n * std::max(vb, 1u));
  if (vb && !c.argsort)
    for (uint64_t i = 0; i < c.n; ++i) std::memcpy(&given[i * vb], &values[i * 8], vb);
  for (size_t i = 0; i < offsets.size(); ++i) std::memcpy(&offset_bytes[i * c.offset_bytes], &offsets[i], c.offset_bytes);
  void *d_keys = nullptr, *d_values = nullptr, *d_offsets = nullptr;
  cuda_check(cudaMalloc(&d_keys, std::max<uint64_t>(c.n * kb, 1)), "cudaMalloc");
  cuda_check(cudaMalloc(&d_values, std::max<uint64_t>(c.n * 8, 1)), "cudaMalloc");
  cuda_check(cudaMalloc(&d_offsets, offset_bytes.size()), "cudaMalloc");
  cuda_check(cudaMemcpy(d_keys, keys.data(), c.n * kb, cudaMemcpyHostToDevice), "cudaMemcpy");
  if (vb && !c.argsort) cuda_check(cudaMemcpy(d_values, given.data(), c.n * vb, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemcpy(d_offsets, offset_bytes.data(), offset_bytes.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  gpusort_cuda_options o{};
  o.descending = c.descending, o.begin_bit = c.begin_bit, o.end_bit = c.end_bit;
  const gpusort_status status =
      c.argsort ? gpusort_cuda_segmented_argsort(c.type->key, d_keys, d_values, vb, c.n, d_offsets,
                                                 c.offset_bytes, segments, nullptr, &o)
                : gpusort_cuda_segmented_sort(c.type->key, d_keys, vb ? d_values : nullptr, vb, c.n,
                                              d_offsets, c.offset_bytes, segments, nullptr, &o);
  std::vector<unsigned char> out_keys(c.n * kb), out_values(c.n * 8);
  if (status == GPUSORT_OK) {
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    cuda_check(cudaMemcpy(out_keys.data(), d_keys, c.n * kb, cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (vb) cuda_check(cudaMemcpy(out_values.data(), d_values, c.n * vb, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
  cudaFree(d_keys), cudaFree(d_values), cudaFree(d_offsets);
  if (status != GPUSORT_OK) return fail(c, segments, std::string("failed: ") + gpusort_last_error());
  for (uint64_t i = 0; i < c.n; ++i) {
    const uint64_t from = c.argsort ? i : p[i];
    if (std::memcmp(&out_keys[i * kb], &keys[from * kb], kb) != 0)
      return fail(c, segments, "key " + std::to_string(i) + " differs");
    if (c.argsort) {
      uint64_t index = 0;
      std::memcpy(&index, &out_values[i * vb], vb);
      if (index != p[i])
        return fail(c, segments, "index " + std::to_string(i) + " is " + std::to_string(index) +
                                     ", expected " + std::to_string(p[i]));
    } else if (vb && std::memcmp(&out_values[i * vb], &given[from * vb], vb) != 0) {
      return fail(c, segments, "value " + std::to_string(i) + " differs");
    }
  }
}

}  // namespace

void segmented_cases(bool quick, int& failures, int& checks) {
  failures_ = &failures;
  checks_ = &checks;
  uint64_t seed = 7001;
  for (const Type& t : face_test::key_types)
    for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(1000), uint64_t(100000),
                       uint64_t(1u << 20) + 7})
      for (Layout layout : {one, equal_lengths, random_lengths, tiny}) {
        if (quick && n > (1u << 17) && layout != random_lengths) continue;
        const int distribution = t.kind == 2 ? int(seed % 4) : int(seed % 3);
        const uint32_t offset_bytes = seed % 2 ? 4 : 8;
        for (uint32_t vb : {0u, 4u, 8u})
          run(Case{&t, vb, false, seed % 3 == 0, 0, 0, distribution, layout, offset_bytes, n}, ++seed);
        for (uint32_t ib : {4u, 8u})
          run(Case{&t, ib, true, seed % 3 == 1, 0, 0, distribution, layout, offset_bytes, n}, ++seed);
      }
  // Bit ranges: a pass within the key, the low bits, the high bits.
  for (const Type& t : face_test::key_types)
    for (auto [b, e] : {std::pair<uint32_t, uint32_t>{8, t.bytes * 8 - 8}, {0, 12}, {t.bytes * 8 - 20, 0}}) {
      run(Case{&t, 4, false, b % 2 == 1, b, e, 0, random_lengths, 4, 30000}, ++seed);
      run(Case{&t, 8, true, b % 2 == 0, b, e, 1, tiny, 8, 30000}, ++seed);
    }
}
