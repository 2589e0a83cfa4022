// Our kernels (onesweep.cu, embedded cubin or PTX) loaded with vkCreateCuModuleNVX /
// vkCreateCuFunctionNVX and launched with vkCmdCuLaunchKernelNVX in one Vulkan command buffer,
// on device-local buffers passed by their buffer device addresses. The command buffer, recorded
// once per input and submitted for every run:
//   restore the input (copy from the pristine buffers), barrier,
//   timestamp, fill the state block with zeros, barrier, histogram, barrier, pass 0, barrier, ...,
//   last pass, timestamp.
#include <vulkan/vulkan.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "embedded.hpp"
#include "sorter.hpp"

namespace nvx_onesweep {
namespace {

void check(VkResult result, const char* what) {
  if (result != VK_SUCCESS)
    throw Error(std::string(what) + " failed (VkResult " + std::to_string(int(result)) + ")");
}

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  VkDeviceAddress address = 0;
  void* mapped = nullptr;
};

class NvxSorter final : public Sorter {
 public:
  NvxSorter(const uint8_t* device_uuid, const KernelSettings& settings, uint32_t sm_count,
            std::string& description)
      : settings_(settings), sm_count_(sm_count) {
    create_device(device_uuid, description);
    load_module();
  }
  ~NvxSorter() override {
    release();
    if (device_ == VK_NULL_HANDLE) return;
    vkDeviceWaitIdle(device_);
    for (auto& [name, function] : functions_) destroy_function_(device_, function, nullptr);
    if (module_ != VK_NULL_HANDLE) destroy_module_(device_, module_, nullptr);
    if (query_pool_ != VK_NULL_HANDLE) vkDestroyQueryPool(device_, query_pool_, nullptr);
    if (fence_ != VK_NULL_HANDLE) vkDestroyFence(device_, fence_, nullptr);
    if (pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
    vkDestroyInstance(instance_, nullptr);
  }
  NvxSorter(const NvxSorter&) = delete;
  NvxSorter& operator=(const NvxSorter&) = delete;

  std::string name() const override { return settings_.ptx ? "nvx-ptx" : "nvx"; }

  void prepare(KeyType type, uint32_t n, const void* keys, const uint32_t* values) override {
    release();
    type_ = type;
    plan_ = make_plan(type, n, settings_, sm_count_);
    key_size_ = VkDeviceSize(n) * key_bytes(type);
    value_size_ = has_values(type) ? VkDeviceSize(n) * 4 : 0;
    keys_a_ = create_buffer(key_size_, false);
    keys_b_ = create_buffer(key_size_, false);
    pristine_keys_ = create_buffer(key_size_, false);
    if (value_size_) {
      values_a_ = create_buffer(value_size_, false);
      values_b_ = create_buffer(value_size_, false);
      pristine_values_ = create_buffer(value_size_, false);
    }
    state_ = create_buffer(plan_.state_bytes, false);
    staging_ = create_buffer(key_size_ + value_size_ + kControlWords * 4, true);

    std::memcpy(staging_.mapped, keys, key_size_);
    if (value_size_)
      std::memcpy(static_cast<char*>(staging_.mapped) + key_size_, values, value_size_);
    VkCommandBuffer upload = begin_commands();
    copy(upload, staging_, 0, pristine_keys_, 0, key_size_);
    if (value_size_) copy(upload, staging_, key_size_, pristine_values_, 0, value_size_);
    check(vkEndCommandBuffer(upload), "vkEndCommandBuffer");
    submit_and_wait(upload);
    vkFreeCommandBuffers(device_, pool_, 1, &upload);

    record_sort();
    record_readback();
  }

  double sort_once() override {
    vkResetQueryPool(device_, query_pool_, 0, 2);
    submit_and_wait(sort_commands_);
    uint64_t stamps[2] = {};
    check(
        vkGetQueryPoolResults(device_, query_pool_, 0, 2, sizeof(stamps), stamps, sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
    const uint64_t mask =
        timestamp_bits_ >= 64 ? ~uint64_t(0) : (uint64_t(1) << timestamp_bits_) - 1;
    return double((stamps[1] - stamps[0]) & mask) * timestamp_period_ns_ * 1e-6;
  }

  void read_output(void* keys, uint32_t* values) override {
    submit_and_wait(readback_commands_);
    std::memcpy(keys, staging_.mapped, key_size_);
    if (value_size_ && values)
      std::memcpy(values, static_cast<char*>(staging_.mapped) + key_size_, value_size_);
    uint32_t control[kControlWords];
    std::memcpy(control, static_cast<char*>(staging_.mapped) + key_size_ + value_size_,
                sizeof(control));
    fallbacks_ = control[kControlFallbacks];
  }

  uint32_t fallbacks() override { return fallbacks_; }

  const std::vector<KernelLaunch>& launches() const override { return launches_; }

  // The sort's own recipe (restore, fill, launches with the same barriers), recorded afresh for
  // `launches`, then every buffer copied to a staging buffer of its own.
  Snapshot run_launches(const std::vector<KernelLaunch>& launches) override {
    Buffer staging = create_buffer(2 * key_size_ + 2 * value_size_ + plan_.state_bytes, true);
    std::vector<KernelLaunch> kept = launches;
    std::vector<std::vector<const void*>> params(kept.size());
    VkCommandBuffer cb = begin_commands();
    barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
            VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    copy(cb, pristine_keys_, 0, keys_a_, 0, key_size_);
    vkCmdFillBuffer(cb, keys_b_.buffer, 0, VK_WHOLE_SIZE, 0);
    if (value_size_) {
      copy(cb, pristine_values_, 0, values_a_, 0, value_size_);
      vkCmdFillBuffer(cb, values_b_.buffer, 0, VK_WHOLE_SIZE, 0);
    }
    vkCmdFillBuffer(cb, state_.buffer, 0, plan_.state_bytes, 0);
    kernel_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    for (size_t i = 0; i < kept.size(); ++i) {
      params[i].resize(kept[i].args.size());
      for (size_t a = 0; a < kept[i].args.size(); ++a) params[i][a] = &kept[i].args[a];
      record_launch(cb, kept[i], params[i]);
      kernel_barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
    }
    barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
            VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    VkDeviceSize at = 0;
    for (const Buffer* b : {&keys_a_, &keys_b_, &values_a_, &values_b_}) {
      const VkDeviceSize size = b == &keys_a_ || b == &keys_b_ ? key_size_ : value_size_;
      if (size) copy(cb, *b, 0, staging, at, size);
      at += size;
    }
    copy(cb, state_, 0, staging, at, plan_.state_bytes);
    barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    try {
      submit_and_wait(cb);
    } catch (...) {
      vkFreeCommandBuffers(device_, pool_, 1, &cb);
      destroy(staging);
      throw;
    }
    vkFreeCommandBuffers(device_, pool_, 1, &cb);
    Snapshot out;
    const uint8_t* p = static_cast<const uint8_t*>(staging.mapped);
    for (std::vector<uint8_t>* v : {&out.keys_a, &out.keys_b, &out.values_a, &out.values_b}) {
      const VkDeviceSize size = v == &out.keys_a || v == &out.keys_b ? key_size_ : value_size_;
      v->assign(p, p + size);
      p += size;
    }
    out.state.resize(plan_.state_bytes / 4);
    std::memcpy(out.state.data(), p, plan_.state_bytes);
    destroy(staging);
    return out;
  }

  void release() override {
    if (device_ == VK_NULL_HANDLE) return;
    vkDeviceWaitIdle(device_);
    for (VkCommandBuffer* cb : {&sort_commands_, &readback_commands_})
      if (*cb != VK_NULL_HANDLE) {
        vkFreeCommandBuffers(device_, pool_, 1, cb);
        *cb = VK_NULL_HANDLE;
      }
    launch_params_.clear();
    launches_.clear();
    for (Buffer* b : {&keys_a_, &keys_b_, &pristine_keys_, &values_a_, &values_b_,
                      &pristine_values_, &state_, &staging_})
      destroy(*b);
  }

 private:
  void create_device(const uint8_t* device_uuid, std::string& description) {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "nvx_onesweep";
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo instance_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    instance_info.pApplicationInfo = &app;
    // NVX_ONESWEEP_VALIDATION=1: the Khronos validation layer (messages on stderr).
    const char* layer = "VK_LAYER_KHRONOS_validation";
    const char* validation = std::getenv("NVX_ONESWEEP_VALIDATION");
    if (validation && std::strcmp(validation, "1") == 0) {
      instance_info.enabledLayerCount = 1;
      instance_info.ppEnabledLayerNames = &layer;
    }
    check(vkCreateInstance(&instance_info, nullptr, &instance_), "vkCreateInstance");

    uint32_t count = 0;
    check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devices(count);
    check(vkEnumeratePhysicalDevices(instance_, &count, devices.data()),
          "vkEnumeratePhysicalDevices");
    VkPhysicalDeviceProperties properties{};
    for (VkPhysicalDevice candidate : devices) {
      VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
      VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
      vkGetPhysicalDeviceProperties2(candidate, &p2);
      if (std::memcmp(id.deviceUUID, device_uuid, VK_UUID_SIZE) == 0) {
        physical_ = candidate;
        properties = p2.properties;
      }
    }
    if (physical_ == VK_NULL_HANDLE) throw Error("no Vulkan device has the CUDA device's UUID");

    uint32_t extension_count = 0;
    vkEnumerateDeviceExtensionProperties(physical_, nullptr, &extension_count, nullptr);
    std::vector<VkExtensionProperties> extensions(extension_count);
    vkEnumerateDeviceExtensionProperties(physical_, nullptr, &extension_count, extensions.data());
    bool binary_import = false;
    for (const auto& e : extensions)
      binary_import |= std::strcmp(e.extensionName, VK_NVX_BINARY_IMPORT_EXTENSION_NAME) == 0;
    if (!binary_import)
      throw Error(std::string(properties.deviceName) +
                  " lacks " VK_NVX_BINARY_IMPORT_EXTENSION_NAME);

    VkPhysicalDeviceVulkan12Features have12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &have12};
    vkGetPhysicalDeviceFeatures2(physical_, &have);
    if (!have12.bufferDeviceAddress || !have12.hostQueryReset)
      throw Error("the Vulkan device lacks bufferDeviceAddress or hostQueryReset");

    uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, families.data());
    family_ = UINT32_MAX;
    for (uint32_t f = 0; f < family_count && family_ == UINT32_MAX; ++f)
      if ((families[f].queueFlags & VK_QUEUE_COMPUTE_BIT) && families[f].timestampValidBits > 0)
        family_ = f;
    if (family_ == UINT32_MAX) throw Error("no compute queue with timestamps");
    timestamp_bits_ = families[family_].timestampValidBits;
    timestamp_period_ns_ = properties.limits.timestampPeriod;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = family_;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkPhysicalDeviceVulkan12Features want12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    want12.bufferDeviceAddress = VK_TRUE;
    want12.hostQueryReset = VK_TRUE;
    const char* extension_names[] = {VK_NVX_BINARY_IMPORT_EXTENSION_NAME};
    VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &want12};
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    device_info.enabledExtensionCount = 1;
    device_info.ppEnabledExtensionNames = extension_names;
    check(vkCreateDevice(physical_, &device_info, nullptr, &device_), "vkCreateDevice");
    vkGetDeviceQueue(device_, family_, 0, &queue_);

    create_module_ = reinterpret_cast<PFN_vkCreateCuModuleNVX>(
        vkGetDeviceProcAddr(device_, "vkCreateCuModuleNVX"));
    create_function_ = reinterpret_cast<PFN_vkCreateCuFunctionNVX>(
        vkGetDeviceProcAddr(device_, "vkCreateCuFunctionNVX"));
    destroy_module_ = reinterpret_cast<PFN_vkDestroyCuModuleNVX>(
        vkGetDeviceProcAddr(device_, "vkDestroyCuModuleNVX"));
    destroy_function_ = reinterpret_cast<PFN_vkDestroyCuFunctionNVX>(
        vkGetDeviceProcAddr(device_, "vkDestroyCuFunctionNVX"));
    launch_ = reinterpret_cast<PFN_vkCmdCuLaunchKernelNVX>(
        vkGetDeviceProcAddr(device_, "vkCmdCuLaunchKernelNVX"));
    if (!create_module_ || !create_function_ || !destroy_module_ || !destroy_function_ || !launch_)
      throw Error("no VK_NVX_binary_import entry points");

    vkGetPhysicalDeviceMemoryProperties(physical_, &memory_properties_);

    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = family_;
    check(vkCreateCommandPool(device_, &pool_info, nullptr, &pool_), "vkCreateCommandPool");
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(device_, &fence_info, nullptr, &fence_), "vkCreateFence");
    VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query_info.queryCount = 2;
    check(vkCreateQueryPool(device_, &query_info, nullptr, &query_pool_), "vkCreateQueryPool");

    const uint32_t v = properties.driverVersion;
    // NVIDIA's driver version packing: 10 bits major, 8 minor, 8 sub-minor, 6 patch.
    description = std::string(properties.deviceName) + ", Vulkan driver " +
                  std::to_string(v >> 22) + "." + std::to_string((v >> 14) & 0xff) +
                  ", queue family " + std::to_string(family_) + ", timestamp period " +
                  std::to_string(timestamp_period_ns_) + " ns";
  }

  void load_module() {
    const EmbeddedKernels& k = embedded_kernels(settings_.variant);
    VkCuModuleCreateInfoNVX info{VK_STRUCTURE_TYPE_CU_MODULE_CREATE_INFO_NVX};
    // PTX is text: its size counts the NUL that ends it.
    info.dataSize = settings_.ptx ? k.ptx_size + 1 : k.cubin_size;
    info.pData =
        settings_.ptx ? static_cast<const void*>(k.ptx) : static_cast<const void*>(k.cubin);
    check(create_module_(device_, &info, nullptr, &module_), "vkCreateCuModuleNVX");
  }

  VkCuFunctionNVX function(const char* name) {
    auto found = functions_.find(name);
    if (found != functions_.end()) return found->second;
    VkCuFunctionCreateInfoNVX info{VK_STRUCTURE_TYPE_CU_FUNCTION_CREATE_INFO_NVX};
    info.module = module_;
    info.pName = name;
    VkCuFunctionNVX f = VK_NULL_HANDLE;
    check(create_function_(device_, &info, nullptr, &f), "vkCreateCuFunctionNVX");
    functions_.emplace(name, f);
    return f;
  }

  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags want) const {
    for (uint32_t i = 0; i < memory_properties_.memoryTypeCount; ++i)
      if ((type_bits >> i & 1) && (memory_properties_.memoryTypes[i].propertyFlags & want) == want)
        return i;
    return UINT32_MAX;
  }

  // Device-local buffers are used by their device addresses; the host-visible one (staging for
  // uploads and readbacks) is mapped, coherent, cached where the device offers that.
  Buffer create_buffer(VkDeviceSize size, bool host_visible) {
    Buffer b;
    b.size = size;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (!host_visible)
      info.usage |= VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    check(vkCreateBuffer(device_, &info, nullptr, &b.buffer), "vkCreateBuffer");
    VkMemoryRequirements requirements;
    vkGetBufferMemoryRequirements(device_, b.buffer, &requirements);
    uint32_t type = UINT32_MAX;
    if (host_visible) {
      const VkMemoryPropertyFlags coherent =
          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      type =
          memory_type(requirements.memoryTypeBits, coherent | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
      if (type == UINT32_MAX) type = memory_type(requirements.memoryTypeBits, coherent);
    } else {
      type = memory_type(requirements.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    }
    if (type == UINT32_MAX) throw Error("no suitable Vulkan memory type");
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  host_visible ? nullptr : &flags};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = type;
    check(vkAllocateMemory(device_, &allocate, nullptr, &b.memory),
          ("vkAllocateMemory of " + std::to_string(requirements.size) + " bytes").c_str());
    check(vkBindBufferMemory(device_, b.buffer, b.memory, 0), "vkBindBufferMemory");
    if (host_visible) {
      check(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
    } else {
      VkBufferDeviceAddressInfo address{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
      address.buffer = b.buffer;
      b.address = vkGetBufferDeviceAddress(device_, &address);
    }
    return b;
  }

  void destroy(Buffer& b) {
    if (b.buffer != VK_NULL_HANDLE) vkDestroyBuffer(device_, b.buffer, nullptr);
    if (b.memory != VK_NULL_HANDLE) vkFreeMemory(device_, b.memory, nullptr);
    b = Buffer{};
  }

  VkCommandBuffer begin_commands() {
    VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = pool_;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    check(vkAllocateCommandBuffers(device_, &info, &cb), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    check(vkBeginCommandBuffer(cb, &begin), "vkBeginCommandBuffer");
    return cb;
  }

  void submit_and_wait(VkCommandBuffer cb) {
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cb;
    check(vkQueueSubmit(queue_, 1, &submit, fence_), "vkQueueSubmit");
    check(vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    check(vkResetFences(device_, 1, &fence_), "vkResetFences");
  }

  static void copy(VkCommandBuffer cb, const Buffer& from, VkDeviceSize from_offset,
                   const Buffer& to, VkDeviceSize to_offset, VkDeviceSize size) {
    VkBufferCopy region{from_offset, to_offset, size};
    vkCmdCopyBuffer(cb, from.buffer, to.buffer, 1, &region);
  }

  static void barrier(VkCommandBuffer cb, VkPipelineStageFlags from_stage,
                      VkAccessFlags from_access, VkPipelineStageFlags to_stage,
                      VkAccessFlags to_access) {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = from_access;
    b.dstAccessMask = to_access;
    vkCmdPipelineBarrier(cb, from_stage, to_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
  }

  // Between two kernels: compute -> compute, shader writes -> shader reads and writes (the next
  // kernel also writes buffers the last one read or wrote); or ALL_COMMANDS where asked.
  void kernel_barrier(VkCommandBuffer cb, VkPipelineStageFlags from_stage,
                      VkAccessFlags from_access) const {
    if (settings_.all_commands_barriers)
      barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
              VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
              VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    else
      barrier(cb, from_stage, from_access, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  }

  void record_launch(VkCommandBuffer cb, const KernelLaunch& l,
                     const std::vector<const void*>& params) {
    VkCuLaunchInfoNVX info{VK_STRUCTURE_TYPE_CU_LAUNCH_INFO_NVX};
    info.function = function(l.kernel);
    info.gridDimX = l.grid;
    info.gridDimY = info.gridDimZ = 1;
    info.blockDimX = l.block;
    info.blockDimY = info.blockDimZ = 1;
    info.sharedMemBytes = l.shared_bytes;  // dynamic shared memory (0: static only)
    info.paramCount = params.size();
    info.pParams = params.data();
    launch_(cb, &info);
  }

  void record_sort() {
    VkCommandBuffer cb = begin_commands();
    // The previous run's reads and writes of the working buffers, and the upload of the pristine
    // ones, precede the restore.
    barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
            VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    copy(cb, pristine_keys_, 0, keys_a_, 0, key_size_);
    if (value_size_) copy(cb, pristine_values_, 0, values_a_, 0, value_size_);
    // The restore is complete before the first timestamp and before the sort's first command.
    barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, query_pool_, 0);
    vkCmdFillBuffer(cb, state_.buffer, 0, plan_.state_bytes, 0);
    kernel_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    // Vulkan consumes a command's parameters when it is recorded; they are kept until the command
    // buffer is freed all the same (an extension's driver might read them later).
    launches_ = sort_launches(type_, plan_, settings_,
                              DeviceBuffers{keys_a_.address, keys_b_.address, values_a_.address,
                                            values_b_.address, state_.address});
    launch_params_.assign(launches_.size(), {});
    for (size_t i = 0; i < launches_.size(); ++i) {
      const KernelLaunch& l = launches_[i];
      std::vector<const void*>& params = launch_params_[i];
      params.resize(l.args.size());
      for (size_t a = 0; a < l.args.size(); ++a) params[a] = &l.args[a];
      record_launch(cb, l, params);
      if (i + 1 < launches_.size())
        kernel_barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
    }
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, query_pool_, 1);
    check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    sort_commands_ = cb;
  }

  // The sorted keys (values) and the control words to staging.
  void record_readback() {
    VkCommandBuffer cb = begin_commands();
    barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
            VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    copy(cb, keys_a_, 0, staging_, 0, key_size_);
    if (value_size_) copy(cb, values_a_, 0, staging_, key_size_, value_size_);
    copy(cb, state_, VkDeviceSize(kStateControl) * 4, staging_, key_size_ + value_size_,
         kControlWords * 4);
    barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    readback_commands_ = cb;
  }

  KernelSettings settings_;
  uint32_t sm_count_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  uint32_t timestamp_bits_ = 64;
  double timestamp_period_ns_ = 1;
  VkPhysicalDeviceMemoryProperties memory_properties_{};
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool query_pool_ = VK_NULL_HANDLE;
  PFN_vkCreateCuModuleNVX create_module_ = nullptr;
  PFN_vkCreateCuFunctionNVX create_function_ = nullptr;
  PFN_vkDestroyCuModuleNVX destroy_module_ = nullptr;
  PFN_vkDestroyCuFunctionNVX destroy_function_ = nullptr;
  PFN_vkCmdCuLaunchKernelNVX launch_ = nullptr;
  VkCuModuleNVX module_ = VK_NULL_HANDLE;
  std::map<std::string, VkCuFunctionNVX> functions_;

  KeyType type_ = KeyType::u32;
  SortPlan plan_;
  VkDeviceSize key_size_ = 0, value_size_ = 0;
  Buffer keys_a_, keys_b_, pristine_keys_, values_a_, values_b_, pristine_values_, state_, staging_;
  VkCommandBuffer sort_commands_ = VK_NULL_HANDLE, readback_commands_ = VK_NULL_HANDLE;
  std::vector<KernelLaunch> launches_;
  std::vector<std::vector<const void*>> launch_params_;
  uint32_t fallbacks_ = 0;
};

}  // namespace

std::unique_ptr<Sorter> make_nvx_sorter(const uint8_t* device_uuid, const KernelSettings& settings,
                                        uint32_t sm_count, std::string& description) {
  return std::make_unique<NvxSorter>(device_uuid, settings, sm_count, description);
}

}  // namespace nvx_onesweep
