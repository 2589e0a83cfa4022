// The CUDA face on the GPU, through its C API (include/gpusort/gpusort.h, which calls the C++
// face of include/gpusort/cuda.hpp): every key type, keys alone and with 4- and 8-byte values,
// argsort with u32 and u64 indices, both orders, bit ranges, a GPU-side count, sizes from 0
// across the rank-sort, block-sort and tile boundaries, distributions (uniform, equal, sorted,
// reversed, few unique, skewed, float specials), each output compared whole with a stable sort on
// the host; and the ordering on the caller's stream against the caller's own kernels before and
// after; NumPy's float order (Options::numpy_float_order) and argsort's sorted keys
// (Options::sorted_keys) through the C++ face (cxx_face.cpp); top-k (topk_cases.cu); the
// segmented sort and argsort (segmented_cases.cu). Built where
// nvcc is; runs where an NVIDIA GPU is (exit 0: all passed).
#include <cuda_runtime.h>
#include <gpusort/gpusort.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "face_keys.hpp"

// cxx_face.cpp: the C++ face with numpy_float_order, sorted_keys and keys_in; "" or the error's
// text.
std::string cxx_face_call(bool argsort, int key_type, void* keys, void* values,
                          unsigned value_bytes, unsigned long long n, void* stream,
                          bool descending, unsigned begin_bit, unsigned end_bit,
                          const unsigned* count, bool numpy_float_order, void* sorted_keys,
                          const void* keys_in);
// topk_cases.cu: the CUDA face's top-k, counted into the checks and failures.
void topk_cases(cudaStream_t stream, bool quick, int& failures, int& checks);
// segmented_cases.cu: the CUDA face's segmented sort and argsort.
void segmented_cases(bool quick, int& failures, int& checks);

namespace {

int failures = 0, checks = 0;

using face_test::canonical;
using face_test::cuda_check;
using Type = face_test::KeyType;
constexpr const Type (&types)[6] = face_test::key_types;

enum Distribution { uniform, equal, sorted, reversed, few, skewed, specials, distribution_count };
const char* distribution_names[] = {"uniform", "equal",  "sorted",  "reversed",
                                    "few",     "skewed", "specials"};

// Keys as raw bits (the low `bytes` of each u64).
std::vector<uint64_t> make_keys(const Type& t, Distribution d, uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> k(n);
  const uint64_t mask = t.bytes == 4 ? 0xffffffffull : ~0ull;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t r = rng() & mask;
    switch (d) {
      case equal: r = 0x1234567890abcdefull & mask; break;
      case sorted: case reversed: r = i; break;
      case few: r = (rng() % 5) * 0x0101010101010101ull & mask; break;
      case skewed: if (rng() % 100 != 0) r = (r & (mask >> 8)) | (0x5aull << (t.bytes * 8 - 8)); break;
      case specials: {
        static const uint32_t f32[] = {0x7fc00000, 0xffc00000, 0x7f800000, 0xff800000, 0x80000000, 0, 0x3f800000, 0xbf800000, 0x7fc00001};
        static const uint64_t f64[] = {0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull, 0x8000000000000000ull, 0, 0x3ff0000000000000ull, 0xbff0000000000000ull};
        if (rng() % 2) r = t.bytes == 4 ? f32[rng() % 9] : f64[rng() % 8];
        break;
      }
      default: break;
    }
    k[i] = r;
  }
  if (d == sorted || d == reversed) {
    // Monotone in the type's own order: sort the random keys by radix order.
    for (uint64_t i = 0; i < n; ++i) k[i] = rng() & mask;
    std::sort(k.begin(), k.end(),
              [&](uint64_t a, uint64_t b) { return face_test::radix(t, a) < face_test::radix(t, b); });
    if (d == reversed) std::reverse(k.begin(), k.end());
  }
  return k;
}

struct Case {
  const Type* type;
  uint32_t value_bytes;  // 0, 4, 8; argsort: index bytes
  bool argsort, descending;
  uint32_t begin_bit, end_bit;  // end 0: full
  Distribution distribution;
  uint64_t n, count;  // count < n: a GPU-side count
  cudaStream_t stream;
  bool numpy = false;        // floats in NumPy's order (the C++ face's numpy_float_order)
  bool sorted_keys = false;  // argsort: the sorted keys returned too (the C++ face's sorted_keys)
  bool keys_in = false;      // sort: the keys read from another array (the C++ face's keys_in)
  bool offset_values = false;  // the values 4 bytes past a 16-byte boundary
};

// The stable order of the first `count` keys: positions.
std::vector<uint32_t> reference_order(const Case& c, const std::vector<uint64_t>& k) {
  const uint32_t width = c.type->bytes * 8, end = c.end_bit ? c.end_bit : width;
  const uint64_t field = end - c.begin_bit == 64 ? ~0ull : ((1ull << (end - c.begin_bit)) - 1);
  std::vector<uint64_t> key(c.count);
  for (uint64_t i = 0; i < c.count; ++i) {
    const uint64_t bits = c.numpy && c.type->kind == 2 ? canonical(*c.type, k[i]) : k[i];
    uint64_t o = face_test::radix(*c.type, bits);
    if (c.descending) o = ~o & (c.type->bytes == 4 ? 0xffffffffull : ~0ull);
    key[i] = (o >> c.begin_bit) & field;
  }
  std::vector<uint32_t> p(c.count);
  std::iota(p.begin(), p.end(), 0u);
  std::stable_sort(p.begin(), p.end(), [&](uint32_t a, uint32_t b) { return key[a] < key[b]; });
  return p;
}

std::string describe(const Case& c) {
  char text[256];
  std::snprintf(text, sizeof text, "%s %s%u n=%llu count=%llu %s %s bits [%u,%u)%s%s", c.type->name,
                c.argsort ? "argsort idx" : "values ", c.value_bytes, (unsigned long long)c.n,
                (unsigned long long)c.count, distribution_names[c.distribution],
                c.descending ? "desc" : "asc", c.begin_bit, c.end_bit,
                c.numpy ? " numpy order" : "",
                c.sorted_keys ? " sorted keys" : (c.keys_in ? " keys in" : (c.offset_values ? " values offset by 4 bytes" : "")));
  return text;
}

void fail(const Case& c, const std::string& what) {
  if (++failures <= 30) std::fprintf(stderr, "FAIL %s: %s\n", describe(c).c_str(), what.c_str());
}

void run(const Case& c, uint64_t seed) {
  ++checks;
  const uint32_t kb = c.type->bytes;
  const std::vector<uint64_t> k = make_keys(*c.type, c.distribution, c.n, seed);
  std::vector<unsigned char> keys(c.n * kb), values(c.n * 8), out_keys(c.n * kb), out_values(c.n * 8);
  for (uint64_t i = 0; i < c.n; ++i) std::memcpy(&keys[i * kb], &k[i], kb);
  for (uint64_t i = 0; i < c.n; ++i) {
    const uint64_t v = 0x9e3779b97f4a7c15ull * (i + 1);
    std::memcpy(&values[i * 8], &v, 8);
  }
  void *d_keys = nullptr, *d_allocated_values = nullptr, *d_sorted = nullptr;
  uint32_t* d_count = nullptr;
  cuda_check(cudaMalloc(&d_sorted, std::max<uint64_t>(c.n * kb, 1)), "cudaMalloc");
  cuda_check(cudaMalloc(&d_keys, std::max<uint64_t>(c.n * kb, 1)), "cudaMalloc");
  cuda_check(cudaMalloc(&d_allocated_values, c.n * 8 + 16), "cudaMalloc");
  void* const d_values = static_cast<char*>(d_allocated_values) + (c.offset_values ? 4 : 0);
  cuda_check(cudaMalloc(&d_count, 4), "cudaMalloc");
  const uint32_t count32 = uint32_t(c.count);
  cuda_check(cudaMemcpy(d_count, &count32, 4, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemcpy(d_keys, keys.data(), c.n * kb, cudaMemcpyHostToDevice), "cudaMemcpy");
  const uint32_t vb = c.value_bytes;
  // The values as given (argsort: what its indices overwrite): the first n x vb bytes of `values`
  // read as one array of vb-byte values.
  std::vector<unsigned char> given(c.n * std::max(vb, 1u));
  if (vb) std::memcpy(given.data(), values.data(), c.n * vb);
  if (vb) cuda_check(cudaMemcpy(d_values, given.data(), c.n * vb, cudaMemcpyHostToDevice), "cudaMemcpy");
  // cudaMemcpy from pageable memory may return before its DMA lands, and the sort's stream does
  // not wait for the legacy default stream (it is non-blocking): the inputs must be there first.
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  gpusort_cuda_options o{};
  o.descending = c.descending, o.begin_bit = c.begin_bit, o.end_bit = c.end_bit;
  if (c.count != c.n) o.count = d_count;
  gpusort_status status = GPUSORT_OK;
  std::string error;
  if (c.numpy || c.sorted_keys || c.keys_in) {
    // keys_in: the keys from another array (d_sorted), into d_keys, which holds other bits first.
    if (c.keys_in) {
      cuda_check(cudaMemcpy(d_sorted, keys.data(), c.n * kb, cudaMemcpyHostToDevice), "cudaMemcpy");
      cuda_check(cudaMemset(d_keys, 0xab, c.n * kb), "cudaMemset");
      cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    error = cxx_face_call(c.argsort, int(c.type->key), d_keys, vb ? d_values : nullptr, vb, c.n,
                          c.stream, c.descending, c.begin_bit, c.end_bit, o.count, c.numpy,
                          c.sorted_keys ? d_sorted : nullptr, c.keys_in ? d_sorted : nullptr);
    if (!error.empty()) status = GPUSORT_ERROR_INVALID_ARGUMENT;
  } else {
    status = c.argsort ? gpusort_cuda_argsort(c.type->key, d_keys, d_values, vb, c.n, c.stream, &o)
                       : gpusort_cuda_sort(c.type->key, d_keys, vb ? d_values : nullptr, vb, c.n,
                                           c.stream, &o);
    if (status != GPUSORT_OK) error = gpusort_last_error();
  }
  if (status != GPUSORT_OK) {
    fail(c, "failed: " + error);
    cudaFree(d_keys), cudaFree(d_allocated_values), cudaFree(d_count), cudaFree(d_sorted);
    return;
  }
  cuda_check(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize");
  cuda_check(cudaMemcpy(out_keys.data(), d_keys, c.n * kb, cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (vb) cuda_check(cudaMemcpy(out_values.data(), d_values, c.n * vb, cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::vector<unsigned char> sorted(c.n * kb);
  if (c.sorted_keys) cuda_check(cudaMemcpy(sorted.data(), d_sorted, c.n * kb, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(d_keys), cudaFree(d_allocated_values), cudaFree(d_count), cudaFree(d_sorted);
  const std::vector<uint32_t> p = reference_order(c, k);
  // argsort's sorted keys: the original keys (their bits: zeros' signs, NaNs' payloads) in order.
  for (uint64_t i = 0; c.sorted_keys && i < c.count; ++i)
    if (std::memcmp(&sorted[i * kb], &keys[uint64_t(p[i]) * kb], kb) != 0)
      return fail(c, "sorted key " + std::to_string(i) + " differs");
  // Whole outputs: the sorted prefix, and past the count what was there.
  for (uint64_t i = 0; i < c.n; ++i) {
    const uint64_t from = i < c.count ? (c.argsort ? i : p[i]) : i;
    if (std::memcmp(&out_keys[i * kb], &keys[from * kb], kb) != 0)
      return fail(c, "key " + std::to_string(i) + " differs");
    if (c.argsort && i < c.count) {
      uint64_t index = 0;
      std::memcpy(&index, &out_values[i * vb], vb);
      if (index != p[i]) return fail(c, "index " + std::to_string(i) + " is " + std::to_string(index) + ", expected " + std::to_string(p[i]));
    } else if (!c.argsort && vb && std::memcmp(&out_values[i * vb], &given[from * vb], vb) != 0) {
      return fail(c, "value " + std::to_string(i) + " differs");
    }
  }
}

__global__ void spin_then_fill(uint32_t* keys, uint32_t n, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {}
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    keys[i] = (n - i) * 2654435761u;
}
__global__ void copy_after(const uint32_t* keys, uint32_t* out, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = keys[i];
}

// The sort runs after the caller's kernel that writes its keys (which spins first) and before
// the caller's kernel that reads them, on a non-default stream, without a host synchronization.
void stream_ordering(cudaStream_t stream, uint32_t n) {
  ++checks;
  uint32_t *keys = nullptr, *out = nullptr;
  cuda_check(cudaMalloc(&keys, n * 4), "cudaMalloc");
  cuda_check(cudaMalloc(&out, n * 4), "cudaMalloc");
  cuda_check(cudaMemset(keys, 0xff, n * 4), "cudaMemset");
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  spin_then_fill<<<256, 256, 0, stream>>>(keys, n, 200000000ll);
  if (gpusort_cuda_sort(GPUSORT_KEY_U32, keys, nullptr, 0, n, stream, nullptr) != GPUSORT_OK)
    std::fprintf(stderr, "gpusort_cuda_sort: %s\n", gpusort_last_error());
  copy_after<<<256, 256, 0, stream>>>(keys, out, n);
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<uint32_t> got(n), want(n);
  cuda_check(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (uint32_t i = 0; i < n; ++i) want[i] = (n - i) * 2654435761u;
  std::sort(want.begin(), want.end());
  cudaFree(keys), cudaFree(out);
  if (got != want) {
    ++failures;
    std::fprintf(stderr, "FAIL stream ordering n=%u: the sort did not run between the caller's kernels\n", n);
  }
}

// The cases on the largest tiles alone (--largest: to rerun after a change to those rows).
void largest_tile_cases(cudaStream_t stream, uint64_t& seed) {
  // Argsort on the largest tiles (32-bit keys from 2^23, 64-bit from 2^25), whose passes read the
  // keys in place and make and widen the positions themselves (the fused variants): u64 and u32
  // indices, keys all equal (every pass skippable: the first still runs), one pass of 2 bits, a
  // GPU-side count, NumPy's order with the sorted keys.
  for (const Type& type : types) {
    const Type* t = &type;
    const uint64_t n = t->bytes == 4 ? (1u << 23) + 5 : (1u << 25) + 3;
    run(Case{t, 8, true, false, 0, 0, uniform, n, n, stream}, ++seed);
    run(Case{t, 4, true, true, 0, 0, equal, n, n, stream}, ++seed);
    run(Case{t, 8, true, false, 3, 5, uniform, n, n, stream}, ++seed);
    run(Case{t, 8, true, true, 0, 0, few, n, n - 12345, stream}, ++seed);
    if (t->kind == 2) run(Case{t, 8, true, false, 0, 0, specials, n, n, stream, true, true}, ++seed);
  }
  // 64-bit keys with 4-byte values from 2^25 (their largest tile, 256 x 28), every 64-bit type.
  for (const Type& t : types)
    if (t.bytes == 8)
      run(Case{&t, 4, false, t.kind == 1, 0, 0, t.kind == 2 ? specials : skewed, (1u << 25) + 3,
               (1u << 25) + 3, stream}, ++seed);
}

// The look-back's fallback (GPUSORT_CUDA_REFUSAL_PERIOD: every third tile never publishes, so
// that the tiles after it recount their predecessors' digits from the pass's input): argsort's
// fused first pass, which reads the caller's keys (NumPy's floats canonical) and makes the
// positions, on the fused rows of 32-bit keys and of 64-bit ones below 2^25; an unfused pair sort.
void fallback_cases(cudaStream_t stream, uint64_t& seed) {
  setenv("GPUSORT_CUDA_REFUSAL_PERIOD", "3", 1);
  for (const Type* t : {&types[2], &types[5]})
    for (uint64_t n : {uint64_t(1u << 20), uint64_t(1u << 20) + 7, uint64_t(1u << 23) + 5})
      for (bool desc : {false, true})
        run(Case{t, 8, true, desc, 0, 0, specials, n, n, stream, true, true}, ++seed);
  const uint64_t n = (1u << 20) + 7;
  for (const Type* t : {&types[0], &types[4]})
    run(Case{t, 8, true, false, 0, 0, uniform, n, n, stream}, ++seed);
  run(Case{&types[1], 4, false, true, 0, 0, uniform, n, n, stream}, ++seed);
  unsetenv("GPUSORT_CUDA_REFUSAL_PERIOD");
}

// NumPy's float order: keys alone, with 4- and 8-byte values, argsort with its sorted keys,
// special values (zeros of both signs, NaNs of both signs and other payloads) across the
// set-aside's chunks, GPU-side counts; and sorted keys in totalOrder. Sorted around the sort
// (the small sizes) and in Onesweep's passes (from 100,000: each size a pass row of its own).
void numpy_order_cases(cudaStream_t stream, bool quick, uint64_t& seed) {
  for (const Type* t : {&types[2], &types[5]})
    for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(3000), uint64_t(100000), uint64_t(300000),
                       uint64_t(1u << 20) + 7, uint64_t(1u << 23) + 5}) {
      if (quick && n > (1u << 21)) continue;
      for (Distribution d : {specials, uniform, equal, few})
        for (bool desc : {false, true}) {
          for (uint32_t vb : {0u, 4u, 8u})
            run(Case{t, vb, false, desc, 0, 0, d, n, n, stream, true}, ++seed);
          for (uint32_t ib : {4u, 8u}) {
            run(Case{t, ib, true, desc, 0, 0, d, n, n, stream, true, true}, ++seed);
            run(Case{t, ib, true, desc, 0, 0, d, n, n, stream, true, false}, ++seed);
          }
        }
      for (uint64_t count : {uint64_t(0), n / 3})
        for (uint32_t vb : {0u, 8u}) run(Case{t, vb, false, false, 0, 0, specials, n, count, stream, true}, ++seed);
      run(Case{t, 8, true, true, 0, 0, specials, n, n / 2, stream, true, true}, ++seed);
      run(Case{t, 8, true, false, 0, 0, specials, n, n, stream, false, true}, ++seed);
      // Sorted copies: NumPy's order (the count pass copies) and totalOrder (a copy first).
      for (bool numpy : {true, false})
        for (bool desc : {false, true})
          run(Case{t, 0, false, desc, 0, 0, specials, n, n, stream, numpy, false, true}, ++seed);
    }
  // Special keys on the largest rows, in --quick too: f32 on 384 x 32 and 384 x 28 (2^23 and past
  // 2^24), f64 with values on 256 x 28 (past 2^25).
  const std::pair<const Type*, uint64_t> largest[] = {{&types[2], (uint64_t(1) << 23) + 5},
                                                      {&types[2], (uint64_t(1) << 24) + 3},
                                                      {&types[5], (uint64_t(1) << 25) + 3}};
  for (const auto& [t, n] : largest)
    for (bool desc : {false, true}) {
      for (uint32_t vb : {0u, 4u})
        if (vb != 0 || t->bytes == 4)
          run(Case{t, vb, false, desc, 0, 0, specials, n, n, stream, true}, ++seed);
      run(Case{t, 0, false, desc, 0, 0, specials, n, n, stream, true, false, true}, ++seed);
      run(Case{t, 8, true, desc, 0, 0, specials, n, n, stream, true, true}, ++seed);
    }
}

}  // namespace

// cuda_face_test [--quick | --largest | --topk | --fallback | --numpy]: --quick leaves out the
// sizes beyond 2^23, whose sorts take the largest tiles (and the host's reference sort most of the
// time), but for the cases of largest_tile_cases, which --largest runs alone; --topk, --fallback
// and --numpy run the top-k cases, fallback_cases and numpy_order_cases alone (as --quick has
// them).
int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const bool quick = mode == "--quick";
  cuda_check(cudaFree(nullptr), "cudaFree");  // the runtime's primary context, current
  cudaStream_t stream = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  uint64_t seed = 1;
  if (mode == "--largest" || mode == "--topk" || mode == "--fallback" || mode == "--numpy") {
    if (mode == "--largest") largest_tile_cases(stream, seed);
    else if (mode == "--fallback") fallback_cases(stream, seed);
    else if (mode == "--numpy") numpy_order_cases(stream, true, seed);
    else topk_cases(stream, true, failures, checks);
    cuda_check(cudaStreamDestroy(stream), "cudaStreamDestroy");
    std::printf("cuda_face_test: %d of %d checks failed\n", failures, checks);
    return failures == 0 ? 0 : 1;
  }
  std::vector<uint64_t> sizes = {0, 1, 2, 3, 31, 33, 1000, 1024, 1025, 2048, 2049, 4095, 4097, 6143, 6145, 7680, 7681, 8191, 8192, 8193, 15361, 100000, 1u << 20, (1u << 20) + 7};

  for (const Type& t : types)
    for (uint64_t n : sizes)
      for (uint32_t vb : {0u, 4u, 8u})
        for (bool desc : {false, true}) {
          const Distribution d = Distribution((seed + vb + (desc ? 3 : 0)) % distribution_count);
          run(Case{&t, vb, false, desc, 0, 0, uniform, n, n, stream}, ++seed);
          run(Case{&t, vb, false, desc, 0, 0, d, n, n, stream}, ++seed);
        }
  for (const Type& t : types)
    for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(5000), uint64_t(100000), uint64_t(1u << 20)})
      for (uint32_t ib : {4u, 8u})
        for (int d = 0; d < distribution_count; ++d)
          run(Case{&t, ib, true, d % 2 == 1, 0, 0, Distribution(d), n, n, stream}, ++seed);
  largest_tile_cases(stream, seed);
  fallback_cases(stream, seed);
  // 32-bit keys with 4-byte values from 2^23 copy each tile's values ahead (kHintAsyncValues): 16
  // bytes a copy on whole aligned tiles, 4 on the last and where the values are not aligned; with
  // a GPU-side count the last tile lies inside the arrays. Every 32-bit type, both orders.
  for (const Type& t : types)
    if (t.bytes == 4) {
      const uint64_t n = (1u << 23) + 5;
      run(Case{&t, 4, false, t.kind != 1, 0, 0, t.kind == 2 ? specials : skewed, n, n, stream}, ++seed);
      run(Case{&t, 4, false, t.kind == 1, 0, 0, few, n, n - 4321, stream}, ++seed);
      Case offset{&t, 4, false, false, 0, 0, uniform, n, n, stream};
      offset.offset_values = true;
      run(offset, ++seed);
    }
  // The tiles of the largest sorts (from 2^23), each key class once.
  for (const Type& t : types)
    for (uint32_t vb : {0u, 4u})
      if (!quick) run(Case{&t, vb, false, t.kind == 2, 0, 0, uniform, (1u << 23) + 5, (1u << 23) + 5, stream}, ++seed);
  // Bit ranges and GPU-side counts.
  for (const Type& t : types)
    for (uint64_t n : {uint64_t(3000), uint64_t(9000), uint64_t(300000)}) {
      const uint32_t w = t.bytes * 8;
      // (argsort: one pass of 2 bits, which both makes the positions and widens them, then
      // the copy-back of the keys alone; two passes; the last pass within the key.)
      for (auto [b, e] : {std::pair<uint32_t, uint32_t>{8, w - 8}, {0, 12}, {w - 20, 0}, {3, 5}}) {
        for (uint32_t vb : {0u, 4u})
          run(Case{&t, vb, false, b % 2 == 1, b, e, uniform, n, n, stream}, ++seed);
        for (uint32_t ib : {4u, 8u})
          run(Case{&t, ib, true, b % 2 == 0, b, e, uniform, n, n, stream}, ++seed);
      }
      for (uint64_t count : {uint64_t(0), uint64_t(1), n / 3, n - 1}) {
        for (uint32_t vb : {0u, 4u, 8u})
          run(Case{&t, vb, false, false, 0, 0, few, n, count, stream}, ++seed);
        for (uint32_t ib : {4u, 8u})
          run(Case{&t, ib, true, count % 2 == 1, 0, 0, few, n, count, stream}, ++seed);
      }
      run(Case{&t, 8, true, false, 0, 0, uniform, n, n / 2, stream}, ++seed);
    }
  numpy_order_cases(stream, quick, seed);
  // Sorted copies in totalOrder with values, and of keys that are all equal (every pass's digit
  // the same: the first pass still runs, to write the copy).
  for (const Type& t : types)
    for (uint64_t n : {uint64_t(5000), uint64_t(100000), uint64_t(1u << 20)})
      for (uint32_t vb : {0u, 4u, 8u})
        for (Distribution d : {uniform, equal})
          run(Case{&t, vb, false, t.kind == 1, 0, 0, d, n, n, stream, false, false, true}, ++seed);
  // The legacy default stream, with the runtime's context current.
  run(Case{&types[0], 4, false, false, 0, 0, uniform, 1u << 20, 1u << 20, nullptr}, ++seed);
  for (uint32_t n : {5000u, 1u << 22}) stream_ordering(stream, n);
  topk_cases(stream, quick, failures, checks);
  segmented_cases(quick, failures, checks);
  cuda_check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  std::printf("cuda_face_test: %d of %d checks failed\n", failures, checks);
  return failures == 0 ? 0 : 1;
}
