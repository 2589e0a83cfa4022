// Residency probe kernels for nvx_carveout (probe.cpp), on the probe body (residency.cuh): every
// block holds its SM for spin_ns and thread 0 records (SM id, start, end) in
// globaltimer nanoseconds at out[3 x block]; the host counts the most blocks seen at once on one
// SM. Each kernel owns a different amount of static shared memory (dynamic shared memory through
// the launch's sharedMemBytes for `res_dynamic`).
#include <cstdint>

#include "residency.cuh"

// A kernel `name` with `attributes` (its launch bounds, a cluster shape) and kib KiB of static
// shared memory.
#define RES_KERNEL(name, attributes, kib)                                                 \
  extern "C" __global__ void attributes name(unsigned long long* out, uint32_t spin_ns) { \
    __shared__ uint32_t words[kib * 256];                                                 \
    residency_body(words, kib * 256, out, spin_ns);                                       \
  }

#define RES_STATIC(kib) RES_KERNEL(res_static_##kib, __launch_bounds__(256), kib)
RES_STATIC(8)
RES_STATIC(12)
RES_STATIC(16)
RES_STATIC(20)
RES_STATIC(24)
RES_STATIC(32)
RES_STATIC(40)

extern "C" __global__ void __launch_bounds__(256)
    res_dynamic(unsigned long long* out, uint32_t spin_ns) {
  extern __shared__ uint32_t dynamic_words[];
  uint32_t bytes;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  residency_body(dynamic_words, bytes / 4, out, spin_ns);
}

// A minimum of blocks per SM in the launch bounds (recorded in the cubin as .minnctapersm): does
// an NVX launch size its carveout by it, as the CUDA runtime sizes its carveout by occupancy?
#define RES_MIN(blocks, kib) \
  RES_KERNEL(res_min##blocks##_##kib, __launch_bounds__(256, blocks), kib)
RES_MIN(2, 24)
RES_MIN(2, 32)
RES_MIN(3, 20)

// Two-block clusters fixed at compile time (EIATTR_CTA_PER_CLUSTER, EIATTR_EXPLICIT_CLUSTER): a
// cluster launch may take another path in the driver.
#define RES_CLUSTER(kib) \
  RES_KERNEL(res_cluster2_##kib, __cluster_dims__(2, 1, 1) __launch_bounds__(256), kib)
RES_CLUSTER(16)
RES_CLUSTER(24)
RES_CLUSTER(32)
