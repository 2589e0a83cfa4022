// The CUDA backend's module per context, and its launches (module.hpp).
#include "cuda/module.hpp"

#include <gpusort/gpusort.hpp>

#include <map>
#include <memory>
#include <mutex>

#include "cuda/embedded_images.hpp"
#include "cuda/environment.hpp"

namespace gpusort::cuda {

struct Module::Functions {
  std::mutex mutex;
  std::map<std::string, CUfunction> by_name;
  std::map<std::pair<CUfunction, uint32_t>, uint32_t> resident;
};

Module::Module(CUcontext context)
    : context_(context), functions_(std::make_unique<Functions>()) {
#if !GPUSORT_CUDA_KERNELS
  throw Error("the CUDA face cannot run: the library was built without the CUDA kernels (no nvcc)");
#else
  const Driver& d = driver();
  CUdevice device = 0;
  check(d.ctx_get_device(&device), "cuCtxGetDevice");
  int major = 0, minor = 0, sms = 0, optin = 0;
  check(d.device_get_attribute(&major, attribute_compute_capability_major, device),
        "cuDeviceGetAttribute");
  check(d.device_get_attribute(&minor, attribute_compute_capability_minor, device),
        "cuDeviceGetAttribute");
  check(d.device_get_attribute(&sms, attribute_multiprocessor_count, device),
        "cuDeviceGetAttribute");
  check(d.device_get_attribute(&optin, attribute_max_shared_memory_per_block_optin, device),
        "cuDeviceGetAttribute");
  sm_count_ = uint32_t(sms);
  shared_optin_ = uint32_t(optin);
  overlaps_ = major >= 9 && d.launch_kernel_ex != nullptr && cuda_environment().overlap;
  // The cubin built for the device's architecture, else the PTX (JIT-compiled by the driver);
  // GPUSORT_CUDA_MODULE=ptx or cubin (testing) takes that kind only.
  const std::string only = cuda_environment().module;
  const uint32_t arch = uint32_t(major * 10 + minor);
  std::string failures;
  if (only != "ptx")
    for (const EmbeddedCubin& cubin : embedded_cubins()) {
      if (cubin.arch != arch) continue;
      const CUresult r = d.module_load_data(&module_, cubin.data);
      if (r == cuda_success) {
        loaded_ = "cubin sm_" + std::to_string(cubin.arch);
        return;
      }
      failures += " cubin sm_" + std::to_string(cubin.arch) + ": error " + std::to_string(r) + ";";
    }
  if (only != "cubin") {
    const EmbeddedPtx ptx = embedded_ptx();
    const CUresult r = d.module_load_data(&module_, ptx.text);
    if (r == cuda_success) {
      loaded_ = "PTX compute_" + std::to_string(ptx.arch) + " (JIT)";
      return;
    }
    failures += " PTX compute_" + std::to_string(ptx.arch) + ": error " + std::to_string(r) + ";";
  }
  if (failures.empty()) failures = " no image for sm_" + std::to_string(arch) + ";";
  failures.pop_back();
  throw Error("the CUDA face cannot run: the embedded CUDA kernels did not load on sm_" +
              std::to_string(arch) + ":" + failures);
#endif
}

Module::~Module() {
  if (module_) driver().module_unload(module_);
}

uint32_t Module::resident_blocks(CUfunction function, uint32_t block) {
  std::lock_guard lock(functions_->mutex);
  auto [at, added] = functions_->resident.try_emplace({function, block}, 0);
  if (added) {
    int per_sm = 0;
    check(driver().occupancy_max_active_blocks_per_multiprocessor(&per_sm, function, int(block), 0),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    at->second = uint32_t(per_sm) * sm_count_;
  }
  return at->second;
}

CUfunction Module::function(const std::string& name, uint32_t dynamic_shared) {
  std::lock_guard lock(functions_->mutex);
  auto found = functions_->by_name.find(name);
  if (found != functions_->by_name.end()) return found->second;
  CUfunction f = nullptr;
  check(driver().module_get_function(&f, module_, name.c_str()),
        ("cuModuleGetFunction(" + name + ")").c_str());
  if (dynamic_shared > 0) {
    if (dynamic_shared > shared_optin_)
      throw Error("the CUDA face cannot run " + name + ": it needs " +
                  std::to_string(dynamic_shared) + " bytes of shared memory a block, the device " +
                  "gives " + std::to_string(shared_optin_));
    check(driver().func_set_attribute(f, function_max_dynamic_shared_size_bytes,
                                      int(dynamic_shared)),
          "cuFuncSetAttribute(max dynamic shared memory)");
  }
  // One carveout for every kernel (GPUSORT_CUDA_CARVEOUT, for measurements): an SM then keeps
  // its L1/shared split between kernels that would prefer different ones.
  if (const std::optional<uint32_t> carveout = cuda_environment().carveout)
    check(driver().func_set_attribute(f, function_preferred_shared_memory_carveout,
                                      int(*carveout)),
          "cuFuncSetAttribute(preferred shared memory carveout)");
  functions_->by_name.emplace(name, f);
  return f;
}

StreamContext::StreamContext(CUstream stream) {
  const Driver& d = driver();
  if (stream != nullptr) check(d.stream_get_ctx(stream, &context_), "cuStreamGetCtx");
  if (!context_) check(d.ctx_get_current(&context_), "cuCtxGetCurrent");
  if (!context_)
    throw Error("the CUDA face has no CUDA context: make one current on this thread (a CUDA "
                "runtime call does) or pass a stream");
  CUcontext current = nullptr;
  check(d.ctx_get_current(&current), "cuCtxGetCurrent");
  if (current != context_) {
    check(d.ctx_push_current(context_), "cuCtxPushCurrent");
    pushed_ = true;
  }
}

StreamContext::~StreamContext() {
  if (pushed_) {
    CUcontext popped = nullptr;
    driver().ctx_pop_current(&popped);
  }
}

Module& module_for(CUcontext context) {
  // By the context's unique id: a context destroyed and another made at its address is another.
  unsigned long long id = 0;
  check(driver().ctx_get_id(context, &id), "cuCtxGetId");
  static std::mutex mutex;
  static std::map<unsigned long long, std::unique_ptr<Module>> modules;
  std::lock_guard lock(mutex);
  auto& slot = modules[id];
  if (!slot) {
    try {
      slot = std::make_unique<Module>(context);
    } catch (...) {
      modules.erase(id);
      throw;
    }
  }
  return *slot;
}

}  // namespace gpusort::cuda
