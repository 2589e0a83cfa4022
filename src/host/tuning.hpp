// The host path's tuning table: its row type, one row per device family (tuning.cpp).
#pragma once


#include "tuning/tuning.hpp"

namespace gpusort {

// The host path (src/host/host_path.cpp): staging copies by a compute shader (true) or by the
// transfer (DMA) engine.
struct HostTuning {
  bool shader_copies = false;
};

const HostTuning& host_tuning(DeviceFamily family);
inline const HostTuning& host_tuning(const DeviceInfo& device) {
  return host_tuning(device_family(device));
}

}  // namespace gpusort
