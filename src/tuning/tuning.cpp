// The device families and the lookup of their tables (src/tuning/tuning.hpp).
#include "tuning/tuning.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace gpusort {

namespace {

constexpr uint32_t vendor_nvidia = 0x10de, vendor_amd = 0x1002, vendor_intel = 0x8086;

}  // namespace

// Subgroups of 32 and more take the wide tile shapes measured on the H100 (onesweep_pass's
// per-subgroup counters cost 1 KiB a subgroup, so narrow subgroups take small tiles); NVIDIA's
// GPUs all report subgroups of exactly 32. Within each width, the vendor and the device type pick
// the family: NVIDIA's discrete GPUs are where everything was measured.
DeviceFamily device_family(const DeviceInfo& device) {
  if (device.min_subgroup_size >= 32) {
    if (device.vendor_id == vendor_nvidia) {
      if (device.type != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)
        return DeviceFamily::nvidia_integrated;
      // The H200 (H200 SXM and NVL, not the GH200) by its name: the one device whose own
      // measurements part from the H100's (src/algorithms/onesweep/tuning.cpp).
      return device.name.rfind("NVIDIA H200", 0) == 0 ? DeviceFamily::nvidia_h200
                                                      : DeviceFamily::nvidia;
    }
    if (device.vendor_id == vendor_amd) return DeviceFamily::amd;
    return DeviceFamily::wide_subgroups;
  }
  if (device.type == VK_PHYSICAL_DEVICE_TYPE_CPU) return DeviceFamily::cpu;
  if (device.vendor_id == vendor_intel) return DeviceFamily::intel;
  return DeviceFamily::narrow_subgroups;
}

const char* to_string(DeviceFamily family) {
  switch (family) {
    case DeviceFamily::nvidia:
      return "nvidia";
    case DeviceFamily::nvidia_h200:
      return "nvidia_h200";
    case DeviceFamily::nvidia_integrated:
      return "nvidia_integrated";
    case DeviceFamily::amd:
      return "amd";
    case DeviceFamily::wide_subgroups:
      return "wide_subgroups";
    case DeviceFamily::intel:
      return "intel";
    case DeviceFamily::cpu:
      return "cpu";
    case DeviceFamily::narrow_subgroups:
      return "narrow_subgroups";
  }
  return "unknown";
}

}  // namespace gpusort
