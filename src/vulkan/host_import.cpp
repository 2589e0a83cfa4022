#include "vulkan/host_import.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace gpusort {

namespace {

std::string hex(uint64_t x) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", (unsigned long long)x);
  return text;
}

}  // namespace

HostImports::~HostImports() {
  clear();
}

void HostImports::release(Range& r) {
  for (Piece& p : r.pieces) {
    if (p.buffer) vkDestroyBuffer(ctx_.device, p.buffer, nullptr);
    if (p.memory) vkFreeMemory(ctx_.device, p.memory, nullptr);
  }
  r.pieces.clear();
}

void HostImports::clear() {
  for (auto& [begin, r] : ranges_) release(r);
  ranges_.clear();
}

bool HostImports::remove(const void* data) {
  auto it = ranges_.find(reinterpret_cast<uint64_t>(data));
  if (it == ranges_.end()) return false;
  release(it->second);
  ranges_.erase(it);
  return true;
}

uint64_t HostImports::imported_bytes() const {
  uint64_t sum = 0;
  for (const auto& [begin, r] : ranges_)
    for (const Piece& p : r.pieces) sum += p.bytes;
  return sum;
}

void HostImports::add(const void* data, uint64_t bytes) {
  const std::string what = "registering host memory at " + hex(reinterpret_cast<uint64_t>(data)) +
                           " (" + std::to_string(bytes) + " bytes): ";
  const uint64_t a = ctx_.host_import_alignment;
  if (a == 0)
    throw Error(what + "the device cannot import host memory (no VK_EXT_external_memory_host)");
  if (!data || bytes == 0) throw Error(what + "an empty range");
  const uint64_t first = reinterpret_cast<uint64_t>(data);
  if (first + bytes < first) throw Error(what + "the range wraps around the address space");
  const uint64_t last = first + bytes;
  auto next = ranges_.lower_bound(first);
  if ((next != ranges_.end() && next->first < last) ||
      (next != ranges_.begin() && std::prev(next)->second.end > first))
    throw Error(what + "it overlaps a range registered before");
  auto get_properties = reinterpret_cast<PFN_vkGetMemoryHostPointerPropertiesEXT>(
      vkGetDeviceProcAddr(ctx_.device, "vkGetMemoryHostPointerPropertiesEXT"));
  if (!get_properties) throw Error(what + "vkGetMemoryHostPointerPropertiesEXT is missing");
  // Pieces of at most the largest allocation, on the alignment.
  const uint64_t begin = (first + a - 1) / a * a, end = last / a * a;
  const uint64_t most = std::max<uint64_t>(a, ctx_.info.max_allocation_bytes / a * a);
  Range r;
  r.end = last;
  try {
    for (uint64_t at = begin; at < end; at += most) {
      Piece p;
      p.begin = at;
      p.bytes = std::min(most, end - at);
      r.pieces.push_back(p);
      Piece& q = r.pieces.back();
      void* pointer = reinterpret_cast<void*>(at);
      VkMemoryHostPointerPropertiesEXT props{VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
      VkResult result = get_properties(
          ctx_.device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, pointer, &props);
      if (result != VK_SUCCESS)
        throw Error(what + "the driver does not take the pages at " + hex(at) + " (VkResult " +
                    std::to_string(int(result)) + ")");
      VkExternalMemoryBufferCreateInfo external{
          VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
      external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
      VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &external};
      info.size = q.bytes;
      info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
      check(vkCreateBuffer(ctx_.device, &info, nullptr, &q.buffer), "vkCreateBuffer (host import)");
      VkMemoryRequirements req;
      vkGetBufferMemoryRequirements(ctx_.device, q.buffer, &req);
      // A host-coherent type: the device's writes are then seen by the host once the copy's
      // fence has signalled (with the barrier to the host stage).
      const uint32_t bits = req.memoryTypeBits & props.memoryTypeBits;
      uint32_t type = 0;
      while (type < ctx_.memory.memoryTypeCount &&
             !((bits >> type) & 1u && (ctx_.memory.memoryTypes[type].propertyFlags &
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)))
        ++type;
      if (type == ctx_.memory.memoryTypeCount)
        throw Error(what + (bits ? "the device imports host pages only as non-coherent memory"
                                 : "no memory type of the device takes these pages"));
      VkImportMemoryHostPointerInfoEXT import{
          VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT};
      import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
      import.pHostPointer = pointer;
      VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &import};
      alloc.allocationSize = q.bytes;
      alloc.memoryTypeIndex = type;
      result = vkAllocateMemory(ctx_.device, &alloc, nullptr, &q.memory);
      if (result != VK_SUCCESS) {
        q.memory = VK_NULL_HANDLE;
        throw Error(what + "importing " + std::to_string(q.bytes) + " bytes at " + hex(at) +
                    " failed (VkResult " + std::to_string(int(result)) +
                    "; read-only or unusual pages are not imported)");
      }
      check(vkBindBufferMemory(ctx_.device, q.buffer, q.memory, 0),
            "vkBindBufferMemory (host import)");
    }
  } catch (...) {
    release(r);
    throw;
  }
  ranges_.emplace(first, std::move(r));
}

std::vector<HostImports::Span> HostImports::split(const void* data, uint64_t bytes) const {
  std::vector<Span> spans;
  const uint64_t first = reinterpret_cast<uint64_t>(data), last = first + bytes;
  auto add = [&](uint64_t from, uint64_t to, const Piece* p) {
    if (to <= from) return;
    Span s{from - first, to - from, VK_NULL_HANDLE, 0};
    if (p) {
      s.buffer = p->buffer;
      s.buffer_offset = from - p->begin;
    }
    if (!p && !spans.empty() && spans.back().buffer == VK_NULL_HANDLE)
      spans.back().bytes += s.bytes;  // staged spans next to each other: one
    else
      spans.push_back(s);
  };
  uint64_t at = first;
  // The ranges that may overlap [first, last): from the one starting at or before `first`.
  auto it = ranges_.upper_bound(first);
  if (it != ranges_.begin()) --it;
  for (; it != ranges_.end() && it->first < last && at < last; ++it)
    for (const Piece& p : it->second.pieces) {
      const uint64_t b = std::max(p.begin, at), e = std::min(p.begin + p.bytes, last);
      if (e <= b) continue;
      add(at, b, nullptr);
      add(b, e, &p);
      at = e;
    }
  add(at, last, nullptr);
  return spans;
}

}  // namespace gpusort
