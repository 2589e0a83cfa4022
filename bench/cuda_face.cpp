// The CUDA face's rows of `gpusort bench` (cuda_face.hpp): the protocol of the Vulkan rows
// (benchmark.cpp) and of cub_baseline.cu, on the CUDA driver the library opens at run time.
#include "cuda_face.hpp"

#include <chrono>
#include <cstring>
#include <gpusort/cuda.hpp>
#include <gpusort/gpusort.hpp>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cuda/driver.hpp"
#include "event_batches.hpp"

namespace gpusort::bench {

namespace {

using cuda::check;
using cuda::CUcontext;
using cuda::CUdeviceptr;
using cuda::CUevent;
using cuda::CUstream;

constexpr unsigned stream_non_blocking = 1;  // CU_STREAM_NON_BLOCKING
constexpr cuda::CUresult out_of_memory = 2;  // CUDA_ERROR_OUT_OF_MEMORY
constexpr uint64_t probe_keys = 1024;        // the constructor's first sort

// The first of the driver's entry points the rows use that it lacks, "" where it has them all
// (driver.hpp resolves them without failing the face).
std::string missing_entry_point(const cuda::Driver& d) {
  const std::pair<const char*, bool> entries[] = {
      {"cuDeviceGetCount", d.device_get_count},
      {"cuDeviceGet", d.device_get},
      {"cuDeviceGetUuid", d.device_get_uuid},
      {"cuDevicePrimaryCtxRetain", d.device_primary_ctx_retain},
      {"cuDevicePrimaryCtxRelease", d.device_primary_ctx_release},
      {"cuStreamCreate", d.stream_create},
      {"cuStreamDestroy", d.stream_destroy},
      {"cuStreamSynchronize", d.stream_synchronize},
      {"cuEventCreate", d.event_create},
      {"cuEventDestroy", d.event_destroy},
      {"cuEventRecord", d.event_record},
      {"cuEventSynchronize", d.event_synchronize},
      {"cuEventElapsedTime", d.event_elapsed_time},
      {"cuMemAlloc", d.mem_alloc},
      {"cuMemFree", d.mem_free},
      {"cuMemGetInfo", d.mem_get_info},
      {"cuMemcpyHtoDAsync", d.memcpy_htod_async},
      {"cuMemcpyDtoHAsync", d.memcpy_dtoh_async}};
  for (const auto& [name, present] : entries)
    if (!present) return name;
  return "";
}

// `context` current on this thread while the object lives.
class CurrentContext {
 public:
  explicit CurrentContext(CUcontext context) {
    check(cuda::driver().ctx_push_current(context), "cuCtxPushCurrent");
  }
  ~CurrentContext() {
    CUcontext popped = nullptr;
    cuda::driver().ctx_pop_current(&popped);
  }
  CurrentContext(const CurrentContext&) = delete;
  CurrentContext& operator=(const CurrentContext&) = delete;
};

// Device memory of the current context (cuMemAlloc), freed with the object.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  ~DeviceMemory() {
    if (address_) cuda::driver().mem_free(address_);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  // At least `bytes` (256 for 0); false where the device has no room, throws on other errors.
  bool allocate(uint64_t bytes) {
    const cuda::CUresult r = cuda::driver().mem_alloc(&address_, std::max<uint64_t>(bytes, 256));
    if (r == out_of_memory) return address_ = 0, false;
    check(r, "cuMemAlloc");
    return true;
  }
  CUdeviceptr address() const { return address_; }
  void* get() const { return reinterpret_cast<void*>(address_); }

 private:
  CUdeviceptr address_ = 0;
};

// The driver's events, through the loader the library opens (event_batches.hpp).
struct DriverEvents {
  using Event = CUevent;
  using Stream = CUstream;
  static constexpr const char* kName = "DriverBatches";
  static void create(Event& e) { check(cuda::driver().event_create(&e, 0), "cuEventCreate"); }
  static void destroy(Event e) { cuda::driver().event_destroy(e); }
  static void record(Event e, Stream s) {
    check(cuda::driver().event_record(e, s), "cuEventRecord");
  }
  static void synchronize(Event e) {
    check(cuda::driver().event_synchronize(e), "cuEventSynchronize");
  }
  static float elapsed_ms(Event from, Event to) {
    float ms = 0;
    check(cuda::driver().event_elapsed_time(&ms, from, to), "cuEventElapsedTime");
    return ms;
  }
  static void synchronize_stream(Stream s) {
    check(cuda::driver().stream_synchronize(s), "cuStreamSynchronize");
  }
};
using DriverBatches = EventBatches<DriverEvents>;

}  // namespace

struct CudaFaceRows::Device {
  cuda::CUdevice device = 0;
  CUcontext context = nullptr;  // the device's primary context, retained
  CUstream stream = nullptr;
  std::unique_ptr<DriverBatches> batches;

  ~Device() {
    if (!context) return;
    {
      const cuda::Driver& d = cuda::driver();
      if (d.ctx_push_current(context) == cuda::cuda_success) {
        batches.reset();
        if (stream) d.stream_destroy(stream);
        CUcontext popped = nullptr;
        d.ctx_pop_current(&popped);
      }
    }
    cuda::driver().device_primary_ctx_release(device);
  }
};

CudaFaceRows::CudaFaceRows(const unsigned char* uuid, uint32_t max_runs) {
  why_ = gpusort::cuda::unavailable_why();
  if (!why_.empty()) return;
  try {
    const cuda::Driver& d = cuda::driver();
    if (const std::string missing = missing_entry_point(d); !missing.empty()) {
      why_ = "the CUDA driver has no " + missing;
      return;
    }
    auto device = std::make_unique<Device>();
    int count = 0;
    check(d.device_get_count(&count), "cuDeviceGetCount");
    bool found = false;
    for (int i = 0; i < count && !found; ++i) {
      cuda::CUdevice candidate = 0;
      char id[16] = {};
      check(d.device_get(&candidate, i), "cuDeviceGet");
      check(d.device_get_uuid(id, candidate), "cuDeviceGetUuid");
      if (std::memcmp(id, uuid, sizeof id) == 0) device->device = candidate, found = true;
    }
    if (!found) {
      why_ = "no CUDA device has the Vulkan device's UUID (it is not the GPU of a CUDA device)";
      return;
    }
    check(d.device_primary_ctx_retain(&device->context, device->device),
          "cuDevicePrimaryCtxRetain");
    CurrentContext current(device->context);
    check(d.stream_create(&device->stream, stream_non_blocking), "cuStreamCreate");
    device->batches = std::make_unique<DriverBatches>(device->stream, max_runs);
    // One sort, so the face loads its kernels into the context now (or says why it cannot).
    DeviceMemory keys, scratch;
    const uint64_t scratch_bytes = gpusort::cuda::scratch_bytes(KeyType::u32, 0, probe_keys);
    if (!keys.allocate(probe_keys * 4) || !scratch.allocate(scratch_bytes))
      throw Error("no device memory for a first sort of " + std::to_string(probe_keys) + " keys");
    check(d.memset_d32_async(keys.address(), 0, probe_keys, device->stream), "cuMemsetD32Async");
    gpusort::cuda::Options options;
    options.scratch = scratch.get();
    options.scratch_size = std::max<uint64_t>(scratch_bytes, 256);
    gpusort::cuda::sort_raw(KeyType::u32, keys.get(), nullptr, 0, probe_keys, device->stream,
                            options);
    check(d.stream_synchronize(device->stream), "cuStreamSynchronize");
    device_ = std::move(device);
  } catch (const std::exception& e) {
    why_ = e.what();
  }
}

CudaFaceRows::~CudaFaceRows() = default;

Row CudaFaceRows::measure(const KeyConfig& c, uint64_t n, const Protocol& p, uint64_t seed,
                          const SmClock* clock) {
  return run(c, n, false, p, seed, clock);
}

Row CudaFaceRows::measure_argsort(const KeyConfig& c, uint64_t n, const Protocol& p, uint64_t seed,
                                  const SmClock* clock) {
  return run(c, n, true, p, seed, clock);
}

Row CudaFaceRows::run(const KeyConfig& c, uint64_t n, bool argsort, const Protocol& p,
                      uint64_t seed, const SmClock* clock) {
  const auto started = std::chrono::steady_clock::now();
  Row row = Row::of("gpusort", cuda_face_name, c, n);
  row.face = cuda_face_name;
  row.warmups = p.warmups;
  row.verified = p.verification(n);
  if (argsort) {  // as the Vulkan argsort row (segmented.cpp): u32 indices, keys in their order
    row.config = argsort_config_name();
    row.value_bytes = 4;
    row.verified = "every run: indices == the stable sorting permutation, keys in its order";
  }
  if (!device_) {
    row.skipped = why_;
    return row;
  }
  const KeyType key_type = parse_key_type(c.key);
  try {
    // argsort: the sorted keys to a buffer of their own (the sizes only ask whether there is one).
    gpusort::cuda::Options sizing;
    sizing.sorted_keys = &sizing;
    row.scratch_bytes = argsort ? gpusort::cuda::argsort_scratch_bytes(key_type, 4, n, sizing)
                                : gpusort::cuda::scratch_bytes(key_type, c.value_bytes, n);
  } catch (const Error& e) {
    row.skipped = std::string("rejected by the CUDA face: ") + e.what();
    return row;
  }
  const cuda::Driver& d = cuda::driver();
  const CUstream stream = device_->stream;
  // A set: keys, values (argsort: the indices), and for argsort the sorted keys.
  const uint64_t key_size = n * c.key_bytes, value_size = n * (argsort ? 4 : c.value_bytes);
  const uint64_t sorted_size = argsort ? key_size : 0;
  const uint64_t set_bytes = key_size + value_size + sorted_size;
  CurrentContext current(device_->context);

  // The input sets: one per run, fewer only where memory requires (the runs then go in batches
  // of `sets`), and the spare the spin-up sorts; as the Vulkan rows and cub_baseline size them.
  size_t free_bytes = 0, total_bytes = 0;
  check(d.mem_get_info(&free_bytes, &total_bytes), "cuMemGetInfo");
  const double usable = 0.8 * double(free_bytes);
  row.sets = p.sets_for(set_bytes);
  while (row.sets > 1 && double(row.sets + 1) * set_bytes + row.scratch_bytes > usable) --row.sets;
  const uint32_t spare = row.sets;
  DeviceMemory scratch;
  std::vector<DeviceMemory> keys(row.sets + 1), values(value_size ? row.sets + 1 : 0),
      sorted(sorted_size ? row.sets + 1 : 0);
  bool fits = 2.0 * set_bytes + row.scratch_bytes <= usable && scratch.allocate(row.scratch_bytes);
  for (uint32_t s = 0; fits && s <= row.sets; ++s)
    fits = keys[s].allocate(key_size) && (!value_size || values[s].allocate(value_size)) &&
           (!sorted_size || sorted[s].allocate(sorted_size));
  if (!fits) {
    row.skipped = "does not fit in device memory";
    return row;
  }

  // The host side of one set, as on the device (the inputs go up from it, outputs come back).
  std::unique_ptr<unsigned char[]> up(new unsigned char[set_bytes]),
      down(new unsigned char[set_bytes]);
  // argsort: every output checked whole, against its input generated again from its seed.
  const bool exact = !argsort && n <= p.exact_max_n;
  // Per set: its input's seed and multiset hash and, for the whole-output comparison, host copies.
  struct Input {
    uint64_t seed = 0, hash = 0;
    std::vector<unsigned char> keys, values;
  };
  std::vector<Input> inputs(row.sets + 1);
  // The seeds of the Vulkan rows of this configuration and n, in their order: the same inputs.
  uint64_t run_index = 0;
  auto send = [&](uint32_t s) {
    Input& in = inputs[s];
    in.seed = run_seed(seed, c, n, run_index++);
    in.hash = generate_input(c, n, in.seed, up.get(), up.get() + key_size);
    if (exact) {
      in.keys.assign(up.get(), up.get() + key_size);
      in.values.assign(up.get() + key_size, up.get() + set_bytes);
    }
    check(d.memcpy_htod_async(keys[s].address(), up.get(), key_size, stream), "cuMemcpyHtoDAsync");
    if (value_size && !argsort)
      check(d.memcpy_htod_async(values[s].address(), up.get() + key_size, value_size, stream),
            "cuMemcpyHtoDAsync");
    check(d.stream_synchronize(stream), "cuStreamSynchronize");
  };
  gpusort::cuda::Options options;
  options.scratch = scratch.get();
  options.scratch_size = std::max<uint64_t>(row.scratch_bytes, 256);
  auto sort_set = [&](uint32_t s) {
    if (argsort) {
      gpusort::cuda::Options with_keys = options;
      with_keys.sorted_keys = sorted[s].get();
      gpusort::cuda::argsort_raw(key_type, keys[s].get(), values[s].get(), 4, n, stream, with_keys);
    } else {
      gpusort::cuda::sort_raw(key_type, keys[s].get(), value_size ? values[s].get() : nullptr,
                              c.value_bytes, n, stream, options);
    }
  };
  send(spare);

  DriverBatches& gpu = *device_->batches;
  const uint32_t total = p.warmups + p.runs;
  for (uint32_t first = 0; first < total; first += row.sets) {
    const uint32_t count = std::min(row.sets, total - first);
    for (uint32_t s = 0; s < count; ++s) send(s);
    // Spin-up (the row's own sort of the spare), then the runs enqueued right behind it.
    row.spin =
        p.spin_up([&](uint32_t repeats) { gpu.begin_batch(repeats, [&] { sort_set(spare); }); },
                  [&] { return gpu.finish_batch(); });
    for (uint32_t s = 0; s < count; ++s) gpu.enqueue_run(s, [&] { sort_set(s); });
    read_clock(row, clock);
    while (gpu.batches_queued() > 0) gpu.finish_batch();
    const std::vector<float> ms = gpu.finish_runs(count);
    for (uint32_t s = 0; s < count; ++s) {
      check(d.memcpy_dtoh_async(down.get(), keys[s].address(), key_size, stream),
            "cuMemcpyDtoHAsync");
      if (value_size)
        check(d.memcpy_dtoh_async(down.get() + key_size, values[s].address(), value_size, stream),
              "cuMemcpyDtoHAsync");
      if (sorted_size)
        check(d.memcpy_dtoh_async(down.get() + key_size + value_size, sorted[s].address(),
                                  sorted_size, stream),
              "cuMemcpyDtoHAsync");
      check(d.stream_synchronize(stream), "cuStreamSynchronize");
      // The checks of the Vulkan rows: IEEE totalOrder for floats, stable.
      const Input& in = inputs[s];
      std::string wrong;
      if (argsort) {
        generate_input(c, n, in.seed, up.get(), up.get() + key_size);  // the input again
        wrong =
            check_argsort(c, n, up.get(), reinterpret_cast<const uint32_t*>(down.get() + key_size),
                          down.get() + key_size + value_size);
      } else {
        wrong = check_output(c, n, down.get(), down.get() + key_size, in.hash, false,
                             exact ? in.keys.data() : nullptr, exact ? in.values.data() : nullptr,
                             true);
      }
      if (!wrong.empty())
        throw Error(std::string("bench: ") + cuda_face_name + " " + row.config +
                    " n=" + std::to_string(n) + " run " + std::to_string(first + s) + ": " + wrong);
      if (first + s >= p.warmups) row.ms.push_back(ms[s]);
    }
  }
  row.finish(p);
  row.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return row;
}

}  // namespace gpusort::bench
