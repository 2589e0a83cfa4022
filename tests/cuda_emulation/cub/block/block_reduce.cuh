// A stand-in for CUB's BlockReduce in the host emulation of the CUDA face's kernels (the test
// declares threadIdx and __syncthreads first): the interface the kernels use (TempStorage, Sum,
// the result in thread 0), by the block's threads through shared storage and two barriers.
#pragma once

namespace cub {

template <class T, int THREADS>
class BlockReduce {
 public:
  struct TempStorage {
    T values[THREADS];
  };
  explicit BlockReduce(TempStorage& storage) : storage_(storage) {}
  T Sum(T input) {
    storage_.values[threadIdx.x] = input;
    __syncthreads();
    T sum = 0;
    if (threadIdx.x == 0)
      for (unsigned i = 0; i < THREADS; ++i) sum += storage_.values[i];
    __syncthreads();  // read before the storage is used again
    return sum;
  }

 private:
  TempStorage& storage_;
};

}  // namespace cub
