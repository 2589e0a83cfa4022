// The baseline: cub::DeviceRadixSort::SortKeys / SortPairs (DoubleBuffer form: CUB sorts through
// the alternate buffers, needing only a small temporary allocation) on the same inputs, with
// the same protocol as the other sorters: each run restores the input by a device copy, delays
// the GPU so that the host has enqueued the whole sort, and times it with CUDA events.
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <string>

#include "sorter.hpp"

namespace nvx_onesweep {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(status));
}

__global__ void delay_kernel(unsigned long long nanoseconds) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

void* device_alloc(size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes < 256 ? 256 : bytes),
        ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str());
  return p;
}

class CubSorter final : public Sorter {
 public:
  CubSorter() {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~CubSorter() override {
    release();
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "cub"; }

  void prepare(KeyType type, uint32_t n, const void* keys, const uint32_t* values) override {
    release();
    type_ = type;
    n_ = n;
    key_size_ = size_t(n) * key_bytes(type);
    value_size_ = has_values(type) ? size_t(n) * 4 : 0;
    for (void** p : {&keys_[0], &keys_[1], &pristine_keys_}) *p = device_alloc(key_size_);
    if (value_size_)
      for (void** p : {&values_[0], &values_[1], &pristine_values_}) *p = device_alloc(value_size_);
    // Through the (non-blocking) stream and waited for: a cudaMemcpy from pageable memory may
    // return before its DMA has landed, and the stream's restores do not wait for it.
    check(cudaMemcpyAsync(pristine_keys_, keys, key_size_, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync");
    if (value_size_)
      check(cudaMemcpyAsync(pristine_values_, values, value_size_, cudaMemcpyHostToDevice, stream_),
            "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream_), "the upload");
    temp_bytes_ = 0;
    sort(nullptr);
    temp_ = device_alloc(temp_bytes_);
  }

  double sort_once() override {
    check(cudaMemcpyAsync(keys_[0], pristine_keys_, key_size_, cudaMemcpyDeviceToDevice, stream_),
          "cudaMemcpyAsync");
    if (value_size_)
      check(cudaMemcpyAsync(values_[0], pristine_values_, value_size_, cudaMemcpyDeviceToDevice,
                            stream_),
            "cudaMemcpyAsync");
    enqueue_gpu_delay(stream_, 200);
    check(cudaEventRecord(start_, stream_), "cudaEventRecord");
    sort(temp_);
    check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

  void read_output(void* keys, uint32_t* values) override {
    check(cudaMemcpyAsync(keys, keys_[selector_], key_size_, cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync");
    if (value_size_ && values)
      check(
          cudaMemcpyAsync(values, values_[selector_], value_size_, cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream_), "the readback");
  }

  void release() override {
    cudaStreamSynchronize(stream_);
    for (void** p : {&keys_[0], &keys_[1], &pristine_keys_, &values_[0], &values_[1],
                     &pristine_values_, &temp_})
      if (*p) {
        cudaFree(*p);
        *p = nullptr;
      }
  }

 private:
  template <class K>
  void sort_keys_of(void* temp) {
    cub::DoubleBuffer<K> k(static_cast<K*>(keys_[0]), static_cast<K*>(keys_[1]));
    const int bits = int(8 * sizeof(K));
    if (value_size_) {
      cub::DoubleBuffer<uint32_t> v(static_cast<uint32_t*>(values_[0]),
                                    static_cast<uint32_t*>(values_[1]));
      check(cub::DeviceRadixSort::SortPairs(temp, temp_bytes_, k, v, int(n_), 0, bits, stream_),
            "SortPairs");
      if (temp && k.selector != v.selector)
        throw Error("CUB left keys and values in different buffers");
    } else {
      check(cub::DeviceRadixSort::SortKeys(temp, temp_bytes_, k, int(n_), 0, bits, stream_),
            "SortKeys");
    }
    selector_ = k.selector;
  }
  void sort(void* temp) {
    if (key_bytes(type_) == 4)
      sort_keys_of<uint32_t>(temp);
    else
      sort_keys_of<unsigned long long>(temp);
  }

  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  KeyType type_ = KeyType::u32;
  uint32_t n_ = 0;
  size_t key_size_ = 0, value_size_ = 0, temp_bytes_ = 0;
  void* keys_[2] = {};
  void* values_[2] = {};
  void *pristine_keys_ = nullptr, *pristine_values_ = nullptr, *temp_ = nullptr;
  int selector_ = 0;
};

}  // namespace

std::unique_ptr<Sorter> make_cub_sorter() {
  return std::make_unique<CubSorter>();
}

void enqueue_gpu_delay(void* stream, uint32_t microseconds) {
  delay_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(uint64_t(microseconds) * 1000);
  check(cudaGetLastError(), "delay_kernel");
}

}  // namespace nvx_onesweep
