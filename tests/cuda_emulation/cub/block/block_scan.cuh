// A stand-in for CUB's BlockScan in the host emulation of the top-k kernels
// (tests/topk_cuda_emulation.cpp, which declares threadIdx and __syncthreads first): the same
// interface the kernels use (TempStorage, ExclusiveSum), by the block's threads through shared
// storage and two barriers.
#pragma once

namespace cub {

template <class T, int THREADS>
class BlockScan {
 public:
  struct TempStorage {
    T values[THREADS];
  };
  explicit BlockScan(TempStorage& storage) : storage_(storage) {}
  void ExclusiveSum(T input, T& output) {
    storage_.values[threadIdx.x] = input;
    __syncthreads();
    T sum = 0;
    for (unsigned i = 0; i < threadIdx.x; ++i) sum += storage_.values[i];
    output = sum;
    __syncthreads();  // read before the storage is used again
  }
  void ExclusiveSum(T input, T& output, T& aggregate) {
    storage_.values[threadIdx.x] = input;
    __syncthreads();
    T sum = 0, all = 0;
    for (unsigned i = 0; i < THREADS; ++i) {
      if (i < threadIdx.x) sum += storage_.values[i];
      all += storage_.values[i];
    }
    output = sum;
    aggregate = all;
    __syncthreads();  // read before the storage is used again
  }

 private:
  TempStorage& storage_;
};

}  // namespace cub
