// The device families that every tuning table is keyed on. Each tunable algorithm keeps its table in
// its folder: the row type and its accessor in tuning.hpp, a row per family in tuning.cpp (each
// value citing the measurement that chose it); how to add a family or re-tune one:
// src/tuning/README.md. Plain data only: the algorithms read their shapes and switches from their
// table and fit them to the device's limits (shared memory, workgroup size) themselves.
#pragma once

#include <cstdint>
#include <gpusort/gpusort.hpp>

namespace gpusort {

// What the tables are keyed on. Classified from the Vulkan device info alone (device_family):
// subgroup width first (the tile shapes follow it), then vendor and device type.
enum class DeviceFamily : uint32_t {
  nvidia,             // NVIDIA discrete GPUs (subgroups of 32): measured on the H100 and H200
  nvidia_h200,        // NVIDIA H200 (HBM3e): the nvidia table but for 64-bit keys with values
  nvidia_integrated,  // NVIDIA integrated GPUs (Tegra): not measured
  amd,                // AMD GPUs with subgroups of 32 or 64: not measured
  wide_subgroups,     // any other device whose subgroups are at least 32 wide: not measured
  intel,              // Intel GPUs (subgroups of 8 to 32, less than 32 at least): not measured
  cpu,                // CPU drivers with narrow subgroups (lavapipe, SwiftShader): correctness only
  narrow_subgroups,   // any other device with subgroups narrower than 32: not measured
};
inline constexpr uint32_t device_family_count = 8;

// The family of a device, and its name ("nvidia", "cpu", ...).
DeviceFamily device_family(const DeviceInfo& device);
const char* to_string(DeviceFamily family);

}  // namespace gpusort
