// Multi-level work-efficient prefix scan of u32 or u64 arrays on the device.
#pragma once

#include "vulkan/recorder.hpp"

namespace gpusort {

struct ScanSpec {
  bool u64 = false;
  bool inclusive = false;
};

uint64_t scan_scratch_bytes(uint64_t n, const ScanSpec& spec);
// Scans n elements at `in` into `out` (may alias); scratch holds the per-level block totals.
void record_scan(Recorder& rec, VkDeviceAddress in, VkDeviceAddress out, uint64_t n,
                 const ScanSpec& spec, VkDeviceAddress scratch);

}  // namespace gpusort
