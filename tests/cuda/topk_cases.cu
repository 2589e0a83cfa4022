// Top-k on the CUDA face on the GPU (gpusort_cuda_topk, and gpusort::cuda::topk_raw through
// cxx_topk.cpp for NumPy's float order and the templates): every key type, distributions (uniform,
// all equal, few distinct, sorted, reversed, skewed, float specials: NaNs of both signs and other
// payloads, zeros of both signs, infinities, the top 16 bits equal), k at 0, 1, 32, 1024,
// 2047-2049, n - 1 and n, sizes from 0 to 2^20 + 7 and one of a few million, both orders, bit
// ranges, 4- and 8-byte values, u32 and u64 indices, keys alone or not at all, a GPU-side count,
// the caller's scratch. Every output is compared whole with the first k of std::stable_sort of the
// same keys (keys by their bits), and the slots past the results are checked untouched. Called by
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

std::string cxx_topk_call(int key_type, const void* keys, unsigned long long n,
                          unsigned long long k, void* keys_out, const void* values,
                          void* values_out, unsigned value_bytes, void* indices,
                          unsigned index_bytes, void* stream, bool descending, unsigned begin_bit,
                          unsigned end_bit, const unsigned* count, bool numpy_float_order);
std::string cxx_topk_templates(const float* keys, const unsigned long long* values,
                               unsigned long long n, unsigned long long k, float* keys_out,
                               unsigned long long* values_out, float* keys_out2, unsigned* indices,
                               float* keys_out3, void* stream);

namespace {

int* failures_ = nullptr;
int* checks_ = nullptr;

using face_test::canonical;
using face_test::cuda_check;
using face_test::radix;
using KeyKind = face_test::KeyType;
constexpr const KeyKind (&kinds)[6] = face_test::key_types;

// (After spread_count, outside the loops over every spread: random values each 3, 32 or 33 times
// at random places.)
enum Spread {
  uniform,
  equal,
  few,
  sorted,
  reversed,
  skewed,
  specials,
  narrow,
  spread_count,
  groups3 = spread_count,
  groups32,
  groups33
};
const char* spread_names[] = {"uniform",  "equal",  "few",     "sorted",   "reversed", "skewed",
                              "specials", "narrow", "groups3", "groups32", "groups33"};

// Keys as raw bits (the low `bytes` of each u64).
std::vector<uint64_t> make_keys(const KeyKind& t, Spread d, uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> k(n);
  const uint64_t mask = t.bytes == 4 ? 0xffffffffull : ~0ull;
  static const uint64_t f32[] = {0x7fc00000, 0xffc00000, 0x7f800000, 0xff800000, 0x80000000,
                                 0,          0x3f800000, 0xbf800000, 0x7fc00001, 0xff800001};
  static const uint64_t f64[] = {0x7ff8000000000000ull, 0xfff8000000000000ull,
                                 0x7ff0000000000000ull, 0xfff0000000000000ull,
                                 0x8000000000000000ull, 0,
                                 0x3ff0000000000000ull, 0xbff0000000000000ull,
                                 0x7ff0000000000001ull, 0xfff8000000000001ull};
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t r = rng() & mask;
    switch (d) {
      case equal:
        r = 0x1234567890abcdefull & mask;
        break;
      case few:
        r = (rng() % 5) * 0x0101010101010101ull & mask;
        break;
      case skewed:
        if (rng() % 100 != 0) r = (r & (mask >> 8)) | (0x5aull << (t.bytes * 8 - 8));
        break;
      case specials:
        if (rng() % 2) r = t.bytes == 4 ? f32[rng() % 10] : f64[rng() % 10];
        break;
      case narrow:  // the top 16 bits equal: a pass after the first lists the candidates
        r = (r >> 16) | (0xabcdull << (t.bytes * 8 - 16));
        break;
      default:
        break;
    }
    k[i] = r;
  }
  if (d == groups3 || d == groups32 || d == groups33) {
    const uint64_t group = d == groups3 ? 3 : d == groups32 ? 32 : 33;
    for (uint64_t i = 0; i < n; ++i) k[i] = k[i - i % group];
    for (uint64_t i = n; i > 1; --i) std::swap(k[i - 1], k[rng() % i]);
  }
  if (d == sorted || d == reversed) {
    std::sort(k.begin(), k.end(),
              [&](uint64_t a, uint64_t b) { return radix(t, a) < radix(t, b); });
    if (d == reversed) std::reverse(k.begin(), k.end());
  }
  return k;
}

// One array of keys and how they are compared.
struct Array {
  const KeyKind* type;
  Spread spread;
  uint64_t n;
  bool descending = false;
  uint32_t begin_bit = 0, end_bit = 0;  // end 0: the full key
  bool numpy = false;                   // floats in NumPy's order (the C++ face)
  uint64_t count = ~0ull;               // below n: a GPU-side count
};

// The positions of the stable sort of the first `count` keys.
std::vector<uint32_t> stable_order(const Array& a, const std::vector<uint64_t>& keys,
                                   uint64_t count) {
  const KeyKind& t = *a.type;
  const uint32_t width = t.bytes * 8, end = a.end_bit ? a.end_bit : width;
  const uint64_t field = end - a.begin_bit == 64 ? ~0ull : ((1ull << (end - a.begin_bit)) - 1);
  const uint64_t mask = t.bytes == 4 ? 0xffffffffull : ~0ull;
  std::vector<uint64_t> key(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t o = radix(t, a.numpy && t.kind == 2 ? canonical(t, keys[i]) : keys[i]);
    if (a.descending) o = ~o & mask;
    key[i] = (o >> a.begin_bit) & field;
  }
  std::vector<uint32_t> p(count);
  std::iota(p.begin(), p.end(), 0u);
  std::stable_sort(p.begin(), p.end(), [&](uint32_t x, uint32_t y) { return key[x] < key[y]; });
  return p;
}

// What a run asks for: outputs (keys, values of 4 or 8 bytes, indices of 4 or 8 bytes), and
// whether scratch is the caller's.
struct Outputs {
  bool keys;
  uint32_t value_bytes, index_bytes;
  bool caller_scratch;
};
const Outputs output_variants[] = {{true, 0, 0, false}, {true, 4, 0, false}, {false, 0, 4, false},
                                   {true, 8, 8, false}, {true, 0, 8, true},  {false, 4, 4, false},
                                   {true, 8, 4, false}};

std::string describe(const Array& a, uint64_t k, const Outputs& o) {
  char text[320];
  std::snprintf(
      text, sizeof text,
      "topk %s %s n=%llu k=%llu count=%lld %s bits [%u,%u)%s: keys %d values %u indices %u%s",
      a.type->name, spread_names[a.spread], (unsigned long long)a.n, (unsigned long long)k,
      a.count < a.n ? (long long)a.count : -1LL, a.descending ? "desc" : "asc", a.begin_bit,
      a.end_bit, a.numpy ? " numpy order" : "", int(o.keys), o.value_bytes, o.index_bytes,
      o.caller_scratch ? " caller scratch" : "");
  return text;
}

bool fail(const std::string& what) {
  if (++*failures_ <= 40) std::fprintf(stderr, "FAIL %s\n", what.c_str());
  return false;
}

// The device side of one array: its keys, values and GPU-side count, uploaded once.
struct DeviceArray {
  void* keys = nullptr;
  void* values = nullptr;
  uint32_t* count = nullptr;
};

const unsigned char poison = 0xab;

void run(const Array& a, const std::vector<uint64_t>& keys, const std::vector<uint64_t>& values,
         const std::vector<uint32_t>& order, const DeviceArray& d, uint64_t k, const Outputs& o,
         cudaStream_t stream) {
  ++*checks_;
  const KeyKind& t = *a.type;
  const uint32_t kb = t.bytes;
  const uint64_t slots = k + 1;  // one past k: checked untouched
  void *keys_out = nullptr, *values_out = nullptr, *indices = nullptr, *scratch = nullptr;
  cuda_check(cudaMalloc(&keys_out, slots * 8), "cudaMalloc");
  cuda_check(cudaMalloc(&values_out, slots * 8), "cudaMalloc");
  cuda_check(cudaMalloc(&indices, slots * 8), "cudaMalloc");
  cuda_check(cudaMemset(keys_out, poison, slots * 8), "cudaMemset");
  cuda_check(cudaMemset(values_out, poison, slots * 8), "cudaMemset");
  cuda_check(cudaMemset(indices, poison, slots * 8), "cudaMemset");
  gpusort_cuda_options options{};
  options.descending = a.descending;
  options.begin_bit = a.begin_bit;
  options.end_bit = a.end_bit;
  if (a.count < a.n) options.count = d.count;
  if (o.caller_scratch) {
    uint64_t bytes = 0;
    if (gpusort_cuda_topk_scratch_bytes(t.key, a.n, k, &options, &bytes) != GPUSORT_OK) {
      fail(describe(a, k, o) + ": scratch_bytes: " + gpusort_last_error());
      cudaFree(keys_out), cudaFree(values_out), cudaFree(indices);
      return;
    }
    cuda_check(cudaMalloc(&scratch, std::max<uint64_t>(bytes, 1)), "cudaMalloc");
    // Stale contents: nothing may rely on the scratch being cleared.
    cuda_check(cudaMemset(scratch, 0x5c, std::max<uint64_t>(bytes, 1)), "cudaMemset");
    options.scratch = scratch;
    options.scratch_size = bytes;
  }
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  void* ko = o.keys ? keys_out : nullptr;
  const void* vi = o.value_bytes ? d.values : nullptr;
  void* vo = o.value_bytes ? values_out : nullptr;
  void* io = o.index_bytes ? indices : nullptr;
  std::string error;
  if (a.numpy) {
    error = cxx_topk_call(int(t.key), d.keys, a.n, k, ko, vi, vo, o.value_bytes, io, o.index_bytes,
                          stream, a.descending, a.begin_bit, a.end_bit, options.count, true);
  } else if (gpusort_cuda_topk(t.key, d.keys, a.n, k, ko, vi, vo, o.value_bytes, io, o.index_bytes,
                               stream, &options) != GPUSORT_OK) {
    error = gpusort_last_error();
  }
  std::vector<unsigned char> got_keys(slots * 8), got_values(slots * 8), got_indices(slots * 8);
  if (error.empty()) {
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    cuda_check(cudaMemcpy(got_keys.data(), keys_out, slots * 8, cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    cuda_check(cudaMemcpy(got_values.data(), values_out, slots * 8, cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    cuda_check(cudaMemcpy(got_indices.data(), indices, slots * 8, cudaMemcpyDeviceToHost),
               "cudaMemcpy");
  }
  cudaFree(keys_out), cudaFree(values_out), cudaFree(indices), cudaFree(scratch);
  if (!error.empty()) return void(fail(describe(a, k, o) + ": failed: " + error));
  const uint64_t results = std::min<uint64_t>(k, std::min(a.count, a.n));
  // Whole outputs: the results, then poison to the end (past the results and one past k).
  for (uint64_t i = 0; i < slots; ++i) {
    const bool result = i < results;
    const uint64_t from = result ? order[i] : 0;
    if (o.keys) {
      unsigned char want[8];
      if (result)
        std::memcpy(want, &keys[from], kb);
      else
        std::memset(want, poison, kb);
      if (std::memcmp(&got_keys[i * kb], want, kb) != 0) {
        uint64_t g = 0;
        std::memcpy(&g, &got_keys[i * kb], kb);
        char got[40];
        std::snprintf(got, sizeof got, "0x%llx", (unsigned long long)g);
        return void(
            fail(describe(a, k, o) + ": key " + std::to_string(i) + " is " + got +
                 (result ? ", expected key " + std::to_string(from) : ", expected untouched")));
      }
    }
    if (o.value_bytes) {
      unsigned char want[8];
      if (result)
        std::memcpy(want, &values[from], o.value_bytes);
      else
        std::memset(want, poison, o.value_bytes);
      if (std::memcmp(&got_values[i * o.value_bytes], want, o.value_bytes) != 0)
        return void(fail(describe(a, k, o) + ": value " + std::to_string(i) + " differs"));
    }
    if (o.index_bytes) {
      uint64_t want = 0, g = 0;
      if (result)
        want = from;
      else
        std::memset(&want, poison, o.index_bytes);
      std::memcpy(&g, &got_indices[i * o.index_bytes], o.index_bytes);
      if (g != want)
        return void(fail(describe(a, k, o) + ": index " + std::to_string(i) + " is " +
                         std::to_string(g) + ", expected " + std::to_string(want)));
    }
  }
}

// Every k of `ks` (those within n) on one array, each with two of the output variants.
void run_array(const Array& a, const std::vector<uint64_t>& ks, uint64_t seed,
               cudaStream_t stream) {
  const KeyKind& t = *a.type;
  const std::vector<uint64_t> keys = make_keys(t, a.spread, a.n, seed);
  std::vector<uint64_t> values(a.n);
  for (uint64_t i = 0; i < a.n; ++i) values[i] = 0x9e3779b97f4a7c15ull * (i + 1) + seed;
  const std::vector<uint32_t> order = stable_order(a, keys, std::min(a.count, a.n));
  DeviceArray d;
  cuda_check(cudaMalloc(&d.keys, std::max<uint64_t>(a.n * t.bytes, 1)), "cudaMalloc");
  cuda_check(cudaMalloc(&d.values, std::max<uint64_t>(a.n * 8, 1)), "cudaMalloc");
  cuda_check(cudaMalloc(&d.count, 4), "cudaMalloc");
  std::vector<unsigned char> packed(a.n * t.bytes);
  for (uint64_t i = 0; i < a.n; ++i) std::memcpy(&packed[i * t.bytes], &keys[i], t.bytes);
  cuda_check(cudaMemcpy(d.keys, packed.data(), packed.size(), cudaMemcpyHostToDevice),
             "cudaMemcpy");
  const uint32_t count32 = uint32_t(std::min(a.count, a.n));
  cuda_check(cudaMemcpy(d.count, &count32, 4, cudaMemcpyHostToDevice), "cudaMemcpy");
  uint64_t variant = seed;
  for (uint64_t k : ks) {
    if (k > a.n) continue;
    for (int twice = 0; twice < 2; ++twice) {
      const size_t v = (variant + twice * 3) % (sizeof output_variants / sizeof output_variants[0]);
      Outputs o = output_variants[v];
      // 4-byte values: the low half of each 8-byte value, laid out as their own array.
      if (o.value_bytes == 4) {
        std::vector<uint64_t> low(a.n);
        std::vector<uint32_t> packed_low(a.n);
        for (uint64_t i = 0; i < a.n; ++i) packed_low[i] = uint32_t(values[i]);
        cuda_check(cudaMemcpy(d.values, packed_low.data(), a.n * 4, cudaMemcpyHostToDevice),
                   "cudaMemcpy");
        for (uint64_t i = 0; i < a.n; ++i) low[i] = packed_low[i];
        run(a, keys, low, order, d, k, o, stream);
      } else {
        if (o.value_bytes == 8)
          cuda_check(cudaMemcpy(d.values, values.data(), a.n * 8, cudaMemcpyHostToDevice),
                     "cudaMemcpy");
        run(a, keys, values, order, d, k, o, stream);
      }
    }
    ++variant;
  }
  cudaFree(d.keys), cudaFree(d.values), cudaFree(d.count);
}

std::vector<uint64_t> ks_for(uint64_t n) {
  std::vector<uint64_t> ks = {0, 1, 32, 1024, 2047, 2048, 2049};
  if (n >= 1) ks.push_back(n - 1);
  ks.push_back(n);
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
}

// The templates of the C++ face on f32 keys, against the C face's results for the same call.
void templates(cudaStream_t stream) {
  ++*checks_;
  const uint64_t n = 50000, k = 777;
  std::vector<float> keys(n);
  std::vector<unsigned long long> values(n);
  std::mt19937 rng(7);
  for (uint64_t i = 0; i < n; ++i) keys[i] = float(rng() % 1000) - 500.0f, values[i] = i * 3 + 1;
  float *d_keys, *out1, *out2, *out3;
  unsigned long long *d_values, *values_out;
  unsigned* indices;
  cuda_check(cudaMalloc(&d_keys, n * 4), "cudaMalloc");
  cuda_check(cudaMalloc(&d_values, n * 8), "cudaMalloc");
  cuda_check(cudaMalloc(&out1, k * 4), "cudaMalloc");
  cuda_check(cudaMalloc(&out2, k * 4), "cudaMalloc");
  cuda_check(cudaMalloc(&out3, k * 4), "cudaMalloc");
  cuda_check(cudaMalloc(&values_out, k * 8), "cudaMalloc");
  cuda_check(cudaMalloc(&indices, k * 4), "cudaMalloc");
  cuda_check(cudaMemcpy(d_keys, keys.data(), n * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemcpy(d_values, values.data(), n * 8, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const std::string error =
      cxx_topk_templates(d_keys, d_values, n, k, out1, values_out, out2, indices, out3, stream);
  std::vector<float> g1(k), g2(k), g3(k);
  std::vector<unsigned long long> gv(k);
  std::vector<unsigned> gi(k);
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  cuda_check(cudaMemcpy(g1.data(), out1, k * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cuda_check(cudaMemcpy(g2.data(), out2, k * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cuda_check(cudaMemcpy(g3.data(), out3, k * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cuda_check(cudaMemcpy(gv.data(), values_out, k * 8, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cuda_check(cudaMemcpy(gi.data(), indices, k * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(d_keys), cudaFree(d_values), cudaFree(out1), cudaFree(out2), cudaFree(out3);
  cudaFree(values_out), cudaFree(indices);
  if (!error.empty()) return void(fail("topk templates: " + error));
  std::vector<uint32_t> p(n);
  std::iota(p.begin(), p.end(), 0u);
  std::stable_sort(p.begin(), p.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  for (uint64_t i = 0; i < k; ++i)
    if (g1[i] != keys[p[i]] || g2[i] != keys[p[i]] || g3[i] != keys[p[i]] ||
        gv[i] != values[p[i]] || gi[i] != p[i])
      return void(fail("topk templates: result " + std::to_string(i) + " differs"));
}

}  // namespace

// The top-k cases; counts its checks and failures into the test program's.
// Per segment (gpusort_cuda_topk_segments): each segment's first min(k, length) of its stable
// sort, one segment after another, with their values and positions, and the result offsets; every
// output compared whole, one slot past the results checked untouched.
// rows > 0: through gpusort_cuda_topk_rows, the offsets those rows' (positions within the row, no
// result offsets written).
template <class O>
void run_segments(const Array& a, const std::vector<O>& offsets, uint64_t k, uint32_t value_bytes,
                  uint32_t index_bytes, bool with_keys, uint64_t seed, cudaStream_t stream,
                  uint64_t rows = 0) {
  ++*checks_;
  const KeyKind& t = *a.type;
  const std::vector<uint64_t> keys = make_keys(t, a.spread, a.n, seed);
  std::vector<uint64_t> values(a.n);
  for (uint64_t i = 0; i < a.n; ++i) values[i] = 0x9e3779b97f4a7c15ull * (i + 1);
  const uint64_t segments = offsets.size() - 1;
  const uint64_t slots = std::min<uint64_t>(a.n, segments * k) + 1;
  std::vector<uint64_t> want_keys(slots, ~0ull), want_values(slots, ~0ull),
      want_indices(slots, ~0ull);
  std::vector<uint32_t> want_offsets(segments + 1);
  uint64_t at = 0;
  for (uint64_t s = 0; s < segments; ++s) {
    want_offsets[s] = uint32_t(at);
    const std::vector<uint64_t> part(keys.begin() + offsets[s], keys.begin() + offsets[s + 1]);
    const std::vector<uint32_t> order = stable_order(a, part, part.size());
    for (uint64_t j = 0; j < std::min<uint64_t>(k, part.size()); ++j, ++at) {
      const uint64_t i = offsets[s] + order[j];
      want_keys[at] = keys[i];
      want_values[at] = value_bytes == 4 ? uint32_t(values[i]) : values[i];
      want_indices[at] = rows ? i - offsets[s] : i;
    }
  }
  want_offsets[segments] = uint32_t(at);
  const uint32_t kb = t.bytes;
  std::vector<unsigned char> host_keys(a.n * kb), host_values(a.n * 8);
  for (uint64_t i = 0; i < a.n; ++i) {
    std::memcpy(&host_keys[i * kb], &keys[i], kb);
    std::memcpy(&host_values[i * 8], &values[i], 8);
  }
  if (value_bytes == 4)
    for (uint64_t i = 0; i < a.n; ++i) std::memcpy(&host_values[i * 4], &values[i], 4);
  void *d_keys = nullptr, *d_values = nullptr, *d_offsets = nullptr, *keys_out = nullptr,
       *values_out = nullptr, *indices = nullptr, *result_offsets = nullptr;
  cuda_check(cudaMalloc(&d_keys, std::max<uint64_t>(a.n * kb, 1)), "cudaMalloc");
  cuda_check(cudaMalloc(&d_values, std::max<uint64_t>(a.n * 8, 1)), "cudaMalloc");
  cuda_check(cudaMalloc(&d_offsets, offsets.size() * sizeof(O)), "cudaMalloc");
  cuda_check(cudaMalloc(&keys_out, slots * 8), "cudaMalloc");
  cuda_check(cudaMalloc(&values_out, slots * 8), "cudaMalloc");
  cuda_check(cudaMalloc(&indices, slots * 8), "cudaMalloc");
  cuda_check(cudaMalloc(&result_offsets, (segments + 2) * 4), "cudaMalloc");
  cuda_check(cudaMemcpy(d_keys, host_keys.data(), a.n * kb, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemcpy(d_values, host_values.data(), a.n * 8, cudaMemcpyHostToDevice),
             "cudaMemcpy");
  cuda_check(
      cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(O), cudaMemcpyHostToDevice),
      "cudaMemcpy");
  for (void* p : {keys_out, values_out, indices})
    cuda_check(cudaMemset(p, poison, slots * 8), "cudaMemset");
  cuda_check(cudaMemset(result_offsets, poison, (segments + 2) * 4), "cudaMemset");
  // The copies and the poison (on the legacy stream, which the test's non-blocking stream does not
  // wait for) done before the call: else a late memset overwrites results (seen on a busy GPU).
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  gpusort_cuda_options options{};
  options.descending = a.descending;
  options.begin_bit = a.begin_bit;
  options.end_bit = a.end_bit;
  char text[200];
  std::snprintf(
      text, sizeof text,
      "topk_segments %s %s n=%llu S=%llu k=%llu %s offsets %u values %u indices %u keys %d", t.name,
      spread_names[a.spread], (unsigned long long)a.n, (unsigned long long)segments,
      (unsigned long long)k, a.descending ? "desc" : "asc", unsigned(sizeof(O)), value_bytes,
      index_bytes, int(with_keys));
  const std::string what = text;
  const gpusort_status status =
      rows ? gpusort_cuda_topk_rows(
                 t.key, d_keys, rows, a.n / rows, k, with_keys ? keys_out : nullptr,
                 value_bytes ? d_values : nullptr, value_bytes ? values_out : nullptr, value_bytes,
                 index_bytes ? indices : nullptr, index_bytes, stream, &options)
           : gpusort_cuda_topk_segments(
                 t.key, d_keys, a.n, d_offsets, sizeof(O), segments, k,
                 with_keys ? keys_out : nullptr, value_bytes ? d_values : nullptr,
                 value_bytes ? values_out : nullptr, value_bytes, index_bytes ? indices : nullptr,
                 index_bytes, static_cast<uint32_t*>(result_offsets), stream, &options);
  if (status != GPUSORT_OK) {
    fail(what + ": " + gpusort_last_error());
  } else {
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    std::vector<unsigned char> got_keys(slots * 8), got_values(slots * 8), got_indices(slots * 8);
    std::vector<uint32_t> got_offsets(segments + 2);
    cuda_check(cudaMemcpy(got_keys.data(), keys_out, slots * 8, cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    cuda_check(cudaMemcpy(got_values.data(), values_out, slots * 8, cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    cuda_check(cudaMemcpy(got_indices.data(), indices, slots * 8, cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    cuda_check(
        cudaMemcpy(got_offsets.data(), result_offsets, (segments + 2) * 4, cudaMemcpyDeviceToHost),
        "cudaMemcpy");
    // Element e of an output of `bytes` each, or poison where the result has none.
    auto expected = [&](const std::vector<uint64_t>& want, uint64_t e, uint32_t bytes) {
      uint64_t v = 0;
      if (e < at)
        std::memcpy(&v, &want[e], bytes);
      else
        std::memset(&v, poison, bytes);
      return v;
    };
    auto element = [](const std::vector<unsigned char>& got, uint64_t e, uint32_t bytes) {
      uint64_t v = 0;
      std::memcpy(&v, &got[e * bytes], bytes);
      return v;
    };
    uint32_t past = 0;
    std::memset(&past, poison, 4);
    // n = 0 or k = 0: the call does nothing, the result offsets included.
    bool ok = a.n == 0 || k == 0 || rows
                  ? std::all_of(got_offsets.begin(), got_offsets.end(),
                                [&](uint32_t v) { return v == past; })
                  : std::equal(want_offsets.begin(), want_offsets.end(), got_offsets.begin()) &&
                        got_offsets[segments + 1] == past;
    if (!ok) fail(what + ": result offsets");
    for (uint64_t e = 0; ok && e < slots; ++e) {
      if (with_keys && element(got_keys, e, kb) != expected(want_keys, e, kb))
        ok = fail(what + ": key " + std::to_string(e));
      else if (value_bytes &&
               element(got_values, e, value_bytes) != expected(want_values, e, value_bytes))
        ok = fail(what + ": value " + std::to_string(e));
      else if (index_bytes &&
               element(got_indices, e, index_bytes) != expected(want_indices, e, index_bytes))
        ok = fail(what + ": index " + std::to_string(e));
    }
  }
  for (void* p : {d_keys, d_values, d_offsets, keys_out, values_out, indices, result_offsets})
    cudaFree(p);
}

void topk_segment_cases(cudaStream_t stream, uint64_t& seed) {
  auto rows = [](uint64_t count, uint64_t length) {
    std::vector<uint64_t> o{0};
    while (o.size() <= count) o.push_back(o.back() + length);
    return o;
  };
  std::mt19937_64 rng(seed);
  for (const KeyKind& t : kinds)
    for (Spread s : {uniform, few, t.kind == 2 ? specials : reversed}) {
      const uint64_t n = 5000;
      std::vector<uint64_t> random{0, 0};  // empty segments first, between and last
      for (uint64_t at = 0; at < n;) {
        at = std::min<uint64_t>(n, at + rng() % 900);
        random.push_back(at);
        if (rng() % 3 == 0) random.push_back(at);
      }
      random.push_back(n);
      for (uint64_t k : {uint64_t(1), uint64_t(32), uint64_t(1500)}) {
        const bool desc = (k + seed) % 2 == 1;
        run_segments(Array{&t, s, n, desc}, random, k, 8, 4, true, ++seed, stream);
        run_segments(Array{&t, s, n, !desc}, std::vector<uint32_t>(random.begin(), random.end()), k,
                     4, 8, false, ++seed, stream);
        run_segments(Array{&t, s, n, desc}, rows(50, 100), k, 0, 8, true, ++seed, stream);
        run_segments(Array{&t, s, n, !desc}, rows(50, 100), k, 4, 8, true, ++seed, stream, 50);
      }
      run_segments(Array{&t, s, 300000, false}, rows(3, 100000), 65536, 4, 4, true, ++seed, stream);
      run_segments(Array{&t, s, 3000, true, 3, 17}, rows(30, 100), 7, 0, 4, true, ++seed, stream);
      run_segments(Array{&t, s, 32768 * 4, false}, rows(32768, 4), 3, 0, 8, true, ++seed, stream,
                   32768);
      // Rows a block each (up to 16384 keys): the bound, the row sorted where k is past a
      // quarter of the block or the keys pile at the bound; longer rows by the block's radix
      // select for k up to 1024 (above: the segmented argsort, the 100000-key rows before).
      run_segments(Array{&t, s, 12000, seed % 2 == 0}, rows(4, 3000), 500, 4, 8, true, ++seed,
                   stream, 4);
      run_segments(Array{&t, s, 2 * 16384, true}, rows(2, 16384), 64, 8, 4, true, ++seed, stream,
                   2);
      run_segments(Array{&t, s, 40000, false}, rows(2, 20000), 5, 0, 4, true, ++seed, stream, 2);
      run_segments(Array{&t, s, 5 * 70001, seed % 2 == 1}, rows(5, 70001), 1024, 8, 8, true, ++seed,
                   stream, 5);
      // Fewer rows than SMs, of at least two chunks' keys: split (chunks a block each, merged).
      run_segments(Array{&t, s, 3 * 300001, seed % 2 == 0}, rows(3, 300001), 1024, 4, 8, true,
                   ++seed, stream, 3);
      run_segments(Array{&t, s, 2 * 600000, false}, rows(2, 600000), 37, 8, 4, true, ++seed, stream,
                   2);
    }
  for (const KeyKind& t : kinds) {
    run_segments(Array{&t, equal, 6000, false}, rows(3, 2000), 50, 4, 4, true, ++seed, stream, 3);
    run_segments(Array{&t, few, 6000, true}, rows(3, 2000), 128, 0, 8, false, ++seed, stream, 3);
    // Long rows whose k-th key ties with more keys than the result takes (by position).
    run_segments(Array{&t, equal, 60000, false}, rows(3, 20000), 1000, 4, 4, true, ++seed, stream,
                 3);
    run_segments(Array{&t, few, 60000, true}, rows(3, 20000), 700, 0, 8, false, ++seed, stream, 3);
  }
  // n = 0, and k = 0: nothing written.
  run_segments(Array{&kinds[0], uniform, 0}, std::vector<uint64_t>{0, 0}, 5, 4, 4, true, ++seed,
               stream);
  run_segments(Array{&kinds[0], uniform, 100}, rows(2, 50), 0, 4, 4, true, ++seed, stream);
}

void topk_cases(cudaStream_t stream, bool quick, int& failures, int& checks) {
  failures_ = &failures;
  checks_ = &checks;
  uint64_t seed = 1000;
  const std::vector<uint64_t> sizes = {0,    1,    2,    31,     1000,          2047,
                                       2048, 2049, 4097, 100000, (1u << 20) + 7};
  // Every type and size: uniform keys and one other spread, both orders.
  for (const KeyKind& t : kinds)
    for (uint64_t n : sizes)
      for (bool desc : {false, true}) {
        run_array(Array{&t, uniform, n, desc}, ks_for(n), ++seed, stream);
        const Spread other = Spread(1 + (seed + (desc ? 3 : 0)) % (spread_count - 1));
        if (other != specials || t.kind == 2)
          run_array(Array{&t, other, n, desc}, ks_for(n), ++seed, stream);
      }
  // Every spread at three sizes (one with more tiles than the histograms' grid).
  for (const KeyKind& t : kinds)
    for (uint64_t n : {uint64_t(5000), uint64_t(300000), uint64_t(1u << 20) + 7})
      for (int s = 0; s < spread_count; ++s)
        run_array(Array{&t, Spread(s), n, s % 2 == 1}, {1, 32, 1024, 2049, n / 2}, ++seed, stream);
  // A few million keys.
  if (!quick)
    for (const KeyKind& t : kinds)
      run_array(Array{&t, t.kind == 2 ? specials : uniform, 3000017, t.bytes == 8},
                {1, 32, 1024, 65536, 3000016}, ++seed, stream);
  // Bit ranges (of the radix order; descending inverts within them).
  for (const KeyKind& t : kinds)
    for (uint64_t n : {uint64_t(3000), uint64_t(300000)}) {
      const uint32_t w = t.bytes * 8;
      for (auto [b, e] : {std::pair<uint32_t, uint32_t>{8, w - 8},
                          {0, 12},
                          {w - 20, 0},
                          {3, 5},
                          {0, 11},
                          {w - 11, 0}})
        for (Spread s : {uniform, few})
          run_array(Array{&t, s, n, b % 2 == 1, b, e}, {1, 100, 2049, n}, ++seed, stream);
    }
  // GPU-side counts: min(k, count) results, the rest untouched.
  for (const KeyKind& t : kinds)
    for (uint64_t n : {uint64_t(9000), uint64_t(300000)})
      for (uint64_t count : {uint64_t(0), uint64_t(1), n / 3, n - 1})
        run_array(Array{&t, few, n, false, 0, 0, false, count}, {1, 1024, n / 2, n}, ++seed,
                  stream);
  // The bound (n at least 2^19, k at most n / 16; the spreads above at 2^20 + 7 take it too): its
  // bit ranges and GPU-side counts (entries of no key), and keys piled at the bound (few).
  for (const KeyKind& t : kinds) {
    const uint64_t n = (uint64_t(1) << 20) + 7;
    const uint32_t w = t.bytes * 8;
    for (auto [b, e] : {std::pair<uint32_t, uint32_t>{8, w - 8}, {0, 12}, {w - 20, 0}})
      run_array(Array{&t, uniform, n, b == 0, b, e}, {1, 100, 65536}, ++seed, stream);
    for (uint64_t count : {uint64_t(0), uint64_t(1), uint64_t(5000), n / 3})
      for (Spread s : {uniform, few})
        run_array(Array{&t, s, n, count == 1, 0, 0, false, count}, {1, 1024, 65536}, ++seed,
                  stream);
  }
  // The bound's long list sorted by the key's passes, its runs of equal keys then put in position
  // order: runs of 3 and 32 there, runs of 33 by the full sort (the positions' passes too).
  for (const KeyKind& t : kinds)
    for (Spread s : {groups3, groups32, groups33})
      run_array(Array{&t, s, (uint64_t(1) << 21) + 5, s == groups32}, {5000, 65536}, ++seed,
                stream);
  // NumPy's float order.
  for (const KeyKind* t : {&kinds[2], &kinds[5]})
    for (uint64_t n : {uint64_t(1), uint64_t(3000), uint64_t(300000), uint64_t(1u << 20) + 7})
      for (Spread s : {specials, uniform, equal, few})
        for (bool desc : {false, true})
          run_array(Array{t, s, n, desc, 0, 0, true}, {1, 32, 2049, n - 1, n}, ++seed, stream);
  for (const KeyKind* t : {&kinds[2], &kinds[5]})
    run_array(Array{t, specials, 300000, false, 0, 0, true, 100000}, {5, 50000, 300000}, ++seed,
              stream);
  topk_segment_cases(stream, seed);
  templates(stream);
}
