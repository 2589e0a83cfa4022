// Device memory shared between the ranks of one node, for the distributed sort's device-resident
// path (docs/distributed.md, "Device-resident path"): buffers allocated through the CUDA driver
// API (loaded at run time with dlopen, never linked), exported as POSIX file descriptors,
// imported into the rank's Vulkan device (so gpusort's kernels sort in them) and, passed to the
// other ranks of the node over a Unix domain socket (SCM_RIGHTS), mapped into their address
// space, where CUDA copies write into them over NVLink / PCIe peer to peer.
//
// Built only where cuda.h was found (GPUSORT_CUDA_DRIVER_API); the library links no CUDA.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <gpusort/gpusort.hpp>
#include <string>
#include <vector>

namespace gpusort::distributed::p2p {

// Whether this build has the CUDA driver path at all (cuda.h found at build time).
bool built();

// The CUDA driver, loaded once (thread-safe); throws gpusort::Error naming what is missing
// ("libcuda.so.1 not found", "cuInit: CUDA_ERROR_NO_DEVICE", ...).
struct Driver;
const Driver& driver();

// The CUDA device with this Vulkan physical device's UUID (VkPhysicalDeviceIDProperties),
// its primary context made current on the calling thread. Throws when none matches.
struct CudaDevice {
  int ordinal = -1;
  uint8_t uuid[16] = {};
  std::string name;
};
CudaDevice cuda_device_of(Context& ctx);
// Makes the device's primary context current on the calling thread.
void make_current(const CudaDevice& device);
// cuDeviceCanAccessPeer(device, peer).
bool can_access_peer(int device_ordinal, int peer_ordinal);
// The ordinal of the visible CUDA device with this UUID, -1 if none.
int ordinal_of_uuid(const uint8_t uuid[16]);

// Memory of one CUDA device, allocated in pieces (cuMemCreate, pinned, exportable as POSIX file
// descriptors), mapped contiguously at cuda_address() in this process, and imported into the
// Context's Vulkan device as one VkBuffer (sparse, bound piece by piece, when there are several
// pieces) usable as storage, transfer source / destination and by device address.
class SharedBuffer {
 public:
  SharedBuffer() = default;
  // bytes > 0; piece_bytes: 0 for the largest the Vulkan device allocates at once.
  SharedBuffer(Context& ctx, const CudaDevice& device, uint64_t bytes, uint64_t piece_bytes = 0);
  ~SharedBuffer();
  SharedBuffer(SharedBuffer&& o) noexcept { *this = std::move(o); }
  SharedBuffer& operator=(SharedBuffer&& o) noexcept;
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;

  VkBuffer buffer() const { return buffer_; }
  uint64_t bytes() const { return bytes_; }  // as asked
  uint64_t cuda_address() const { return cuda_address_; }
  const std::vector<uint64_t>& piece_sizes() const { return piece_sizes_; }
  // The exported descriptors, one per piece (owned by this buffer).
  const std::vector<int>& fds() const { return fds_; }

 private:
  void release();
  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  std::vector<VkDeviceMemory> memory_;
  std::vector<unsigned long long> handles_;  // CUmemGenericAllocationHandle
  std::vector<uint64_t> piece_sizes_;
  std::vector<int> fds_;
  uint64_t cuda_address_ = 0, reserved_ = 0, bytes_ = 0;
};

// Another rank's SharedBuffer, imported from its descriptors and mapped contiguously into this
// process, readable and writable by `device` (which must be able to access the owner's device).
class PeerMapping {
 public:
  PeerMapping() = default;
  // Takes ownership of the descriptors (closes them).
  PeerMapping(const CudaDevice& device, const std::vector<int>& fds,
              const std::vector<uint64_t>& piece_sizes);
  ~PeerMapping();
  PeerMapping(PeerMapping&& o) noexcept { *this = std::move(o); }
  PeerMapping& operator=(PeerMapping&& o) noexcept;
  uint64_t cuda_address() const { return address_; }
  uint64_t bytes() const { return reserved_; }

 private:
  void release();
  std::vector<unsigned long long> handles_;
  uint64_t address_ = 0, reserved_ = 0, mapped_ = 0;
};

// Every rank of `node` (ranks of one host) offers `mine` (descriptors, kept open by the caller);
// returns, for every rank, duplicates of its descriptors received over an abstract Unix socket
// named from a random tag that rank 0 broadcasts (this rank's entry: empty). Collective on
// `node`. Throws on any socket failure (every rank should agree() around it).
std::vector<std::vector<int>> share_fds(MPI_Comm node, const std::vector<int>& mine);

// A CUDA stream on the current context with copy helpers (all asynchronous until synchronize()).
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void copy(uint64_t dst, uint64_t src, uint64_t bytes);      // cuMemcpyDtoDAsync
  void fill32(uint64_t dst, uint32_t value, uint64_t words);  // cuMemsetD32Async
  void synchronize();
  // Elapsed GPU time between two events recorded with record(), in ms.
  void record_start();
  double record_stop_and_elapsed_ms();  // synchronizes

 private:
  void* stream_ = nullptr;
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

}  // namespace gpusort::distributed::p2p
