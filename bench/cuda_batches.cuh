// What the CUDA baselines (cub_baseline.cu, cub_small.cu) share: error checks and the spin-up
// batches and timed runs of one stream on the runtime's events (event_batches.hpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "event_batches.hpp"

namespace gpusort::bench {

inline void check_cuda(cudaError_t status, const char* what, int line) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + " (line " + std::to_string(line) +
                             "): " + cudaGetErrorString(status));
}
#define CUDA_CHECK(call) ::gpusort::bench::check_cuda((call), #call, __LINE__)

// The runtime API's events (event_batches.hpp).
struct RuntimeEvents {
  using Event = cudaEvent_t;
  using Stream = cudaStream_t;
  static constexpr const char* kName = "CudaBatches";
  static void create(Event& e) { CUDA_CHECK(cudaEventCreate(&e)); }
  static void destroy(Event e) { cudaEventDestroy(e); }
  static void record(Event e, Stream s) { CUDA_CHECK(cudaEventRecord(e, s)); }
  static void synchronize(Event e) { CUDA_CHECK(cudaEventSynchronize(e)); }
  static float elapsed_ms(Event from, Event to) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
    return ms;
  }
  static void synchronize_stream(Stream s) { CUDA_CHECK(cudaStreamSynchronize(s)); }
};
using CudaBatches = EventBatches<RuntimeEvents>;

}  // namespace gpusort::bench
