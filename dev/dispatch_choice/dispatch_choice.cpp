// Experiment: what does a dispatch cost that the GPU decides not to run?
// A hybrid sort that chooses on the GPU between two paths (say the small-array merge and
// Onesweep's passes) records both and leaves one idle; its price is what the idle path's
// dispatches still cost. This program times, in one command buffer after ~1 ms of warm-up
// copies, a real dispatch (a copy of 2^18 keys) followed by N more dispatches that do nothing,
// in four forms:
//   direct    : N direct dispatches of 1 workgroup that returns at once, compute barriers;
//   direct256 : the same with 256 workgroups (a sort's grid whose workgroups read "not me");
//   indirect0 : an indirect barrier after the copy, then N indirect dispatches of zero groups;
//   cond0     : the copy's barrier also to the conditional-rendering stage, then N dispatches of
//               256 workgroups inside a conditional-rendering block whose predicate is 0
//               (VK_EXT_conditional_rendering; skipped where the device lacks it);
// and, for scale, the same N dispatches running (indirect1: one group each; cond1: predicate 1).
// Built by dev/CMakeLists.txt (GPUSORT_BUILD_DEV_TOOLS) as build/dev/dispatch_choice.
// Run: dispatch_choice [runs=25] [warmup_copies=8]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../common/dev_vulkan.hpp"
#include "primitives/constants.h"
#include "primitives/push.h"
#include "vulkan/buffer.hpp"
#include "vulkan/recorder.hpp"

using namespace gpusort;

namespace {

using dev::check_vk;

bool has_extension(VkPhysicalDevice physical, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> props(count);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, props.data());
  for (const auto& p : props)
    if (std::strcmp(p.extensionName, name) == 0) return true;
  return false;
}

// A device with everything the physical device offers plus VK_EXT_conditional_rendering where
// it exists; prefers a discrete GPU (GPUSORT_DEVICE is not consulted here).
Context make_context(bool& conditional) {
  const dev::DevPhysical d = dev::pick_dev_physical();
  VkInstance instance = d.instance;
  VkPhysicalDevice physical = d.physical;
  const uint32_t family = d.family;

  conditional = has_extension(physical, VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME);
  VkPhysicalDeviceConditionalRenderingFeaturesEXT cond{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_CONDITIONAL_RENDERING_FEATURES_EXT};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                       conditional ? &cond : nullptr};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  vkGetPhysicalDeviceFeatures2(physical, &features);  // everything the device has
  conditional = conditional && cond.conditionalRendering;
  const char* extensions[] = {VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME};
  VkDevice device = dev::create_dev_device(d, &features, extensions, conditional ? 1 : 0);
  VkQueue queue;
  vkGetDeviceQueue(device, family, 0, &queue);
  return Context::wrap(instance, physical, device, queue, family);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

enum class Form { direct, direct256, indirect0, indirect1, cond0, cond1 };
const char* form_name(Form f) {
  switch (f) {
    case Form::direct:
      return "direct (1 group, returns)";
    case Form::direct256:
      return "direct256 (256 groups, return)";
    case Form::indirect0:
      return "indirect0 (zero groups)";
    case Form::indirect1:
      return "indirect1 (1 group, returns)";
    case Form::cond0:
      return "cond0 (256 groups, predicate 0)";
    case Form::cond1:
      return "cond1 (256 groups, predicate 1)";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 25;
  const int warmup_copies = argc > 2 ? std::atoi(argv[2]) : 8;
  bool conditional = false;
  Context ctx = make_context(conditional);
  auto& impl = ctx.impl();
  std::printf("device: %s (%s), conditional rendering: %s\n", impl.info.name.c_str(),
              impl.info.driver.c_str(), conditional ? "yes" : "no");
  auto begin_conditional =
      conditional ? reinterpret_cast<PFN_vkCmdBeginConditionalRenderingEXT>(
                        vkGetDeviceProcAddr(impl.device, "vkCmdBeginConditionalRenderingEXT"))
                  : nullptr;
  auto end_conditional =
      conditional ? reinterpret_cast<PFN_vkCmdEndConditionalRenderingEXT>(
                        vkGetDeviceProcAddr(impl.device, "vkCmdEndConditionalRenderingEXT"))
                  : nullptr;

  VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  query_info.queryCount = 2;
  VkQueryPool queries;
  check_vk(vkCreateQueryPool(impl.device, &query_info, nullptr, &queries), "vkCreateQueryPool");

  constexpr uint64_t warm_words = uint64_t(1) << 25;  // 128 MiB per warm-up copy
  constexpr uint32_t keys = 1u << 18;
  DeviceBuffer warm_src(impl, warm_words * 4, MemoryKind::device_local);
  DeviceBuffer warm_dst(impl, warm_words * 4, MemoryKind::device_local);
  DeviceBuffer key_src(impl, keys * 4, MemoryKind::device_local);
  DeviceBuffer key_dst(impl, keys * 4, MemoryKind::device_local);
  // Indirect commands (16 of each kind) and the predicates, written by transfers before the
  // timestamps (in a sort, the plan's last workgroup writes them).
  constexpr uint32_t max_n = 16;
  // Words [0, 3 max_n): zero-group commands; [3 max_n, 6 max_n): one-group commands; then the
  // predicates 0 and 1.
  // A raw buffer: DeviceBuffer has no conditional-rendering usage. Host-visible, written once.
  VkBuffer control;
  VkDeviceMemory control_memory;
  {
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = (6 * max_n + 2) * 4;
    bi.usage = VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
               (conditional ? VK_BUFFER_USAGE_CONDITIONAL_RENDERING_BIT_EXT : 0);
    check_vk(vkCreateBuffer(impl.device, &bi, nullptr, &control), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(impl.device, control, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(impl.physical, &mp);
    uint32_t type = 0;
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    while (type < mp.memoryTypeCount && !((req.memoryTypeBits >> type & 1) &&
                                          (mp.memoryTypes[type].propertyFlags & want) == want))
      ++type;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    check_vk(vkAllocateMemory(impl.device, &ai, nullptr, &control_memory), "vkAllocateMemory");
    check_vk(vkBindBufferMemory(impl.device, control, control_memory, 0), "vkBindBufferMemory");
    std::vector<uint32_t> words(6 * max_n + 2, 0);
    for (uint32_t i = 0; i < max_n; ++i) words[3 * i + 1] = 1, words[3 * i + 2] = 1;  // (0, 1, 1)
    for (uint32_t i = max_n; i < 2 * max_n; ++i)
      words[3 * i] = words[3 * i + 1] = words[3 * i + 2] = 1;
    words[6 * max_n + 1] = 1;
    void* mapped;
    check_vk(vkMapMemory(impl.device, control_memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
    std::memcpy(mapped, words.data(), words.size() * 4);
    vkUnmapMemory(impl.device, control_memory);
  }
  const VkDeviceSize predicate0 = 6 * max_n * 4, predicate1 = predicate0 + 4;

  auto time_form = [&](Form form, uint32_t extra) -> double {
    if ((form == Form::cond0 || form == Form::cond1) && !conditional) return -1;
    std::vector<double> times;
    for (int r = 0; r < runs + 3; ++r) {
      impl.submit([&](VkCommandBuffer cmd) {
        vkCmdResetQueryPool(cmd, queries, 0, 2);
        Recorder rec(impl, cmd);
        for (int i = 0; i < warmup_copies; ++i)
          rec.dispatch(Kernel::copy_elements, spec_constants(CopyElementsSpec{256, 1}), 4096,
                       CopyElementsPush{warm_src.address(), warm_dst.address(), 0,
                                        uint32_t(warm_words), 4096});
        Recorder::full_barrier(cmd);
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 0);
        // The real work: copy 2^18 keys (256 workgroups of 256, grid-stride x4).
        rec.dispatch(Kernel::copy_elements, spec_constants(CopyElementsSpec{256, 1}), 256,
                     CopyElementsPush{key_src.address(), key_dst.address(), 0, keys, 256});
        if (extra == 0) {
          rec.compute_barrier();
        } else if (form == Form::indirect0 || form == Form::indirect1) {
          rec.indirect_barrier();
        } else if (form == Form::cond0 || form == Form::cond1) {
          VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
          b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
          b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                            VK_ACCESS_CONDITIONAL_RENDERING_READ_BIT_EXT;
          vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
                                   VK_PIPELINE_STAGE_CONDITIONAL_RENDERING_BIT_EXT,
                               0, 1, &b, 0, nullptr, 0, nullptr);
        } else {
          rec.compute_barrier();
        }
        if (extra && (form == Form::cond0 || form == Form::cond1)) {
          VkConditionalRenderingBeginInfoEXT info{
              VK_STRUCTURE_TYPE_CONDITIONAL_RENDERING_BEGIN_INFO_EXT};
          info.buffer = control;
          info.offset = form == Form::cond0 ? predicate0 : predicate1;
          begin_conditional(cmd, &info);
        }
        for (uint32_t d = 0; d < extra; ++d) {
          // Every extra dispatch copies nothing (n = 0): its workgroups return at once.
          CopyElementsPush nothing{key_src.address(), key_dst.address(), 0, 0, 256};
          switch (form) {
            case Form::direct:
              nothing.group_count = 1;
              rec.dispatch(Kernel::copy_elements, spec_constants(CopyElementsSpec{256, 1}), 1,
                           nothing);
              break;
            case Form::direct256:
            case Form::cond0:
            case Form::cond1:
              rec.dispatch(Kernel::copy_elements, spec_constants(CopyElementsSpec{256, 1}), 256,
                           nothing);
              break;
            case Form::indirect0:
              rec.dispatch_indirect(Kernel::copy_elements, spec_constants(CopyElementsSpec{256, 1}),
                                    control, 12 * d, nothing);
              break;
            case Form::indirect1:
              nothing.group_count = 1;
              rec.dispatch_indirect(Kernel::copy_elements, spec_constants(CopyElementsSpec{256, 1}),
                                    control, 12 * (max_n + d), nothing);
              break;
          }
          rec.compute_barrier();
        }
        if (extra && (form == Form::cond0 || form == Form::cond1)) end_conditional(cmd);
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
      });
      uint64_t ticks[2];
      vkGetQueryPoolResults(impl.device, queries, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t),
                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
      if (r >= 3)
        times.push_back(double(ticks[1] - ticks[0]) * impl.info.timestamp_period_ns * 1e-3);
    }
    return median(times);
  };

  const uint32_t extras[] = {0, 1, 3, 6, 9};
  std::printf(
      "\ncopy 2^18 u32 keys, then N dispatches that do nothing: median us over %d runs\n%-34s",
      runs, "form");
  for (uint32_t e : extras) std::printf(" %8s", ("N=" + std::to_string(e)).c_str());
  std::printf("   us per extra (N=9)\n");
  for (Form form : {Form::direct, Form::direct256, Form::indirect0, Form::indirect1, Form::cond0,
                    Form::cond1}) {
    std::printf("%-34s", form_name(form));
    double base = 0, last = 0;
    for (uint32_t e : extras) {
      double t = time_form(form, e);
      if (e == 0) base = t;
      last = t;
      if (t < 0)
        std::printf(" %8s", "-");
      else
        std::printf(" %8.2f", t);
      std::fflush(stdout);
    }
    if (last >= 0) std::printf("   %.2f", (last - base) / 9);
    std::printf("\n");
  }
  // N = 0 closes with a compute barrier in every form, so N = 1 of the indirect and conditional
  // forms also holds their first barrier's extra cost.
  return 0;
}
