// Residency probes (probe.cpp): every block writes its shared memory, holds its SM for spin_ns,
// and thread 0 writes (SM id, start, end) in globaltimer ns to out[3 block ..], bit 40 of the SM
// word set where the shared memory did not keep what was written. The host counts how many blocks
// overlapped on one SM: the blocks per SM that the launch path's shared memory configuration
// allows.
#pragma once

#include <cstdint>

__device__ __forceinline__ void residency_body(volatile uint32_t* words, uint32_t word_count,
                                               unsigned long long* out, uint32_t spin_ns) {
  for (uint32_t i = threadIdx.x; i < word_count; i += blockDim.x) words[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long start, now;
    uint32_t sm;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < spin_ns);
    const bool kept = word_count == 0 || words[word_count - 1] == word_count - 1;
    out[3 * blockIdx.x] = sm + (kept ? 0ull : 1ull << 40);
    out[3 * blockIdx.x + 1] = start;
    out[3 * blockIdx.x + 2] = now;
  }
}
