// nvx_carveout: how many blocks share an SM when a CUDA kernel is launched through
// VK_NVX_binary_import, by the block's shared memory, alone and after (or beside) SPIR-V
// dispatches with large shared memory in the same command buffer; and the same count for SPIR-V
// workgroups. Tells whether an NVX launch's shared-memory carveout (48 KiB per SM when launched
// alone: docs/design/onesweep.md, "The CUDA laboratory") follows the Vulkan work around it, or
// what the cubin asks for: a minimum of blocks per SM in the launch bounds, two-block clusters.
//
//   nvx_carveout <residency.cubin> <residency.spv>
//
// Each step writes (SM, start, end) per block into its own region of one host-visible buffer;
// the most blocks seen at once on one SM is printed per step.
#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS)
    throw std::runtime_error(std::string(what) + ": VkResult " + std::to_string(r));
}
std::vector<char> load(const char* path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(std::string("cannot read ") + path);
  return {std::istreambuf_iterator<char>(f), {}};
}

constexpr uint32_t kThreads = 256;
constexpr uint32_t kBlocksPerSm = 8;  // more than fit: the most resident at once is seen
constexpr uint32_t kSpinNs = 100000;

struct Step {
  enum Kind { kNvx, kSpirv, kBarrier } kind;
  uint32_t kib = 0;      // shared memory of the block (NVX: a res_static_<kib>, or dynamic)
  bool dynamic = false;  // NVX: res_dynamic with kib KiB of sharedMemBytes
  std::string name;      // NVX: another kernel of residency.cu with kib KiB of static memory
};

class Probe {
 public:
  Probe(const char* cubin_path, const char* spv_path) {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    check(vkCreateInstance(&ici, nullptr, &instance_), "vkCreateInstance");
    uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance_, &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    vkEnumeratePhysicalDevices(instance_, &count, devices.data());
    for (VkPhysicalDevice d : devices) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(d, &p);
      if (p.vendorID == 0x10de) {
        physical_ = d;
        std::printf("device: %s, driver %u.%u\n", p.deviceName, p.driverVersion >> 22,
                    (p.driverVersion >> 14) & 0xff);
        break;
      }
    }
    if (!physical_) throw std::runtime_error("no NVIDIA Vulkan device");
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sm};
    vkGetPhysicalDeviceProperties2(physical_, &p2);
    sms_ = sm.shaderSMCount;
    std::printf("SMs %u, warps per SM %u, maxComputeSharedMemorySize %u\n", sm.shaderSMCount,
                sm.shaderWarpsPerSM, p2.properties.limits.maxComputeSharedMemorySize);

    uint32_t qc = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &qc, nullptr);
    std::vector<VkQueueFamilyProperties> qp(qc);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &qc, qp.data());
    while (!(qp[family_].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++family_;
    float priority = 1;
    VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qi.queueFamilyIndex = family_;
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    VkPhysicalDeviceShaderClockFeaturesKHR clock{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
    clock.shaderDeviceClock = VK_TRUE;
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                         &clock};
    f12.bufferDeviceAddress = VK_TRUE;
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
    f2.features.shaderInt64 = VK_TRUE;
    const char* extensions[] = {"VK_NVX_binary_import", "VK_KHR_shader_clock",
                                "VK_NV_shader_sm_builtins"};
    VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2};
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    di.enabledExtensionCount = 3;
    di.ppEnabledExtensionNames = extensions;
    check(vkCreateDevice(physical_, &di, nullptr, &device_), "vkCreateDevice");
    vkGetDeviceQueue(device_, family_, 0, &queue_);
    create_module_ = reinterpret_cast<PFN_vkCreateCuModuleNVX>(
        vkGetDeviceProcAddr(device_, "vkCreateCuModuleNVX"));
    create_function_ = reinterpret_cast<PFN_vkCreateCuFunctionNVX>(
        vkGetDeviceProcAddr(device_, "vkCreateCuFunctionNVX"));
    launch_ = reinterpret_cast<PFN_vkCmdCuLaunchKernelNVX>(
        vkGetDeviceProcAddr(device_, "vkCmdCuLaunchKernelNVX"));

    const std::vector<char> cubin = load(cubin_path);
    VkCuModuleCreateInfoNVX mi{VK_STRUCTURE_TYPE_CU_MODULE_CREATE_INFO_NVX};
    mi.dataSize = cubin.size();
    mi.pData = cubin.data();
    check(create_module_(device_, &mi, nullptr, &module_), "vkCreateCuModuleNVX");
    spirv_ = load(spv_path);

    // One buffer for every step's records.
    capacity_ = 64 * sms_ * kBlocksPerSm * 3;
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = capacity_ * 8;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    check(vkCreateBuffer(device_, &bi, nullptr, &buffer_), "vkCreateBuffer");
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(device_, buffer_, &mr);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(physical_, &mp);
    uint32_t type = 0;
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    while (
        !((mr.memoryTypeBits >> type & 1) && (mp.memoryTypes[type].propertyFlags & want) == want))
      ++type;
    VkMemoryAllocateFlagsInfo fi{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    fi.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &fi};
    ai.allocationSize = mr.size;
    ai.memoryTypeIndex = type;
    check(vkAllocateMemory(device_, &ai, nullptr, &memory_), "vkAllocateMemory");
    check(vkBindBufferMemory(device_, buffer_, memory_, 0), "vkBindBufferMemory");
    check(vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, reinterpret_cast<void**>(&host_)),
          "vkMapMemory");
    VkBufferDeviceAddressInfo da{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    da.buffer = buffer_;
    address_ = vkGetBufferDeviceAddress(device_, &da);

    VkDescriptorSetLayoutBinding binding{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                         VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dl.bindingCount = 1;
    dl.pBindings = &binding;
    check(vkCreateDescriptorSetLayout(device_, &dl, nullptr, &set_layout_), "set layout");
    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
    VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &set_layout_;
    pl.pushConstantRangeCount = 1;
    pl.pPushConstantRanges = &push;
    check(vkCreatePipelineLayout(device_, &pl, nullptr, &pipeline_layout_), "pipeline layout");
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 64};
    VkDescriptorPoolCreateInfo dp{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dp.maxSets = 64;
    dp.poolSizeCount = 1;
    dp.pPoolSizes = &ps;
    check(vkCreateDescriptorPool(device_, &dp, nullptr, &descriptor_pool_), "descriptor pool");
    VkCommandPoolCreateInfo ci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    ci.queueFamilyIndex = family_;
    ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    check(vkCreateCommandPool(device_, &ci, nullptr, &pool_), "command pool");
  }

  uint32_t sms() const { return sms_; }

  // Records the steps in one command buffer, runs it, returns the most blocks at once on one SM
  // for each NVX or SPIR-V step ("" for barriers) as text.
  std::string run(const std::vector<Step>& steps) {
    VkCommandBufferAllocateInfo ca{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ca.commandPool = pool_;
    ca.commandBufferCount = 1;
    VkCommandBuffer cb;
    check(vkAllocateCommandBuffers(device_, &ca, &cb), "allocate command buffer");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    check(vkBeginCommandBuffer(cb, &begin), "begin");
    std::memset(host_, 0, capacity_ * 8);
    std::vector<std::pair<size_t, uint32_t>> regions;  // (first record, blocks) per step
    size_t next = 0;
    const uint32_t blocks = sms_ * kBlocksPerSm;
    for (const Step& s : steps) {
      if (s.kind == Step::kBarrier) {
        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                             VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
        regions.push_back({0, 0});
        continue;
      }
      if ((next + blocks) * 3 > capacity_) throw std::runtime_error("too many steps");
      regions.push_back({next, blocks});
      if (s.kind == Step::kNvx) {
        const std::string name = !s.name.empty() ? s.name
                                 : s.dynamic     ? std::string("res_dynamic")
                                                 : "res_static_" + std::to_string(s.kib);
        VkCuFunctionNVX fn = function(name);
        void* out = reinterpret_cast<void*>(address_ + next * 3 * 8);
        uint32_t spin = kSpinNs;
        const void* params[] = {&out, &spin};
        VkCuLaunchInfoNVX li{VK_STRUCTURE_TYPE_CU_LAUNCH_INFO_NVX};
        li.function = fn;
        li.gridDimX = blocks;
        li.gridDimY = li.gridDimZ = 1;
        li.blockDimX = kThreads;
        li.blockDimY = li.blockDimZ = 1;
        li.sharedMemBytes = s.dynamic ? s.kib * 1024 : 0;
        li.paramCount = 2;
        li.pParams = params;
        launch_(cb, &li);
      } else {
        VkPipeline pipeline = spirv_pipeline(s.kib);
        VkDescriptorSet set = descriptor_set(next * 3 * 8, size_t(blocks) * 3 * 8);
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout_, 0, 1, &set, 0,
                                nullptr);
        uint32_t spin = kSpinNs;
        vkCmdPushConstants(cb, pipeline_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &spin);
        vkCmdDispatch(cb, blocks, 1, 1);
      }
      next += blocks;
    }
    check(vkEndCommandBuffer(cb), "end");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    check(vkQueueSubmit(queue_, 1, &si, VK_NULL_HANDLE), "submit");
    check(vkQueueWaitIdle(queue_), "wait");
    vkFreeCommandBuffers(device_, pool_, 1, &cb);

    std::string text;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].kind == Step::kBarrier) continue;
      text += (text.empty() ? "" : ", ") + describe(steps[i]) + ": " +
              most_at_once(regions[i].first, regions[i].second);
    }
    // Steps side by side without a barrier: the most blocks of all of them at once on one SM.
    const bool barrier = std::any_of(steps.begin(), steps.end(),
                                     [](const Step& s) { return s.kind == Step::kBarrier; });
    if (!barrier && steps.size() > 1) text += "; together: " + most_at_once(0, uint32_t(next));
    return text;
  }

  // Most blocks at once on one SM over the records [first, first + blocks) (several regions
  // joined when given), with the median block's duration in microseconds.
  std::string most_at_once(size_t first, uint32_t blocks) {
    std::map<uint32_t, std::vector<std::pair<uint64_t, int>>> events;
    std::vector<uint64_t> durations;
    bool lost = false, unwritten = false;
    for (uint32_t b = 0; b < blocks; ++b) {
      const uint64_t* r = host_ + (first + b) * 3;
      if (r[1] == 0 && r[2] == 0) unwritten = true;
      if (r[0] >> 40) lost = true;
      events[uint32_t(r[0] & 0xffff)].push_back({r[1], 1});
      events[uint32_t(r[0] & 0xffff)].push_back({r[2], -1});
      durations.push_back(r[2] - r[1]);
    }
    uint32_t most = 0;
    for (auto& [sm, e] : events) {
      std::sort(e.begin(), e.end(), [](auto& x, auto& y) {
        return x.first != y.first ? x.first < y.first : x.second < y.second;
      });
      int now = 0;
      for (auto& [t, d] : e) most = std::max<uint32_t>(most, uint32_t(now += d));
    }
    std::sort(durations.begin(), durations.end());
    char buf[160];
    std::snprintf(buf, sizeof buf, "%u per SM (%zu SMs, block %.0f us)%s%s", most, events.size(),
                  durations.empty() ? 0.0 : durations[durations.size() / 2] / 1000.0,
                  lost ? " SHARED MEMORY CHECK FAILED" : "", unwritten ? " UNWRITTEN" : "");
    return buf;
  }

  static std::string describe(const Step& s) {
    return std::string(s.kind == Step::kNvx ? "nvx " : "spirv ") + std::to_string(s.kib) + " KiB" +
           (s.dynamic ? " dynamic" : "") + (s.name.empty() ? "" : " (" + s.name + ")");
  }

 private:
  VkCuFunctionNVX function(const std::string& name) {
    auto it = functions_.find(name);
    if (it != functions_.end()) return it->second;
    VkCuFunctionCreateInfoNVX fi{VK_STRUCTURE_TYPE_CU_FUNCTION_CREATE_INFO_NVX};
    fi.module = module_;
    fi.pName = name.c_str();
    VkCuFunctionNVX fn;
    check(create_function_(device_, &fi, nullptr, &fn), "vkCreateCuFunctionNVX");
    functions_[name] = fn;
    return fn;
  }
  VkPipeline spirv_pipeline(uint32_t kib) {
    auto it = pipelines_.find(kib);
    if (it != pipelines_.end()) return it->second;
    VkShaderModuleCreateInfo si{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    si.codeSize = spirv_.size();
    si.pCode = reinterpret_cast<const uint32_t*>(spirv_.data());
    VkShaderModule sm;
    check(vkCreateShaderModule(device_, &si, nullptr, &sm), "shader module");
    const uint32_t words = kib * 256;
    VkSpecializationMapEntry entry{0, 0, 4};
    VkSpecializationInfo spec{1, &entry, 4, &words};
    VkComputePipelineCreateInfo pi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    pi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pi.stage.module = sm;
    pi.stage.pName = "main";
    pi.stage.pSpecializationInfo = &spec;
    pi.layout = pipeline_layout_;
    VkPipeline p;
    check(vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &pi, nullptr, &p), "pipeline");
    vkDestroyShaderModule(device_, sm, nullptr);
    pipelines_[kib] = p;
    return p;
  }
  VkDescriptorSet descriptor_set(size_t offset, size_t bytes) {
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = descriptor_pool_;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &set_layout_;
    VkDescriptorSet set;
    check(vkAllocateDescriptorSets(device_, &ai, &set), "descriptor set");
    VkDescriptorBufferInfo b{buffer_, offset, bytes};
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &b;
    vkUpdateDescriptorSets(device_, 1, &w, 0, nullptr);
    return set;
  }

  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t family_ = 0, sms_ = 0;
  PFN_vkCreateCuModuleNVX create_module_ = nullptr;
  PFN_vkCreateCuFunctionNVX create_function_ = nullptr;
  PFN_vkCmdCuLaunchKernelNVX launch_ = nullptr;
  VkCuModuleNVX module_ = VK_NULL_HANDLE;
  std::map<std::string, VkCuFunctionNVX> functions_;
  std::map<uint32_t, VkPipeline> pipelines_;
  std::vector<char> spirv_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceAddress address_ = 0;
  uint64_t* host_ = nullptr;
  size_t capacity_ = 0;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: nvx_carveout <residency.cubin> <residency.spv>\n");
    return 2;
  }
  try {
    Probe probe(argv[1], argv[2]);
    using S = Step;
    const uint32_t all_kib[] = {8, 12, 16, 20, 24, 32, 40};
    std::printf("alone, one step a command buffer:\n");
    for (uint32_t kib : all_kib) std::printf("  %s\n", probe.run({S{S::kNvx, kib}}).c_str());
    for (uint32_t kib : all_kib) std::printf("  %s\n", probe.run({S{S::kSpirv, kib}}).c_str());
    std::printf("  %s\n", probe.run({S{S::kSpirv, 48}}).c_str());
    std::printf("after a SPIR-V dispatch, a barrier between, one command buffer:\n");
    for (uint32_t big : {24u, 32u, 48u})
      for (uint32_t kib : {16u, 20u, 24u})
        std::printf("  %s\n",
                    probe.run({S{S::kSpirv, big}, S{S::kBarrier}, S{S::kNvx, kib}}).c_str());
    std::printf("before a SPIR-V dispatch, a barrier between:\n");
    std::printf("  %s\n", probe.run({S{S::kNvx, 16}, S{S::kBarrier}, S{S::kSpirv, 24}}).c_str());
    std::printf("side by side, no barrier (SPIR-V first):\n");
    std::printf("  %s\n", probe.run({S{S::kSpirv, 24}, S{S::kNvx, 16}}).c_str());
    std::printf("  %s\n", probe.run({S{S::kSpirv, 32}, S{S::kNvx, 24}}).c_str());
    std::printf("NVX with dynamic shared memory:\n");
    for (uint32_t kib : {8u, 16u, 20u, 24u})
      std::printf("  %s\n", probe.run({S{S::kNvx, kib, true}}).c_str());
    std::printf("NVX with a minimum of blocks per SM in the launch bounds:\n");
    std::printf("  %s\n", probe.run({S{S::kNvx, 24, false, "res_min2_24"}}).c_str());
    std::printf("  %s\n", probe.run({S{S::kNvx, 32, false, "res_min2_32"}}).c_str());
    std::printf("  %s\n", probe.run({S{S::kNvx, 20, false, "res_min3_20"}}).c_str());
    std::printf(
        "NVX with two-block clusters (last: a launch the driver refuses may lose the device):\n");
    for (uint32_t kib : {16u, 24u, 32u}) {
      std::fflush(stdout);
      std::printf(
          "  %s\n",
          probe.run({S{S::kNvx, kib, false, "res_cluster2_" + std::to_string(kib)}}).c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nvx_carveout: %s\n", e.what());
    return 1;
  }
  return 0;
}
