// Internal view of a Context: the Vulkan objects, the pipeline cache and one-shot submission.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <gpusort/gpusort.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "kernels.hpp"

namespace gpusort {

class HostPath;
void check(VkResult result, const char* operation);

// Push constants are at most this many bytes (the Vulkan minimum for maxPushConstantsSize).
inline constexpr uint32_t push_constant_bytes = 128;
// Every kernel's specialization constant of this id is its workgroup size (SPEC_ID_WORKGROUP of
// src/primitives/glsl/spec_constants.h; tests/kernel_contracts_test.cpp checks they agree).
inline constexpr uint32_t workgroup_spec_id = 0;

struct Context::Impl {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  bool owns_device = false;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  std::atomic<uint64_t> validation_messages{0};
  DeviceInfo info;
  VkPhysicalDeviceMemoryProperties memory{};
  // VK_EXT_external_memory_host, when the device has it and gpusort enabled it (created
  // contexts only): host memory can be imported as a transfer source/destination, at
  // addresses and sizes that are multiples of this alignment. 0: not available.
  uint64_t host_import_alignment = 0;

  // VK_NVX_binary_import (src/vulkan/nvx.cpp): its entry points where the extension is enabled,
  // and the embedded CUDA kernels' module and the functions the algorithms named (in their
  // order: src/algorithms/onesweep/cuda/cuda_pass.hpp), loaded at most once per Context, on
  // first use, and destroyed with it. Usable where cuda_kernels_loaded().
  struct Nvx {
    PFN_vkCreateCuModuleNVX create_module = nullptr;
    PFN_vkCreateCuFunctionNVX create_function = nullptr;
    PFN_vkDestroyCuModuleNVX destroy_module = nullptr;
    PFN_vkDestroyCuFunctionNVX destroy_function = nullptr;
    PFN_vkCmdCuLaunchKernelNVX launch = nullptr;
    VkCuModuleNVX module = VK_NULL_HANDLE;
    std::vector<VkCuFunctionNVX> functions;
    std::string loaded;   // once loaded: what ("cubin sm_90", "PTX compute_90 (JIT)")
    std::string failure;  // once the load failed: why
    std::once_flag started;
    std::shared_future<void> loading;
  } nvx;
  // After the device and info are set: the entry points, info.cuda_kernels / cuda_why. Loads
  // nothing. `not_enabled_why`: null where VK_NVX_binary_import is enabled on the device, else
  // why not (cuda_kernels_off_why, or the caller's choice of a wrapped device).
  void setup_cuda_kernels(const char* not_enabled_why);
  // Loading the module (a cubin for the device's architecture where one loads, else the PTX)
  // takes about a third of a second on an H200, so only a sort that launches the kernels pays
  // it: start_loading_cuda_kernels() starts the load on a thread of its own unless it was started
  // (a sort calls it when it is planned, so that the load overlaps the upload);
  // cuda_kernels_loaded() starts it if need be, waits for it and says whether the kernels loaded
  // (else cuda_unavailable_why() says why). `names`: the functions nvx.functions holds, in
  // order (the first call's are loaded). Thread-safe; the result is the Context's for good.
  void start_loading_cuda_kernels(const std::vector<std::string>& names);
  bool cuda_kernels_loaded(const std::vector<std::string>& names);
  std::string cuda_unavailable_why();  // after cuda_kernels_loaded() returned false
  void destroy_cuda_kernels();

  VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  std::mutex submit_mutex;

  ~Impl();

  // The compute pipeline of an embedded kernel with its specialization constants given in
  // constant_id order 0, 1, 2, ... Created once and cached; thread-safe.
  VkPipeline pipeline(Kernel kernel, const std::vector<uint32_t>& specialization);
  // How many pipelines the cache holds (tests check that record() creates none).
  size_t pipeline_count();

  // Submits one recorded command buffer, signalling `fence` (the queue is shared: serialized).
  void queue_submit(VkCommandBuffer cmd, VkFence fence);
  // The convenient face's staging memory, cached buffers and host threads (host/host_path.hpp),
  // created on first use (defined there).
  HostPath& host_path();
  // Records with `record` into a fresh command buffer, submits and waits.
  void submit(const std::function<void(VkCommandBuffer)>& record);
  // Records with `record` into a fresh command buffer and discards it unsubmitted (what
  // recording alone creates, e.g. pipelines, stays).
  void record_unsubmitted(const std::function<void(VkCommandBuffer)>& record);
  // As submit, returning the GPU time between two timestamps around `record`, in ms.
  double submit_timed(const std::function<void(VkCommandBuffer)>& record);

  uint32_t find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                            VkMemoryPropertyFlags preferred) const;
  VkDeviceAddress address_of(VkBuffer buffer) const;
  void finish_setup();  // after device/queue are set: info, layout, pool, fence

 private:
  // One-time command buffer from the shared pool (under submit_mutex): recorded, then submitted
  // and waited for when `run` is set, then freed.
  void one_time_commands(const std::function<void(VkCommandBuffer)>& record, bool run);

  std::mutex host_path_mutex;
  // Made and destroyed by the host layer (src/host/host_path.cpp), which this one does not see:
  // the deleter is the host layer's.
  std::unique_ptr<HostPath, void (*)(HostPath*)> host_path_{nullptr, nullptr};
  std::mutex pipeline_mutex;
  std::map<std::pair<Kernel, std::vector<uint32_t>>, VkPipeline> pipelines;
  std::map<Kernel, VkShaderModule> modules;
  VkQueryPool timestamps = VK_NULL_HANDLE;
};

DeviceInfo describe_device(VkPhysicalDevice physical, uint32_t index);
bool device_has_extension(VkPhysicalDevice physical, const char* name);
// DeviceInfo::cuda_kernels / cuda_why of a physical device (src/vulkan/nvx.cpp): built with the
// CUDA kernels, an NVIDIA device, VK_NVX_binary_import exposed.
void describe_cuda_kernels(VkPhysicalDevice physical, DeviceInfo& info);
// Why Context::create leaves VK_NVX_binary_import off for ContextOptions::kernels (after
// GPUSORT_KERNELS where automatic): spirv; null otherwise.
const char* cuda_kernels_off_why(KernelPath kernels);

}  // namespace gpusort
