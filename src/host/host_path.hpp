// The convenient face's way between host memory and the device: what it keeps between calls (a
// pinned staging ring, device buffers, the algorithms) and how it streams data through them.
//
// A sort moves its keys (then values) in pieces through K staging slots of pinned memory: the
// host threads fill slot b while the DMA of slot b-1 runs; the sort follows in submission
// order; the sorted data comes back through the same slots, the host emptying one while the
// DMA fills the next. Everything that fits one slot goes in one submission (copy in, sort, copy
// out), one wait. Measured on an H100 (docs/design/host-path.md): DMA 44-52 GB/s on the compute
// queue, the bus's speed, so no separate transfer queue; importing the caller's memory
// (VK_EXT_external_memory_host) pins at ~17 GB/s, slower than the 16-thread copy into staging
// (~40 GB/s) that it would save, so the staging copy is the path.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

#include "algorithms/sort_algorithm.hpp"
#include "vulkan/buffer.hpp"

namespace gpusort {

// memcpy for large copies between host arrays and staging memory: on x86-64 with streaming
// (non-temporal) stores, so the destination is not first read into the cache and the copy moves
// two bytes of memory traffic per byte instead of three. The host's memory bandwidth is what
// limits the host path (the DMA reads the staging memory too: docs/design/host-path.md).
void streaming_copy(void* destination, const void* source, uint64_t bytes);
// A host array as a stream's reader or writer (offsets in bytes), through streaming_copy.
HostReader memory_reader(const void* array);
HostWriter memory_writer(void* array);

// A small pool of host threads for large copies (and the callers' readers and writers).
class HostThreads {
 public:
  explicit HostThreads(unsigned count);
  ~HostThreads();
  unsigned size() const { return unsigned(workers_.size()) + 1; }
  // Runs f(begin, end) over [0, bytes) in pieces of at least min_piece bytes (multiples of
  // 4 KiB), on the pool and the calling thread; returns when all are done and rethrows the
  // first exception. One job at a time: concurrent callers take turns.
  void parallel_for(uint64_t bytes, uint64_t min_piece,
                    const std::function<void(uint64_t, uint64_t)>& f);

 private:
  void work();
  void run_pieces();
  std::vector<std::thread> workers_;
  std::mutex job_mutex_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(uint64_t, uint64_t)>* job_ = nullptr;
  uint64_t job_bytes_ = 0, piece_ = 0, next_ = 0, pieces_left_ = 0, generation_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
};

// Device buffers grow in steps of an eighth of a power of two, so that slowly growing sizes do
// not reallocate on every call and at most 1/8 is wasted; never past the device's largest
// allocation (`largest`, 0: none) when `bytes` fit it (4 GiB - 2 MiB on the H100: 2^29 - 2^18
// u64 keys must not round up to 4 GiB).
uint64_t rounded_allocation(uint64_t bytes, uint64_t largest);

// The staging slot size GPUSORT_STAGING_BYTES asks for (`variable`: its value, null when unset):
// a byte count in the CLI's syntax (byte_count.hpp: 4096, 64K, 32M), from 4 KiB to 1 GiB.
// Nothing when unset or set but empty; Error naming the variable when it is anything else.
inline constexpr uint64_t min_staging_slot_bytes = 4096, max_staging_slot_bytes = uint64_t(1) << 30;
std::optional<uint64_t> staging_slot_bytes(const char* variable);

class HostPath {
 public:
  explicit HostPath(Context::Impl& ctx);
  ~HostPath();

  // Streams n keys (and values when spec.value_words) in, sorts them with `requested`, and
  // streams them out (see sort_streamed in gpusort.hpp).
  void sort(const SortSpec& spec, Algorithm requested, uint64_t n, const HostStream& keys,
            const HostStream& values, SortTimings* timings);
  void release_cached_memory();
  // Device memory that sort() of n elements uses (keys, values and scratch buffers, as
  // allocated: rounded up), and the largest n the algorithm takes.
  uint64_t device_bytes(const SortSpec& spec, Algorithm requested, uint64_t n);
  // The bytes of sort()'s keys, values (0 without) and scratch buffers for n elements, exact.
  std::array<uint64_t, 3> buffer_bytes(const SortSpec& spec, Algorithm requested, uint64_t n);
  uint64_t max_elements(const SortSpec& spec, Algorithm requested);
  // Frees the cached sets whose device buffers hold more than `bytes` together (a
  // device_memory_limit must not be exceeded by what an earlier, larger sort left behind).
  void release_cached_beyond(uint64_t bytes);

  // A job beyond sort() (segmented sort, argsort): whole arrays uploaded into device buffers by
  // role, GPU work recorded on them, and whole arrays downloaded, through the same staging ring.
  enum class JobBuffer : uint32_t { keys, values, offsets, indices };
  struct JobAddresses {
    std::array<VkDeviceAddress, 4> buffer{};  // by JobBuffer (0: unused)
    VkDeviceAddress scratch = 0;
    VkBuffer scratch_buffer = VK_NULL_HANDLE;
  };
  struct Job {
    std::array<uint64_t, 4> bytes{};  // device bytes of each buffer (0: unused)
    std::vector<std::pair<JobBuffer, HostReader>> uploads;  // each its buffer's whole bytes
    std::vector<std::pair<JobBuffer, HostWriter>> downloads;
    uint64_t scratch_bytes = 0;
    std::function<void(Recorder&, const JobAddresses&)> record;
  };
  // SortTimings::bytes is the larger of what goes up and what comes down.
  void run(const Job& job, SortTimings* timings);

  // The largest staging slot: GPUSORT_STAGING_BYTES (staging_slot_bytes), else 32 MiB (tests
  // lower it to exercise the multi-slot pipeline on small arrays). Slots are this size or the
  // transfer's size rounded up to a power of two.
  uint64_t max_slot_bytes = uint64_t(32) << 20;
  static constexpr uint32_t slot_count = 4;
  // What moves the data between staging and device memory: the DMA engine, or a compute shader
  // reading and writing the pinned host memory through its device address (which keeps the
  // GPU's compute units busy during transfers). GPUSORT_COPY_ENGINE=dma|shader, else the
  // device family's choice (default_copy_engine in host_path.cpp).
  enum class CopyEngine { dma, shader };
  CopyEngine copy_engine = CopyEngine::dma;
  // Counts device and staging allocations (tests check that a repeated sort makes none).
  uint64_t allocations() const { return allocations_; }

  struct Resources;

 private:
  std::unique_ptr<Resources> acquire();
  void give_back(std::unique_ptr<Resources> r);
  const SortAlgorithm& algorithm(const SortSpec& spec, Algorithm requested);
  HostThreads& threads();

  Context::Impl& ctx_;
  bool timestamps_ = false;  // the queue family writes timestamps (SortTimings::sort_gpu_ms)
  std::mutex mutex_;         // guards the members below
  std::vector<std::unique_ptr<Resources>> idle_;
  // By key type, value words, algorithm, order, bit range and kernel path.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, bool, uint32_t, uint32_t, uint32_t>,
           std::unique_ptr<SortAlgorithm>>
      algorithms_;
  std::unique_ptr<HostThreads> threads_;
  std::atomic<uint64_t> allocations_{0};
};

}  // namespace gpusort
