// Opening the CUDA driver at run time (driver.hpp).
#include "cuda/driver.hpp"

#include <dlfcn.h>
#include <gpusort/gpusort.hpp>

#include <type_traits>

namespace gpusort::cuda {

namespace {

// The API version every function is resolved at (CUDA 12.0).
constexpr int api_version = 12000;
constexpr CUresult cuda_error_not_found = 500;

struct Loaded {
  Driver driver;
  std::string why;  // "" where it loaded
};

Loaded load() {
  Loaded loaded;
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    loaded.why = "the CUDA driver (libcuda.so.1) is not installed";
    return loaded;
  }
  using GetProcAddress = CUresult (*)(const char*, void**, int, unsigned long long, int*);
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  using Init = CUresult (*)(unsigned);
  auto init = reinterpret_cast<Init>(dlsym(library, "cuInit"));
  if (!get_proc || !init) {
    loaded.why = "the CUDA driver is older than CUDA 12 (libcuda.so.1 has no cuGetProcAddress_v2)";
    return loaded;
  }
  if (const CUresult r = init(0); r != cuda_success) {
    loaded.why = "cuInit failed (" + std::to_string(r) + "): no usable NVIDIA device";
    return loaded;
  }
  Driver& d = loaded.driver;
  auto resolve = [&](const char* name, auto& function) {
    void* address = nullptr;
    int status = 0;
    const CUresult r = get_proc(name, &address, api_version, 0, &status);
    if (r != cuda_success || !address || status != 0) {
      if (loaded.why.empty())
        loaded.why = std::string("the CUDA driver has no ") + name + " (error " +
                     std::to_string(r == cuda_success ? cuda_error_not_found : r) + ")";
      return;
    }
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(address);
  };
  resolve("cuGetErrorString", d.get_error_string);
  resolve("cuCtxGetCurrent", d.ctx_get_current);
  resolve("cuCtxPushCurrent", d.ctx_push_current);
  resolve("cuCtxPopCurrent", d.ctx_pop_current);
  resolve("cuCtxGetDevice", d.ctx_get_device);
  resolve("cuCtxGetId", d.ctx_get_id);
  resolve("cuStreamGetCtx", d.stream_get_ctx);
  resolve("cuDeviceGetAttribute", d.device_get_attribute);
  resolve("cuModuleLoadData", d.module_load_data);
  resolve("cuModuleUnload", d.module_unload);
  resolve("cuModuleGetFunction", d.module_get_function);
  resolve("cuFuncSetAttribute", d.func_set_attribute);
  resolve("cuLaunchKernel", d.launch_kernel);
  resolve("cuLaunchCooperativeKernel", d.launch_cooperative_kernel);
  resolve("cuOccupancyMaxActiveBlocksPerMultiprocessor",
          d.occupancy_max_active_blocks_per_multiprocessor);
  resolve("cuMemsetD32Async", d.memset_d32_async);
  resolve("cuMemcpyDtoDAsync", d.memcpy_dtod_async);
  resolve("cuMemAllocAsync", d.mem_alloc_async);
  resolve("cuMemFreeAsync", d.mem_free_async);
  // The benchmark's: one the driver lacks stays null, and only the benchmark says so.
  auto resolve_optional = [&](const char* name, auto& function) {
    void* address = nullptr;
    int status = 0;
    if (get_proc(name, &address, api_version, 0, &status) == cuda_success && address && status == 0)
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(address);
  };
  resolve_optional("cuLaunchKernelEx", d.launch_kernel_ex);
  resolve_optional("cuDeviceGetCount", d.device_get_count);
  resolve_optional("cuDeviceGet", d.device_get);
  resolve_optional("cuDeviceGetUuid", d.device_get_uuid);
  resolve_optional("cuDevicePrimaryCtxRetain", d.device_primary_ctx_retain);
  resolve_optional("cuDevicePrimaryCtxRelease", d.device_primary_ctx_release);
  resolve_optional("cuStreamCreate", d.stream_create);
  resolve_optional("cuStreamDestroy", d.stream_destroy);
  resolve_optional("cuStreamSynchronize", d.stream_synchronize);
  resolve_optional("cuEventCreate", d.event_create);
  resolve_optional("cuEventDestroy", d.event_destroy);
  resolve_optional("cuEventRecord", d.event_record);
  resolve_optional("cuEventSynchronize", d.event_synchronize);
  resolve_optional("cuEventElapsedTime", d.event_elapsed_time);
  resolve_optional("cuMemAlloc", d.mem_alloc);
  resolve_optional("cuMemFree", d.mem_free);
  resolve_optional("cuMemGetInfo", d.mem_get_info);
  resolve_optional("cuMemcpyHtoDAsync", d.memcpy_htod_async);
  resolve_optional("cuMemcpyDtoHAsync", d.memcpy_dtoh_async);
  return loaded;  // the library stays open for the process
}

const Loaded& loaded() {
  static const Loaded instance = load();
  return instance;
}

}  // namespace

const Driver& driver() {
  const Loaded& l = loaded();
  if (!l.why.empty()) throw Error("the CUDA face cannot run: " + l.why);
  return l.driver;
}

std::string driver_unavailable_why() {
  return loaded().why;
}

void check(CUresult r, const char* what) {
  if (r == cuda_success) return;
  const char* name = nullptr;
  if (loaded().driver.get_error_string) loaded().driver.get_error_string(r, &name);
  throw Error(std::string(what) + ": " + (name ? name : "CUDA error") + " (" + std::to_string(r) +
              ")");
}

}  // namespace gpusort::cuda
