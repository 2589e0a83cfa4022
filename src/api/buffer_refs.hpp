// The engine faces' checks of the caller's buffers (Sorter, SegmentedSorter): a BufferRef
// resolved to a device address, and the ranges the sort will touch refused when they overlap.
#pragma once

#include "vulkan/context_impl.hpp"

#include <initializer_list>
#include <string>

namespace gpusort {

// The device address of `ref`, or Error "<call>: <what> ..." naming what is wrong with it.
inline VkDeviceAddress resolve_buffer(const Context::Impl& ctx, const char* call, BufferRef ref,
                                      const char* what, VkDeviceSize alignment) {
  auto fail = [&](const std::string& why) {
    throw Error(std::string(call) + ": " + what + why);
  };
  if (!ref.buffer) fail(".buffer is VK_NULL_HANDLE");
  if (ref.offset % alignment)
    fail(".offset " + std::to_string(ref.offset) + " is not a multiple of " +
         std::to_string(alignment));
  VkDeviceAddress a = ctx.address_of(ref.buffer);
  if (a == 0)
    fail(" buffer has no device address (VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT and "
         "VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT are required)");
  return a + ref.offset;
}

struct AddressRange {
  const char* what;
  VkDeviceAddress begin, end;
};

// Overlapping ranges would corrupt the sort silently on the GPU: refused here, with `size`
// (e.g. "1000 elements") saying for what.
inline void refuse_overlaps(const char* call, std::initializer_list<AddressRange> ranges,
                            const std::string& size) {
  for (auto i = ranges.begin(); i != ranges.end(); ++i)
    for (auto j = i + 1; j != ranges.end(); ++j)
      if (i->begin < i->end && j->begin < j->end && i->begin < j->end && j->begin < i->end)
        throw Error(std::string(call) + ": " + i->what + " and " + j->what + " overlap (for " +
                    size + ")");
}

}  // namespace gpusort
