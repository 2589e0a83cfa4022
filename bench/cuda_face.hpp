// The CUDA face's rows of `gpusort bench` (--algorithms ...,cuda): gpusort::cuda::sort_raw on
// device memory allocated through the CUDA driver that the library opens at run time (no CUDA
// library linked), on the Vulkan device's GPU (the CUDA device with its UUID), in the same process
// as the Vulkan rows. Each row sorts the inputs the Vulkan rows of its configuration and n sort
// (bench_common.hpp's generator, the same seeds), under the same protocol: the row's own sort of a
// spare input spun up until steady, then the warm-ups and the timed runs queued behind it on one
// stream, CUDA events around each call alone, the median reported, every output checked as
// theirs (sorted, a permutation of its input, up to exact_max_n equal to std::stable_sort).
#pragma once

#include <memory>
#include <string>

#include "bench_common.hpp"

namespace gpusort::bench {

// The rows' algorithm and face.
inline constexpr const char* cuda_face_name = "cuda";

class CudaFaceRows {
 public:
  // Opens the CUDA device whose UUID is `uuid` (16 bytes: the Vulkan device's), its primary
  // context, a stream and up to max_runs pairs of events, and sorts a few keys once (the face
  // loads its kernels). Never throws: where any of it fails, unavailable() says why.
  CudaFaceRows(const unsigned char* uuid, uint32_t max_runs);
  ~CudaFaceRows();
  CudaFaceRows(const CudaFaceRows&) = delete;
  CudaFaceRows& operator=(const CudaFaceRows&) = delete;

  // "" where the rows can run, else why not (one line).
  const std::string& unavailable() const { return why_; }

  // One row: configuration c at n with the invocation seed; a row the face refuses or that does
  // not fit in device memory comes back with `skipped` set. Throws gpusort::Error on a wrong
  // result or a failed CUDA call.
  Row measure(const KeyConfig& c, uint64_t n, const Protocol& p, uint64_t seed,
              const SmClock* clock);
  // The argsort row beside `gpusort bench --segmented`'s (c: u32, config "u32 argsort"):
  // gpusort::cuda::argsort_raw of c's keys to u32 indices, the sorted keys to a buffer of their
  // own (the Vulkan row sorts them in place), every run's indices checked against the stable
  // sorting permutation.
  Row measure_argsort(const KeyConfig& c, uint64_t n, const Protocol& p, uint64_t seed,
                      const SmClock* clock);

 private:
  Row run(const KeyConfig& c, uint64_t n, bool argsort, const Protocol& p, uint64_t seed,
          const SmClock* clock);
  struct Device;
  std::unique_ptr<Device> device_;
  std::string why_;
};

}  // namespace gpusort::bench
