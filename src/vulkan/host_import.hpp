// Host memory registered with a device: a caller's pages pinned and imported as Vulkan buffers
// (VK_EXT_external_memory_host), so that the DMA engine copies straight between them and device
// memory, with no staging copy on the host.
//
// Importing pins every page (~17 GB/s on an H100 host, docs/design/host-path.md): it pays for
// memory sorted from or into more than once, which is why it is a registration the caller makes
// once, not something a sort does by itself. Only the aligned interior of a range is imported (the
// device's minImportedHostPointerAlignment); split() tells which bytes of a transfer are covered,
// so the few bytes before and after it go through staging.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "vulkan/context_impl.hpp"

namespace gpusort {

class HostImports {
 public:
  // One contiguous part of a transfer: `bytes` from `offset` into it; `buffer` (at
  // buffer_offset) holds them where they are imported, else VK_NULL_HANDLE (staging).
  struct Span {
    uint64_t offset = 0, bytes = 0;
    VkBuffer buffer = VK_NULL_HANDLE;
    uint64_t buffer_offset = 0;
  };

  explicit HostImports(Context::Impl& ctx) : ctx_(ctx) {}
  ~HostImports();
  HostImports(const HostImports&) = delete;
  HostImports& operator=(const HostImports&) = delete;

  // Imports [data, data + bytes) (its aligned interior, in pieces of at most the device's
  // largest allocation). Throws gpusort::Error naming the problem: the device cannot import host
  // memory, the range overlaps one registered before, the driver refused the pages (read-only or
  // not ordinary memory). Nothing stays registered when it throws.
  void add(const void* data, uint64_t bytes);
  // Releases the range registered at `data`; false when there is none.
  bool remove(const void* data);
  void clear();
  bool empty() const { return ranges_.empty(); }
  // Bytes imported in all.
  uint64_t imported_bytes() const;

  // [data, data + bytes) as spans in order, imported or not; one unimported span when nothing of
  // it is registered.
  std::vector<Span> split(const void* data, uint64_t bytes) const;

 private:
  struct Piece {
    uint64_t begin = 0, bytes = 0;  // host addresses
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
  };
  struct Range {
    uint64_t end = 0;  // the caller's range: [key, end)
    std::vector<Piece> pieces;
  };
  void release(Range& r);
  Context::Impl& ctx_;
  std::map<uint64_t, Range> ranges_;  // by the caller's start address
};

}  // namespace gpusort
