// CUDA kernels run on the host, for the tests that check the CUDA face's kernel code without a
// GPU or nvcc (topk_, small_sort_, segmented_ and float_order_cuda_emulation.cpp): the built-ins
// the kernels use, each block emulated by its threads (host threads that share a std::barrier for
// __syncthreads, static storage for __shared__, std::atomic_ref for the atomics), blocks one
// after another. Include before the kernel source.
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

struct EmulatedDim {
  uint32_t x = 0, y = 0, z = 0;
};
inline thread_local EmulatedDim threadIdx, blockIdx;
inline EmulatedDim blockDim, gridDim;
inline thread_local std::barrier<>* block_barrier = nullptr;
inline void __syncthreads() {
  block_barrier->arrive_and_wait();
}
// A warp's shuffle: every lane of the warp (of 32 threads) calls it, as on the GPU with a full
// mask; the lanes meet at their warp's barrier. Any value of up to 32 bytes at once (the kernels'
// shuffle_xor hands it whole: one meeting where the GPU shuffles word by word).
inline constexpr size_t kWarpSlotBytes = 32;
inline thread_local std::barrier<>* warp_barrier = nullptr;
inline thread_local unsigned char* warp_slots = nullptr;  // a block's: kWarpSlotBytes a thread
// Every lane of the warp hands `value` and gets lane `from`'s (a lane of its own warp).
template <class T>
T warp_exchange(T value, uint32_t from) {
  static_assert(sizeof(T) <= kWarpSlotBytes);
  const uint32_t t = threadIdx.x;
  std::memcpy(warp_slots + t * kWarpSlotBytes, &value, sizeof value);
  warp_barrier->arrive_and_wait();
  T r;
  std::memcpy(&r, warp_slots + ((t & ~31u) | (from & 31u)) * kWarpSlotBytes, sizeof r);
  warp_barrier->arrive_and_wait();  // read before the next exchange writes
  return r;
}
template <class T>
T __shfl_xor_sync(unsigned, T value, int lane_mask) {
  return warp_exchange(value, (threadIdx.x & 31u) ^ uint32_t(lane_mask));
}
template <class T>
T __shfl_sync(unsigned, T value, int lane) {
  return warp_exchange(value, uint32_t(lane));
}
// The lanes of the warp holding the same value (every lane of a whole warp calls it).
inline uint32_t __match_any_sync(unsigned, uint32_t value) {
  const uint32_t t = threadIdx.x;
  std::memcpy(warp_slots + t * kWarpSlotBytes, &value, sizeof value);
  warp_barrier->arrive_and_wait();
  uint32_t peers = 0;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t other;
    std::memcpy(&other, warp_slots + ((t & ~31u) | lane) * kWarpSlotBytes, sizeof other);
    if (other == value) peers |= 1u << lane;
  }
  warp_barrier->arrive_and_wait();
  return peers;
}
// The lanes of the warp whose predicate holds (every lane of a whole warp calls it).
inline uint32_t __ballot_sync(unsigned, bool predicate) {
  const uint32_t same = __match_any_sync(0xffffffffu, predicate ? 1u : 0u);
  return predicate ? same : ~same;
}
inline void __syncwarp() {
  warp_barrier->arrive_and_wait();
}
template <class T>
T atomicAdd(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_add(v, std::memory_order_relaxed);
}
// *p = v where better(v, *p), atomically; the old value.
template <class T, class Better>
T atomic_replace_if(T* p, T v, Better better) {
  std::atomic_ref<T> a(*p);
  T old = a.load(std::memory_order_relaxed);
  while (better(v, old) && !a.compare_exchange_weak(old, v, std::memory_order_relaxed)) {
  }
  return old;
}
template <class T>
T atomicMin(T* p, T v) {
  return atomic_replace_if(p, v, [](T a, T b) { return a < b; });
}
template <class T>
T atomicMax(T* p, T v) {
  return atomic_replace_if(p, v, [](T a, T b) { return b < a; });
}
struct alignas(16) uint4 {
  uint32_t x, y, z, w;
};
inline int __popc(uint32_t x) {
  return __builtin_popcount(x);
}
inline int __ffs(uint32_t x) {
  return __builtin_ffs(int(x));
}
inline int __clz(uint32_t x) {
  return x == 0 ? 32 : __builtin_clz(x);
}
using std::max;
using std::min;
// A grid barrier (a cooperative launch's) where the grid is one block: the blocks run one after
// another here, so a wider grid cannot meet.
namespace cooperative_groups {
struct grid_group {
  void sync() const {
    if (gridDim.x != 1)
      throw std::logic_error("the emulation meets at a grid barrier in one block only");
    __syncthreads();
  }
};
inline grid_group this_grid() {
  return {};
}
}  // namespace cooperative_groups
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

namespace cuda_emulation {

// A block's threads: started once and reused for every block (starting them per block costs
// more than the kernels).
class Threads {
 public:
  explicit Threads(uint32_t count) {
    for (uint32_t t = 0; t < count; ++t) workers_.emplace_back([this, t] { work(t); });
  }
  ~Threads() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  // Runs body(t) on every thread and returns when all have.
  void run(const std::function<void(uint32_t)>& body) {
    {
      std::lock_guard lock(mutex_);
      body_ = &body;
      finished_ = 0;
      ++generation_;
    }
    wake_.notify_all();
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return finished_ == workers_.size(); });
  }

 private:
  void work(uint32_t t) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(uint32_t)>* body;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
        body = body_;
      }
      (*body)(t);
      std::lock_guard lock(mutex_);
      if (++finished_ == workers_.size()) done_.notify_one();
    }
  }
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(uint32_t)>* body_ = nullptr;
  uint64_t generation_ = 0;
  size_t finished_ = 0;
  bool stop_ = false;
};

// Runs `kernel` on `grid` blocks of `block` threads, one block after another (each block size
// its own threads, so that a block wakes only its own).
template <class Params>
void launch(void (*kernel)(Params), uint32_t grid, uint32_t block, const Params& p) {
  static std::map<uint32_t, std::unique_ptr<Threads>> pools;
  std::unique_ptr<Threads>& threads = pools[block];
  if (!threads) threads = std::make_unique<Threads>(block);
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (uint32_t b = 0; b < grid; ++b) {
    std::barrier<> barrier(block);
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    for (uint32_t w = 0; w < block; w += 32)
      warps.push_back(std::make_unique<std::barrier<>>(std::min(32u, block - w)));
    std::vector<unsigned char> slots(size_t(block) * kWarpSlotBytes);
    threads->run([&](uint32_t t) {
      threadIdx = {t, 0, 0};
      blockIdx = {b, 0, 0};
      block_barrier = &barrier;
      warp_barrier = warps[t / 32].get();
      warp_slots = slots.data();
      kernel(p);
    });
  }
}

}  // namespace cuda_emulation
