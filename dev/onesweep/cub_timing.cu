// CUB DeviceRadixSort timing for comparison with onesweep_timing.cpp: same inputs scheme
// (three rotated random inputs), CUDA events around the sort only, median of 15 after 3 warm-ups.
//   cub_timing <u32|u64|f32> <value_bytes> <log2 n>   (f32: uniform random bits, as the bench's)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cub/cub.cuh>
#include <vector>

#define CHECK(x)                                          \
  do {                                                    \
    cudaError_t e = (x);                                  \
    if (e != cudaSuccess) {                               \
      printf("CUDA %s: %s\n", #x, cudaGetErrorString(e)); \
      exit(1);                                            \
    }                                                     \
  } while (0)

template <class K>
void run(int log2n, uint32_t value_bytes) {
  size_t n = size_t(1) << log2n;
  std::vector<K> host(n);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  K* in[3];
  for (int i = 0; i < 3; ++i) {
    for (auto& h : host) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      if constexpr (sizeof(K) == 4) {
        uint32_t bits = uint32_t(x);
        memcpy(&h, &bits, 4);
      } else
        h = K(x);
    }
    CHECK(cudaMalloc(&in[i], n * sizeof(K)));
    CHECK(cudaMemcpy(in[i], host.data(), n * sizeof(K), cudaMemcpyHostToDevice));
  }
  K *keys, *keys_out;
  uint32_t *vals = nullptr, *vals_out = nullptr;
  CHECK(cudaMalloc(&keys, n * sizeof(K)));
  CHECK(cudaMalloc(&keys_out, n * sizeof(K)));
  if (value_bytes) {
    CHECK(cudaMalloc(&vals, n * 4));
    CHECK(cudaMalloc(&vals_out, n * 4));
    CHECK(cudaMemset(vals, 1, n * 4));
  }
  size_t temp = 0;
  if (value_bytes)
    cub::DeviceRadixSort::SortPairs(nullptr, temp, keys, keys_out, vals, vals_out, (int)n);
  else
    cub::DeviceRadixSort::SortKeys(nullptr, temp, keys, keys_out, (int)n);
  void* d_temp;
  CHECK(cudaMalloc(&d_temp, temp));
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ms;
  for (int r = 0; r < 18; ++r) {
    CHECK(cudaMemcpy(keys, in[r % 3], n * sizeof(K), cudaMemcpyDeviceToDevice));
    cudaEventRecord(a);
    if (value_bytes)
      cub::DeviceRadixSort::SortPairs(d_temp, temp, keys, keys_out, vals, vals_out, (int)n);
    else
      cub::DeviceRadixSort::SortKeys(d_temp, temp, keys, keys_out, (int)n);
    cudaEventRecord(b);
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaGetLastError());
    float t;
    cudaEventElapsedTime(&t, a, b);
    if (r >= 3) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::vector<K> out(n);
  CHECK(cudaMemcpy(out.data(), keys_out, n * sizeof(K), cudaMemcpyDeviceToHost));
  // Floats with NaN among them have no std::is_sorted order: those runs are not checked.
  bool ok = std::is_floating_point_v<K> || std::is_sorted(out.begin(), out.end());
  printf("cub      %s v%u 2^%-2d median %8.3f ms  min %8.3f  %6.2f GKeys/s  temp %zu B  %s\n",
         std::is_floating_point_v<K> ? "f32"
         : sizeof(K) == 4            ? "u32"
                                     : "u64",
         value_bytes, log2n, ms[ms.size() / 2], ms.front(), n / ms[ms.size() / 2] / 1e6, temp,
         ok ? "OK" : "WRONG");
  for (int i = 0; i < 3; ++i) cudaFree(in[i]);
  cudaFree(keys);
  cudaFree(keys_out);
  cudaFree(vals);
  cudaFree(vals_out);
  cudaFree(d_temp);
}

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  if (!strcmp(argv[1], "u32"))
    run<uint32_t>(atoi(argv[3]), atoi(argv[2]));
  else if (!strcmp(argv[1], "f32"))
    run<float>(atoi(argv[3]), atoi(argv[2]));
  else
    run<uint64_t>(atoi(argv[3]), atoi(argv[2]));
}
