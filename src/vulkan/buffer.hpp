// Buffers gpusort allocates itself (the convenient face, tests, the benchmark).
#pragma once

#include <cstring>
#include <vector>

#include "vulkan/context_impl.hpp"

namespace gpusort {

enum class MemoryKind { device_local, upload, readback };

// A buffer usable as storage, transfer source/destination and indirect arguments, with its
// device address. Host-visible kinds are persistently mapped. A device-local buffer larger than
// the device's largest allocation is a sparse buffer bound to several allocations (where the
// device has sparseBinding: DeviceInfo::max_buffer_bytes), one range of device addresses.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Context::Impl& ctx, uint64_t bytes, MemoryKind kind);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

  VkBuffer buffer() const { return buffer_; }
  VkDeviceAddress address() const { return address_; }
  uint64_t bytes() const { return bytes_; }
  void* mapped() const { return mapped_; }
  BufferRef ref(VkDeviceSize offset = 0) const { return {buffer_, offset}; }

 private:
  void release();
  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  void bind_sparse(Context::Impl& ctx, const VkMemoryRequirements& req);
  std::vector<VkDeviceMemory> memory_;  // one, or a sparse buffer's pieces
  VkDeviceAddress address_ = 0;
  uint64_t bytes_ = 0;
  void* mapped_ = nullptr;
};

// Binds memory to ranges of a sparse buffer on gpusort's queue (under its submit mutex: the queue
// is shared) and waits for it; what names the binding in the error.
void bind_sparse_memory(Context::Impl& ctx, VkBuffer buffer,
                        const std::vector<VkSparseMemoryBind>& binds, const char* what);

// Copies host bytes to a device-local buffer and back, through a staging buffer.
void upload(Context::Impl& ctx, const DeviceBuffer& dst, const void* src, uint64_t bytes);
void download(Context::Impl& ctx, const DeviceBuffer& src, void* dst, uint64_t bytes);

}  // namespace gpusort
