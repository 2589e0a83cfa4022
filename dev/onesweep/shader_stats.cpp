// Development tool: prints the driver's statistics (registers, shared memory, spills) for an
// embedded shader with given specialization constants, through
// VK_KHR_pipeline_executable_properties on its own device (the library's Context does not enable
// that extension).
//   shader_stats <shader> <spec0> <spec1> ...
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "../common/dev_vulkan.hpp"
#include "vulkan/shader_registry.hpp"

#define CHECK(x)                        \
  do {                                  \
    VkResult r = (x);                   \
    if (r != VK_SUCCESS) {              \
      printf("%s failed: %d\n", #x, r); \
      exit(1);                          \
    }                                   \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::optional<gpusort::Kernel> kernel = gpusort::find_kernel(argv[1]);
  if (!kernel) {
    fprintf(stderr, "shader_stats: error: no embedded kernel named %s\n", argv[1]);
    return 2;
  }
  std::vector<uint32_t> spec;
  for (int i = 2; i < argc; ++i) spec.push_back(strtoul(argv[i], nullptr, 0));
  const gpusort::dev::DevPhysical d = gpusort::dev::pick_dev_physical();
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  exec.pipelineExecutableInfo = VK_TRUE;
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                       &exec};
  f13.subgroupSizeControl = f13.computeFullSubgroups = VK_TRUE;
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13};
  f12.bufferDeviceAddress = f12.vulkanMemoryModel = f12.vulkanMemoryModelDeviceScope = VK_TRUE;
  f12.shaderBufferInt64Atomics = f12.shaderSharedInt64Atomics = VK_TRUE;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  features.features.shaderInt64 = VK_TRUE;
  const char* ext = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
  VkDevice device = gpusort::dev::create_dev_device(d, &features, &ext, 1);
  auto code = gpusort::embedded_shader(*kernel);
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = code.size_bytes();
  mi.pCode = code.data();
  VkShaderModule module;
  CHECK(vkCreateShaderModule(device, &mi, nullptr, &module));
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
  VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  li.pushConstantRangeCount = 1;
  li.pPushConstantRanges = &range;
  VkPipelineLayout layout;
  CHECK(vkCreatePipelineLayout(device, &li, nullptr, &layout));
  std::vector<VkSpecializationMapEntry> entries;
  for (uint32_t i = 0; i < spec.size(); ++i) entries.push_back({i, i * 4, 4});
  VkSpecializationInfo si{uint32_t(entries.size()), entries.data(), spec.size() * 4, spec.data()};
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo required{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  required.requiredSubgroupSize = 32;
  VkComputePipelineCreateInfo pi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pi.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  pi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, &required};
  pi.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  pi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pi.stage.module = module;
  pi.stage.pName = "main";
  pi.stage.pSpecializationInfo = &si;
  pi.layout = layout;
  VkPipeline pipeline;
  CHECK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pi, nullptr, &pipeline));
  auto getStats = (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(
      device, "vkGetPipelineExecutableStatisticsKHR");
  VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
  ei.pipeline = pipeline;
  uint32_t n = 0;
  CHECK(getStats(device, &ei, &n, nullptr));
  std::vector<VkPipelineExecutableStatisticKHR> stats(
      n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
  CHECK(getStats(device, &ei, &n, stats.data()));
  printf("%s", argv[1]);
  for (int i = 2; i < argc; ++i) printf(" %s", argv[i]);
  printf(":");
  for (auto& s : stats) {
    printf("  %s=", s.name);
    switch (s.format) {
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
        printf("%u", s.value.b32);
        break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
        printf("%lld", (long long)s.value.i64);
        break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
        printf("%llu", (unsigned long long)s.value.u64);
        break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
        printf("%g", s.value.f64);
        break;
      default:
        break;
    }
  }
  printf("\n");
  return 0;
}
