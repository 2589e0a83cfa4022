// gpusort devices: every Vulkan device, the limits gpusort adapts to, the tuning family it gets,
// and which one it would pick.
#include "commands.hpp"

#include <gpusort/gpusort.hpp>

#include <bit>
#include <cstdio>
#include <string>

#include "cuda/embedded_images.hpp"
#include "cuda/environment.hpp"
#include "algorithms/onesweep/tuning.hpp"

namespace gpusort::cli {
namespace {

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

// Which kernels run Onesweep's passes on the device by default (README.md, "Which path runs
// where"), told from the device's description and the build: nothing is loaded (a sort loads the
// CUDA kernels when it first runs them).
std::string onesweep_path(const DeviceInfo& d) {
  const KernelPath asked = kernel_path_from_environment();
  if (asked == KernelPath::spirv) return "spirv (GPUSORT_KERNELS=spirv)";
  if (!d.usable) return "none";
  if (!d.cuda_kernels) return "spirv (CUDA kernels unavailable: " + d.cuda_why + ")";
  const std::string images = "embedded " + cuda::embedded_images() + ", loaded by the first sort";
  const auto& from = onesweep_tuning(d).cuda_from_n;
  if (asked != KernelPath::cuda && from == decltype(from){})
    return "spirv (the tuning table keeps it; cuda on request: " + images + ")";
  // By itself, per key class: from which size (above 2^k keys where that is the table's).
  std::string sizes;
  const char* classes[] = {"32-bit keys", "32-bit keys + 4-byte values", "64-bit keys",
                           "64-bit keys + 4-byte values"};
  if (asked != KernelPath::cuda)
    for (size_t i = 0; i < from.size(); ++i) {
      const uint64_t above = from[i] - 1;
      const std::string size = std::has_single_bit(above)
                                   ? "above 2^" + std::to_string(std::countr_zero(above))
                                   : "from " + std::to_string(from[i]);
      sizes += std::string(i ? ", " : "; ") + classes[i] +
               (from[i] == 0 ? std::string(": spirv") : ": " + size + " keys");
    }
  return "cuda (VK_NVX_binary_import, " + images + sizes + "; 8-byte values: spirv)";
}

void list_devices() {
  auto devices = Context::list_devices();
  if (devices.empty()) throw Error("no Vulkan devices found (is a Vulkan driver installed?)");
  for (const auto& d : devices) {
    std::printf("%u: %s (%s, %s, Vulkan %u.%u)\n", d.index, d.name.c_str(), type_name(d.type),
                d.driver.c_str(), VK_API_VERSION_MAJOR(d.api_version), VK_API_VERSION_MINOR(d.api_version));
    std::printf(
        "   subgroup %u (%u..%u%s), shared memory %u B, max workgroup %u (%u subgroups),\n"
        "   storage range %llu B, device-local memory %.1f GiB, max allocation %.1f GiB,\n"
        "   largest buffer %.1f GiB%s, compute units %s\n",
        d.subgroup_size, d.min_subgroup_size, d.max_subgroup_size,
        d.subgroup_size_control ? ", size control" : "", d.shared_memory_bytes,
        d.max_workgroup_size, d.max_workgroup_subgroups, (unsigned long long)d.storage_buffer_range,
        d.device_local_bytes / 1073741824.0, d.max_allocation_bytes / 1073741824.0,
        d.max_buffer_bytes / 1073741824.0, d.sparse_binding ? " (sparse: several allocations)" : "",
        d.compute_units ? std::to_string(d.compute_units).c_str() : "not reported");
    std::printf("   tuning family: %s\n", to_string(device_family(d)));
    std::printf("   onesweep passes: %s\n", onesweep_path(d).c_str());
    if (!d.usable) std::printf("   not usable by gpusort: %s\n", d.unusable_why.c_str());
  }
}

CommandRegistration registration([](CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List Vulkan devices and the limits gpusort adapts to");
  cmd->callback(list_devices);
});

}  // namespace
}  // namespace gpusort::cli
