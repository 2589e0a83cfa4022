// What a sort asks of the kernels, from its options and the environment: read by both backends
// and by the algorithms that have CUDA kernels.
#pragma once

#include <gpusort/gpusort.hpp>
#include <optional>
#include <string>

namespace gpusort {

// GPUSORT_KERNELS: unset, empty, auto or automatic -> automatic; spirv; cuda; anything else
// throws gpusort::Error naming the value.
KernelPath kernel_path_from_environment();
// What a sort asks for: `option` where it is not automatic, else GPUSORT_KERNELS.
KernelPath requested_kernel_path(KernelPath option);

// The CUDA pass's switches for measurements, from the environment (unset or empty: not set):
//   GPUSORT_CUDA_HISTOGRAM=0|1|2   the histogram kernel (Onesweep's cuda_histogram_ row)
//   GPUSORT_CUDA_PREFETCH=<tiles>  prefetch ahead by this many tiles (0 to 999999999)
//   GPUSORT_CUDA_MODULE=ptx|cubin  the only kind of embedded image loaded (both backends)
//   GPUSORT_CUDA_FACE_TILE=<name>  the CUDA face's Onesweep pass row of that variant name
//                                  (cuda_kernels.hpp), for measurements
//   GPUSORT_CUDA_RANK_SORT_MAX_N=<n>  the CUDA face's rank sort up to n keys (0: never; at most
//                                  its kernel's capacity), for measurements
//   GPUSORT_CUDA_RANK_SORT_COPY=1  the rank sort in place reads a copy (two launches) instead of
//                                  meeting at a grid barrier (one), for measurements
//   GPUSORT_CUDA_TOPK_BOUND=0      the CUDA face's whole-array top-k without its bound (the
//                                  digits over every key), for measurements
//   GPUSORT_CUDA_TOPK_BUCKETS=0    the CUDA face's long top-k list sorted by its radix passes
//                                  alone, not by buckets, for measurements
//   GPUSORT_CUDA_OVERLAP=0         no launch overlaps the end of the kernel before it
//                                  (launch_dependent, module.hpp), for measurements
//   GPUSORT_CUDA_REFUSAL_PERIOD=<p>  the CUDA face's Onesweep tiles t with t % p == p - 1 never
//                                  publish, so that the tiles after them fall back (0: all
//                                  publish), for tests
// Any other value throws gpusort::Error naming the variable and the value.
struct CudaEnvironment {
  std::optional<uint32_t> histogram;
  std::optional<uint32_t> prefetch_tiles;
  std::string module;  // "", "ptx" or "cubin"
  std::string face_tile;
  std::optional<uint32_t> rank_sort_max_n;
  bool rank_sort_copy = false;
  bool topk_bound = true;
  bool topk_buckets = true;
  bool overlap = true;
  std::optional<uint32_t> refusal_period;
  // GPUSORT_CUDA_CARVEOUT: every kernel's preferred shared-memory carveout, in percent (0-100).
  std::optional<uint32_t> carveout;
};
CudaEnvironment cuda_environment();
// Refuses a bad GPUSORT_KERNELS or CudaEnvironment value: every sort request checks them
// (make_sort_spec), whether or not its path would read them.
void check_kernel_environment();

}  // namespace gpusort
