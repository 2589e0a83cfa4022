#include "vulkan/buffer.hpp"

#include "vulkan/recorder.hpp"

#include <algorithm>
#include <utility>

namespace gpusort {

namespace {

// A device-address-capable allocation of `bytes` of memory type `type`.
VkDeviceMemory allocate(VkDevice device, uint64_t bytes, uint32_t type, uint64_t buffer_bytes) {
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
  alloc.allocationSize = bytes;
  alloc.memoryTypeIndex = type;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  check(
      vkAllocateMemory(device, &alloc, nullptr, &memory),
      ("allocating " + std::to_string(buffer_bytes) + " bytes of device memory (vkAllocateMemory)")
          .c_str());
  return memory;
}

}  // namespace

DeviceBuffer::DeviceBuffer(Context::Impl& ctx, uint64_t bytes, MemoryKind kind) : device_(ctx.device) {
  // Never zero-sized: a 0-element sort still binds valid addresses.
  bytes_ = std::max<uint64_t>(bytes, 256);
  const bool sparse = bytes_ > ctx.info.max_allocation_bytes;
  const uint64_t largest =
      kind == MemoryKind::device_local ? ctx.info.max_buffer_bytes : ctx.info.max_allocation_bytes;
  if (bytes_ > largest)
    throw Error("allocating " + std::to_string(bytes_) + " bytes: larger than the device's largest " +
                    (kind == MemoryKind::device_local ? "buffer" : "allocation") + " (" +
                    std::to_string(largest) + " bytes)",
                VK_ERROR_OUT_OF_DEVICE_MEMORY);
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.flags = sparse ? VK_BUFFER_CREATE_SPARSE_BINDING_BIT : 0;
  info.size = bytes_;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
               VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device_, &info, nullptr, &buffer_), "vkCreateBuffer");
  try {
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, buffer_, &req);
    if (sparse) {
      bind_sparse(ctx, req);
    } else {
      VkMemoryPropertyFlags required = 0, preferred = 0;
      switch (kind) {
        case MemoryKind::device_local:
          preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
          break;
        case MemoryKind::upload:
          required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
          break;
        case MemoryKind::readback:
          required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
          preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
          break;
      }
      memory_.push_back(allocate(device_, req.size,
                                 ctx.find_memory_type(req.memoryTypeBits, required, preferred),
                                 bytes_));
      check(vkBindBufferMemory(device_, buffer_, memory_[0], 0), "vkBindBufferMemory");
      if (kind != MemoryKind::device_local)
        check(vkMapMemory(device_, memory_[0], 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
    }
    address_ = ctx.address_of(buffer_);
  } catch (...) {
    release();
    throw;
  }
}

// The buffer's whole range bound to pieces of at most the largest allocation (multiples of the
// sparse page size, req.alignment), on gpusort's queue, waited for: kernels then address the
// buffer as one range.
void DeviceBuffer::bind_sparse(Context::Impl& ctx, const VkMemoryRequirements& req) {
  const uint64_t page = std::max<uint64_t>(req.alignment, 1);
  const uint64_t piece = ctx.info.max_allocation_bytes / page * page;
  const uint32_t type =
      ctx.find_memory_type(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  std::vector<VkSparseMemoryBind> binds;
  for (uint64_t offset = 0; offset < req.size; offset += piece) {
    const uint64_t size = std::min(piece, req.size - offset);
    memory_.push_back(allocate(device_, size, type, bytes_));
    binds.push_back({offset, size, memory_.back(), 0, 0});
  }
  bind_sparse_memory(ctx, buffer_, binds, "binding a sparse buffer's memory (vkQueueBindSparse)");
}

void bind_sparse_memory(Context::Impl& ctx, VkBuffer buffer,
                        const std::vector<VkSparseMemoryBind>& binds, const char* what) {
  VkSparseBufferMemoryBindInfo buffer_binds{buffer, uint32_t(binds.size()), binds.data()};
  VkBindSparseInfo bind{VK_STRUCTURE_TYPE_BIND_SPARSE_INFO};
  bind.bufferBindCount = 1;
  bind.pBufferBinds = &buffer_binds;
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  check(vkCreateFence(ctx.device, &fence_info, nullptr, &fence), "vkCreateFence");
  VkResult result;
  {
    std::lock_guard lock(ctx.submit_mutex);  // the queue is shared
    result = vkQueueBindSparse(ctx.queue, 1, &bind, fence);
  }
  if (result == VK_SUCCESS) result = vkWaitForFences(ctx.device, 1, &fence, VK_TRUE, UINT64_MAX);
  vkDestroyFence(ctx.device, fence, nullptr);
  check(result, what);
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    device_ = std::exchange(other.device_, VK_NULL_HANDLE);
    buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(other.memory_, {});
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
    mapped_ = std::exchange(other.mapped_, nullptr);
  }
  return *this;
}

void DeviceBuffer::release() {
  if (buffer_) vkDestroyBuffer(device_, buffer_, nullptr);
  for (VkDeviceMemory m : memory_) vkFreeMemory(device_, m, nullptr);
  buffer_ = VK_NULL_HANDLE;
  memory_.clear();
  mapped_ = nullptr;
}

void upload(Context::Impl& ctx, const DeviceBuffer& dst, const void* src, uint64_t bytes) {
  if (bytes == 0) return;
  DeviceBuffer staging(ctx, bytes, MemoryKind::upload);
  std::memcpy(staging.mapped(), src, bytes);
  ctx.submit([&](VkCommandBuffer cmd) {
    VkBufferCopy region{0, 0, bytes};
    vkCmdCopyBuffer(cmd, staging.buffer(), dst.buffer(), 1, &region);
    Recorder::full_barrier(cmd);
  });
}

void download(Context::Impl& ctx, const DeviceBuffer& src, void* dst, uint64_t bytes) {
  if (bytes == 0) return;
  DeviceBuffer staging(ctx, bytes, MemoryKind::readback);
  ctx.submit([&](VkCommandBuffer cmd) {
    VkBufferCopy region{0, 0, bytes};
    Recorder::full_barrier(cmd);
    vkCmdCopyBuffer(cmd, src.buffer(), staging.buffer(), 1, &region);
    Recorder::full_barrier(cmd);
  });
  std::memcpy(dst, staging.mapped(), bytes);
}

}  // namespace gpusort
