// Element-wise CUDA kernels (elementwise.hpp): grid-stride loops over the count's elements.
#include <cstdint>

#include "primitives/cuda/elementwise.hpp"

namespace gpusort::cuda::elementwise {
namespace {
__device__ __forceinline__ unsigned long long count_of(const ElementwiseParams& p) {
  return p.count != nullptr ? min((unsigned long long)(*p.count), p.n) : p.n;
}
__device__ __forceinline__ unsigned long long first() {
  return (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ unsigned long long stride() {
  return (unsigned long long)gridDim.x * blockDim.x;
}
}  // namespace
}  // namespace gpusort::cuda::elementwise

extern "C" __global__ void gpusort_iota_u32(const gpusort::cuda::ElementwiseParams p) {
  using namespace gpusort::cuda::elementwise;
  const unsigned long long n = count_of(p);
  for (unsigned long long i = first(); i < n; i += stride()) static_cast<uint32_t*>(p.out)[i] = uint32_t(i);
}

extern "C" __global__ void gpusort_widen_u32_u64(const gpusort::cuda::ElementwiseParams p) {
  using namespace gpusort::cuda::elementwise;
  const unsigned long long n = count_of(p);
  for (unsigned long long i = first(); i < n; i += stride())
    static_cast<unsigned long long*>(p.out)[i] = static_cast<const uint32_t*>(p.in)[i];
}

extern "C" __global__ void gpusort_gather_u64(const gpusort::cuda::ElementwiseParams p) {
  using namespace gpusort::cuda::elementwise;
  const unsigned long long n = count_of(p);
  for (unsigned long long i = first(); i < n; i += stride())
    static_cast<unsigned long long*>(p.out)[i] =
        static_cast<const unsigned long long*>(p.in)[p.index[i]];
}
