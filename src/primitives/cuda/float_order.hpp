// NumPy's float order on the CUDA face (float_order.cu): read by the kernels (nvcc) and the host.
//
// NumPy orders -0.0 equal to +0.0, and every NaN (either sign, any payload) equal to every other
// and greater than +inf; the sorts order floats by IEEE totalOrder. So the keys are made
// canonical (-0.0 -> +0.0, any NaN -> the default positive quiet NaN, the greatest key in
// totalOrder), sorted stably, and the original zeros and NaNs written back: a stable sort leaves
// all zeros in one run and all NaNs in another, each in input order, at positions known from the
// counts of negative keys, zeros and NaNs. Keys-only sorts and sorts with values:
//
//   count     per chunk (one block each): zeros, NaNs, negatives, and whether any key is not
//             canonical (a -0.0, or a NaN other than the default one); with a source (a sorted
//             copy), it writes the keys canonical into the copy as it reads them;
//   scan      one block: the chunks' offsets, the totals, the flag;
//   set_aside where the flag is set: the zeros and NaNs copied aside in input order (a stable
//             compaction), the keys made canonical in place;
//   (the sort)
//   restore   where the flag is set: the set-aside keys written over the zero and NaN runs.
//
// A sorted copy takes count, the sort and restore_copy alone: the source is still there after
// the sort, so restore_copy compacts its zeros and NaNs straight over their runs, each block
// finding its chunk's offsets from the counts itself. Arrays without -0.0 and odd NaNs pay one
// read of the keys and three small launches in place, one for a copy. Argsort's fused first pass
// reads the keys canonical (else it sorts a canonical copy, canonical_copy); where the face also
// returns the sorted keys, fix_sorted puts the original zero and NaN back at each place that
// holds a canonical one, through the permutation. Where Onesweep sorts, the CUDA face takes none
// of these steps but for argsorts without their sorted keys: its passes sort NumPy's order
// themselves (key_kind_numpy_float; src/api/cuda_api.cpp, numpy_order).
#ifndef GPUSORT_PRIMITIVES_CUDA_FLOAT_ORDER_HPP
#define GPUSORT_PRIMITIVES_CUDA_FLOAT_ORDER_HPP

#include <cstdint>

namespace gpusort::cuda {

// One chunk's record: counts after `count`, the exclusive offsets of zeros and NaNs after `scan`.
struct FloatOrderChunk {
  uint32_t zeros, nans, negatives, odd;
};
// totals: what `scan` writes for set_aside and restore.
struct FloatOrderTotals {
  uint32_t odd, zeros, nans, negatives;
};

struct FloatOrderParams {
  void* keys;                // the keys, sorted in place between set_aside and restore
  const void* source;        // count copies the keys from here first (canonical), or null: they
                             // are in keys
  void* aside;               // room for n keys: the zeros, then the NaNs, in input order (in place)
  FloatOrderChunk* chunks;   // chunk_count records
  FloatOrderTotals* totals;  // one
  const uint32_t* count;     // the GPU-side count, or null: n
  unsigned long long n;
  uint32_t chunk_count;  // the grid of count and set_aside, at most kFloatOrderMaxChunks
  uint32_t descending;
};

inline constexpr uint32_t kFloatOrderThreads = 256;
inline constexpr uint32_t kFloatOrderMaxChunks = 1024;     // the scan's one block
inline constexpr uint32_t kFloatOrderKeysPerChunk = 2048;  // at least, before the cap

// The chunks of n keys (the grid of count, set_aside and restore_copy): one block each, at least
// kFloatOrderKeysPerChunk keys, at most kFloatOrderMaxChunks.
constexpr uint32_t float_order_chunks(unsigned long long n) {
  const unsigned long long chunks = (n + kFloatOrderKeysPerChunk - 1) / kFloatOrderKeysPerChunk;
  return chunks < 1 ? 1u : chunks > kFloatOrderMaxChunks ? kFloatOrderMaxChunks : uint32_t(chunks);
}

// Kernel names: the prefix, then "f32" or "f64" (scan: one kernel).
inline constexpr const char* kFloatOrderCount = "gpusort_numpy_order_count_";
inline constexpr const char* kFloatOrderScan = "gpusort_numpy_order_scan";
inline constexpr const char* kFloatOrderSetAside = "gpusort_numpy_order_set_aside_";
inline constexpr const char* kFloatOrderRestore = "gpusort_numpy_order_restore_";
inline constexpr const char* kFloatOrderRestoreCopy = "gpusort_numpy_order_restore_copy_";
// ElementwiseParams: out[i] = canonical(in[i]).
inline constexpr const char* kCanonicalCopy = "gpusort_canonical_copy_";
// ElementwiseParams: out the sorted canonical keys, in the original keys, index the permutation
// (u32, or index64 where index is null): out[i] = in[index[i]] where out[i] is +0.0 or the
// canonical NaN.
inline constexpr const char* kFixSorted = "gpusort_numpy_order_fix_sorted_";

}  // namespace gpusort::cuda

#endif  // GPUSORT_PRIMITIVES_CUDA_FLOAT_ORDER_HPP
