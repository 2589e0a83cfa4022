// gpusort::distributed: one sort over many processes (MPI ranks), each with its own GPU.
//
// Every rank of a communicator holds a local array; together they sort the concatenation (rank
// 0's array, then rank 1's, ...) stably, and each rank is left a contiguous slice of the global
// order: rank 0 the first elements, rank 1 the next, ... By default the slices have equal counts
// (+-1: rank r gets elements [r * N / P, (r + 1) * N / P) of the N in all); with
// DistributedOptions::balanced false, the natural bucket sizes of a sample sort (no exact
// splitting, one collective fewer per bit of the key). Either way the result is exactly what one
// stable sort of the concatenation gives, cut into slices: equal keys are ordered by their rank,
// then their position in that rank's array, and are split across ranks by that global position.
//
// The steps (docs/distributed.md): each rank sorts its array on its GPU in runs that fit the
// device (one when in core), kept as sorted runs in host memory; finds its split points while the
// sorted data is still downloading (exact: a distributed binary search of the key order, a few
// dozen small MPI_Allreduce; natural: oversampled regular samples gathered on every rank); sends
// each rank its pieces in messages that leave as soon as their part is on the host (its own part
// is never copied); and merges the sorted runs it received (on the GPU, uploading while the rest
// arrives, or on the CPU, stably, in the order of the ranks and runs that sent them).
//
// On one node whose GPUs reach each other (CUDA peer access; the library built with cuda.h, the
// CUDA driver loaded at run time), the device-resident path replaces these steps by default
// (DeviceExchange): each rank's keys stay on its GPU from the upload to the download, the
// split points are found on the device data and the pieces are copied straight into the other
// ranks' GPU memory; DistributedTimings::device_refused says why it did not run.
//
// Collective: every rank of `comm` calls with the same key type, value width and options (else
// every rank throws gpusort::Error naming the first rank that differs from rank 0, its first
// differing argument or option and both values). A failure on any rank (invalid arguments, a
// device out of memory, ...) is reported on every rank as gpusort::Error "rank R: <what failed
// there>" (the lowest failing rank), at the next point where the ranks agree (after the checks,
// after the local sort, at the end), so that no rank is left waiting in a collective. Requires
// MPI; link gpusort::distributed.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <gpusort/gpusort.hpp>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gpusort::distributed {

// Moves bytes between every pair of ranks of a communicator (an all-to-all with variable counts):
// rank s sends send_counts[d] bytes starting at send + send_offsets[d] to every rank d, and
// receives recv_counts[s] bytes into recv + recv_offsets[s] from every rank s. Collective; the
// counts agree pairwise (the sort exchanges them first). Swappable: an exchange that moves device
// memory directly (CUDA-aware MPI, NVLink peer copies) implements this face for its own buffers.
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual void exchange(MPI_Comm comm, const void* send, std::span<const uint64_t> send_counts,
                        std::span<const uint64_t> send_offsets, void* recv,
                        std::span<const uint64_t> recv_counts,
                        std::span<const uint64_t> recv_offsets) = 0;
};

// The default exchange: one MPI_Alltoallv of MPI_BYTE when every count and offset fits an int;
// otherwise (or for any message above max_message_bytes) rounds of MPI_Isend / MPI_Irecv of at
// most max_message_bytes each (0: 1 GiB), which any size takes.
std::unique_ptr<Exchange> make_mpi_exchange(uint64_t max_message_bytes = 0);

// How the received runs are merged into the rank's slice.
enum class Merge : uint32_t {
  automatic,  // gpu
  // Stable gpusort sorts of the runs, concatenated in (rank, run) order and streamed from where
  // they are (the upload waits for what is still arriving): one sort when the slice fits the
  // device, else one per range of the key order (each a contiguous range of every run, cut by an
  // exact selection), each fitting the device, written at its place in the output.
  gpu,
  cpu,  // gpusort::merge_sorted_runs (up to 16 host threads), once every run has arrived
};

// Where the keys go between the local sort and the final one.
enum class DeviceExchange : uint32_t {
  // device where every condition holds, else host (DistributedTimings::device_refused says why).
  automatic,
  host,  // through host memory (the local sort's download, MPI messages, the merge's upload)
  // Device resident (docs/distributed.md): every rank of the communicator on one node, its share
  // and its slice in core on its GPU, the GPUs able to reach each other (CUDA peer access), the
  // library built with cuda.h and the CUDA driver present (loaded at run time). Each rank uploads
  // its keys (and values) once, sorts them on its GPU, finds exact split points on the device
  // data, writes each rank's piece straight into that rank's GPU memory (CUDA peer copies over
  // NVLink / PCIe), sorts what it received (stably, in rank order) and downloads its slice. When
  // a condition fails, every rank throws gpusort::Error naming it (automatic: the host path).
  device,
  // The device-resident path with every rank on the same Vulkan device, sharing memory through
  // Vulkan alone (VK_KHR_external_memory_fd, no CUDA): what tests run on a CPU Vulkan driver
  // (lavapipe). Never chosen by automatic.
  shared_device,
};

// Where a distributed sort spent its time on this rank, in milliseconds of wall time.
struct DistributedTimings {
  double local_sort_ms = 0;  // the local sort of the rank's input, run by run (transfers included)
  SortTimings local;         // ... its stages, summed over the runs (no CPU merge: runs stay)
  double split_ms = 0;       // finding the split points (collectives; waits for the download too)
  double exchange_ms = 0;    // the exchange of keys and values (from the split's end)
  double merge_ms = 0;  // merging the received runs (Merge; on the GPU from the local sort's end)
  SortTimings final_sort;   // ... its stages when the merge ran on the GPU (runs: its parts)
  double total_ms = 0;      // the whole call
  uint64_t bytes_sent = 0;  // keys and values sent to other ranks
  uint64_t bytes_received = 0;
  uint64_t split_rounds = 0;  // collectives of the split
  uint64_t local_runs = 0;    // runs the local sort cut the rank's share into (1: in core)
  uint64_t messages = 0;      // point-to-point messages this rank sent (built-in exchange)
  double prefault_ms = 0;     // growing (and touching) the sorter's host buffers in this call
  // Bytes the device-resident path's transfers moved straight between registered host memory
  // and the GPU (Sorter::register_host_memory); the rest went through staging.
  uint64_t direct_bytes = 0;
  // Which path ran: true for the device-resident one (DeviceExchange::device / shared_device).
  // Its stages: local.upload_ms (keys and values to the GPU), local.sort_gpu_ms (the local sort),
  // split_ms (exact cuts on the device data), exchange_ms (the peer copies, from the cuts to the
  // last rank's end), final_sort.sort_gpu_ms (the sort of the received pieces),
  // final_sort.download_ms (the slice to the output); merge_ms = final sort + download.
  bool device_resident = false;
  // Why the device-resident path did not run ("" when it did or host was asked for), e.g.
  // "rank 1: no peer access to rank 0's GPU" or "p2p: libcuda.so.1 not found (...)".
  std::string device_refused;
  // The stages overlap (the split and the exchange run during the local sort's download, a merge
  // on the GPU during the exchange): local_sort_ms + split_ms + exchange_ms + merge_ms can exceed
  // total_ms. exchange_ms runs from the split's end until every message of this rank is done.
};

struct DistributedOptions {
  // Order, bit range, algorithm and device_memory_limit of the local sorts (options.timings is
  // ignored: see timings below).
  SortOptions sort;
  // true: equal counts (+-1) per rank; false: the natural bucket sizes of a sample sort.
  bool balanced = true;
  // Samples per rank, on average, for the natural bucket sizes (0: 256). A bucket exceeds N / P
  // by about 2 N / (samples per rank) at most; every rank gathers samples_per_rank * P samples.
  uint32_t samples_per_rank = 0;
  Merge merge = Merge::automatic;
  // Experimental: partition first, sort once. Splitters from samples of the unsorted inputs cut
  // each rank's array into buckets on the CPU (a stable partition, on several threads), the
  // buckets are exchanged, and each rank sorts what it received once on its GPU (then, when
  // balanced, contiguous pieces move between neighbouring ranks to equalize the counts, exactly):
  // each key crosses PCIe once each way instead of twice. `merge` is not used. The same result.
  bool partition_first = false;
  // nullptr: the built-in exchange, pipelined with the local sort's download: each piece of the
  // sorted data goes to its rank in messages of at most chunk_bytes as soon as it is on the host
  // (MPI_Isend / MPI_Irecv), and a merge on the GPU uploads what has arrived while the rest is
  // still coming. Otherwise this exchange, once the local sort is done (one call per local run).
  Exchange* exchange = nullptr;
  // The built-in exchange's message size in bytes of keys (values go in the same elements);
  // 0: 64 MiB. At most 512 MiB. Tiny sizes make many messages per pair of ranks (tests).
  uint64_t chunk_bytes = 0;
  DistributedTimings* timings = nullptr;
  // The device-resident path or the host-staged one (automatic: device where it can run; a
  // custom `exchange`, partition_first or natural bucket sizes take the host path).
  DeviceExchange device_exchange = DeviceExchange::automatic;
};

// ---- Host memory ----
//
// Fresh host memory costs a page fault per 4 KiB page the first time it is written (about
// 1-2 GB/s on one core): tens of gigabytes of results written once into new memory are bound by
// it, not by PCIe or the exchange. HostBuffer is memory mapped with transparent huge pages asked
// for (madvise MADV_HUGEPAGE) and touched when it grows, on several threads at once, so that the
// sort later writes into it at memory speed; keep one and reuse it across sorts.
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(uint64_t bytes) { reserve(bytes); }
  HostBuffer(HostBuffer&& o) noexcept;
  HostBuffer& operator=(HostBuffer&& o) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();
  // At least `bytes`, every page touched; growing loses the contents (no copy). Throws
  // std::bad_alloc when the memory cannot be mapped.
  void reserve(uint64_t bytes);
  void release();
  uint8_t* data() const { return data_; }
  uint64_t capacity() const { return capacity_; }

 private:
  void* map_ = nullptr;
  uint64_t mapped_ = 0;
  uint8_t* data_ = nullptr;
  uint64_t capacity_ = 0;
};

// Writes a zero into every page of [data, data + bytes) (huge pages included) on `threads`
// threads (0: the cores this process may run on, at most 32): a caller's fresh array is then
// faulted in before the sort writes into it. Destroys the contents.
void prefault(void* data, uint64_t bytes, unsigned threads = 0);

// The cores this process may run on (its CPU affinity). mpirun binds every rank to ONE core by
// default when it starts 2 ranks or fewer (Open MPI: --bind-to core): the sort's host threads
// (staging copies, CPU merges, page faults) then share that core. Start ranks with
// `mpirun --bind-to none` (or a socket / NUMA binding) to give each its share of the machine.
unsigned usable_cores();

// Where this rank's slice lies in the global order.
struct Slice {
  uint64_t count = 0;          // elements on this rank
  uint64_t global_offset = 0;  // position of its first element in the global order
  uint64_t global_count = 0;   // elements on all ranks together
};

// Storage for `count` elements of the output, asked for once; returns at least count * element
// bytes (may be nullptr when count is 0), which must stay valid until sort_raw returns.
using Allocate = std::function<void*(uint64_t count)>;

// The raw form: n keys of key_type at `keys` and (value_bytes 4 or 8, else 0) n values at
// `values`, left unchanged; the rank's slice is written into storage from keys_out (and
// values_out, when value_bytes != 0). Makes a Sorter for the one call (its host buffers are
// allocated and touched within the call: DistributedTimings::prefault_ms).
Slice sort_raw(Context& ctx, MPI_Comm comm, KeyType key_type, const void* keys, uint64_t n,
               const void* values, uint32_t value_bytes, const Allocate& keys_out,
               const Allocate& values_out, const DistributedOptions& options = {});

// Sorts many times with the same host buffers: the rank's sorted local runs and the received
// runs (for a merge on the CPU) stay allocated and touched between calls, so that a repeated
// sort of similar sizes faults no page in (reserve() does it before the first). Holds its own
// duplicate of `comm` (the constructor is collective) and uses `ctx`, which must outlive it.
// The output still goes into the caller's storage (keys_out / values_out): give it memory that
// is already touched (a HostBuffer) to keep first-touch faults out of the sort too.
class Sorter {
 public:
  Sorter(Context& ctx, MPI_Comm comm);
  ~Sorter();
  Sorter(const Sorter&) = delete;
  Sorter& operator=(const Sorter&) = delete;
  // Grows and touches the buffers for a share of up to `local` elements (the sorted local runs)
  // and up to `received` elements from the other ranks (the receive buffer: used by Merge::cpu,
  // and by the GPU merge when the slice exceeds the device; about (P - 1) / P of the slice), of
  // this key type and value width. Not collective.
  void reserve(KeyType key_type, uint32_t value_bytes, uint64_t local, uint64_t received);
  // Frees the device-resident path's GPU buffers (kept between sorts, each about the largest
  // share or slice of keys and values sorted so far). Collective.
  void release_device_memory();
  // Registers [data, data + bytes) of this process's memory with the rank's GPU: its pages are
  // pinned and imported (VK_EXT_external_memory_host), and the device-resident path then
  // uploads keys and values from it, and downloads the slice into it, by DMA straight from and
  // to those pages. Without it every byte is copied by host threads into pinned staging first
  // (or out of it), so it crosses host memory three times instead of once: what bounds several
  // GPUs transferring at once. Pinning takes time (~17 GB/s on an H100's host): register memory
  // sorted from or into more than once, e.g. the inputs and the output HostBuffers. Only whole
  // pages within the range are imported; the bytes around them are staged. The memory must stay
  // mapped, at that address, until unregister_host_memory(data) or the sorter's destruction.
  // Throws gpusort::Error naming the problem (the device cannot import host memory, the range
  // overlaps one registered, the driver refused the pages); nothing is registered then. The
  // host path does not use registrations. Not collective.
  void register_host_memory(const void* data, uint64_t bytes);
  // Releases the registration made at `data`; false when there is none. Not collective.
  bool unregister_host_memory(const void* data);
  // As distributed::sort_raw, on the sorter's communicator. Collective.
  Slice sort_raw(KeyType key_type, const void* keys, uint64_t n, const void* values,
                 uint32_t value_bytes, const Allocate& keys_out, const Allocate& values_out,
                 const DistributedOptions& options = {});

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// The convenient templates return std::vector: its resize writes every element on one thread
// (the first-touch faults of the result are paid there, before the exchange writes into it).
// For arrays of gigabytes, use a Sorter with HostBuffer outputs.
template <class K>
std::vector<K> sort(Context& ctx, MPI_Comm comm, std::span<const K> keys,
                    const DistributedOptions& options = {}) {
  std::vector<K> out;
  sort_raw(
      ctx, comm, key_type_of<K>(), keys.data(), keys.size(), nullptr, 0,
      [&](uint64_t count) {
        out.resize(count);
        return static_cast<void*>(out.data());
      },
      {}, options);
  return out;
}

template <class K, class V>
void sort_by_key(Context& ctx, MPI_Comm comm, std::span<const K> keys, std::span<const V> values,
                 std::vector<K>& keys_out, std::vector<V>& values_out,
                 const DistributedOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "values are 4 or 8 bytes wide");
  if (keys.size() != values.size())
    throw Error("distributed::sort_by_key: " + std::to_string(keys.size()) + " keys but " +
                std::to_string(values.size()) + " values");
  sort_raw(
      ctx, comm, key_type_of<K>(), keys.data(), keys.size(), values.data(), sizeof(V),
      [&](uint64_t count) {
        keys_out.resize(count);
        return static_cast<void*>(keys_out.data());
      },
      [&](uint64_t count) {
        values_out.resize(count);
        return static_cast<void*>(values_out.data());
      },
      options);
}

// This process's rank among the ranks of its node (MPI_Comm_split_type shared memory).
int node_local_rank(MPI_Comm comm);

// The device a rank uses by default: the (node-local rank)-th of the node's devices of the best
// type present (discrete GPUs before integrated, virtual, CPU), wrapping around when there are
// more ranks than devices; as a ContextOptions::device index string. GPUSORT_DEVICE, when set,
// wins (every rank uses that device). Collective (it finds the node-local rank).
std::string default_device(MPI_Comm comm);
// The same for a known node-local rank; not collective.
std::string default_device_for(int node_local_rank);

// Runs `step` on every rank; if it throws on any, every rank throws gpusort::Error
// "rank R: <message>" (R: the lowest failing rank, its exception's message). Collective.
void agree(MPI_Comm comm, const std::function<void()>& step);

}  // namespace gpusort::distributed
