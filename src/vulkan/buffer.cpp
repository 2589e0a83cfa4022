#include "vulkan/buffer.hpp"

#include "vulkan/recorder.hpp"

#include <algorithm>
#include <utility>

namespace gpusort {

DeviceBuffer::DeviceBuffer(Context::Impl& ctx, uint64_t bytes, MemoryKind kind) : device_(ctx.device) {
  // Never zero-sized: a 0-element sort still binds valid addresses.
  bytes_ = std::max<uint64_t>(bytes, 256);
  if (bytes_ > ctx.info.max_allocation_bytes)
    throw Error("allocating " + std::to_string(bytes_) + " bytes: larger than the device's "
                "largest allocation (" + std::to_string(ctx.info.max_allocation_bytes) + " bytes)",
                VK_ERROR_OUT_OF_DEVICE_MEMORY);
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = bytes_;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
               VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device_, &info, nullptr, &buffer_), "vkCreateBuffer");
  try {
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, buffer_, &req);
    VkMemoryPropertyFlags required = 0, preferred = 0;
    switch (kind) {
      case MemoryKind::device_local: preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT; break;
      case MemoryKind::upload:
        required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        break;
      case MemoryKind::readback:
        required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
        break;
    }
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = ctx.find_memory_type(req.memoryTypeBits, required, preferred);
    check(vkAllocateMemory(device_, &alloc, nullptr, &memory_),
          ("allocating " + std::to_string(bytes_) + " bytes of device memory (vkAllocateMemory)").c_str());
    check(vkBindBufferMemory(device_, buffer_, memory_, 0), "vkBindBufferMemory");
    if (kind != MemoryKind::device_local)
      check(vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
    address_ = ctx.address_of(buffer_);
  } catch (...) {
    release();
    throw;
  }
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    device_ = std::exchange(other.device_, VK_NULL_HANDLE);
    buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(other.memory_, VK_NULL_HANDLE);
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
    mapped_ = std::exchange(other.mapped_, nullptr);
  }
  return *this;
}

void DeviceBuffer::release() {
  if (buffer_) vkDestroyBuffer(device_, buffer_, nullptr);
  if (memory_) vkFreeMemory(device_, memory_, nullptr);
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
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
