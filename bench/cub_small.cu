// CUB baseline for the small-array timings: cub::DeviceRadixSort::SortKeys / SortPairs on u32
// keys (and u32 values) at n = 2^10 ... 2^16, CUDA events around each sort, median of `runs`
// after warm-up; the input is refreshed from a pristine copy (4 sets, rotated) before every run,
// and a ~1 ms copy kernel runs right before each timed sort, on the same stream with no host
// synchronization in between, so the GPU is at working clocks (as in
// dev/small_sort/small_sort_timing.cpp).
// Before each size's runs the GPU is spun up with that size's sort until its time settles, and
// the runs are enqueued right behind it (bench_common.hpp's Protocol::spin_up); each size
// reports its spread, the SM clock (NVML, where present) and a NOT STEADY flag as the other
// benchmarks do (docs/design/benchmark-protocol.md).
// Build: nvcc -std=c++17 -O3 -gencode=arch=compute_90,code=sm_90 bench/cub_small.cu -o cub_small
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cub/cub.cuh>
#include <random>
#include <vector>

#include "bench_common.hpp"
#include "cuda_batches.cuh"

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e = (x);                                                                     \
    if (e != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

__global__ void empty_kernel() {}

__global__ void busy_copy(const unsigned* src, unsigned* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 25;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("CUB %d.%d.%d on %s\n", CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION,
              prop.name);
  gpusort::bench::Protocol protocol;
  protocol.runs = unsigned(runs);
  const gpusort::bench::SmClock clock(reinterpret_cast<const unsigned char*>(prop.uuid.bytes),
                                      true);
  std::printf("SM clock: %s\n", clock.how().c_str());
  gpusort::bench::watch_clock(protocol, clock.available() ? &clock : nullptr);
  gpusort::bench::CudaBatches gpu(0, unsigned(runs) + 3);
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
    std::printf("%d empty kernel(s) after warm-up: %.2f us\n", kernels,
                times[times.size() / 2] * 1e3);
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
      if (pairs)
        CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, d_in, d_out, d_vin, d_vout, n));
      else
        CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, d_in, d_out, n));
      void* temp;
      CHECK(cudaMalloc(&temp, temp_bytes));
      auto sort = [&] {
        if (pairs)
          CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, d_in, d_out, d_vin, d_vout, n));
        else
          CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, d_in, d_out, n));
      };
      // Spin-up: this size's sort (on whatever d_in holds) until its time settles; the runs
      // follow on the stream with no host wait.
      gpusort::bench::Row row;
      row.spin = protocol.spin_up([&](uint32_t repeats) { gpu.begin_batch(repeats, sort); },
                                  [&] { return gpu.finish_batch(); });
      for (int r = 0; r < runs + 3; ++r) {
        int set = r % sets;
        if (r == runs + 2) set = 0;  // the last run's output is checked against set 0
        gpu.enqueue_run(
            unsigned(r),
            [&] {
              CHECK(cudaMemcpyAsync(d_in, d_pristine + size_t(set) * n, n * 4,
                                    cudaMemcpyDeviceToDevice));
              for (int b = 0; b < 8; ++b) busy_copy<<<4096, 256>>>(busy_src, busy_dst, busy_words);
              CHECK(cudaGetLastError());
            },
            sort, [] {});
      }
      gpusort::bench::read_clock(row, clock.available() ? &clock : nullptr);
      while (gpu.batches_queued() > 0) gpu.finish_batch();
      const std::vector<float> ms = gpu.finish_runs(unsigned(runs) + 3);
      CHECK(cudaGetLastError());
      for (int r = 3; r < runs + 3; ++r) row.ms.push_back(ms[r]);
      row.finish(protocol);
      CHECK(cudaMemcpy(out.data(), d_out, n * 4, cudaMemcpyDeviceToHost));
      std::vector<unsigned> expected = keys;
      std::sort(expected.begin(), expected.end());
      bool ok = out == expected;
      std::printf(
          "  2^%d: %8.2f us median (min %.2f, max %.2f, spread %.1f%%, spin-up %.0f ms, SM "
          "%s)%s%s%s\n",
          log_n, row.ms_median * 1e3, row.ms_min * 1e3, row.ms_max * 1e3, 100 * row.spread(),
          row.spin.ms,
          row.sm_clock_mhz >= 0 ? (std::to_string(row.sm_clock_mhz) + " MHz").c_str() : "-",
          ok ? "" : "  WRONG", row.steady() ? "" : "  NOT STEADY: ", row.unsteady.c_str());
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
