// VK_NVX_binary_import: the CUDA kernels embedded in the library (cmake/CudaKernels.cmake,
// src/cuda/embedded_images.hpp) loaded as a module of the Context's device, once, for the first
// sort that launches them, and launched inside ordinary command buffers (Recorder::cuda_launch)
// on buffers passed by device address. Which functions to take from the module is the
// algorithms' business: the sort that starts the load names them.
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cuda/embedded_images.hpp"
#include "cuda/environment.hpp"
#include "vulkan/context_impl.hpp"

namespace gpusort {

namespace {

constexpr uint32_t vendor_nvidia = 0x10de;

}  // namespace

void describe_cuda_kernels(VkPhysicalDevice physical, DeviceInfo& d) {
  d.cuda_kernels = false;
#if !GPUSORT_CUDA_KERNELS
  d.cuda_why = "the library was built without the CUDA kernels (no nvcc)";
  (void)physical;
#else
  if (d.vendor_id != vendor_nvidia)
    d.cuda_why = "not an NVIDIA device";
  else if (!device_has_extension(physical, VK_NVX_BINARY_IMPORT_EXTENSION_NAME))
    d.cuda_why = "the driver does not expose " VK_NVX_BINARY_IMPORT_EXTENSION_NAME;
  else
    d.cuda_kernels = true, d.cuda_why.clear();
#endif
}

const char* cuda_kernels_off_why(KernelPath kernels) {
  return requested_kernel_path(kernels) == KernelPath::spirv
             ? "the Context was created for the SPIR-V kernels only (kernels=spirv)"
             : nullptr;
}

void Context::Impl::setup_cuda_kernels(const char* not_enabled_why) {
  if (!info.cuda_kernels) return;
  auto unavailable = [&](const std::string& why) {
    info.cuda_kernels = false;
    info.cuda_why = why;
  };
  if (not_enabled_why) return unavailable(not_enabled_why);
  nvx.create_module =
      reinterpret_cast<PFN_vkCreateCuModuleNVX>(vkGetDeviceProcAddr(device, "vkCreateCuModuleNVX"));
  nvx.create_function = reinterpret_cast<PFN_vkCreateCuFunctionNVX>(
      vkGetDeviceProcAddr(device, "vkCreateCuFunctionNVX"));
  nvx.destroy_module = reinterpret_cast<PFN_vkDestroyCuModuleNVX>(
      vkGetDeviceProcAddr(device, "vkDestroyCuModuleNVX"));
  nvx.destroy_function = reinterpret_cast<PFN_vkDestroyCuFunctionNVX>(
      vkGetDeviceProcAddr(device, "vkDestroyCuFunctionNVX"));
  nvx.launch = reinterpret_cast<PFN_vkCmdCuLaunchKernelNVX>(
      vkGetDeviceProcAddr(device, "vkCmdCuLaunchKernelNVX"));
  if (!nvx.create_module || !nvx.create_function || !nvx.destroy_module || !nvx.destroy_function ||
      !nvx.launch) {
    nvx.create_module = nullptr, nvx.create_function = nullptr, nvx.destroy_module = nullptr;
    nvx.destroy_function = nullptr, nvx.launch = nullptr;
    return unavailable("the driver gives no " VK_NVX_BINARY_IMPORT_EXTENSION_NAME " entry points");
  }
}

namespace {

#if GPUSORT_CUDA_KERNELS
// Loads one image (a cubin, or PTX with its NUL) and every pass function from it into `nvx`; on
// failure leaves nothing behind and returns the VkResult's text.
std::string load_image(VkDevice device, Context::Impl::Nvx& nvx, const std::vector<std::string>& names,
                       const void* data, size_t size) {
  VkCuModuleCreateInfoNVX module_info{VK_STRUCTURE_TYPE_CU_MODULE_CREATE_INFO_NVX};
  module_info.dataSize = size;
  module_info.pData = data;
  VkCuModuleNVX module = VK_NULL_HANDLE;
  VkResult r = nvx.create_module(device, &module_info, nullptr, &module);
  if (r != VK_SUCCESS) return "vkCreateCuModuleNVX: " + std::to_string(int(r));
  std::vector<VkCuFunctionNVX> functions;
  for (const std::string& name : names) {
    VkCuFunctionCreateInfoNVX function_info{VK_STRUCTURE_TYPE_CU_FUNCTION_CREATE_INFO_NVX};
    function_info.module = module;
    function_info.pName = name.c_str();
    VkCuFunctionNVX function = VK_NULL_HANDLE;
    r = nvx.create_function(device, &function_info, nullptr, &function);
    if (r != VK_SUCCESS) {
      for (VkCuFunctionNVX f : functions) nvx.destroy_function(device, f, nullptr);
      nvx.destroy_module(device, module, nullptr);
      return "vkCreateCuFunctionNVX(" + name + "): " + std::to_string(int(r));
    }
    functions.push_back(function);
  }
  nvx.module = module;
  nvx.functions = std::move(functions);
  return "";
}
#endif

// The embedded images in the order they are tried (cubins, then the PTX): sets nvx.loaded, or
// nvx.failure with each image's failure.
void load_module(VkDevice device, Context::Impl::Nvx& nvx, const std::vector<std::string>& names) {
#if !GPUSORT_CUDA_KERNELS
  (void)device, (void)names;
  nvx.failure = "the library was built without the CUDA kernels (no nvcc)";
#else
  // GPUSORT_CUDA_MODULE=ptx or cubin (testing): only that kind of image is tried.
  const std::string only = cuda_environment().module;
  std::string failures;
  if (only != "ptx")
    for (const cuda::EmbeddedCubin& cubin : cuda::embedded_cubins()) {
      const std::string failed = load_image(device, nvx, names, cubin.data, cubin.size);
      if (failed.empty()) {
        nvx.loaded = "cubin sm_" + std::to_string(cubin.arch);
        return;
      }
      failures += " cubin sm_" + std::to_string(cubin.arch) + ": " + failed + ";";
    }
  if (only != "cubin") {
    const cuda::EmbeddedPtx ptx = cuda::embedded_ptx();
    const std::string failed = load_image(device, nvx, names, ptx.text, ptx.size + 1);
    if (failed.empty()) {
      nvx.loaded = "PTX compute_" + std::to_string(ptx.arch) + " (JIT)";
      return;
    }
    failures += " PTX compute_" + std::to_string(ptx.arch) + ": " + failed + ";";
  }
  failures.pop_back();
  nvx.failure = "the embedded CUDA kernels did not load:" + failures;
#endif
}

}  // namespace

void Context::Impl::start_loading_cuda_kernels(const std::vector<std::string>& names) {
  if (!info.cuda_kernels) return;
  std::call_once(nvx.started, [this, &names] {
    nvx.loading = std::async(std::launch::async, [this, names] {
      try {
        load_module(device, nvx, names);
      } catch (const std::exception& e) {
        nvx.failure = std::string("the embedded CUDA kernels did not load: ") + e.what();
      }
    }).share();
  });
}

bool Context::Impl::cuda_kernels_loaded(const std::vector<std::string>& names) {
  if (!info.cuda_kernels) return false;
  start_loading_cuda_kernels(names);
  nvx.loading.wait();
  return nvx.failure.empty();
}

std::string Context::Impl::cuda_unavailable_why() {
  if (!info.cuda_kernels) return info.cuda_why;
  if (nvx.loading.valid()) nvx.loading.wait();
  return nvx.failure;
}

void Context::Impl::destroy_cuda_kernels() {
  if (nvx.loading.valid()) nvx.loading.wait();
  if (!nvx.destroy_module) return;
  for (VkCuFunctionNVX f : nvx.functions) nvx.destroy_function(device, f, nullptr);
  if (nvx.module != VK_NULL_HANDLE) nvx.destroy_module(device, nvx.module, nullptr);
  nvx.functions.clear();
  nvx.module = VK_NULL_HANDLE;
}

}  // namespace gpusort
