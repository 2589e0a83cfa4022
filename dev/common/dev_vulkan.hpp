// Development tools that need device features or extensions the library's Context does not
// enable (dev/onesweep/onesweep_clock.cpp and shader_stats.cpp,
// dev/dispatch_choice/dispatch_choice.cpp) create their own instance and device; this makes the
// instance and picks the physical device and its compute queue family.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace gpusort::dev {

inline void check_vk(VkResult r, const char* what) {
  if (r != VK_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d\n", what, int(r));
    std::exit(1);
  }
}

struct DevPhysical {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  uint32_t family = 0;  // the first queue family with compute
};

// A Vulkan 1.3 instance and its last device of `vendor_id` (exits when there is none), or with
// vendor_id 0 its last discrete GPU, else its first device.
inline DevPhysical pick_dev_physical(uint32_t vendor_id = 0) {
  DevPhysical d;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo ii{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ii.pApplicationInfo = &app;
  check_vk(vkCreateInstance(&ii, nullptr, &d.instance), "vkCreateInstance");
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(d.instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(d.instance, &count, devices.data());
  if (vendor_id == 0 && !devices.empty()) d.physical = devices[0];
  for (auto p : devices) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(p, &props);
    if (vendor_id != 0 ? props.vendorID == vendor_id
                       : props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)
      d.physical = p;
  }
  if (d.physical == VK_NULL_HANDLE) {
    std::fprintf(stderr, vendor_id ? "no device of vendor 0x%x\n" : "no Vulkan device\n",
                 vendor_id);
    std::exit(1);
  }
  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(d.physical, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(d.physical, &family_count, families.data());
  while (d.family < family_count && !(families[d.family].queueFlags & VK_QUEUE_COMPUTE_BIT))
    ++d.family;
  return d;
}

// A device on d's physical device with one queue of its compute family, the feature chain
// `features` (a VkPhysicalDeviceFeatures2 and what it points to) and `count` extensions.
inline VkDevice create_dev_device(const DevPhysical& d, const void* features,
                                  const char* const* extensions, uint32_t count) {
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = d.family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, features};
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  di.enabledExtensionCount = count;
  di.ppEnabledExtensionNames = extensions;
  VkDevice device;
  check_vk(vkCreateDevice(d.physical, &di, nullptr, &device), "vkCreateDevice");
  return device;
}

}  // namespace gpusort::dev
