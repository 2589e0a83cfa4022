// What the CUDA baselines (cub_baseline.cu, cub_small.cu) share: error checks and the spin-up
// batches and timed runs of one stream (Protocol::spin_up, docs/design/benchmark-protocol.md).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusort::bench {

inline void check_cuda(cudaError_t status, const char* what, int line) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + " (line " + std::to_string(line) +
                             "): " + cudaGetErrorString(status));
}
#define CUDA_CHECK(call) ::gpusort::bench::check_cuda((call), #call, __LINE__)

// The spin-up batches and the timed runs of a row on one stream, timed with events, enqueued
// without host waits (docs/design/benchmark-protocol.md): the GPU runs one batch while the host enqueues
// the next, and the timed runs follow the last batch with no gap. An event pair measures the
// stream's work between them, from the moment everything before the first had finished.
class CudaBatches {
 public:
  CudaBatches(cudaStream_t stream, uint32_t max_runs) : stream_(stream), runs_(2 * max_runs) {
    for (cudaEvent_t& e : batch_) CUDA_CHECK(cudaEventCreate(&e));
    for (cudaEvent_t& e : runs_) CUDA_CHECK(cudaEventCreate(&e));
  }
  ~CudaBatches() {
    for (cudaEvent_t e : batch_) cudaEventDestroy(e);
    for (cudaEvent_t e : runs_) cudaEventDestroy(e);
  }
  CudaBatches(const CudaBatches&) = delete;
  CudaBatches& operator=(const CudaBatches&) = delete;

  // Protocol::spin_up's begin and finish.
  template <class SortOne>
  void begin_batch(uint32_t repeats, SortOne sort_one) {
    if (queued_ == 2) throw std::logic_error("CudaBatches: more than two batches queued");
    const uint32_t slot = (oldest_ + queued_) % 2;
    CUDA_CHECK(cudaEventRecord(batch_[2 * slot], stream_));
    for (uint32_t r = 0; r < repeats; ++r) sort_one();
    CUDA_CHECK(cudaEventRecord(batch_[2 * slot + 1], stream_));
    ++queued_;
  }
  double finish_batch() {
    if (queued_ == 0) throw std::logic_error("CudaBatches: no batch queued");
    const uint32_t slot = oldest_;
    oldest_ = (oldest_ + 1) % 2, --queued_;
    CUDA_CHECK(cudaEventSynchronize(batch_[2 * slot + 1]));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, batch_[2 * slot], batch_[2 * slot + 1]));
    return ms;
  }
  uint32_t batches_queued() const { return queued_; }

  // Timed run r (r < max_runs): before() (untimed), run() between the events of r, then
  // after() (untimed).
  template <class Before, class Run, class After>
  void enqueue_run(uint32_t r, Before before, Run run, After after) {
    before();
    CUDA_CHECK(cudaEventRecord(runs_.at(2 * r), stream_));
    run();
    CUDA_CHECK(cudaEventRecord(runs_.at(2 * r + 1), stream_));
    after();
  }
  // Waits for the stream; the ms of runs 0 .. count-1.
  std::vector<float> finish_runs(uint32_t count) {
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<float> ms(count);
    for (uint32_t r = 0; r < count; ++r)
      CUDA_CHECK(cudaEventElapsedTime(&ms[r], runs_.at(2 * r), runs_.at(2 * r + 1)));
    return ms;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t batch_[4] = {};
  std::vector<cudaEvent_t> runs_;
  uint32_t oldest_ = 0, queued_ = 0;
};

}  // namespace gpusort::bench
