// CUB baseline for the small-array timings: cub::DeviceRadixSort::SortKeys / SortPairs on u32
// keys (and u32 values) at n = 2^10 ... 2^16, CUDA events around each sort, median of `runs`
// after warm-up; the input is refreshed from a pristine copy (4 sets, rotated) before every run,
// and a ~1 ms copy kernel runs right before each timed sort, on the same stream with no host
// synchronization in between, so the GPU is at working clocks (as in small_sort_timing.cpp).
// Build: nvcc -O3 -gencode=arch=compute_90,code=sm_90 bench/cub_small.cu -o cub_small
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(x)                                                                       \
  do {                                                                                 \
    cudaError_t e = (x);                                                               \
    if (e != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

__global__ void empty_kernel() {}

__global__ void busy_copy(const unsigned* src, unsigned* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 25;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("CUB %d.%d.%d on %s\n", CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION,
              prop.name);
  const size_t busy_words = size_t(1) << 25;
  unsigned *busy_src, *busy_dst;
  CHECK(cudaMalloc(&busy_src, busy_words * 4));
  CHECK(cudaMalloc(&busy_dst, busy_words * 4));
  CHECK(cudaMemset(busy_src, 1, busy_words * 4));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  // The CUDA floor under the same protocol: one and two empty kernels after the warm-up copies.
  for (int kernels = 1; kernels <= 2; ++kernels) {
    std::vector<float> times;
    for (int r = 0; r < runs + 3; ++r) {
      for (int b = 0; b < 8; ++b) busy_copy<<<4096, 256>>>(busy_src, busy_dst, busy_words);
      CHECK(cudaEventRecord(start));
      for (int k = 0; k < kernels; ++k) empty_kernel<<<1, 256>>>();
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (r >= 3) times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    std::printf("%d empty kernel(s) after warm-up: %.2f us\n", kernels, times[times.size() / 2] * 1e3);
  }
  for (int pairs = 0; pairs < 2; ++pairs) {
    std::printf("%s\n", pairs ? "u32 keys + u32 values" : "u32 keys");
    for (int log_n = 10; log_n <= 16; log_n += 2) {
      int n = 1 << log_n;
      std::vector<unsigned> keys(n), values(n), out(n), out_values(n);
      std::mt19937_64 rng(n);
      for (auto& k : keys) k = unsigned(rng());
      for (int i = 0; i < n; ++i) values[i] = i;
      unsigned *d_pristine, *d_in, *d_out, *d_vin, *d_vout;
      const int sets = 4;
      std::vector<unsigned> all_keys(size_t(sets) * n);
      for (auto& k : all_keys) k = unsigned(rng());
      std::copy(all_keys.begin(), all_keys.begin() + n, keys.begin());
      CHECK(cudaMalloc(&d_pristine, size_t(sets) * n * 4));
      CHECK(cudaMalloc(&d_in, n * 4));
      CHECK(cudaMalloc(&d_out, n * 4));
      CHECK(cudaMalloc(&d_vin, n * 4));
      CHECK(cudaMalloc(&d_vout, n * 4));
      CHECK(cudaMemcpy(d_pristine, all_keys.data(), size_t(sets) * n * 4, cudaMemcpyHostToDevice));
      CHECK(cudaMemcpy(d_vin, values.data(), n * 4, cudaMemcpyHostToDevice));
      size_t temp_bytes = 0;
      if (pairs) CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, d_in, d_out, d_vin, d_vout, n));
      else CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, d_in, d_out, n));
      void* temp;
      CHECK(cudaMalloc(&temp, temp_bytes));
      std::vector<float> times;
      for (int r = 0; r < runs + 3; ++r) {
        int set = r % sets;
        if (r == runs + 2) set = 0;  // the last run's output is checked against set 0
        CHECK(cudaMemcpyAsync(d_in, d_pristine + size_t(set) * n, n * 4, cudaMemcpyDeviceToDevice));
        for (int b = 0; b < 8; ++b) busy_copy<<<4096, 256>>>(busy_src, busy_dst, busy_words);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(start));
        if (pairs) CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, d_in, d_out, d_vin, d_vout, n));
        else CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, d_in, d_out, n));
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        CHECK(cudaGetLastError());
        float ms;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (r >= 3) times.push_back(ms);
      }
      CHECK(cudaMemcpy(out.data(), d_out, n * 4, cudaMemcpyDeviceToHost));
      std::vector<unsigned> expected = keys;
      std::sort(expected.begin(), expected.end());
      bool ok = out == expected;
      std::sort(times.begin(), times.end());
      std::printf("  2^%d: %8.2f us median (min %.2f)%s\n", log_n, times[times.size() / 2] * 1e3,
                  times[0] * 1e3, ok ? "" : "  WRONG");
      CHECK(cudaFree(temp));
      CHECK(cudaFree(d_pristine));
      CHECK(cudaFree(d_in));
      CHECK(cudaFree(d_out));
      CHECK(cudaFree(d_vin));
      CHECK(cudaFree(d_vout));
    }
  }
  return 0;
}
