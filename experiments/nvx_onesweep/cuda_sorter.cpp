// The same embedded cubin (or PTX) as the Vulkan sorter, loaded with cudaLibraryLoadData and
// launched with cudaLaunchKernel on cudaMalloc'ed memory: the kernels' speed without
// VK_NVX_binary_import. Each run: restore the input (device copy), a GPU delay so that the host
// has enqueued the whole sort before it starts, start event, zero the state block
// (cudaMemsetAsync), histogram, passes, stop event.
#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <string>

#include "embedded.hpp"
#include "sorter.hpp"

namespace nvx_onesweep {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(status));
}

struct Library {
  cudaLibrary_t library = nullptr;
  std::map<std::string, cudaKernel_t> kernels;

  explicit Library(const KernelSettings& settings) {
    const EmbeddedKernels& k = embedded_kernels(settings.variant);
    const void* code =
        settings.ptx ? static_cast<const void*>(k.ptx) : static_cast<const void*>(k.cubin);
    check(cudaLibraryLoadData(&library, code, nullptr, nullptr, 0, nullptr, nullptr, 0),
          "cudaLibraryLoadData");
  }
  ~Library() {
    if (library) cudaLibraryUnload(library);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  cudaKernel_t kernel(const char* name) {
    auto found = kernels.find(name);
    if (found != kernels.end()) return found->second;
    cudaKernel_t k = nullptr;
    check(cudaLibraryGetKernel(&k, library, name),
          ("cudaLibraryGetKernel " + std::string(name)).c_str());
    kernels.emplace(name, k);
    return k;
  }
};

void* device_alloc(size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes < 256 ? 256 : bytes),
        ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str());
  return p;
}

class CudaSorter final : public Sorter {
 public:
  CudaSorter(const KernelSettings& settings, uint32_t sm_count)
      : settings_(settings), sm_count_(sm_count), library_(settings) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~CudaSorter() override {
    release();
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return settings_.ptx ? "cuda-ptx" : "cuda"; }

  void prepare(KeyType type, uint32_t n, const void* keys, const uint32_t* values) override {
    release();
    type_ = type;
    plan_ = make_plan(type, n, settings_, sm_count_);
    key_size_ = size_t(n) * key_bytes(type);
    value_size_ = has_values(type) ? size_t(n) * 4 : 0;
    for (void** p : {&keys_a_, &keys_b_, &pristine_keys_}) *p = device_alloc(key_size_);
    if (value_size_)
      for (void** p : {&values_a_, &values_b_, &pristine_values_}) *p = device_alloc(value_size_);
    state_ = device_alloc(plan_.state_bytes);
    // The upload goes through the sorter's stream and is waited for. (A cudaMemcpy from pageable
    // memory may return before its DMA has landed, and this non-blocking stream does not wait for
    // the legacy default stream: the first restore copied stale pristine keys, and small
    // keys-only sorts came out wrong, "key 0 is 0".)
    check(cudaMemcpyAsync(pristine_keys_, keys, key_size_, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync");
    if (value_size_)
      check(cudaMemcpyAsync(pristine_values_, values, value_size_, cudaMemcpyHostToDevice, stream_),
            "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream_), "the upload");
    auto address = [](void* p) { return uint64_t(reinterpret_cast<uintptr_t>(p)); };
    launches_ = sort_launches(type, plan_, settings_,
                              DeviceBuffers{address(keys_a_), address(keys_b_), address(values_a_),
                                            address(values_b_), address(state_)});
    for (const KernelLaunch& l : launches_) library_.kernel(l.kernel);
  }

  double sort_once() override {
    check(cudaMemcpyAsync(keys_a_, pristine_keys_, key_size_, cudaMemcpyDeviceToDevice, stream_),
          "cudaMemcpyAsync");
    if (value_size_)
      check(cudaMemcpyAsync(values_a_, pristine_values_, value_size_, cudaMemcpyDeviceToDevice,
                            stream_),
            "cudaMemcpyAsync");
    enqueue_gpu_delay(stream_, 200);
    check(cudaEventRecord(start_, stream_), "cudaEventRecord");
    check(cudaMemsetAsync(state_, 0, plan_.state_bytes, stream_), "cudaMemsetAsync");
    for (KernelLaunch& l : launches_) {
      void* params[16];
      for (size_t a = 0; a < l.args.size(); ++a) params[a] = &l.args[a];
      check(cudaLaunchKernel(reinterpret_cast<const void*>(library_.kernel(l.kernel)), dim3(l.grid),
                             dim3(l.block), params, l.shared_bytes, stream_),
            l.kernel);
    }
    check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    check(cudaGetLastError(), "a kernel");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

  // Every copy and fill goes through the sorter's (non-blocking) stream, in order with the
  // kernels, and is waited for before the host reads.
  void read_output(void* keys, uint32_t* values) override {
    check(cudaMemcpyAsync(keys, keys_a_, key_size_, cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync");
    if (value_size_ && values)
      check(cudaMemcpyAsync(values, values_a_, value_size_, cudaMemcpyDeviceToHost, stream_),
            "cudaMemcpyAsync");
    uint32_t control[kControlWords];
    check(cudaMemcpyAsync(control, static_cast<uint32_t*>(state_) + kStateControl, sizeof(control),
                          cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream_), "the readback");
    fallbacks_ = control[kControlFallbacks];
  }

  uint32_t fallbacks() override { return fallbacks_; }

  const std::vector<KernelLaunch>& launches() const override { return launches_; }

  Snapshot run_launches(const std::vector<KernelLaunch>& launches) override {
    check(cudaMemcpyAsync(keys_a_, pristine_keys_, key_size_, cudaMemcpyDeviceToDevice, stream_),
          "cudaMemcpyAsync");
    check(cudaMemsetAsync(keys_b_, 0, key_size_, stream_), "cudaMemsetAsync");
    if (value_size_) {
      check(cudaMemcpyAsync(values_a_, pristine_values_, value_size_, cudaMemcpyDeviceToDevice,
                            stream_),
            "cudaMemcpyAsync");
      check(cudaMemsetAsync(values_b_, 0, value_size_, stream_), "cudaMemsetAsync");
    }
    check(cudaMemsetAsync(state_, 0, plan_.state_bytes, stream_), "cudaMemsetAsync");
    for (const KernelLaunch& l0 : launches) {
      KernelLaunch l = l0;
      void* params[16];
      for (size_t a = 0; a < l.args.size(); ++a) params[a] = &l.args[a];
      check(cudaLaunchKernel(reinterpret_cast<const void*>(library_.kernel(l.kernel)), dim3(l.grid),
                             dim3(l.block), params, l.shared_bytes, stream_),
            l.kernel);
      check(cudaStreamSynchronize(stream_), l.kernel);
    }
    Snapshot out;
    auto read = [this](std::vector<uint8_t>& to, const void* from, size_t bytes) {
      to.resize(bytes);
      if (bytes)
        check(cudaMemcpyAsync(to.data(), from, bytes, cudaMemcpyDeviceToHost, stream_),
              "cudaMemcpyAsync");
    };
    read(out.keys_a, keys_a_, key_size_);
    read(out.keys_b, keys_b_, key_size_);
    read(out.values_a, values_a_, value_size_);
    read(out.values_b, values_b_, value_size_);
    out.state.resize(plan_.state_bytes / 4);
    check(cudaMemcpyAsync(out.state.data(), state_, plan_.state_bytes, cudaMemcpyDeviceToHost,
                          stream_),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream_), "the readback");
    return out;
  }

  void release() override {
    cudaStreamSynchronize(stream_);
    for (void** p :
         {&keys_a_, &keys_b_, &pristine_keys_, &values_a_, &values_b_, &pristine_values_, &state_})
      if (*p) {
        cudaFree(*p);
        *p = nullptr;
      }
    launches_.clear();
  }

 private:
  KernelSettings settings_;
  uint32_t sm_count_;
  Library library_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  KeyType type_ = KeyType::u32;
  SortPlan plan_;
  size_t key_size_ = 0, value_size_ = 0;
  void *keys_a_ = nullptr, *keys_b_ = nullptr, *pristine_keys_ = nullptr;
  void *values_a_ = nullptr, *values_b_ = nullptr, *pristine_values_ = nullptr;
  void* state_ = nullptr;
  std::vector<KernelLaunch> launches_;
  uint32_t fallbacks_ = 0;
};

}  // namespace

std::unique_ptr<Sorter> make_cuda_sorter(const KernelSettings& settings, uint32_t sm_count) {
  return std::make_unique<CudaSorter>(settings, sm_count);
}

std::string kernel_attributes(const KernelSettings& settings) {
  Library library(settings);
  std::string out;
  for (const char* name : {"onesweep_histogram_u32", "onesweep_histogram_u64", "onesweep_pass_u32",
                           "onesweep_pass_u32_u32", "onesweep_pass_u64", "onesweep_pass_u64_u32"}) {
    const void* kernel = reinterpret_cast<const void*>(library.kernel(name));
    cudaFuncAttributes a{};
    check(cudaFuncGetAttributes(&a, kernel), "cudaFuncGetAttributes");
    // Blocks per SM the CUDA runtime allows this kernel (registers, shared memory, threads);
    // through NVX the shared memory per SM is 48 KiB in all (see --self-test's residency).
    const int threads = std::string(name).rfind("onesweep_histogram", 0) == 0
                            ? int(kHistogramThreads)
                            : int(kVariants[settings.variant].threads);
    int per_sm = 0;
    const std::string occupancy =
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0) == cudaSuccess
            ? std::to_string(per_sm)
            : "?";
    cudaGetLastError();
    out += std::string("  ") + name + ": " + std::to_string(a.numRegs) + " registers, " +
           std::to_string(a.localSizeBytes) + " B local (spills), " +
           std::to_string(a.sharedSizeBytes) + " B static shared, max " +
           std::to_string(a.maxThreadsPerBlock) + " threads/block, binary sm_" +
           std::to_string(a.binaryVersion) + ", PTX " + std::to_string(a.ptxVersion) + "; " +
           occupancy + " blocks of " + std::to_string(threads) +
           " per SM through the CUDA runtime\n";
  }
  return out;
}

}  // namespace nvx_onesweep
