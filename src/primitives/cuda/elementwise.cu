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

extern "C" __global__ void gpusort_gather_u32(const gpusort::cuda::ElementwiseParams p) {
  using namespace gpusort::cuda::elementwise;
  const unsigned long long n = count_of(p);
  for (unsigned long long i = first(); i < n; i += stride())
    static_cast<uint32_t*>(p.out)[i] = static_cast<const uint32_t*>(p.in)[p.index[i]];
}

extern "C" __global__ void gpusort_gather_u64(const gpusort::cuda::ElementwiseParams p) {
  using namespace gpusort::cuda::elementwise;
  const unsigned long long n = count_of(p);
  for (unsigned long long i = first(); i < n; i += stride())
    static_cast<unsigned long long*>(p.out)[i] =
        static_cast<const unsigned long long*>(p.in)[p.index[i]];
}

// The largest s in [0, S) whose offset is at or below the position: its segment, the last of the
// empty segments that start there being skipped.
extern "C" __global__ void gpusort_segment_of(const gpusort::cuda::SegmentOfParams p) {
  using namespace gpusort::cuda::elementwise;
  const uint32_t* offsets32 = static_cast<const uint32_t*>(p.offsets);
  const unsigned long long* offsets64 = static_cast<const unsigned long long*>(p.offsets);
  for (unsigned long long i = first(); i < p.n; i += stride()) {
    const unsigned long long position = p.positions[i];
    unsigned long long low = 0, high = p.segments - 1;
    while (low < high) {
      const unsigned long long mid = (low + high + 1) / 2;
      const unsigned long long offset = p.offset_bytes == 4 ? offsets32[mid] : offsets64[mid];
      if (offset <= position)
        low = mid;
      else
        high = mid - 1;
    }
    p.out[i] = uint32_t(low);
  }
}
