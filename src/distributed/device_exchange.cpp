// See device_exchange.hpp.
#include "device_exchange.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "vulkan/buffer.hpp"
#include "vulkan/context_impl.hpp"

#if GPUSORT_CUDA_DRIVER_API
#include <cuda.h>
#endif

namespace gpusort::distributed::p2p {

namespace {
[[noreturn]] void fail(const std::string& what) {
  throw Error(what);
}
}  // namespace

// ---- Descriptors over a Unix socket (no CUDA needed) ----

namespace {

struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

sockaddr_un socket_name(uint64_t tag, int rank, socklen_t& length) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::string name = "gpusort-p2p-" + std::to_string(tag) + "-" + std::to_string(rank);
  a.sun_path[0] = '\0';  // abstract namespace: nothing in the file system, gone with the socket
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  length = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return a;
}

void write_all(int fd, const void* data, size_t bytes) {
  auto p = static_cast<const char*>(data);
  while (bytes) {
    ssize_t w = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail(errno_text("p2p: sending on the node's socket"));
    p += w;
    bytes -= size_t(w);
  }
}

void read_all(int fd, void* data, size_t bytes) {
  auto p = static_cast<char*>(data);
  while (bytes) {
    ssize_t r = ::recv(fd, p, bytes, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) fail("p2p: the node's socket closed early");
    if (r < 0) fail(errno_text("p2p: receiving on the node's socket"));
    p += r;
    bytes -= size_t(r);
  }
}

// One descriptor with one byte of data.
void send_fd(int sock, int fd) {
  char byte = 'f';
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  for (;;) {
    ssize_t w = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w != 1) fail(errno_text("p2p: sending a descriptor (SCM_RIGHTS)"));
    return;
  }
}

int receive_fd(int sock) {
  char byte = 0;
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t r;
  do r = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r != 1) fail(errno_text("p2p: receiving a descriptor (SCM_RIGHTS)"));
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(sizeof(int)) || (msg.msg_flags & MSG_CTRUNC))
    fail("p2p: a message without its descriptor (SCM_RIGHTS)");
  int fd;
  std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

}  // namespace

std::vector<std::vector<int>> share_fds(MPI_Comm node, const std::vector<int>& mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &size);
  std::vector<std::vector<int>> result(static_cast<size_t>(size));
  if (size == 1) return result;
  uint64_t tag = 0;
  if (rank == 0) {
    std::random_device rd;
    tag = (uint64_t(rd()) << 32) ^ rd() ^ uint64_t(::getpid());
  }
  MPI_Bcast(&tag, 1, MPI_UINT64_T, 0, node);
  // Listen first, everyone; then a thread serves the size - 1 peers while this one connects.
  Fd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  std::string error;
  if (listener.fd < 0) error = errno_text("p2p: socket");
  if (error.empty()) {
    socklen_t length;
    sockaddr_un a = socket_name(tag, rank, length);
    if (::bind(listener.fd, reinterpret_cast<sockaddr*>(&a), length) != 0)
      error = errno_text("p2p: binding the node's socket");
    else if (::listen(listener.fd, size) != 0)
      error = errno_text("p2p: listen");
  }
  int ok = error.empty(), all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, node);
  if (!all_ok) fail(error.empty() ? "p2p: another rank of the node could not listen" : error);

  std::string server_error;
  std::thread server([&] {
    try {
      for (int served = 0; served < size - 1; ++served) {
        // A peer that failed never connects: give up after a minute rather than hang.
        pollfd waiting{listener.fd, POLLIN, 0};
        int ready;
        do ready = ::poll(&waiting, 1, 60000);
        while (ready < 0 && errno == EINTR);
        if (ready == 0) fail("p2p: a peer of the node did not connect within 60 s");
        int c;
        do c = ::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC);
        while (c < 0 && errno == EINTR);
        if (c < 0) fail(errno_text("p2p: accept"));
        Fd conn(c);
        uint64_t count = mine.size();
        write_all(conn.fd, &count, sizeof(count));
        for (int fd : mine) send_fd(conn.fd, fd);
        char done = 0;
        read_all(conn.fd, &done, 1);  // the peer has them all
      }
    } catch (const std::exception& e) {
      server_error = e.what();
    }
  });
  std::string client_error;
  try {
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      Fd conn(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (conn.fd < 0) fail(errno_text("p2p: socket"));
      socklen_t length;
      sockaddr_un a = socket_name(tag, peer, length);
      if (::connect(conn.fd, reinterpret_cast<sockaddr*>(&a), length) != 0)
        fail(errno_text(("p2p: connecting to rank " + std::to_string(peer) + "'s socket").c_str()));
      uint64_t count = 0;
      read_all(conn.fd, &count, sizeof(count));
      if (count > 65536) fail("p2p: a peer offers too many descriptors");
      for (uint64_t i = 0; i < count; ++i) result[size_t(peer)].push_back(receive_fd(conn.fd));
      char done = 1;
      write_all(conn.fd, &done, 1);
    }
  } catch (const std::exception& e) {
    client_error = e.what();
    // Unblock the server thread's accept if peers will never come: shut the listener down.
    ::shutdown(listener.fd, SHUT_RDWR);
  }
  server.join();
  if (!client_error.empty() || !server_error.empty()) {
    for (auto& v : result)
      for (int fd : v) ::close(fd);
    fail(!client_error.empty() ? client_error : server_error);
  }
  return result;
}

#if !GPUSORT_CUDA_DRIVER_API

bool built() {
  return false;
}
struct Driver {};
const Driver& driver() {
  fail("p2p: built without cuda.h (the CUDA driver path is not built)");
}
CudaDevice cuda_device_of(Context&) {
  driver();
  return {};
}
void make_current(const CudaDevice&) {
  driver();
}
bool can_access_peer(int, int) {
  driver();
  return false;
}
int ordinal_of_uuid(const uint8_t*) {
  driver();
  return -1;
}
SharedBuffer::SharedBuffer(Context&, const CudaDevice&, uint64_t, uint64_t) {
  driver();
}
SharedBuffer::~SharedBuffer() {}
SharedBuffer& SharedBuffer::operator=(SharedBuffer&&) noexcept {
  return *this;
}
void SharedBuffer::release() {}
PeerMapping::PeerMapping(const CudaDevice&, const std::vector<int>&, const std::vector<uint64_t>&) {
  driver();
}
PeerMapping::~PeerMapping() {}
PeerMapping& PeerMapping::operator=(PeerMapping&&) noexcept {
  return *this;
}
void PeerMapping::release() {}
Stream::Stream() {
  driver();
}
Stream::~Stream() {}
void Stream::copy(uint64_t, uint64_t, uint64_t) {}
void Stream::fill32(uint64_t, uint32_t, uint64_t) {}
void Stream::synchronize() {}
void Stream::record_start() {}
double Stream::record_stop_and_elapsed_ms() {
  return 0;
}

#else

// ---- The CUDA driver, through dlopen and cuGetProcAddress ----

// Each entry: the member is declared with cuda.h's (versioned) prototype; the name given to
// cuGetProcAddress is the unversioned one, which with CUDA_VERSION selects that version.
#define GPUSORT_CUDA_FUNCTIONS(X)   \
  X(cuInit)                         \
  X(cuDriverGetVersion)             \
  X(cuDeviceGetCount)               \
  X(cuDeviceGet)                    \
  X(cuDeviceGetUuid)                \
  X(cuDeviceGetName)                \
  X(cuDeviceCanAccessPeer)          \
  X(cuDevicePrimaryCtxRetain)       \
  X(cuCtxSetCurrent)                \
  X(cuMemGetAllocationGranularity)  \
  X(cuMemCreate)                    \
  X(cuMemRelease)                   \
  X(cuMemAddressReserve)            \
  X(cuMemAddressFree)               \
  X(cuMemMap)                       \
  X(cuMemUnmap)                     \
  X(cuMemSetAccess)                 \
  X(cuMemExportToShareableHandle)   \
  X(cuMemImportFromShareableHandle) \
  X(cuStreamCreate)                 \
  X(cuStreamDestroy)                \
  X(cuStreamSynchronize)            \
  X(cuMemcpyDtoDAsync)              \
  X(cuMemsetD32Async)               \
  X(cuEventCreate)                  \
  X(cuEventRecord)                  \
  X(cuEventSynchronize)             \
  X(cuEventElapsedTime)             \
  X(cuEventDestroy)                 \
  X(cuGetErrorName)

struct Driver {
#define GPUSORT_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  GPUSORT_CUDA_FUNCTIONS(GPUSORT_CUDA_MEMBER)
#undef GPUSORT_CUDA_MEMBER
};

bool built() {
  return true;
}

namespace {

std::string cuda_error(const Driver& d, CUresult r) {
  const char* name = nullptr;
  if (d.cuGetErrorName && d.cuGetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
  return "CUresult " + std::to_string(int(r));
}

// Throws "p2p: <what>: <CUDA error name>" unless r is CUDA_SUCCESS.
void check_cuda(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) fail(std::string("p2p: ") + what + ": " + cuda_error(driver(), r));
}

struct Loaded {
  Driver driver;
  std::string error;  // empty: loaded
};

const Loaded& loaded() {
  static const Loaded result = [] {
    Loaded l;
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      l.error = std::string("p2p: libcuda.so.1 not found (") + dlerror() + ")";
      return l;
    }
    using GetProc =
        CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
    auto get = reinterpret_cast<GetProc>(dlsym(library, "cuGetProcAddress_v2"));
    if (!get) {
      l.error =
          "p2p: libcuda.so.1 has no cuGetProcAddress_v2 (a CUDA 12 driver or newer is needed)";
      return l;
    }
#define GPUSORT_CUDA_LOAD(name)                                                               \
  {                                                                                           \
    void* p = nullptr;                                                                        \
    CUdriverProcAddressQueryResult status{};                                                  \
    if (get(#name, &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || \
        !p) {                                                                                 \
      l.error = "p2p: the CUDA driver has no " #name;                                         \
      return l;                                                                               \
    }                                                                                         \
    l.driver.name = reinterpret_cast<decltype(l.driver.name)>(p);                             \
  }
    GPUSORT_CUDA_FUNCTIONS(GPUSORT_CUDA_LOAD)
#undef GPUSORT_CUDA_LOAD
    CUresult r = l.driver.cuInit(0);
    if (r != CUDA_SUCCESS) l.error = "p2p: cuInit: " + cuda_error(l.driver, r);
    return l;
  }();
  return result;
}

}  // namespace

const Driver& driver() {
  const Loaded& l = loaded();
  if (!l.error.empty()) fail(l.error);
  return l.driver;
}

int ordinal_of_uuid(const uint8_t uuid[16]) {
  const Driver& d = driver();
  int count = 0;
  check_cuda(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    check_cuda(d.cuDeviceGet(&dev, i), "cuDeviceGet");
    CUuuid u;
    check_cuda(d.cuDeviceGetUuid(&u, dev), "cuDeviceGetUuid");
    if (std::memcmp(u.bytes, uuid, 16) == 0) return i;
  }
  return -1;
}

void make_current(const CudaDevice& device) {
  const Driver& d = driver();
  CUdevice dev;
  check_cuda(d.cuDeviceGet(&dev, device.ordinal), "cuDeviceGet");
  // The primary context is retained once per process and never released (it lives as long as
  // the process, like the runtime API's).
  static std::mutex mutex;
  static std::vector<std::pair<int, CUcontext>> contexts;
  CUcontext ctx = nullptr;
  {
    std::lock_guard lock(mutex);
    for (auto& [o, c] : contexts)
      if (o == device.ordinal) ctx = c;
    if (!ctx) {
      check_cuda(d.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
      contexts.emplace_back(device.ordinal, ctx);
    }
  }
  check_cuda(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

CudaDevice cuda_device_of(Context& ctx) {
  const Driver& d = driver();
  VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
  vkGetPhysicalDeviceProperties2(ctx.physical_device(), &props);
  CudaDevice device;
  std::memcpy(device.uuid, id.deviceUUID, 16);
  device.ordinal = ordinal_of_uuid(device.uuid);
  if (device.ordinal < 0)
    fail("p2p: no CUDA device has the UUID of the Vulkan device " + ctx.device_info().name +
         " (CUDA_VISIBLE_DEVICES hides it, or it is not an NVIDIA device)");
  CUdevice dev;
  check_cuda(d.cuDeviceGet(&dev, device.ordinal), "cuDeviceGet");
  char name[256] = {};
  check_cuda(d.cuDeviceGetName(name, sizeof(name), dev), "cuDeviceGetName");
  device.name = name;
  make_current(device);
  return device;
}

bool can_access_peer(int device_ordinal, int peer_ordinal) {
  const Driver& d = driver();
  CUdevice a, b;
  check_cuda(d.cuDeviceGet(&a, device_ordinal), "cuDeviceGet");
  check_cuda(d.cuDeviceGet(&b, peer_ordinal), "cuDeviceGet");
  if (a == b) return true;
  int can = 0;
  check_cuda(d.cuDeviceCanAccessPeer(&can, a, b), "cuDeviceCanAccessPeer");
  return can != 0;
}

namespace {

CUmemAllocationProp allocation_prop(int ordinal) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = ordinal;
  return prop;
}

uint64_t round_up(uint64_t x, uint64_t m) {
  return (x + m - 1) / m * m;
}

void set_access(const Driver& d, uint64_t address, uint64_t bytes, int ordinal) {
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = ordinal;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  check_cuda(d.cuMemSetAccess(CUdeviceptr(address), bytes, &access, 1), "cuMemSetAccess");
}

}  // namespace

SharedBuffer::SharedBuffer(Context& ctx, const CudaDevice& device, uint64_t bytes,
                           uint64_t piece_bytes) {
  const Driver& d = driver();
  if (bytes == 0) fail("p2p: a shared buffer of 0 bytes");
  make_current(device);
  device_ = ctx.device();
  Context::Impl& impl = ctx.impl();
  try {
    CUmemAllocationProp prop = allocation_prop(device.ordinal);
    size_t granularity = 0;
    check_cuda(
        d.cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
        "cuMemGetAllocationGranularity");
    granularity = std::max<size_t>(granularity, 64 << 10);
    // The Vulkan buffer first: its size and alignment (the sparse page size) set the pieces.
    const uint64_t total = round_up(bytes, granularity);
    uint64_t largest = ctx.device_info().max_allocation_bytes;
    if (piece_bytes == 0) piece_bytes = largest;
    piece_bytes = std::max<uint64_t>(piece_bytes / granularity * granularity, granularity);
    const bool sparse = total > piece_bytes;
    VkExternalMemoryBufferCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &external};
    info.size = total;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
                 VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (sparse) info.flags = VK_BUFFER_CREATE_SPARSE_BINDING_BIT;
    check(vkCreateBuffer(device_, &info, nullptr, &buffer_), "p2p: vkCreateBuffer (external)");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, buffer_, &req);
    if (sparse)
      piece_bytes = std::max<uint64_t>(piece_bytes / req.alignment * req.alignment, req.alignment);
    if (sparse && piece_bytes % granularity != 0)
      fail("p2p: the sparse page size does not match the CUDA allocation granularity");
    const uint64_t vk_total = round_up(std::max<uint64_t>(req.size, total), granularity);
    // CUDA: the pieces, one reservation, mapped in order, accessible from this device.
    reserved_ = vk_total;
    CUdeviceptr base = 0;
    check_cuda(d.cuMemAddressReserve(&base, reserved_, granularity, 0, 0), "cuMemAddressReserve");
    cuda_address_ = base;
    for (uint64_t offset = 0; offset < vk_total; offset += piece_bytes) {
      const uint64_t size = std::min(piece_bytes, vk_total - offset);
      CUmemGenericAllocationHandle h = 0;
      check_cuda(d.cuMemCreate(&h, size, &prop, 0), "cuMemCreate");
      handles_.push_back(h);
      piece_sizes_.push_back(size);
      check_cuda(d.cuMemMap(CUdeviceptr(base + offset), size, 0, h, 0), "cuMemMap");
      int fd = -1;
      check_cuda(
          d.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          "cuMemExportToShareableHandle");
      fds_.push_back(fd);
    }
    set_access(d, cuda_address_, reserved_, device.ordinal);
    // Vulkan: import each piece (a duplicate of its descriptor: Vulkan owns what it imports).
    const uint32_t type =
        impl.find_memory_type(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    std::vector<VkSparseMemoryBind> binds;
    uint64_t offset = 0;
    for (size_t i = 0; i < fds_.size(); ++i) {
      int dup = ::fcntl(fds_[i], F_DUPFD_CLOEXEC, 0);
      if (dup < 0) fail(errno_text("p2p: duplicating an exported descriptor"));
      VkImportMemoryFdInfoKHR import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
      import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
      import.fd = dup;
      VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO, &import};
      flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
      VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
      alloc.allocationSize = piece_sizes_[i];
      alloc.memoryTypeIndex = type;
      VkDeviceMemory memory = VK_NULL_HANDLE;
      VkResult r = vkAllocateMemory(device_, &alloc, nullptr, &memory);
      if (r != VK_SUCCESS) {
        ::close(dup);  // not imported: still ours
        check(r, "p2p: vkAllocateMemory importing a CUDA allocation (VK_KHR_external_memory_fd)");
      }
      memory_.push_back(memory);
      binds.push_back({offset, piece_sizes_[i], memory, 0, 0});
      offset += piece_sizes_[i];
    }
    if (!sparse) {
      check(vkBindBufferMemory(device_, buffer_, memory_[0], 0), "p2p: vkBindBufferMemory");
    } else {
      // Only the buffer's own size is bound (the last piece may be longer than what is left).
      for (auto& b : binds)
        b.size = std::min(b.size, req.size - std::min(req.size, b.resourceOffset));
      std::erase_if(binds, [](const VkSparseMemoryBind& b) { return b.size == 0; });
      bind_sparse_memory(impl, buffer_, binds,
                         "p2p: binding the imported pieces (vkQueueBindSparse)");
    }
    bytes_ = bytes;
  } catch (...) {
    release();
    throw;
  }
}

void SharedBuffer::release() {
  if (buffer_) vkDestroyBuffer(device_, buffer_, nullptr);
  for (VkDeviceMemory m : memory_) vkFreeMemory(device_, m, nullptr);
  buffer_ = VK_NULL_HANDLE;
  memory_.clear();
  for (int fd : fds_) ::close(fd);
  fds_.clear();
  if (loaded().error.empty()) {
    const Driver& d = loaded().driver;
    if (cuda_address_) {
      uint64_t offset = 0;
      for (size_t i = 0; i < handles_.size(); ++i) {
        d.cuMemUnmap(CUdeviceptr(cuda_address_ + offset), piece_sizes_[i]);
        offset += piece_sizes_[i];
      }
      d.cuMemAddressFree(CUdeviceptr(cuda_address_), reserved_);
    }
    for (auto h : handles_) d.cuMemRelease(h);
  }
  handles_.clear();
  piece_sizes_.clear();
  cuda_address_ = reserved_ = bytes_ = 0;
}

SharedBuffer::~SharedBuffer() {
  release();
}

SharedBuffer& SharedBuffer::operator=(SharedBuffer&& o) noexcept {
  if (this != &o) {
    release();
    device_ = std::exchange(o.device_, VK_NULL_HANDLE);
    buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(o.memory_, {});
    handles_ = std::exchange(o.handles_, {});
    piece_sizes_ = std::exchange(o.piece_sizes_, {});
    fds_ = std::exchange(o.fds_, {});
    cuda_address_ = std::exchange(o.cuda_address_, 0);
    reserved_ = std::exchange(o.reserved_, 0);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

PeerMapping::PeerMapping(const CudaDevice& device, const std::vector<int>& fds,
                         const std::vector<uint64_t>& piece_sizes) {
  const Driver& d = driver();
  make_current(device);
  try {
    if (fds.size() != piece_sizes.size() || fds.empty())
      fail("p2p: a peer's buffer came with " + std::to_string(fds.size()) + " descriptors for " +
           std::to_string(piece_sizes.size()) + " pieces");
    for (int fd : fds) {
      CUmemGenericAllocationHandle h = 0;
      check_cuda(d.cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(uintptr_t(fd)),
                                                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                 "cuMemImportFromShareableHandle");
      handles_.push_back(h);
    }
    for (uint64_t s : piece_sizes) reserved_ += s;
    CUdeviceptr base = 0;
    check_cuda(d.cuMemAddressReserve(&base, reserved_, 0, 0, 0), "cuMemAddressReserve (peer)");
    address_ = base;
    uint64_t offset = 0;
    for (size_t i = 0; i < handles_.size(); ++i) {
      check_cuda(d.cuMemMap(CUdeviceptr(base + offset), piece_sizes[i], 0, handles_[i], 0),
                 "cuMemMap (peer)");
      offset += piece_sizes[i];
    }
    mapped_ = offset;
    set_access(d, address_, reserved_, device.ordinal);
  } catch (...) {
    for (int fd : fds) ::close(fd);
    release();
    throw;
  }
  for (int fd : fds) ::close(fd);
}

void PeerMapping::release() {
  if (loaded().error.empty()) {
    const Driver& d = loaded().driver;
    if (mapped_) d.cuMemUnmap(CUdeviceptr(address_), mapped_);
    if (address_) d.cuMemAddressFree(CUdeviceptr(address_), reserved_);
    for (auto h : handles_) d.cuMemRelease(h);
  }
  handles_.clear();
  address_ = reserved_ = mapped_ = 0;
}

PeerMapping::~PeerMapping() {
  release();
}

PeerMapping& PeerMapping::operator=(PeerMapping&& o) noexcept {
  if (this != &o) {
    release();
    handles_ = std::exchange(o.handles_, {});
    address_ = std::exchange(o.address_, 0);
    reserved_ = std::exchange(o.reserved_, 0);
    mapped_ = std::exchange(o.mapped_, 0);
  }
  return *this;
}

Stream::Stream() {
  const Driver& d = driver();
  CUstream s = nullptr;
  check_cuda(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  stream_ = s;
  CUevent a = nullptr, b = nullptr;
  check_cuda(d.cuEventCreate(&a, CU_EVENT_DEFAULT), "cuEventCreate");
  check_cuda(d.cuEventCreate(&b, CU_EVENT_DEFAULT), "cuEventCreate");
  start_ = a;
  stop_ = b;
}

Stream::~Stream() {
  if (!loaded().error.empty()) return;
  const Driver& d = loaded().driver;
  if (start_) d.cuEventDestroy(static_cast<CUevent>(start_));
  if (stop_) d.cuEventDestroy(static_cast<CUevent>(stop_));
  if (stream_) d.cuStreamDestroy(static_cast<CUstream>(stream_));
}

void Stream::copy(uint64_t dst, uint64_t src, uint64_t bytes) {
  if (bytes == 0) return;
  check_cuda(driver().cuMemcpyDtoDAsync(CUdeviceptr(dst), CUdeviceptr(src), bytes,
                                        static_cast<CUstream>(stream_)),
             "cuMemcpyDtoDAsync");
}

void Stream::fill32(uint64_t dst, uint32_t value, uint64_t words) {
  if (words == 0) return;
  check_cuda(
      driver().cuMemsetD32Async(CUdeviceptr(dst), value, words, static_cast<CUstream>(stream_)),
      "cuMemsetD32Async");
}

void Stream::synchronize() {
  check_cuda(driver().cuStreamSynchronize(static_cast<CUstream>(stream_)), "cuStreamSynchronize");
}

void Stream::record_start() {
  check_cuda(driver().cuEventRecord(static_cast<CUevent>(start_), static_cast<CUstream>(stream_)),
             "cuEventRecord");
}

double Stream::record_stop_and_elapsed_ms() {
  const Driver& d = driver();
  check_cuda(d.cuEventRecord(static_cast<CUevent>(stop_), static_cast<CUstream>(stream_)),
             "cuEventRecord");
  check_cuda(d.cuEventSynchronize(static_cast<CUevent>(stop_)), "cuEventSynchronize");
  float ms = 0;
  check_cuda(d.cuEventElapsedTime(&ms, static_cast<CUevent>(start_), static_cast<CUevent>(stop_)),
             "cuEventElapsedTime");
  return ms;
}

#endif

}  // namespace gpusort::distributed::p2p
