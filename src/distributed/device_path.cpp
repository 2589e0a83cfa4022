// See device_path.hpp and docs/distributed.md ("Device-resident path").
#include "device_path.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

#include "device_exchange.hpp"
#include "host/host_path.hpp"
#include "primitives/constants.h"
#include "primitives/push.h"
#include "split.hpp"
#include "vulkan/buffer.hpp"
#include "vulkan/host_import.hpp"
#include "vulkan/recorder.hpp"

namespace gpusort::distributed::detail {

void allocate_outputs(const Allocate& keys_out, const Allocate& values_out, uint64_t count,
                      uint32_t value_bytes, void*& keys, void*& values) {
  keys = keys_out(count);
  if (value_bytes) values = values_out(count);
  if (count && (!keys || (value_bytes && !values)))
    throw Error("distributed sort: the output allocator gave no storage for " +
                std::to_string(count) + " elements");
}

std::string device_path_refusal(const DevicePathFacts& f) {
  if (f.requested == DeviceExchange::host) return "the host exchange was asked for";
  if (f.partition_first) return "partition_first runs on the host path";
  if (f.custom_exchange) return "a caller's Exchange runs on the host path";
  if (!f.balanced) return "natural bucket sizes run on the host path";
  if (!f.stable_algorithm) return "the algorithm is not stable (bitonic)";
  if (!f.node_error.empty()) return f.node_error;
  if (!f.backend_error.empty()) return f.backend_error;
  if (!f.peer_error.empty()) return f.peer_error;
  if (!f.fit_error.empty()) return f.fit_error;
  return "";
}

namespace {

using clock = std::chrono::steady_clock;
double since(clock::time_point t) {
  return std::chrono::duration<double, std::milli>(clock::now() - t).count();
}
uint64_t round_up(uint64_t x, uint64_t m) {
  return (x + m - 1) / m * m;
}

// Tests: GPUSORT_TEST_DEVICE_PATH_RUN (elements) caps the elements of one in-core sort, so that
// small inputs take the several-runs and several-parts code.
uint64_t test_run_length() {
  const char* v = std::getenv("GPUSORT_TEST_DEVICE_PATH_RUN");
  return v && *v ? std::max<uint64_t>(4, std::strtoull(v, nullptr, 10)) : ~uint64_t(0);
}

// "rank R: <its text>" for the lowest rank whose `mine` is not empty, "" when none. Collective.
std::string first_error(MPI_Comm comm, const std::string& mine) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  int failing = mine.empty() ? ranks : rank;
  MPI_Allreduce(MPI_IN_PLACE, &failing, 1, MPI_INT, MPI_MIN, comm);
  if (failing == ranks) return "";
  uint64_t length = mine.size();
  MPI_Bcast(&length, 1, MPI_UINT64_T, failing, comm);
  std::string text(length, '\0');
  if (rank == failing) text = mine;
  MPI_Bcast(text.data(), int(length), MPI_CHAR, failing, comm);
  return "rank " + std::to_string(failing) + ": " + text;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

void barrier_to_host(VkCommandBuffer cmd) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                       &b, 0, nullptr, 0, nullptr);
}

// Where the keys and values lie in A and B: keys from 0, values from values_offset; `bytes` also
// covers the engine sort's scratch for `capacity` elements (the other buffer is the scratch).
struct Layout {
  uint64_t capacity = 0;
  uint32_t key_size = 0, value_size = 0;
  uint64_t values_offset = 0, bytes = 0;
};
Layout layout_for(uint64_t capacity, uint32_t ks, uint32_t vs, uint64_t scratch) {
  Layout l{capacity, ks, vs, 0, 0};
  l.values_offset = round_up(std::max<uint64_t>(capacity * ks, 16), 256);
  l.bytes = round_up(std::max({l.values_offset + capacity * vs, scratch, uint64_t(4096)}),
                     uint64_t(2) << 20);
  return l;
}

// ---- Backends: this rank's A and B, and copies from A into any rank's B ----

class Backend {
 public:
  virtual ~Backend() = default;
  virtual VkBuffer a() const = 0;
  virtual VkBuffer b() const = 0;
  virtual uint64_t bytes() const = 0;
  // Copies `bytes` from this rank's A at src to rank d's B at dst (d may be this rank); the
  // copies run once finish() is called, which waits for them.
  virtual void copy(int d, uint64_t dst, uint64_t src, uint64_t bytes) = 0;
  virtual void finish() = 0;
};

// CUDA allocations imported into Vulkan; peers' B mapped through CUDA, copies on a CUDA stream.
class CudaBackend final : public Backend {
 public:
  CudaBackend(Context& ctx, MPI_Comm comm, const p2p::CudaDevice& device, uint64_t bytes)
      : device_(device) {
    int rank = 0, ranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    self_ = rank;
    std::string error = error_of([&] {
      a_ = p2p::SharedBuffer(ctx, device, bytes);
      b_ = p2p::SharedBuffer(ctx, device, bytes);
    });
    agree(comm, [&] {
      if (!error.empty()) throw Error(error);
    });
    std::vector<std::vector<int>> fds;
    agree(comm, [&] { fds = p2p::share_fds(comm, b_.fds()); });
    // Every rank's piece sizes of B.
    const int count = int(b_.piece_sizes().size());
    std::vector<int> counts(static_cast<size_t>(ranks)), displs(static_cast<size_t>(ranks), 0);
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
    for (int r = 1; r < ranks; ++r)
      displs[size_t(r)] = displs[size_t(r) - 1] + counts[size_t(r) - 1];
    std::vector<uint64_t> all(size_t(displs.back() + counts.back()));
    MPI_Allgatherv(b_.piece_sizes().data(), count, MPI_UINT64_T, all.data(), counts.data(),
                   displs.data(), MPI_UINT64_T, comm);
    peers_.resize(size_t(ranks));
    agree(comm, [&] {
      for (int r = 0; r < ranks; ++r) {
        if (r == rank) continue;
        std::vector<uint64_t> sizes(all.begin() + displs[size_t(r)],
                                    all.begin() + displs[size_t(r)] + counts[size_t(r)]);
        peers_[size_t(r)] = p2p::PeerMapping(device_, fds[size_t(r)], sizes);
        fds[size_t(r)].clear();  // closed by the mapping
      }
      p2p::make_current(device_);
      stream_.emplace();
    });
  }
  VkBuffer a() const override { return a_.buffer(); }
  VkBuffer b() const override { return b_.buffer(); }
  uint64_t bytes() const override { return b_.bytes(); }
  void copy(int d, uint64_t dst, uint64_t src, uint64_t bytes) override {
    p2p::make_current(device_);
    const uint64_t to = d == self_ ? b_.cuda_address() : peers_[size_t(d)].cuda_address();
    stream_->copy(to + dst, a_.cuda_address() + src, bytes);
  }
  void finish() override {
    p2p::make_current(device_);
    stream_->synchronize();
  }

 private:
  p2p::CudaDevice device_;
  int self_ = 0;
  p2p::SharedBuffer a_, b_;
  std::vector<p2p::PeerMapping> peers_;
  std::optional<p2p::Stream> stream_;
};

// Every rank on the same Vulkan device: A and B allocated exportable by Vulkan, peers' B imported
// into this rank's device, copies recorded as vkCmdCopyBuffer (tests on a CPU driver).
class SharedDeviceBackend final : public Backend {
 public:
  SharedDeviceBackend(Context& ctx, MPI_Comm comm, uint64_t bytes) : ctx_(ctx), bytes_(bytes) {
    int rank = 0, ranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    self_ = rank;
    device_ = ctx.device();
    int b_fd = -1;
    uint32_t type = 0;
    agree(comm, [&] {
      get_fd_ =
          reinterpret_cast<PFN_vkGetMemoryFdKHR>(vkGetDeviceProcAddr(device_, "vkGetMemoryFdKHR"));
      if (!get_fd_) throw Error("shared_device: VK_KHR_external_memory_fd is not enabled");
      a_ = make(bytes, -1, type, true);
      b_ = make(bytes, -1, type, true);
      VkMemoryGetFdInfoKHR get{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
      get.memory = b_.memory;
      get.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
      check(get_fd_(device_, &get, &b_fd), "shared_device: vkGetMemoryFdKHR");
    });
    std::vector<std::vector<int>> fds;
    std::string error = error_of([&] { fds = p2p::share_fds(comm, {b_fd}); });
    ::close(b_fd);
    agree(comm, [&] {
      if (!error.empty()) throw Error(error);
    });
    peers_.resize(size_t(ranks));
    agree(comm, [&] {
      for (int r = 0; r < ranks; ++r) {
        if (r == rank) continue;
        if (fds[size_t(r)].size() != 1) throw Error("shared_device: no descriptor from a peer");
        // A description of its own (open file, offset): every duplicate of a descriptor shares
        // the file offset, and Mesa's CPU driver reads a header at offset 0 of what it imports
        // (lseek, then read), so concurrent importers of one rank's memory would race.
        int fd = fds[size_t(r)][0];
        const int own = ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDWR | O_CLOEXEC);
        if (own >= 0) {
          ::close(fd);
          fd = fds[size_t(r)][0] = own;
        }
        peers_[size_t(r)] = make(bytes, fd, type, false);
        fds[size_t(r)].clear();  // owned by Vulkan now
      }
    });
  }
  ~SharedDeviceBackend() override {
    for (auto& p : peers_) destroy(p);
    destroy(a_);
    destroy(b_);
  }
  VkBuffer a() const override { return a_.buffer; }
  VkBuffer b() const override { return b_.buffer; }
  uint64_t bytes() const override { return bytes_; }
  void copy(int d, uint64_t dst, uint64_t src, uint64_t bytes) override {
    if (bytes) pending_.push_back({d, VkBufferCopy{src, dst, bytes}});
  }
  void finish() override {
    if (pending_.empty()) return;
    ctx_.impl().submit([&](VkCommandBuffer cmd) {
      Recorder::full_barrier(cmd);
      for (auto& [d, region] : pending_)
        vkCmdCopyBuffer(cmd, a_.buffer, d == self_ ? b_.buffer : peers_[size_t(d)].buffer, 1,
                        &region);
      Recorder::full_barrier(cmd);
    });
    pending_.clear();
  }

 private:
  struct Memory {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
  };
  // A buffer bound to exportable memory (fd < 0) or to memory imported from fd (owned by Vulkan
  // once imported). `type`: the memory type, chosen for the first buffer, the same for all.
  Memory make(uint64_t bytes, int fd, uint32_t& type, bool choose_type) {
    Memory m;
    VkExternalMemoryBufferCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &external};
    info.size = bytes;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
                 VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    try {
      check(vkCreateBuffer(device_, &info, nullptr, &m.buffer), "shared_device: vkCreateBuffer");
      VkMemoryRequirements req;
      vkGetBufferMemoryRequirements(device_, m.buffer, &req);
      if (choose_type && a_.buffer == VK_NULL_HANDLE)
        type = ctx_.impl().find_memory_type(req.memoryTypeBits, 0,
                                            VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
      VkExportMemoryAllocateInfo exporting{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
      exporting.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
      VkImportMemoryFdInfoKHR import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
      import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
      import.fd = fd;
      VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
      flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
      flags.pNext = fd < 0 ? static_cast<void*>(&exporting) : static_cast<void*>(&import);
      VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
      alloc.allocationSize = round_up(std::max(req.size, bytes), 4096);
      alloc.memoryTypeIndex = type;
      check(vkAllocateMemory(device_, &alloc, nullptr, &m.memory),
            fd < 0 ? "shared_device: vkAllocateMemory (exportable)"
                   : "shared_device: vkAllocateMemory (importing a peer's memory)");
      fd = -1;  // imported: Vulkan owns it
      check(vkBindBufferMemory(device_, m.buffer, m.memory, 0), "vkBindBufferMemory");
    } catch (...) {
      if (fd >= 0) ::close(fd);
      destroy(m);
      throw;
    }
    return m;
  }
  void destroy(Memory& m) {
    if (m.buffer) vkDestroyBuffer(device_, m.buffer, nullptr);
    if (m.memory) vkFreeMemory(device_, m.memory, nullptr);
    m = {};
  }
  Context& ctx_;
  VkDevice device_ = VK_NULL_HANDLE;
  PFN_vkGetMemoryFdKHR get_fd_ = nullptr;
  uint64_t bytes_ = 0;
  int self_ = 0;
  Memory a_, b_;
  std::vector<Memory> peers_;
  std::vector<std::pair<int, VkBufferCopy>> pending_;
};

// Host <-> device streams through a ring of pinned staging slots, as the convenient face's host
// path does (host/host_path.hpp): host threads fill (empty) one slot while the copies of the
// others run; the slots are host-cached memory, and the copies between them and the device are
// the DMA engine's or a compute shader's (HostPath::copy_engine: the device family's tuning, or
// GPUSORT_COPY_ENGINE). Host memory the caller registered (Sorter::register_host_memory) skips
// the slots: the DMA engine copies between its imported pages and the device.
class Staging {
 public:
  static constexpr uint32_t kSlots = 4;
  static constexpr uint32_t kDirect = kSlots;  // the command buffer of the imported spans' copies
  Staging(Context& ctx, uint64_t slot_bytes) : ctx_(ctx), slot_bytes_(slot_bytes) {
    Context::Impl& impl = ctx.impl();
    device_ = ctx.device();
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = ctx.queue_family_index();
    check(vkCreateCommandPool(device_, &pool_info, nullptr, &pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = kSlots + 1;
    check(vkAllocateCommandBuffers(device_, &alloc, cmds_), "vkAllocateCommandBuffers");
    for (uint32_t i = 0; i <= kSlots; ++i) {
      VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      check(vkCreateFence(device_, &fence_info, nullptr, &fences_[i]), "vkCreateFence");
      if (i == kDirect) break;
      up_[i] = DeviceBuffer(impl, slot_bytes, MemoryKind::readback);
      down_[i] = DeviceBuffer(impl, slot_bytes, MemoryKind::readback);
    }
    shader_copies_ = impl.host_path().copy_engine == HostPath::CopyEngine::shader;
  }
  ~Staging() {
    for (uint32_t i = 0; i <= kSlots; ++i) {
      if (busy_[i]) vkWaitForFences(device_, 1, &fences_[i], VK_TRUE, UINT64_MAX);
      if (fences_[i]) vkDestroyFence(device_, fences_[i], nullptr);
    }
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
  }
  uint64_t slot_bytes() const { return slot_bytes_; }

  // Host bytes [from, from + bytes) to `to` at `offset`: what `imports` holds by the DMA engine
  // straight from the caller's pages (one submission, under way while the rest is staged).
  // Returns the bytes copied straight.
  uint64_t upload(const uint8_t* from, VkBuffer to, uint64_t offset, uint64_t bytes,
                  const HostImports* imports) {
    return transfer(
        from, bytes, imports,
        [&](VkCommandBuffer cmd, const HostImports::Span& s) {
          VkBufferCopy region{s.buffer_offset, offset + s.offset, s.bytes};
          vkCmdCopyBuffer(cmd, s.buffer, to, 1, &region);
        },
        [&](uint64_t at, uint64_t n) { upload_staged(from + at, to, offset + at, n); });
  }

  // Device bytes of `from` at `offset` to host [to, to + bytes), likewise: what `imports` holds
  // by the DMA engine straight into the caller's pages.
  uint64_t download(VkBuffer from, uint64_t offset, uint8_t* to, uint64_t bytes,
                    const HostImports* imports) {
    return transfer(
        to, bytes, imports,
        [&](VkCommandBuffer cmd, const HostImports::Span& s) {
          VkBufferCopy region{offset + s.offset, s.buffer_offset, s.bytes};
          vkCmdCopyBuffer(cmd, from, s.buffer, 1, &region);
        },
        [&](uint64_t at, uint64_t n) { download_staged(from, offset + at, to + at, n); });
  }

 private:
  // One transfer between host [host, host + bytes) and the device: copy(cmd, span) records the
  // spans `imports` holds into one submission (between full barriers and a barrier to the host
  // stage), while staged(offset, bytes) moves each of the others through the slots; returns the
  // bytes copied straight.
  template <class Copy, class Staged>
  uint64_t transfer(const uint8_t* host, uint64_t bytes, const HostImports* imports, Copy&& copy,
                    Staged&& staged) {
    if (!imports || imports->empty()) return staged(0, bytes), 0;
    const auto spans = imports->split(host, bytes);
    uint64_t straight = 0;
    for (const auto& s : spans)
      if (s.buffer) straight += s.bytes;
    if (straight)
      submit(kDirect, [&](VkCommandBuffer cmd) {
        Recorder::full_barrier(cmd);
        for (const auto& s : spans)
          if (s.buffer) copy(cmd, s);
        Recorder::full_barrier(cmd);
        barrier_to_host(cmd);
      });
    for (const auto& s : spans)
      if (!s.buffer) staged(s.offset, s.bytes);
    wait(kDirect);
    return straight;
  }

  void upload_staged(const uint8_t* from, VkBuffer to, uint64_t offset, uint64_t bytes) {
    uint64_t i = 0;
    for (uint64_t at = 0; at < bytes; at += slot_bytes_, ++i) {
      const uint32_t s = uint32_t(i % kSlots);
      const uint64_t n = std::min(slot_bytes_, bytes - at);
      wait(s);
      auto* slot = static_cast<uint8_t*>(up_[s].mapped());
      threads_.parallel_for(n, uint64_t(1) << 20, [&](uint64_t b, uint64_t e) {
        streaming_copy(slot + b, from + at + b, e - b);
      });
      submit(s, [&](VkCommandBuffer cmd) {
        copy(cmd, up_[s].buffer(), up_[s].address(), 0, to, offset + at, n);
        Recorder::full_barrier(cmd);
      });
    }
    for (uint32_t s = 0; s < kSlots; ++s) wait(s);
  }

  void download_staged(VkBuffer from, uint64_t offset, uint8_t* to, uint64_t bytes) {
    const uint64_t chunks = (bytes + slot_bytes_ - 1) / slot_bytes_;
    auto start = [&](uint64_t c) {
      const uint32_t s = uint32_t(c % kSlots);
      const uint64_t at = c * slot_bytes_, n = std::min(slot_bytes_, bytes - at);
      submit(s, [&](VkCommandBuffer cmd) {
        Recorder::full_barrier(cmd);
        copy(cmd, from, 0, offset + at, down_[s].buffer(), 0, n);
        barrier_to_host(cmd);
      });
    };
    for (uint64_t c = 0; c < std::min<uint64_t>(chunks, kSlots); ++c) start(c);
    for (uint64_t c = 0; c < chunks; ++c) {
      const uint32_t s = uint32_t(c % kSlots);
      const uint64_t at = c * slot_bytes_, n = std::min(slot_bytes_, bytes - at);
      wait(s);
      const auto* slot = static_cast<const uint8_t*>(down_[s].mapped());
      threads_.parallel_for(n, uint64_t(1) << 20, [&](uint64_t b, uint64_t e) {
        streaming_copy(to + at + b, slot + b, e - b);
      });
      if (c + kSlots < chunks) start(c + kSlots);
    }
  }

  // Records a copy of `bytes` (a multiple of 4) from `from` at from_offset to `to` at to_offset;
  // a buffer's device address is looked up when given as 0.
  void copy(VkCommandBuffer cmd, VkBuffer from, VkDeviceAddress from_address, uint64_t from_offset,
            VkBuffer to, uint64_t to_offset, uint64_t bytes) {
    if (!shader_copies_) {
      VkBufferCopy region{from_offset, to_offset, bytes};
      vkCmdCopyBuffer(cmd, from, to, 1, &region);
      return;
    }
    Context::Impl& impl = ctx_.impl();
    const VkDeviceAddress src = (from_address ? from_address : impl.address_of(from)) + from_offset;
    const VkDeviceAddress dst = impl.address_of(to) + to_offset;
    constexpr uint32_t workgroup = 256;
    const uint64_t words = bytes / 4;
    const uint32_t groups = uint32_t(std::max<uint64_t>(1, (words + workgroup - 1) / workgroup));
    Recorder rec(impl, cmd);
    rec.dispatch(Kernel::copy_elements, spec_constants(CopyElementsSpec{workgroup, 1}), groups,
                 CopyElementsPush{src, dst, 0, uint32_t(words), groups});
  }
  void wait(uint32_t s) {
    if (!busy_[s]) return;
    busy_[s] = false;
    check(vkWaitForFences(device_, 1, &fences_[s], VK_TRUE, UINT64_MAX), "vkWaitForFences");
  }
  template <class F>
  void submit(uint32_t s, F&& record) {
    wait(s);
    check(vkResetFences(device_, 1, &fences_[s]), "vkResetFences");
    check(vkResetCommandBuffer(cmds_[s], 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmds_[s], &begin), "vkBeginCommandBuffer");
    record(cmds_[s]);
    check(vkEndCommandBuffer(cmds_[s]), "vkEndCommandBuffer");
    ctx_.impl().queue_submit(cmds_[s], fences_[s]);
    busy_[s] = true;
  }
  Context& ctx_;
  VkDevice device_ = VK_NULL_HANDLE;
  uint64_t slot_bytes_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmds_[kSlots + 1] = {};
  VkFence fences_[kSlots + 1] = {};
  bool busy_[kSlots + 1] = {};
  bool shader_copies_ = false;
  DeviceBuffer up_[kSlots], down_[kSlots];
  HostThreads threads_{std::max(1u, std::min(16u, usable_cores()))};
};

// The rank's sorted keys in A seen through the key order, for exact_cuts: one run, searched
// from the top down: up to 256 evenly spaced elements of a range read at once (one copy command
// of at most 256 regions), the range narrowed to the gap between two of them, until it is short
// enough to read whole; everything read is kept, so later rounds of the split mostly read nothing.
struct DeviceRuns {
  static constexpr uint64_t kFanout = 256, kWhole = 4096;
  Context& ctx;
  VkBuffer keys;
  uint32_t size;
  const KeyOrder& order;
  std::vector<uint64_t> first, count;  // run q: elements [first[q], first[q] + count[q])
  mutable std::map<std::pair<uint64_t, uint64_t>, std::vector<uint64_t>> read;
  mutable DeviceBuffer readback;

  DeviceRuns(Context& c, VkBuffer k, uint32_t s, const KeyOrder& o, std::vector<uint64_t> firsts,
             std::vector<uint64_t> counts)
      : ctx(c), keys(k), size(s), order(o), first(std::move(firsts)), count(std::move(counts)) {
    readback = DeviceBuffer(ctx.impl(), std::max(kFanout, kWhole) * size, MemoryKind::readback);
  }
  size_t runs() const { return count.size(); }
  static uint64_t stride_of(uint64_t b, uint64_t e) {
    return e - b <= kWhole ? 1 : (e - b + kFanout - 1) / kFanout;
  }
  // The key orders of elements b, b + stride, ... below e (stride_of(b, e)), b and e in A.
  const std::vector<uint64_t>& elements(uint64_t b, uint64_t e) const {
    auto it = read.find({b, e});
    if (it != read.end()) return it->second;
    const uint64_t stride = stride_of(b, e), n = (e - b + stride - 1) / stride;
    std::vector<VkBufferCopy> regions;
    if (stride == 1)
      regions.push_back({b * size, 0, (e - b) * size});
    else
      for (uint64_t i = 0; i < n; ++i) regions.push_back({(b + i * stride) * size, i * size, size});
    ctx.impl().submit([&](VkCommandBuffer cmd) {
      Recorder::full_barrier(cmd);
      vkCmdCopyBuffer(cmd, keys, readback.buffer(), uint32_t(regions.size()), regions.data());
      barrier_to_host(cmd);
    });
    std::vector<uint64_t> v(n);
    const auto* p = static_cast<const uint8_t*>(readback.mapped());
    for (uint64_t i = 0; i < n; ++i) v[i] = order(p + i * size);
    return read.emplace(std::make_pair(b, e), std::move(v)).first->second;
  }
  // How many of run q's elements satisfy at(i) <= v (upper) or at(i) < v: a prefix (sorted).
  uint64_t search(size_t q, uint64_t v, bool upper) const {
    auto pred = [&](uint64_t x) { return upper ? x <= v : x < v; };
    uint64_t b = first[q], e = first[q] + count[q];
    for (;;) {
      if (b == e) return b - first[q];
      const std::vector<uint64_t>& s = elements(b, e);
      const uint64_t j = uint64_t(std::partition_point(s.begin(), s.end(), pred) - s.begin());
      const uint64_t stride = stride_of(b, e);
      if (stride == 1) return b + j - first[q];
      if (j == 0) return b - first[q];  // element b already fails
      // Elements before b + (j - 1) * stride pass; the first failing one is within the gap.
      const uint64_t nb = b + (j - 1) * stride + 1, ne = std::min(e, b + j * stride);
      if (nb >= ne) return ne - first[q];
      b = nb, e = ne;
    }
  }
  uint64_t upper(size_t q, uint64_t v) const { return search(q, v, true); }
  uint64_t lower(size_t q, uint64_t v) const { return search(q, v, false); }
};

// Exact cuts of this rank's runs alone (no other rank): cuts[k][q] = how many of run q's elements
// come before position goals[k] of their stable merge (order, run, position).
std::vector<std::vector<uint64_t>> local_cuts(const DeviceRuns& runs,
                                              const std::vector<uint64_t>& goals) {
  const size_t R = runs.runs();
  std::vector<std::vector<uint64_t>> cuts;
  for (uint64_t g : goals) {
    uint64_t lo = 0, hi = runs.order.max();
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      uint64_t c = 0;
      for (size_t q = 0; q < R; ++q) c += runs.upper(q, mid);
      if (c > g)
        hi = mid;
      else
        lo = mid + 1;
    }
    std::vector<uint64_t> cut(R);
    uint64_t below = 0;
    for (size_t q = 0; q < R; ++q) below += cut[q] = runs.lower(q, lo);
    uint64_t take = g - std::min(g, below);
    for (size_t q = 0; q < R; ++q) {
      const uint64_t here = std::min(take, runs.upper(q, lo) - cut[q]);
      cut[q] += here;
      take -= here;
    }
    cuts.push_back(std::move(cut));
  }
  return cuts;
}

}  // namespace

// ---- The state kept between sorts ----

class DevicePath {
 public:
  DeviceExchange kind = DeviceExchange::automatic;
  std::unique_ptr<Backend> backend;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, bool, uint32_t, uint32_t>,
           std::unique_ptr<gpusort::Sorter>>
      sorters;
  std::unique_ptr<Staging> staging;
  // CUDA: the device of the Context, once found.
  std::optional<p2p::CudaDevice> cuda;
  std::string cuda_error;
  bool cuda_checked = false;

  gpusort::Sorter& sorter(Context& ctx, KeyType key, uint32_t value_bytes, const SortOptions& o) {
    auto k = std::make_tuple(uint32_t(key), value_bytes, uint32_t(o.algorithm), o.descending,
                             o.begin_bit, o.end_bit);
    auto& s = sorters[k];
    if (!s) {
      SorterConfig c;
      c.key = key;
      c.value_bytes = value_bytes;
      c.algorithm = o.algorithm;
      c.descending = o.descending;
      c.begin_bit = o.begin_bit;
      c.end_bit = o.end_bit;
      s = std::make_unique<gpusort::Sorter>(ctx, c);
    }
    return *s;
  }
};

void release_device_path(MPI_Comm comm, DevicePathState& state) {
  if (!state) return;
  // Every rank unmaps its peers' buffers before any rank frees its own.
  MPI_Barrier(comm);
  state->backend.reset();
  MPI_Barrier(comm);
}

namespace {

// What the path's decision found: why it does not run ("" when it does) and, where it does, the
// sizes of its buffers and sorts.
struct DevicePlan {
  std::string refusal;
  bool shared = false;      // shared_device: one Vulkan device for all ranks
  uint64_t total = 0;       // elements on all ranks
  uint64_t capacity = 0;    // elements of the largest share or slice
  Layout layout;
  uint64_t budget = 0;      // device bytes A and B may take
  uint64_t run_length = 0;  // elements per in-core sort (the share and the slice: in runs)
};

// Whether every rank is on this node ("" or why not). Collective.
std::string node_error_of(MPI_Comm comm) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  return first_error(
      comm, node_size == ranks
                ? ""
                : "its node holds " + std::to_string(node_size) + " of the " +
                      std::to_string(ranks) + " ranks (the device exchange is within one node)");
}

// This rank's reason the backend cannot run ("" when it can): CUDA's device for this Vulkan
// device, or (shared) one device for all. uuids: every rank's Vulkan device UUID.
std::string backend_error_of(Context& ctx, DevicePath& st, bool shared,
                             const std::vector<uint8_t>& uuids, const uint8_t* own_uuid) {
  const size_t ranks = uuids.size() / 16;
  std::string backend_error;
  if (!vkGetDeviceProcAddr(ctx.device(), "vkGetMemoryFdKHR"))
    backend_error = "VK_KHR_external_memory_fd is not enabled on its Vulkan device";
  if (backend_error.empty() && shared) {
    for (size_t r = 0; r < ranks; ++r)
      if (std::memcmp(&uuids[r * 16], own_uuid, 16) != 0)
        backend_error = "shared_device: rank " + std::to_string(r) + " uses another device";
  } else if (backend_error.empty()) {
    if (!st.cuda_checked) {
      st.cuda_checked = true;
      st.cuda_error = error_of([&] {
        if (!p2p::built()) throw Error("built without cuda.h: no device exchange");
        st.cuda = p2p::cuda_device_of(ctx);
      });
    }
    backend_error = st.cuda_error;
  }
  return backend_error;
}

// This rank's reason its GPU cannot reach another rank's (CUDA peer access), "" when it can.
std::string peer_error_of(const DevicePath& st, int rank, const std::vector<uint8_t>& uuids) {
  const int ranks = int(uuids.size() / 16);
  return error_of([&] {
    for (int r = 0; r < ranks; ++r) {
      if (r == rank) continue;
      const int o = p2p::ordinal_of_uuid(&uuids[size_t(r) * 16]);
      if (o < 0) throw Error("rank " + std::to_string(r) + "'s GPU is not visible to CUDA here");
      if (!p2p::can_access_peer(st.cuda->ordinal, o))
        throw Error("its GPU (CUDA device " + std::to_string(st.cuda->ordinal) +
                    ") has no peer access to rank " + std::to_string(r) + "'s (" +
                    std::to_string(o) + ")");
    }
  });
}

// Fit: A and B of the largest share or slice, keys and values (and the sort's scratch); sets the
// plan's run length, layout and budget. This rank's reason it does not fit, "" when it does.
std::string fit_error_of(Context& ctx, DevicePath& st, KeyType key_type, uint32_t vs,
                         const DistributedOptions& options, DevicePlan& plan) {
  const uint32_t ks = key_bytes(key_type);
  return error_of([&] {
    gpusort::Sorter& sorter = st.sorter(ctx, key_type, vs, options.sort);
    plan.run_length = std::min(sorter.max_elements(), test_run_length()) / 4 * 4;
    if (plan.run_length < 4) throw Error("the sort takes fewer than 4 elements");
    const uint64_t capacity = plan.capacity;
    const uint64_t longest = std::min(capacity, plan.run_length);
    // (Room for the final sort's parts, each starting at a multiple of 4 elements.)
    plan.layout = layout_for(capacity + 4 * (capacity / plan.run_length + 2), ks, vs,
                             sorter.scratch_bytes(longest));
    const DeviceInfo& info = ctx.device_info();
    plan.budget = options.sort.device_memory_limit;
    if (!plan.budget) {
      plan.budget = info.device_local_bytes -
                    std::min(info.device_local_bytes / 2,
                             std::max(info.device_local_bytes / 10, uint64_t(1) << 30));
    }
    const Layout& layout = plan.layout;
    if (2 * layout.bytes > plan.budget)
      throw Error("two buffers of " + std::to_string(layout.bytes) + " bytes exceed " +
                  std::to_string(plan.budget) + " bytes of device memory");
    if (!plan.shared && layout.bytes > info.max_allocation_bytes && !info.sparse_binding)
      throw Error("a buffer beyond the largest allocation needs sparse binding");
    if (plan.shared && layout.bytes > info.max_allocation_bytes)
      throw Error("shared_device: a buffer beyond the largest allocation");
  });
}

// Whether the device-resident path runs (the same answer on every rank) and its sizes.
// Collective.
DevicePlan plan_device_path(Context& ctx, MPI_Comm comm, DevicePath& st, KeyType key_type,
                            uint64_t n, uint32_t vs, const DistributedOptions& options) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  DevicePlan plan;
  DevicePathFacts facts;
  facts.requested = options.device_exchange;
  facts.balanced = options.balanced;
  facts.partition_first = options.partition_first;
  facts.custom_exchange = options.exchange != nullptr;
  facts.stable_algorithm = options.sort.algorithm != Algorithm::bitonic;
  plan.refusal = device_path_refusal(facts);  // the same on every rank so far
  plan.shared = facts.requested == DeviceExchange::shared_device;
  uint64_t sizes[2] = {n, n};  // total, largest share
  MPI_Allreduce(MPI_IN_PLACE, &sizes[0], 1, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &sizes[1], 1, MPI_UINT64_T, MPI_MAX, comm);
  plan.total = sizes[0];
  plan.capacity =
      std::max<uint64_t>({sizes[1], (plan.total + uint64_t(ranks) - 1) / uint64_t(ranks), 1});
  if (!plan.refusal.empty()) return plan;
  facts.node_error = node_error_of(comm);
  VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
  vkGetPhysicalDeviceProperties2(ctx.physical_device(), &props);
  std::vector<uint8_t> uuids(size_t(16) * size_t(ranks));
  MPI_Allgather(id.deviceUUID, 16, MPI_BYTE, uuids.data(), 16, MPI_BYTE, comm);
  facts.backend_error =
      first_error(comm, backend_error_of(ctx, st, plan.shared, uuids, id.deviceUUID));
  // Peer access (CUDA only).
  const bool peers = !plan.shared && facts.backend_error.empty();
  facts.peer_error = first_error(comm, peers ? peer_error_of(st, rank, uuids) : "");
  // Checked only where everything else holds (it makes the engine sorter: pipelines).
  const bool others_hold =
      facts.node_error.empty() && facts.backend_error.empty() && facts.peer_error.empty();
  facts.fit_error =
      first_error(comm, others_hold ? fit_error_of(ctx, st, key_type, vs, options, plan) : "");
  plan.refusal = device_path_refusal(facts);
  return plan;
}

// Buffers: kept while large enough and of the same kind (the same on every rank: the layout comes
// from global sizes). "" when set up, else why not (on every rank; nothing of the output touched).
std::string set_up_buffers(Context& ctx, MPI_Comm comm, DevicePathState& state,
                           const DevicePlan& plan, uint32_t ks, uint32_t vs) {
  DevicePath& st = *state;
  try {
    const DeviceExchange kind =
        plan.shared ? DeviceExchange::shared_device : DeviceExchange::device;
    if (!st.backend || st.kind != kind || st.backend->bytes() < plan.layout.bytes) {
      release_device_path(comm, state);
      ctx.release_cached_memory();  // the convenient face's buffers: room for A and B
      // 1/8 spare for later, larger sorts where the device has room for it.
      uint64_t bytes = round_up(plan.layout.bytes + plan.layout.bytes / 8, uint64_t(2) << 20);
      if (2 * bytes > plan.budget) bytes = plan.layout.bytes;
      if (plan.shared)
        st.backend = std::make_unique<SharedDeviceBackend>(ctx, comm, bytes);
      else
        st.backend = std::make_unique<CudaBackend>(ctx, comm, *st.cuda, bytes);
      st.kind = kind;
    }
    agree(comm, [&] {
      // Slots of 64 MiB (small sorts: a quarter of a share's keys, from 256 KiB up).
      uint64_t slot = uint64_t(256) << 10;
      while (slot < (uint64_t(64) << 20) && slot * 4 < plan.capacity * std::max(ks, vs))
        slot *= 2;
      if (!st.staging || st.staging->slot_bytes() < slot)
        st.staging = std::make_unique<Staging>(ctx, slot);
    });
  } catch (const Error& e) {
    // agree()d: every rank is here. Nothing of the output was touched.
    release_device_path(comm, state);
    return std::string("setting up the device buffers failed: ") + e.what();
  }
  return "";
}

// One sort on the device-resident path once its buffers are set: the upload and the local sort in
// A (1, 2), the exact split points (3), the exchange into the ranks' B (4), the stable sort of the
// received pieces (5), the slice to the output (6). Steps 1-5 fail on every rank at once (each is
// agreed on); the input is untouched then, so automatic goes on with the host path.
class DeviceSort {
 public:
  DeviceSort(Context& ctx, MPI_Comm comm, DevicePath& st, KeyType key_type, uint64_t n,
             uint32_t value_bytes, const SortOptions& sort_options, const DevicePlan& plan,
             const HostImports* imports, DistributedTimings& timings)
      : ctx(ctx), comm(comm), st(st), be(*st.backend),
        sorter(st.sorter(ctx, key_type, value_bytes, sort_options)), key_type(key_type),
        sort_options(sort_options), layout(plan.layout), imports(imports), timings(timings),
        n(n), ks(key_bytes(key_type)), vs(value_bytes), total(plan.total),
        run_length(plan.run_length) {
    int rank = 0, ranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    P = size_t(ranks), self = size_t(rank);
    // The share in runs of at most run_length (one when it fits one sort); R: the most on any
    // rank.
    const size_t local_runs = size_t((n + run_length - 1) / run_length);
    uint64_t most_runs = std::max<uint64_t>(local_runs, 1);
    MPI_Allreduce(MPI_IN_PLACE, &most_runs, 1, MPI_UINT64_T, MPI_MAX, comm);
    R = size_t(most_runs);
    run_first.resize(R), run_count.resize(R);
    for (size_t q = 0; q < R; ++q) {
      run_first[q] = std::min(n, q * run_length);
      run_count[q] = std::min(n, (q + 1) * run_length) - run_first[q];
    }
    timings.local_runs = local_runs;
    timings.local.runs = local_runs;
    // One rank whose share is one sorted run: that run is its slice (no cuts, copies or final
    // sort; the download reads A).
    sorted_in_a = P == 1 && R == 1;
  }

  // Steps 1 to 5 (each agreed on: gpusort::Error on every rank at once).
  void sort(const void* keys, const void* values, clock::time_point started) {
    upload_and_sort_runs(keys, values, started);
    if (sorted_in_a) {
      m = n;
      return;
    }
    const KeyOrder order(key_type, sort_options);
    split(order);
    exchange();
    sort_received(order);
  }

  // 6. The slice to the output (from B, or from A where the final sort ran in parts or one rank's
  // local sort is its slice).
  Slice download(const Allocate& keys_out, const Allocate& values_out) {
    const VkBuffer result = parts == 1 && !sorted_in_a ? be.b() : be.a();
    void* out_keys = nullptr;
    void* out_values = nullptr;
    agree(comm, [&] {
      allocate_outputs(keys_out, values_out, m, vs, out_keys, out_values);
      const auto t = clock::now();
      if (parts == 1) part_first = {0}, part_size = {m};
      uint64_t out = 0;
      for (size_t k = 0; k < part_first.size(); ++k) {
        const uint64_t first = part_first[k], count = part_size[k];
        if (!count) continue;
        timings.direct_bytes += st.staging->download(
            result, first * ks, static_cast<uint8_t*>(out_keys) + out * ks, count * ks, imports);
        if (vs)
          timings.direct_bytes += st.staging->download(
              result, layout.values_offset + first * vs,
              static_cast<uint8_t*>(out_values) + out * vs, count * vs, imports);
        out += count;
      }
      timings.final_sort.download_ms = since(t);
      timings.final_sort.bytes = m * (ks + vs);
    });
    timings.merge_ms = since(merging);
    return {m, balanced_start(total, int(self), int(P)), total};
  }

 private:
  // Records the engine sort of `count` elements at element `at` of buffer `data` (keys, then
  // values at layout.values_offset), the other buffer as scratch.
  void record_sort(VkCommandBuffer cmd, VkBuffer data, VkBuffer scratch, uint64_t at,
                   uint64_t count) {
    if (count < 2) return;
    sorter.record(cmd, {data, at * ks},
                  vs ? BufferRef{data, layout.values_offset + at * vs} : BufferRef{}, {scratch, 0},
                  count);
    Recorder::full_barrier(cmd);
  }

  // 1. Upload; 2. the local sort in A, run by run (scratch: B).
  void upload_and_sort_runs(const void* keys, const void* values, clock::time_point started) {
    agree(comm, [&] {
      auto t = clock::now();
      if (n)
        timings.direct_bytes +=
            st.staging->upload(static_cast<const uint8_t*>(keys), be.a(), 0, n * ks, imports);
      if (n && vs)
        timings.direct_bytes += st.staging->upload(static_cast<const uint8_t*>(values), be.a(),
                                                   layout.values_offset, n * vs, imports);
      timings.local.upload_ms = since(t);
      timings.local.bytes = n * (ks + vs);
      if (n > 1)
        timings.local.sort_gpu_ms = ctx.impl().submit_timed([&](VkCommandBuffer cmd) {
          Recorder::full_barrier(cmd);
          for (size_t q = 0; q < R; ++q)
            record_sort(cmd, be.a(), be.b(), run_first[q], run_count[q]);
        });
      timings.local_sort_ms = since(started);
    });
  }

  // Piece (d, q): run q's elements [cut(q, d), cut(q, d + 1)) go to rank d.
  uint64_t cut(size_t q, size_t d) const {
    return d == 0 ? 0 : d == P ? run_count[q] : cuts[q][d - 1];
  }

  // 3. Exact split points over the sorted device data (every rank's B is free from here on: the
  // agreement above follows every local sort); every rank's pieces' sizes.
  void split(const KeyOrder& order) {
    const auto splitting = clock::now();
    {
      DeviceRuns runs(ctx, be.a(), ks, order, run_first, run_count);
      timings.split_rounds = 0;
      cuts = exact_cuts(comm, runs, total, timings.split_rounds);
    }
    send.resize(P * R), counts.resize(P * P * R);
    for (size_t d = 0; d < P; ++d)
      for (size_t q = 0; q < R; ++q) send[d * R + q] = cut(q, d + 1) - cut(q, d);
    check_mpi(MPI_Allgather(send.data(), int(P * R), MPI_UINT64_T, counts.data(), int(P * R),
                            MPI_UINT64_T, comm),
              "MPI_Allgather");
    timings.split_ms = since(splitting);
  }

  // 4. The exchange: piece (d, q) of A into rank d's B, in (source rank, run) order there.
  void exchange() {
    piece_first.resize(P * R), piece_count.resize(P * R);
    for (size_t s = 0, at = 0; s < P; ++s)
      for (size_t q = 0; q < R; ++q) {
        piece_first[s * R + q] = at;
        at += piece_count[s * R + q] = counts[(s * P + self) * R + q];
      }
    for (uint64_t c : piece_count) m += c;
    const auto exchanging = clock::now();
    agree(comm, [&] {
      for (size_t d = 0; d < P; ++d) {
        uint64_t at = 0;  // this rank's first piece's place in rank d's B
        for (size_t s = 0; s < self; ++s)
          for (size_t q = 0; q < R; ++q) at += counts[(s * P + d) * R + q];
        for (size_t q = 0; q < R; ++q) {
          const uint64_t c = send[d * R + q], from = run_first[q] + cut(q, d);
          if (c) {
            be.copy(int(d), at * ks, from * ks, c * ks);
            if (vs)
              be.copy(int(d), layout.values_offset + at * vs, layout.values_offset + from * vs,
                      c * vs);
            if (d != self) {
              timings.bytes_sent += c * (ks + vs);
              ++timings.messages;
            }
          }
          at += c;
        }
      }
      be.finish();
    });
    // (agree's collective: every rank's copies into this rank's B are done.)
    timings.exchange_ms = since(exchanging);
    timings.bytes_received = 0;
    for (size_t q = 0; q < R; ++q) timings.bytes_received += piece_count[self * R + q];
    timings.bytes_received = (m - timings.bytes_received) * (ks + vs);
  }

  // 5. The stable sort of the received pieces, in (rank, run) order: in B (scratch: A) when it
  // fits one sort; else in parts.
  void sort_received(const KeyOrder& order) {
    merging = clock::now();
    parts = std::max<uint64_t>(1, (m + run_length - 1) / run_length);
    agree(comm, [&] {
      if (parts == 1) {
        if (m > 1)
          timings.final_sort.sort_gpu_ms = ctx.impl().submit_timed(
              [&](VkCommandBuffer cmd) { record_sort(cmd, be.b(), be.a(), 0, m); });
        return;
      }
      sort_in_parts(order);
    });
  }

  // The received pieces cut into parts of the key order by an exact local selection, each part's
  // ranges gathered into A in piece order (from part_first[k], a multiple of 4) and sorted there
  // (scratch: B).
  void sort_in_parts(const KeyOrder& order) {
    std::vector<uint64_t> goals;
    for (uint64_t k = 1; k < parts; ++k) goals.push_back(balanced_start(m, int(k), int(parts)));
    std::vector<std::vector<uint64_t>> part_cuts;
    {
      DeviceRuns pieces(ctx, be.b(), ks, order, piece_first, piece_count);
      part_cuts = local_cuts(pieces, goals);
    }
    auto pcut = [&](uint64_t k, size_t p) {
      return k == 0 ? 0 : k == parts ? piece_count[p] : part_cuts[k - 1][p];
    };
    std::vector<VkBufferCopy> key_regions, value_regions;
    part_first.assign(parts, 0);
    part_size.assign(parts, 0);
    uint64_t at = 0, gathered = 0;
    for (uint64_t k = 0; k < parts; ++k) {
      at = round_up(at, 4);
      part_first[k] = at;
      for (size_t p = 0; p < P * R; ++p) {
        const uint64_t b = pcut(k, p), e = pcut(k + 1, p);
        if (e <= b) continue;
        key_regions.push_back({(piece_first[p] + b) * ks, at * ks, (e - b) * ks});
        if (vs)
          value_regions.push_back({layout.values_offset + (piece_first[p] + b) * vs,
                                   layout.values_offset + at * vs, (e - b) * vs});
        at += e - b;
        part_size[k] += e - b;
        gathered += e - b;
      }
    }
    for (uint64_t k = 0; k < parts; ++k)
      if (part_size[k] > run_length)
        throw Error("device path: part " + std::to_string(k) + " of the final sort holds " +
                    std::to_string(part_size[k]) + " elements, more than one sort's " +
                    std::to_string(run_length));
    if (gathered != m)
      throw Error("device path: the final sort's parts hold " + std::to_string(gathered) +
                  " of " + std::to_string(m) + " elements");
    timings.final_sort.sort_gpu_ms = ctx.impl().submit_timed([&](VkCommandBuffer cmd) {
      Recorder::full_barrier(cmd);
      for (size_t i = 0; i < key_regions.size(); i += 4096)
        vkCmdCopyBuffer(cmd, be.b(), be.a(),
                        uint32_t(std::min<size_t>(4096, key_regions.size() - i)),
                        key_regions.data() + i);
      for (size_t i = 0; i < value_regions.size(); i += 4096)
        vkCmdCopyBuffer(cmd, be.b(), be.a(),
                        uint32_t(std::min<size_t>(4096, value_regions.size() - i)),
                        value_regions.data() + i);
      Recorder::full_barrier(cmd);
      for (uint64_t k = 0; k < parts; ++k)
        record_sort(cmd, be.a(), be.b(), part_first[k], part_size[k]);
    });
    timings.final_sort.runs = parts;
  }

  Context& ctx;
  MPI_Comm comm;
  DevicePath& st;
  Backend& be;
  gpusort::Sorter& sorter;
  const KeyType key_type;
  const SortOptions& sort_options;
  const Layout& layout;
  const HostImports* const imports;
  DistributedTimings& timings;
  const uint64_t n;
  const uint32_t ks, vs;
  const uint64_t total, run_length;
  size_t P = 1, self = 0, R = 1;
  std::vector<uint64_t> run_first, run_count;  // run q: elements of A
  bool sorted_in_a = false;
  // 3. cuts[q][d]; send[d * R + q]: this rank's piece (d, q); counts[(s * P + d) * R + q]: rank
  // s's piece (d, q), on every rank.
  std::vector<std::vector<uint64_t>> cuts;
  std::vector<uint64_t> send, counts;
  // 4. Where rank s's run q lands in this rank's B (piece s * R + q), and how many; m in all.
  std::vector<uint64_t> piece_first, piece_count;
  uint64_t m = 0;
  // 5. parts > 1: part k's elements lie in A from part_first[k] (a multiple of 4), part_size[k]
  // of them.
  uint64_t parts = 1;
  std::vector<uint64_t> part_first, part_size;
  clock::time_point merging = clock::now();
};

}  // namespace

bool device_path_sort(Context& ctx, MPI_Comm comm, DevicePathState& state, KeyType key_type,
                      const void* keys, uint64_t n, const void* values, uint32_t value_bytes,
                      const Allocate& keys_out, const Allocate& values_out,
                      const DistributedOptions& options, const HostImports* imports,
                      DistributedTimings& timings, Slice& slice) {
  const DeviceExchange requested = options.device_exchange;
  if (requested == DeviceExchange::host) {
    timings.device_refused = device_path_refusal(DevicePathFacts{.requested = requested});
    return false;
  }
  if (!state) state = std::make_shared<DevicePath>();
  DevicePath& st = *state;
  const auto started = clock::now();
  auto refuse = [&](const std::string& why) {
    if (requested != DeviceExchange::automatic)
      throw Error("distributed sort: the device exchange cannot run: " + why);
    timings.device_refused = why;
    return false;
  };
  const DevicePlan plan = plan_device_path(ctx, comm, st, key_type, n, value_bytes, options);
  if (!plan.refusal.empty()) return refuse(plan.refusal);
  if (const std::string why =
          set_up_buffers(ctx, comm, state, plan, key_bytes(key_type), value_bytes);
      !why.empty())
    return refuse(why);

  const DistributedTimings before = timings;
  timings.device_resident = true;
  DeviceSort sort(ctx, comm, st, key_type, n, value_bytes, options.sort, plan, imports, timings);
  try {
    sort.sort(keys, values, started);
  } catch (const Error& e) {
    if (requested != DeviceExchange::automatic) throw;
    timings = before;
    release_device_path(comm, state);
    timings.device_refused = std::string("the device path failed: ") + e.what();
    return false;
  }
  slice = sort.download(keys_out, values_out);
  return true;
}

}  // namespace gpusort::distributed::detail
