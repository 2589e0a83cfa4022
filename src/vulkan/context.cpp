// Context: instance and device selection (or wrapping), device limits, pipeline cache, submission.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels.hpp"
#include "vulkan/context_impl.hpp"

namespace gpusort {

namespace {

const char* result_name(VkResult r) {
  switch (r) {
#define GPUSORT_RESULT(x) \
  case x: return #x;
    GPUSORT_RESULT(VK_SUCCESS)
    GPUSORT_RESULT(VK_NOT_READY)
    GPUSORT_RESULT(VK_TIMEOUT)
    GPUSORT_RESULT(VK_INCOMPLETE)
    GPUSORT_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    GPUSORT_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    GPUSORT_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    GPUSORT_RESULT(VK_ERROR_DEVICE_LOST)
    GPUSORT_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    GPUSORT_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    GPUSORT_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    GPUSORT_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    GPUSORT_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    GPUSORT_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    GPUSORT_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    GPUSORT_RESULT(VK_ERROR_UNKNOWN)
#undef GPUSORT_RESULT
    default: return "VkResult";
  }
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    static_cast<Context::Impl*>(user)->validation_messages++;
    std::fprintf(stderr, "gpusort validation: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

bool layer_available(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  for (auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

int device_type_rank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

VkInstance create_instance(bool validation, bool sync_validation) {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "gpusort";
  app.pEngineName = "gpusort";
  app.apiVersion = VK_API_VERSION_1_3;
  std::vector<const char*> layers, extensions;
  if (validation) {
    if (!layer_available("VK_LAYER_KHRONOS_validation"))
      throw Error("validation requested but VK_LAYER_KHRONOS_validation is not installed",
                  VK_ERROR_LAYER_NOT_PRESENT);
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  info.enabledLayerCount = uint32_t(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = uint32_t(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  if (validation && sync_validation) info.pNext = &features;
  VkInstance instance = VK_NULL_HANDLE;
  check(vkCreateInstance(&info, nullptr, &instance), "vkCreateInstance");
  return instance;
}

std::vector<VkPhysicalDevice> physical_devices(VkInstance instance) {
  uint32_t count = 0;
  check(vkEnumeratePhysicalDevices(instance, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> devices(count);
  check(vkEnumeratePhysicalDevices(instance, &count, devices.data()),
        "vkEnumeratePhysicalDevices");
  return devices;
}

// maxBufferSize (Vulkan 1.3), else no limit beyond the memory itself.
uint64_t max_buffer_size(VkPhysicalDevice physical, bool vk13) {
  if (!vk13) return ~uint64_t(0);
  VkPhysicalDeviceMaintenance4Properties m4{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &m4};
  vkGetPhysicalDeviceProperties2(physical, &props);
  return m4.maxBufferSize;
}

// Whether queue family `family` also binds sparse memory (VK_QUEUE_SPARSE_BINDING_BIT).
bool family_binds_sparse(VkPhysicalDevice physical, uint32_t family) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
  return family < count && (families[family].queueFlags & VK_QUEUE_SPARSE_BINDING_BIT);
}

uint32_t compute_queue_family(VkPhysicalDevice physical) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
  // Prefer a family with compute and graphics (the "universal" queue, usually fastest to start).
  for (uint32_t i = 0; i < count; ++i)
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && families[i].timestampValidBits > 0)
      return i;
  for (uint32_t i = 0; i < count; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return i;
  return UINT32_MAX;
}

// `wanted` is a device index (all digits) or a name substring; `source` says where it came from
// when that was not the caller's option ("" or " (from GPUSORT_DEVICE)"). A device that matches
// nothing is an invalid argument, not a Vulkan failure: the error carries VK_SUCCESS.
size_t choose_device(const std::vector<DeviceInfo>& infos, const std::string& wanted,
                     const std::string& source) {
  if (!wanted.empty()) {
    std::string names;
    for (auto& d : infos)
      names += (names.empty() ? "" : ", ") + std::to_string(d.index) + ": " + d.name;
    if (names.empty()) names = "none";
    bool numeric = std::all_of(wanted.begin(), wanted.end(),
                               [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    uint64_t index = 0;
    if (numeric) {
      auto [end, error] = std::from_chars(wanted.data(), wanted.data() + wanted.size(), index);
      if (error != std::errc() || end != wanted.data() + wanted.size())
        throw Error("device index '" + wanted + "'" + source +
                    " is out of range; devices: " + names);
    }
    for (size_t i = 0; i < infos.size(); ++i) {
      bool match = numeric ? infos[i].index == index
                           : lower(infos[i].name).find(lower(wanted)) != std::string::npos;
      if (!match) continue;
      if (!infos[i].usable)
        throw Error("device '" + infos[i].name + "' cannot run gpusort: " + infos[i].unusable_why,
                    VK_ERROR_FEATURE_NOT_PRESENT);
      return i;
    }
    throw Error(
        std::string(numeric ? "no Vulkan device has index '" : "no Vulkan device matches '") +
        wanted + "'" + source + "; devices: " + names);
  }
  size_t best = SIZE_MAX;
  for (size_t i = 0; i < infos.size(); ++i) {
    if (!infos[i].usable) continue;
    if (best == SIZE_MAX || device_type_rank(infos[i].type) < device_type_rank(infos[best].type))
      best = i;
  }
  if (best == SIZE_MAX)
    throw Error("no Vulkan device with bufferDeviceAddress, shaderInt64 and subgroup ballot",
                VK_ERROR_INCOMPATIBLE_DRIVER);
  return best;
}

}  // namespace

bool device_has_extension(VkPhysicalDevice physical, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data());
  for (auto& e : extensions)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

Error::Error(const std::string& operation, VkResult result)
    : std::runtime_error(result == VK_SUCCESS
                             ? operation
                             : operation + " failed: " + result_name(result) + " (" +
                                   std::to_string(int(result)) + ")"),
      result_(result),
      operation_(operation) {}

void check(VkResult result, const char* operation) {
  if (result != VK_SUCCESS) throw Error(operation, result);
}

// SMs or compute units, from the vendor extension that reports them (querying a supported
// extension's properties needs no enabled extension); 0 where there is none.
uint32_t count_compute_units(VkPhysicalDevice physical) {
  if (device_has_extension(physical, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sm};
    vkGetPhysicalDeviceProperties2(physical, &props);
    return sm.shaderSMCount;
  }
  if (device_has_extension(physical, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderCorePropertiesAMD core{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &core};
    vkGetPhysicalDeviceProperties2(physical, &props);
    return core.shaderEngineCount * core.shaderArraysPerEngineCount *
           core.computeUnitsPerShaderArray;
  }
  return 0;
}

DeviceInfo describe_device(VkPhysicalDevice physical, uint32_t index) {
  DeviceInfo d;
  d.index = index;
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties size_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &subgroup;
  subgroup.pNext = &driver;
  VkPhysicalDeviceProperties basic;
  vkGetPhysicalDeviceProperties(physical, &basic);
  if (basic.apiVersion >= VK_API_VERSION_1_3) driver.pNext = &size_control;
  vkGetPhysicalDeviceProperties2(physical, &props);
  const auto& p = props.properties;
  d.name = p.deviceName;
  d.driver = driver.driverName;
  d.type = p.deviceType;
  d.vendor_id = p.vendorID;
  d.api_version = p.apiVersion;
  d.subgroup_size = subgroup.subgroupSize;
  d.min_subgroup_size = size_control.minSubgroupSize ? size_control.minSubgroupSize
                                                     : subgroup.subgroupSize;
  d.max_subgroup_size = size_control.maxSubgroupSize ? size_control.maxSubgroupSize
                                                     : subgroup.subgroupSize;
  d.max_workgroup_subgroups = size_control.maxComputeWorkgroupSubgroups;
  d.shared_memory_bytes = p.limits.maxComputeSharedMemorySize;
  d.storage_buffer_range = p.limits.maxStorageBufferRange;
  d.max_workgroup_count_x = p.limits.maxComputeWorkGroupCount[0];
  d.max_workgroup_size = p.limits.maxComputeWorkGroupInvocations;
  d.timestamp_period_ns = p.limits.timestampPeriod;
  d.compute_units = count_compute_units(physical);

  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(physical, &memory);
  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i)
    if (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      d.device_local_bytes = std::max<uint64_t>(d.device_local_bytes, memory.memoryHeaps[i].size);
  d.max_allocation_bytes = d.device_local_bytes;
  if (p.apiVersion >= VK_API_VERSION_1_1) {
    VkPhysicalDeviceMaintenance3Properties m3{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &m3};
    vkGetPhysicalDeviceProperties2(physical, &p2);
    d.max_allocation_bytes = m3.maxMemoryAllocationSize;
  }
  d.max_buffer_bytes = d.max_allocation_bytes;

  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  if (p.apiVersion >= VK_API_VERSION_1_3) f12.pNext = &f13;
  if (p.apiVersion >= VK_API_VERSION_1_2) vkGetPhysicalDeviceFeatures2(physical, &features);
  d.subgroup_size_control = f13.subgroupSizeControl && f13.computeFullSubgroups &&
                            (size_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
  // Buffers larger than one allocation: one buffer bound to several allocations on the queue
  // gpusort submits to (vulkan/buffer.cpp), so kernels still see one range of device addresses.
  const uint32_t family = compute_queue_family(physical);
  d.sparse_binding = features.features.sparseBinding && family != UINT32_MAX &&
                     family_binds_sparse(physical, family);
  if (d.sparse_binding)
    d.max_buffer_bytes =
        std::max(d.max_allocation_bytes,
                 std::min(d.device_local_bytes,
                          max_buffer_size(physical, p.apiVersion >= VK_API_VERSION_1_3)));

  std::string why;
  if (p.apiVersion < VK_API_VERSION_1_2) why += " Vulkan 1.2;";
  if (!f12.bufferDeviceAddress) why += " bufferDeviceAddress;";
  if (!features.features.shaderInt64) why += " shaderInt64;";
  const VkSubgroupFeatureFlags needed = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT |
                                        VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  if ((subgroup.supportedOperations & needed) != needed ||
      !(subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT))
    why += " subgroup basic/ballot/arithmetic in compute;";
  if (subgroup.subgroupSize < 4 || subgroup.subgroupSize > 128) why += " subgroup size 4..128;";
  if (family == UINT32_MAX) why += " a compute queue;";
  d.usable = why.empty();
  if (!why.empty()) d.unusable_why = "missing" + why;
  describe_cuda_kernels(physical, d);
  return d;
}

std::vector<DeviceInfo> Context::list_devices() {
  VkInstance instance = create_instance(false, false);
  std::vector<DeviceInfo> infos;
  try {
    auto devices = physical_devices(instance);
    for (uint32_t i = 0; i < devices.size(); ++i) infos.push_back(describe_device(devices[i], i));
  } catch (...) {
    vkDestroyInstance(instance, nullptr);
    throw;
  }
  vkDestroyInstance(instance, nullptr);
  return infos;
}

Context Context::create(const ContextOptions& options) {
  auto impl = std::make_shared<Impl>();
  bool validation = options.validation, sync_validation = options.synchronization_validation;
  if (const char* env = std::getenv("GPUSORT_VALIDATION")) {
    // Adds to the options; an "off" value leaves them as they are.
    const std::string v = lower(env);
    if (v == "1" || v == "true" || v == "yes" || v == "on") {
      validation = true;
    } else if (v == "sync") {
      validation = sync_validation = true;
    } else if (!(v.empty() || v == "0" || v == "false" || v == "no" || v == "off")) {
      throw Error("GPUSORT_VALIDATION='" + std::string(env) +
                  "' is not one of 1, true, yes, on, sync (the layer on; sync adds "
                  "synchronization checks) or 0, false, no, off");
    }
  }
  impl->instance = create_instance(validation, sync_validation);
  impl->owns_device = true;
  if (validation) {
    VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    info.pfnUserCallback = on_validation_message;
    info.pUserData = impl.get();
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(impl->instance, "vkCreateDebugUtilsMessengerEXT"));
    if (create) check(create(impl->instance, &info, nullptr, &impl->messenger),
                      "vkCreateDebugUtilsMessengerEXT");
  }

  auto devices = physical_devices(impl->instance);
  std::vector<DeviceInfo> infos;
  for (uint32_t i = 0; i < devices.size(); ++i) infos.push_back(describe_device(devices[i], i));
  std::string wanted = options.device, source;
  if (wanted.empty())
    if (const char* env = std::getenv("GPUSORT_DEVICE"))
      wanted = env, source = " (from GPUSORT_DEVICE)";
  size_t chosen = choose_device(infos, wanted, source);
  impl->physical = devices[chosen];
  impl->family = compute_queue_family(impl->physical);

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = impl->family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;

  // Enable what gpusort needs plus the optional features its shaders can use when present.
  VkPhysicalDeviceVulkan12Features have12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features have13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceFeatures2 have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &have12};
  bool vk13 = infos[chosen].api_version >= VK_API_VERSION_1_3;
  if (vk13) have12.pNext = &have13;
  vkGetPhysicalDeviceFeatures2(impl->physical, &have);

  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  features.features.shaderInt64 = VK_TRUE;
  f12.bufferDeviceAddress = VK_TRUE;
  f12.hostQueryReset = have12.hostQueryReset;
  f12.vulkanMemoryModel = have12.vulkanMemoryModel;
  f12.vulkanMemoryModelDeviceScope = have12.vulkanMemoryModelDeviceScope;
  f12.shaderBufferInt64Atomics = have12.shaderBufferInt64Atomics;
  f12.shaderSharedInt64Atomics = have12.shaderSharedInt64Atomics;
  f12.storageBuffer8BitAccess = have12.storageBuffer8BitAccess;
  f12.shaderInt8 = have12.shaderInt8;
  if (vk13) {
    f12.pNext = &f13;
    f13.subgroupSizeControl = have13.subgroupSizeControl;
    f13.computeFullSubgroups = have13.computeFullSubgroups;
    f13.maintenance4 = have13.maintenance4;
  }
  features.features.sparseBinding = infos[chosen].sparse_binding ? VK_TRUE : VK_FALSE;
  // Optional: importing the caller's host memory, so that the convenient face copies between
  // it and the device without a staging copy (host_transfer.cpp).
  std::vector<const char*> extensions;
  if (device_has_extension(impl->physical, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) {
    extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT host{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &host};
    vkGetPhysicalDeviceProperties2(impl->physical, &props);
    impl->host_import_alignment = std::max<uint64_t>(host.minImportedHostPointerAlignment, 1);
  }
  // Optional: importing memory exported by another API or process as an opaque file descriptor
  // (the distributed sort's device-to-device exchange imports CUDA allocations).
  if (device_has_extension(impl->physical, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME))
    extensions.push_back(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  // Onesweep's CUDA pass (src/vulkan/nvx.cpp) where the device and the build have it and the
  // Context's sorts may use it.
  const char* nvx_off_why = cuda_kernels_off_why(options.kernels);
  const bool nvx = infos[chosen].cuda_kernels && !nvx_off_why;
  if (nvx) extensions.push_back(VK_NVX_BINARY_IMPORT_EXTENSION_NAME);
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &features;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  device_info.enabledExtensionCount = uint32_t(extensions.size());
  device_info.ppEnabledExtensionNames = extensions.data();
  check(vkCreateDevice(impl->physical, &device_info, nullptr, &impl->device), "vkCreateDevice");
  vkGetDeviceQueue(impl->device, impl->family, 0, &impl->queue);
  impl->finish_setup();
  impl->info = infos[chosen];
  impl->setup_cuda_kernels(nvx_off_why);
  Context ctx;
  ctx.impl_ = std::move(impl);
  return ctx;
}

Context Context::wrap(VkInstance instance, VkPhysicalDevice physical_device, VkDevice device,
                      VkQueue queue, uint32_t queue_family_index) {
  if (!instance || !physical_device || !device || !queue)
    throw Error("Context::wrap: null Vulkan handle");
  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, families.data());
  if (queue_family_index >= family_count)
    throw Error("Context::wrap: queue family " + std::to_string(queue_family_index) +
                " does not exist (the physical device has " + std::to_string(family_count) +
                " queue families)");
  if (!(families[queue_family_index].queueFlags & VK_QUEUE_COMPUTE_BIT))
    throw Error("Context::wrap: queue family " + std::to_string(queue_family_index) +
                " has no compute capability");
  auto impl = std::make_shared<Impl>();
  impl->instance = instance;
  impl->physical = physical_device;
  impl->device = device;
  impl->queue = queue;
  impl->family = queue_family_index;
  impl->owns_device = false;
  auto devices = physical_devices(instance);
  uint32_t index = 0;
  for (uint32_t i = 0; i < devices.size(); ++i)
    if (devices[i] == physical_device) index = i;
  impl->info = describe_device(physical_device, index);
  if (!impl->info.usable) throw Error("Context::wrap: device " + impl->info.unusable_why);
  // Whether the caller's device enabled sparseBinding is not known: one allocation per buffer.
  impl->info.sparse_binding = false;
  impl->info.max_buffer_bytes = impl->info.max_allocation_bytes;
  impl->finish_setup();
  // The CUDA pass only where the caller enabled VK_NVX_binary_import: a device-level command of
  // an extension that is not enabled has no entry point (vkGetDeviceProcAddr returns null).
  impl->setup_cuda_kernels(vkGetDeviceProcAddr(device, "vkCmdCuLaunchKernelNVX")
                               ? nullptr
                               : VK_NVX_BINARY_IMPORT_EXTENSION_NAME
                           " is not enabled on the device (a wrapped device: the caller's choice)");
  Context ctx;
  ctx.impl_ = std::move(impl);
  return ctx;
}

void Context::Impl::finish_setup() {
  vkGetPhysicalDeviceMemoryProperties(physical, &memory);
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_constant_bytes};
  VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout.pushConstantRangeCount = 1;
  layout.pPushConstantRanges = &range;
  check(vkCreatePipelineLayout(device, &layout, nullptr, &pipeline_layout), "vkCreatePipelineLayout");
  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = family;
  check(vkCreateCommandPool(device, &pool, nullptr, &command_pool), "vkCreateCommandPool");
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vkCreateFence(device, &fence_info, nullptr, &fence), "vkCreateFence");
  VkQueryPoolCreateInfo query{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  query.queryType = VK_QUERY_TYPE_TIMESTAMP;
  query.queryCount = 2;
  check(vkCreateQueryPool(device, &query, nullptr, &timestamps), "vkCreateQueryPool");
}

Context::Impl::~Impl() {
  host_path_.reset();  // its buffers and command pool before the device
  if (device) {
    vkDeviceWaitIdle(device);
    destroy_cuda_kernels();
    for (auto& [key, p] : pipelines) vkDestroyPipeline(device, p, nullptr);
    for (auto& [name, m] : modules) vkDestroyShaderModule(device, m, nullptr);
    if (timestamps) vkDestroyQueryPool(device, timestamps, nullptr);
    if (fence) vkDestroyFence(device, fence, nullptr);
    if (command_pool) vkDestroyCommandPool(device, command_pool, nullptr);
    if (pipeline_layout) vkDestroyPipelineLayout(device, pipeline_layout, nullptr);
    if (owns_device) vkDestroyDevice(device, nullptr);
  }
  if (owns_device && instance) {
    if (messenger) {
      auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
      if (destroy) destroy(instance, messenger, nullptr);
    }
    vkDestroyInstance(instance, nullptr);
  }
}

VkPipeline Context::Impl::pipeline(Kernel kernel, const std::vector<uint32_t>& specialization) {
  std::lock_guard lock(pipeline_mutex);
  auto key = std::make_pair(kernel, specialization);
  if (auto it = pipelines.find(key); it != pipelines.end()) return it->second;
  VkShaderModule module;
  if (auto it = modules.find(kernel); it != modules.end()) {
    module = it->second;
  } else {
    auto code = embedded_shader(kernel);
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = code.size_bytes();
    info.pCode = code.data();
    check(vkCreateShaderModule(device, &info, nullptr, &module), "vkCreateShaderModule");
    modules.emplace(kernel, module);
  }
  std::vector<VkSpecializationMapEntry> entries;
  for (uint32_t i = 0; i < specialization.size(); ++i)
    entries.push_back({i, i * 4, 4});
  VkSpecializationInfo spec{uint32_t(entries.size()), entries.data(), specialization.size() * 4,
                            specialization.data()};
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = &spec;
  // Shaders rely on the subgroup size being the device's reported one and on full subgroups: where
  // the device allows it, pipelines ask for both. A required size caps the workgroup at that size
  // x maxComputeWorkgroupSubgroups (128 invocations on lavapipe with 4-wide subgroups, as on
  // 128-bit CPUs); a larger workgroup asks for full subgroups alone, which keeps the size only
  // where the device has one size. Every shader takes its workgroup size as workgroup_spec_id.
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo required{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  required.requiredSubgroupSize = this->info.subgroup_size;
  if (this->info.subgroup_size_control) {
    const uint64_t workgroup =
        specialization.size() > workgroup_spec_id ? specialization[workgroup_spec_id] : 0;
    const uint64_t max_workgroup =
        uint64_t(this->info.subgroup_size) * this->info.max_workgroup_subgroups;
    info.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    if (workgroup <= max_workgroup || this->info.max_workgroup_subgroups == 0)
      info.stage.pNext = &required;
    else if (this->info.min_subgroup_size != this->info.max_subgroup_size)
      throw Error(std::string(kernel_name(kernel)) + ": a workgroup of " +
                  std::to_string(workgroup) + " invocations is larger than the subgroup size " +
                  std::to_string(this->info.subgroup_size) + " x maxComputeWorkgroupSubgroups " +
                  std::to_string(this->info.max_workgroup_subgroups) +
                  ", and the device's subgroup size varies");
  }
  info.layout = pipeline_layout;
  VkPipeline pipeline;
  check(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline),
        ("vkCreateComputePipelines(" + std::string(kernel_name(kernel)) + ")").c_str());
  pipelines.emplace(std::move(key), pipeline);
  return pipeline;
}

size_t Context::Impl::pipeline_count() {
  std::lock_guard lock(pipeline_mutex);
  return pipelines.size();
}

void Context::Impl::submit(const std::function<void(VkCommandBuffer)>& record) {
  one_time_commands(record, true);
}

void Context::Impl::queue_submit(VkCommandBuffer cmd, VkFence fence) {
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  std::lock_guard lock(submit_mutex);
  check(vkQueueSubmit(queue, 1, &submit, fence), "vkQueueSubmit");
}

void Context::Impl::record_unsubmitted(const std::function<void(VkCommandBuffer)>& record) {
  one_time_commands(record, false);
}

void Context::Impl::one_time_commands(const std::function<void(VkCommandBuffer)>& record,
                                      bool run) {
  std::lock_guard lock(submit_mutex);
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = command_pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cmd;
  check(vkAllocateCommandBuffers(device, &alloc, &cmd), "vkAllocateCommandBuffers");
  struct FreeOnExit {
    Impl* self;
    VkCommandBuffer cmd;
    ~FreeOnExit() { vkFreeCommandBuffers(self->device, self->command_pool, 1, &cmd); }
  } free_on_exit{this, cmd};
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
  record(cmd);
  check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  if (!run) return;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  check(vkResetFences(device, 1, &fence), "vkResetFences");
  check(vkQueueSubmit(queue, 1, &submit, fence), "vkQueueSubmit");
  check(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

double Context::Impl::submit_timed(const std::function<void(VkCommandBuffer)>& record) {
  submit([&](VkCommandBuffer cmd) {
    vkCmdResetQueryPool(cmd, timestamps, 0, 2);
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps, 0);
    record(cmd);
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps, 1);
  });
  uint64_t ticks[2];
  check(vkGetQueryPoolResults(device, timestamps, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  return double(ticks[1] - ticks[0]) * info.timestamp_period_ns * 1e-6;
}

uint32_t Context::Impl::find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                                         VkMemoryPropertyFlags preferred) const {
  uint32_t fallback = UINT32_MAX;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    auto flags = memory.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (fallback == UINT32_MAX) fallback = i;
  }
  if (fallback == UINT32_MAX)
    throw Error("no Vulkan memory type fits the buffer", VK_ERROR_OUT_OF_DEVICE_MEMORY);
  return fallback;
}

VkDeviceAddress Context::Impl::address_of(VkBuffer buffer) const {
  VkBufferDeviceAddressInfo info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  info.buffer = buffer;
  return vkGetBufferDeviceAddress(device, &info);
}

const DeviceInfo& Context::device_info() const { return impl_->info; }
VkDevice Context::device() const { return impl_->device; }
VkPhysicalDevice Context::physical_device() const { return impl_->physical; }
VkQueue Context::queue() const { return impl_->queue; }
uint32_t Context::queue_family_index() const { return impl_->family; }
uint64_t Context::validation_messages() const { return impl_->validation_messages.load(); }

}  // namespace gpusort
