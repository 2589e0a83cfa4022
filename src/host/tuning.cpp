// The host path's tuning table (HostTuning, tuning.hpp): one row per device family,
// each value with one line of provenance. What was tried and the full results:
// docs/design/host-path.md.
#include "host/tuning.hpp"

namespace gpusort {

namespace {

constexpr HostTuning shader_copies{
    // `dev/host_path/e2e_call.sh` 983e368, H100, 2^28 u32 host to host 73.79 -> 60.39 ms
    .shader_copies = true,
};

constexpr HostTuning dma_copies{
    // not measured: the DMA engine (shader copies were measured across PCIe only)
    .shader_copies = false,
};

}  // namespace

const HostTuning& host_tuning(DeviceFamily family) {
  switch (family) {
    case DeviceFamily::nvidia:
    case DeviceFamily::nvidia_h200:
      return shader_copies;
    case DeviceFamily::nvidia_integrated:
    case DeviceFamily::amd:
    case DeviceFamily::wide_subgroups:
    case DeviceFamily::intel:
    case DeviceFamily::cpu:
    case DeviceFamily::narrow_subgroups:
      return dma_copies;
  }
  return dma_copies;
}

}  // namespace gpusort
