// Element-wise CUDA kernels the CUDA face composes its argsort and its 8-byte values from
// (elementwise.cu): read by the kernels (nvcc) and the host.
#ifndef GPUSORT_PRIMITIVES_CUDA_ELEMENTWISE_HPP
#define GPUSORT_PRIMITIVES_CUDA_ELEMENTWISE_HPP

#include <cstdint>

namespace gpusort::cuda {

// out[i] = i (u32), or out[i] = in[i] widened to u64, or out[i] = in[index[i]] (4- or 8-byte
// elements): i below the count (clamped to n).
struct ElementwiseParams {
  void* out;
  const void* in;          // widen: u32; gather: 4- or 8-byte elements
  const uint32_t* index;   // gather: u32 positions
  const uint32_t* count;   // the GPU-side count, or null: n
  unsigned long long n;
  const unsigned long long* index64;  // float_order's fix_sorted: u64 positions where index is null
};
inline constexpr const char* kIotaKernel = "gpusort_iota_u32";
inline constexpr const char* kWidenKernel = "gpusort_widen_u32_u64";
inline constexpr const char* kGather32Kernel = "gpusort_gather_u32";
inline constexpr const char* kGather64Kernel = "gpusort_gather_u64";

// The segment of each sorted element: out[i] = s where offsets[s] <= positions[i] <
// offsets[s + 1], i below n; offsets are the S + 1 CSR offsets (u32 or u64). Offsets that are not
// CSR (not rising from 0 to n) give some s in [0, S), never a read outside them.
struct SegmentOfParams {
  uint32_t* out;
  const void* offsets;
  const uint32_t* positions;
  unsigned long long n, segments;
  uint32_t offset_bytes;
};
inline constexpr const char* kSegmentOfKernel = "gpusort_segment_of";
// The bits of a segment number below `segments` (at least 1): what a sort by segment compares.
constexpr uint32_t segment_bits(unsigned long long segments) {
  uint32_t bits = 1;
  while (bits < 64 && (1ull << bits) < segments) ++bits;
  return bits;
}
inline constexpr uint32_t kElementwiseThreads = 256;

}  // namespace gpusort::cuda

#endif  // GPUSORT_PRIMITIVES_CUDA_ELEMENTWISE_HPP
