// The CUDA driver, opened at run time: the library links no CUDA library and includes no CUDA
// header. libcuda.so.1 (which comes with the NVIDIA driver) is opened on first use, and every
// function gpusort calls is resolved through cuGetProcAddress at the API version declared here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

// The driver API's handle types, as cuda.h names them.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;

namespace gpusort::cuda {

// The driver API's types, as its ABI has them.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = ::CUctx_st*;
using CUmodule = ::CUmod_st*;
using CUfunction = ::CUfunc_st*;
using CUstream = ::CUstream_st*;
using CUevent = ::CUevent_st*;

inline constexpr CUresult cuda_success = 0;
// cuDeviceGetAttribute
inline constexpr int attribute_multiprocessor_count = 16;
inline constexpr int attribute_compute_capability_major = 75;
inline constexpr int attribute_compute_capability_minor = 76;
inline constexpr int attribute_max_shared_memory_per_block_optin = 97;
// cuFuncSetAttribute
inline constexpr int function_max_dynamic_shared_size_bytes = 8;
inline constexpr int function_preferred_shared_memory_carveout = 9;

// cuLaunchKernelEx's configuration (CUlaunchConfig) with its attributes (CUlaunchAttribute, whose
// value is a 64-byte union): the one gpusort sets lets a kernel begin before the kernel ahead of
// it on the stream has ended (programmatic dependent launch, sm_90 and later).
struct LaunchAttribute {
  int id;
  int pad;
  union alignas(8) {
    int allowed;
    char bytes[64];
  } value;
};
inline constexpr int launch_attribute_programmatic_stream_serialization = 6;
struct LaunchConfig {
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
  CUstream stream;
  LaunchAttribute* attributes;
  unsigned attribute_count;
};
static_assert(sizeof(LaunchAttribute) == 72 && sizeof(LaunchConfig) == 56, "cuda.h's layout");

// The functions gpusort calls (the versions of CUDA 12's API).
struct Driver {
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*ctx_push_current)(CUcontext) = nullptr;
  CUresult (*ctx_pop_current)(CUcontext*) = nullptr;
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
  CUresult (*ctx_get_id)(CUcontext, unsigned long long*) = nullptr;
  CUresult (*stream_get_ctx)(CUstream, CUcontext*) = nullptr;
  CUresult (*device_get_attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*func_set_attribute)(CUfunction, int, int) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*launch_cooperative_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, unsigned, unsigned, CUstream, void**) = nullptr;
  CUresult (*occupancy_max_active_blocks_per_multiprocessor)(int*, CUfunction, int,
                                                             size_t) = nullptr;
  // Null where the driver lacks it: launches then do not overlap (Module::overlaps_launches).
  CUresult (*launch_kernel_ex)(const LaunchConfig*, CUfunction, void**, void**) = nullptr;
  CUresult (*memset_d32_async)(CUdeviceptr, unsigned, size_t, CUstream) = nullptr;
  CUresult (*memcpy_dtod_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*mem_alloc_async)(CUdeviceptr*, size_t, CUstream) = nullptr;
  CUresult (*mem_free_async)(CUdeviceptr, CUstream) = nullptr;
  // What `gpusort bench` needs to time the CUDA face on the Vulkan device's GPU: devices by
  // UUID (16 bytes, CUuuid), their primary contexts, a stream, events, device memory and copies.
  // Null where the driver lacks one (driver() does not fail for them).
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_uuid)(char*, CUdevice) = nullptr;
  CUresult (*device_primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*device_primary_ctx_release)(CUdevice) = nullptr;
  CUresult (*stream_create)(CUstream*, unsigned) = nullptr;
  CUresult (*stream_destroy)(CUstream) = nullptr;
  CUresult (*stream_synchronize)(CUstream) = nullptr;
  CUresult (*event_create)(CUevent*, unsigned) = nullptr;
  CUresult (*event_destroy)(CUevent) = nullptr;
  CUresult (*event_record)(CUevent, CUstream) = nullptr;
  CUresult (*event_synchronize)(CUevent) = nullptr;
  CUresult (*event_elapsed_time)(float*, CUevent, CUevent) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*mem_get_info)(size_t*, size_t*) = nullptr;
  CUresult (*memcpy_htod_async)(CUdeviceptr, const void*, size_t, CUstream) = nullptr;
  CUresult (*memcpy_dtoh_async)(void*, CUdeviceptr, size_t, CUstream) = nullptr;
};

// The driver, opened once per process. Throws gpusort::Error, one line saying why, where it cannot
// be (no libcuda.so.1, a driver older than CUDA 12, cuInit failing: no NVIDIA device).
const Driver& driver();
// "" where driver() succeeds, else its error's text.
std::string driver_unavailable_why();

// Throws gpusort::Error "`what`: <the driver's name for the error> (<code>)" unless r succeeded.
void check(CUresult r, const char* what);

}  // namespace gpusort::cuda
