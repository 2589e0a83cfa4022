// The CUB baseline: cub::DeviceRadixSort (SortKeys / SortPairs, DoubleBuffer form, so it sorts
// "in place" with an alternate buffer like gpusort's scratch) on the same key configurations,
// sizes, random inputs and protocol as `gpusort bench` (bench_common.hpp), timed with CUDA events
// around the sort call alone, every output checked, written in the same JSON / CSV schema.
//
//   cub_baseline [--keys u32,u64,...] [--min-log2 10] [--max-log2 28] [--step 2] [--warmups 3]
//                [--runs 11] [--seed S] [--time-budget SECONDS] [--quick] [--json F] [--csv F]
//                [--spin-up-ms 200] [--spin-up-max-ms 2000] [--max-spread 5]
//     Protocol and flags as `gpusort bench` (bench_common.hpp, docs/design/benchmark-protocol.md).
//   cub_baseline --segmented [--layouts small,medium,large,powerlaw] [same options]
//     The rows of `gpusort bench --segmented` (default n = 2^24, --quick 2^14, keys
//     u32,u32+u32): per layout the faster of cub::DeviceSegmentedSort and
//     cub::DeviceSegmentedRadixSort (named in the row's algorithm), the argsort row
//     (DeviceRadixSort::SortPairs of the keys with an iota made inside the timing) and the
//     DeviceRadixSort u32+u32 row it is compared with.
//   cub_baseline --segmented --gpusort: and after each layout's CUB row gpusort's CUDA face
//     (gpusort_cuda_segmented_sort, in place, its scratch given) on the same inputs.
//   cub_baseline --gpusort [same options]
//     Each key configuration and size measured twice in a row on the same inputs and buffers:
//     CUB, then gpusort's CUDA face (gpusort_cuda_sort, in place, its scratch given), with the
//     ratio of their medians (where the build links gpusort: GPUSORT_BENCH_CUDA_FACE).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/version.cuh>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"
#if GPUSORT_BENCH_CUDA_FACE
#include <gpusort/gpusort.h>
#endif
#include "cuda_batches.cuh"

using namespace gpusort::bench;

namespace {

struct DeviceMemory {
  void* p = nullptr;
  explicit DeviceMemory(size_t bytes) { CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(bytes, 256))); }
  ~DeviceMemory() { cudaFree(p); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
};
struct PinnedMemory {
  void* p = nullptr;
  explicit PinnedMemory(size_t bytes) {
    CUDA_CHECK(cudaMallocHost(&p, std::max<size_t>(bytes, 256)));
  }
  ~PinnedMemory() { cudaFreeHost(p); }
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;
};

// Sorts keys[s] (values[s]) with the shared alternate buffers; returns which buffers hold the
// result. temp == nullptr: only asks CUB for its temporary storage size.
template <class K>
void cub_sort(void* temp, size_t& temp_bytes, void* keys, void* keys_alt, void* values,
              void* values_alt, uint64_t n, cudaStream_t stream, bool& result_in_alt) {
  cub::DoubleBuffer<K> k(static_cast<K*>(keys), static_cast<K*>(keys_alt));
  if (values) {
    cub::DoubleBuffer<uint32_t> v(static_cast<uint32_t*>(values),
                                  static_cast<uint32_t*>(values_alt));
    if (n > INT32_MAX)
      CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, k, v, int64_t(n), 0,
                                                 int(8 * sizeof(K)), stream));
    else
      CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, k, v, int(n), 0,
                                                 int(8 * sizeof(K)), stream));
    if (temp && k.selector != v.selector)
      throw std::runtime_error("CUB left keys and values in different buffers");
  } else if (n > INT32_MAX) {
    // 64-bit num_items beyond 2^31 - 1 (CUB's 64-bit offsets); int below, as CUB is used most.
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, k, int64_t(n), 0,
                                              int(8 * sizeof(K)), stream));
  } else {
    CUDA_CHECK(
        cub::DeviceRadixSort::SortKeys(temp, temp_bytes, k, int(n), 0, int(8 * sizeof(K)), stream));
  }
  result_in_alt = k.selector != 0;
}

void sort_config(const KeyConfig& c, void* temp, size_t& temp_bytes, void* keys, void* keys_alt,
                 void* values, void* values_alt, uint64_t n, cudaStream_t stream, bool& alt) {
  if (c.is_float)
    cub_sort<float>(temp, temp_bytes, keys, keys_alt, values, values_alt, n, stream, alt);
  else if (c.key_bytes == 4)
    cub_sort<uint32_t>(temp, temp_bytes, keys, keys_alt, values, values_alt, n, stream, alt);
  else
    cub_sort<uint64_t>(temp, temp_bytes, keys, keys_alt, values, values_alt, n, stream, alt);
}

// A row's memory, as gpusort's benchmark sizes it: one input set (keys, values) per run, fewer
// only where memory requires (the runs then go in batches), plus a spare set (index `sets`) for
// the spin-up; the alternate buffers CUB sorts through, its temporary storage, and pinned staging
// for one set each way.
struct RowMemory {
  uint32_t sets;
  std::vector<std::unique_ptr<DeviceMemory>> keys, values;
  DeviceMemory keys_alt, values_alt, temp;
  PinnedMemory upload_staging, readback_staging;

  RowMemory(const Protocol& p, uint64_t key_size, uint64_t value_size, size_t temp_bytes,
            uint64_t scratch_bytes)
      : sets(sets_that_fit(p, key_size + value_size, scratch_bytes)),
        keys_alt(key_size),
        values_alt(value_size),
        temp(temp_bytes),
        upload_staging(key_size + value_size),
        readback_staging(key_size + value_size) {
    for (uint32_t s = 0; s <= sets; ++s) {
      keys.push_back(std::make_unique<DeviceMemory>(key_size));
      if (value_size) values.push_back(std::make_unique<DeviceMemory>(value_size));
    }
  }

  // The alternate buffers are shared: a result the sort left there is copied home to set s
  // before the next run (on the stream, untimed), so that every output can be checked after the
  // runs.
  void copy_home(uint32_t s, uint64_t key_size, uint64_t value_size, cudaStream_t stream) {
    CUDA_CHECK(cudaMemcpyAsync(keys[s]->p, keys_alt.p, key_size, cudaMemcpyDeviceToDevice, stream));
    if (value_size)
      CUDA_CHECK(cudaMemcpyAsync(values[s]->p, values_alt.p, value_size, cudaMemcpyDeviceToDevice,
                                 stream));
  }

 private:
  static uint32_t sets_that_fit(const Protocol& p, uint64_t set_bytes, uint64_t scratch_bytes) {
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    uint32_t sets = p.sets_for(set_bytes);
    while (sets > 1 && double(sets + 1) * set_bytes + scratch_bytes > 0.8 * double(free_bytes))
      --sets;
    return sets;
  }
};

#if GPUSORT_BENCH_CUDA_FACE
gpusort_key_type gpusort_key_of(const KeyConfig& c) {
  return c.is_float ? GPUSORT_KEY_F32 : c.key_bytes == 4 ? GPUSORT_KEY_U32 : GPUSORT_KEY_U64;
}
uint64_t gpusort_scratch(const KeyConfig& c, uint64_t n) {
  uint64_t bytes = 0;
  if (gpusort_cuda_scratch_bytes(gpusort_key_of(c), c.value_bytes, n, nullptr, &bytes) !=
      GPUSORT_OK)
    throw std::runtime_error(gpusort_last_error());
  return bytes;
}
// gpusort's CUDA face (gpusort_cuda_sort) on a set, in place, with `scratch` as its scratch.
void gpusort_sort(const KeyConfig& c, void* keys, void* values, uint64_t n, void* scratch,
                  uint64_t scratch_size, cudaStream_t stream) {
  gpusort_cuda_options options{};
  options.scratch = scratch;
  options.scratch_size = scratch_size;
  const gpusort_status status = gpusort_cuda_sort(gpusort_key_of(c), keys, values, c.value_bytes,
                                                  n, stream, &options);
  if (status != GPUSORT_OK) throw std::runtime_error(gpusort_last_error());
}
// The CUDA face's segmented sort of a set in place (temp == nullptr: its scratch size into
// temp_bytes).
void gpusort_segmented(const KeyConfig& c, void* temp, size_t& temp_bytes, void* keys, void* values,
                       uint64_t n, uint64_t segments, const void* offsets, cudaStream_t stream) {
  const uint32_t value_bytes = values ? c.value_bytes : 0;
  if (!temp) {
    uint64_t bytes = 0;
    if (gpusort_cuda_segmented_scratch_bytes(gpusort_key_of(c), value_bytes, n, segments, nullptr,
                                             &bytes) != GPUSORT_OK)
      throw std::runtime_error(gpusort_last_error());
    temp_bytes = size_t(bytes);
    return;
  }
  gpusort_cuda_options options{};
  options.scratch = temp;
  options.scratch_size = temp_bytes;
  if (gpusort_cuda_segmented_sort(gpusort_key_of(c), keys, values, value_bytes, n, offsets, 4,
                                  segments, stream, &options) != GPUSORT_OK)
    throw std::runtime_error(gpusort_last_error());
}
#else
uint64_t gpusort_scratch(const KeyConfig&, uint64_t) {
  throw std::runtime_error("--gpusort: this cub_baseline was built without gpusort");
}
void gpusort_sort(const KeyConfig&, void*, void*, uint64_t, void*, uint64_t, cudaStream_t) {}
void gpusort_segmented(const KeyConfig&, void*, size_t&, void*, void*, uint64_t, uint64_t,
                       const void*, cudaStream_t) {
  throw std::runtime_error("--gpusort: this cub_baseline was built without gpusort");
}
#endif

// One row: CUB's DeviceRadixSort, or (gpusort) the CUDA face of gpusort on the same inputs,
// buffers and protocol, its scratch in the memory CUB's temporary storage would take.
Row measure(const KeyConfig& c, uint64_t n, const Protocol& p, uint64_t seed, cudaStream_t stream,
            CudaBatches& gpu, const SmClock* clock, bool gpusort = false) {
  const auto started = std::chrono::steady_clock::now();
  Row row = gpusort ? Row::of("gpusort", "cuda", c, n) : Row::of("cub", "DeviceRadixSort", c, n);
  if (gpusort) row.face = "cuda";
  row.warmups = p.warmups;
  row.verified = p.verification(n);
  const uint64_t key_size = n * c.key_bytes, value_size = n * c.value_bytes;
  const uint64_t set_bytes = key_size + value_size;

  size_t temp_bytes = 0;
  bool alt = false;
  if (gpusort) {
    temp_bytes = size_t(gpusort_scratch(c, n));
  } else {
    sort_config(c, nullptr, temp_bytes, nullptr, nullptr, c.value_bytes ? (void*)1 : nullptr,
                nullptr, n, stream, alt);
  }
  // Comparable to gpusort's scratch: CUB's temporary storage plus the alternate key/value buffers.
  row.scratch_bytes = gpusort ? temp_bytes : temp_bytes + set_bytes;

  RowMemory memory(p, key_size, value_size, temp_bytes, row.scratch_bytes);
  row.sets = memory.sets;
  const uint32_t spare = row.sets;
  auto &keys = memory.keys, &values = memory.values;
  DeviceMemory &keys_alt = memory.keys_alt, &values_alt = memory.values_alt, &temp = memory.temp;
  auto* up = static_cast<unsigned char*>(memory.upload_staging.p);
  auto* down = static_cast<unsigned char*>(memory.readback_staging.p);
  const bool exact = n <= p.exact_max_n;
  // Per set: its input's multiset hash and, at small n, host copies; `pending` is the input in
  // the upload staging, generated while the GPU sorts and the host checks, not yet sent.
  struct Input {
    uint64_t hash = 0;
    std::vector<unsigned char> keys, values;
  };
  std::vector<Input> inputs(row.sets + 1);
  Input pending;
  uint64_t run_index = 0;
  auto next_seed = [&] { return run_seed(seed, c, n, run_index++); };
  auto generate = [&](uint64_t run_seed_value) {
    pending.hash = generate_input(c, n, run_seed_value, up, up + key_size);
    if (exact) {
      pending.keys.assign(up, up + key_size);
      pending.values.assign(up + key_size, up + set_bytes);
    }
  };
  auto send = [&](uint32_t s) {
    CUDA_CHECK(cudaMemcpyAsync(keys[s]->p, up, key_size, cudaMemcpyHostToDevice, stream));
    if (value_size)
      CUDA_CHECK(
          cudaMemcpyAsync(values[s]->p, up + key_size, value_size, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::swap(inputs[s], pending);
  };
  // Sorts set s; returns whether the result is in the alternate buffers.
  auto sort_set = [&](uint32_t s) {
    bool alt = false;
    if (gpusort)
      gpusort_sort(c, keys[s]->p, value_size ? values[s]->p : nullptr, n, temp.p, temp_bytes,
                   stream);
    else
      sort_config(c, temp.p, temp_bytes, keys[s]->p, keys_alt.p,
                  value_size ? values[s]->p : nullptr, values_alt.p, n, stream, alt);
    CUDA_CHECK(cudaGetLastError());
    return alt;
  };
  generate(next_seed()), send(spare);

  const uint32_t total = p.warmups + p.runs;
  for (uint32_t first = 0; first < total; first += row.sets) {
    const uint32_t count = std::min(row.sets, total - first);
    for (uint32_t s = 0; s < count; ++s) generate(next_seed()), send(s);
    // Spin-up (the row's own sort of the spare), then the runs enqueued right behind it.
    row.spin =
        p.spin_up([&](uint32_t repeats) { gpu.begin_batch(repeats, [&] { sort_set(spare); }); },
                  [&] { return gpu.finish_batch(); });
    for (uint32_t s = 0; s < count; ++s) {
      bool in_alt = false;
      gpu.enqueue_run(
          s, [] {}, [&] { in_alt = sort_set(s); },
          [&] {
            if (in_alt) memory.copy_home(s, key_size, value_size, stream);
          });
    }
    read_clock(row, clock);
    while (gpu.batches_queued() > 0) gpu.finish_batch();
    const std::vector<float> ms = gpu.finish_runs(count);
    for (uint32_t s = 0; s < count; ++s) {
      // A missed copy leaves the previous output (another input's pair hash): the check fails.
      CUDA_CHECK(cudaMemcpyAsync(down, keys[s]->p, key_size, cudaMemcpyDeviceToHost, stream));
      if (value_size)
        CUDA_CHECK(cudaMemcpyAsync(down + key_size, values[s]->p, value_size,
                                   cudaMemcpyDeviceToHost, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));
      // CUB orders -0 and +0 as equal (stably), else like gpusort's IEEE totalOrder.
      const Input& in = inputs[s];
      std::string wrong =
          check_output(c, n, down, down + key_size, in.hash, true, exact ? in.keys.data() : nullptr,
                       exact ? in.values.data() : nullptr, !gpusort);
      if (!wrong.empty())
        throw std::runtime_error(row.implementation + " " + c.name + " n=" + std::to_string(n) +
                                 " run " + std::to_string(first + s) + ": " + wrong);
      if (first + s >= p.warmups) row.ms.push_back(ms[s]);
    }
  }
  row.finish(p);
  row.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return row;
}

// ---- segmented rows (cub_baseline --segmented) ----

// gpusort: the CUDA face's segmented sort (gpusort_cuda_segmented_sort, in place, its scratch
// given), in the builds that link gpusort.
enum class SegmentedAlgorithm { segmented_sort, segmented_radix_sort, argsort, gpusort };

const char* name_of(SegmentedAlgorithm a) {
  switch (a) {
    case SegmentedAlgorithm::segmented_sort:
      return "DeviceSegmentedSort";
    case SegmentedAlgorithm::segmented_radix_sort:
      return "DeviceSegmentedRadixSort";
    case SegmentedAlgorithm::gpusort:
      return "cuda";
    default:
      return "SortPairs+iota";
  }
}

__global__ void iota_kernel(uint32_t* out, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i;
}

// Sorts one set (DoubleBuffer forms, as cub_sort); temp == nullptr: only the size query. Segment
// s is [offsets[s], offsets[s + 1]): begin offsets = offsets, end offsets = offsets + 1. argsort:
// `values` receives iota (a kernel on the stream, so inside the caller's events) and then the
// sort carries it along as the indices.
template <class K>
void cub_segmented(SegmentedAlgorithm a, void* temp, size_t& temp_bytes, void* keys, void* keys_alt,
                   void* values, void* values_alt, uint64_t n, uint64_t segments,
                   const int* offsets, cudaStream_t stream, bool& result_in_alt) {
  cub::DoubleBuffer<K> k(static_cast<K*>(keys), static_cast<K*>(keys_alt));
  cub::DoubleBuffer<uint32_t> v(static_cast<uint32_t*>(values), static_cast<uint32_t*>(values_alt));
  const int bits = int(8 * sizeof(K));
  switch (a) {
    case SegmentedAlgorithm::segmented_sort:
      if (values)
        CUDA_CHECK(cub::DeviceSegmentedSort::SortPairs(
            temp, temp_bytes, k, v, int64_t(n), int64_t(segments), offsets, offsets + 1, stream));
      else
        CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(
            temp, temp_bytes, k, int64_t(n), int64_t(segments), offsets, offsets + 1, stream));
      break;
    case SegmentedAlgorithm::segmented_radix_sort:
      if (values)
        CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
            temp, temp_bytes, k, v, int(n), int(segments), offsets, offsets + 1, 0, bits, stream));
      else
        CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortKeys(
            temp, temp_bytes, k, int(n), int(segments), offsets, offsets + 1, 0, bits, stream));
      break;
    case SegmentedAlgorithm::argsort:
      if (temp)
        iota_kernel<<<unsigned((n + 255) / 256), 256, 0, stream>>>(v.Current(), uint32_t(n));
      CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, k, v, int(n), 0, bits, stream));
      break;
  }
  if (temp && values && k.selector != v.selector)
    throw std::runtime_error("CUB left keys and values in different buffers");
  result_in_alt = k.selector != 0;
}

// One row: `config` with the layout of `family` sorted by `a`, or the argsort of u32 keys
// (a == argsort: the keys' values are the indices). Inputs, seeds and checks as gpusort's
// bench/segmented.cpp; the protocol as measure() above.
Row measure_segmented(const KeyConfig& c, SegmentFamily family, SegmentedAlgorithm a, uint64_t n,
                      const Protocol& p, uint64_t seed, cudaStream_t stream, CudaBatches& gpu,
                      const SmClock* clock) {
  const auto started = std::chrono::steady_clock::now();
  const bool argsort = a == SegmentedAlgorithm::argsort;
  const bool ours = a == SegmentedAlgorithm::gpusort;
  Row row = Row::of(ours ? "gpusort" : "cub", name_of(a), c, n);
  if (ours) row.face = "cuda";
  if (argsort)
    row.config = argsort_config_name(), row.value_bytes = 4;
  else
    row.config = segmented_config_name(c, family, n);
  row.warmups = p.warmups;
  const bool exact = argsort || n <= p.exact_max_n;
  // DeviceSegmentedSort does not promise stability: at small n its pairs of equal keys are
  // compared as multisets (gpusort's rows are checked as stable).
  const bool stable = a != SegmentedAlgorithm::segmented_sort;
  row.verified = argsort ? "every run: indices == the stable sorting permutation, keys in its order"
                 : exact ? "every run: each segment == std::stable_sort of it"
                         : "every run: each segment sorted + per-segment pair multiset hash";
  const std::vector<uint32_t> offsets =
      argsort ? std::vector<uint32_t>{0, uint32_t(n)} : make_segment_offsets(family, n, seed);
  const uint64_t segments = offsets.size() - 1;
  const uint32_t value_bytes = argsort ? 4 : c.value_bytes;
  const uint64_t key_size = n * c.key_bytes, value_size = n * value_bytes;
  const uint64_t set_bytes = key_size + value_size;

  DeviceMemory offsets_device(offsets.size() * 4);
  CUDA_CHECK(
      cudaMemcpy(offsets_device.p, offsets.data(), offsets.size() * 4, cudaMemcpyHostToDevice));
  const int* d_offsets = static_cast<const int*>(offsets_device.p);  // offsets <= 2^31 - 1
  auto sort = [&](void* temp, size_t& temp_bytes, void* keys, void* keys_alt, void* values,
                  void* values_alt, bool& alt) {
    if (ours)
      return gpusort_segmented(c, temp, temp_bytes, keys, values, n, segments, d_offsets, stream);
    if (c.is_float)
      cub_segmented<float>(a, temp, temp_bytes, keys, keys_alt, values, values_alt, n, segments,
                           d_offsets, stream, alt);
    else if (c.key_bytes == 4)
      cub_segmented<uint32_t>(a, temp, temp_bytes, keys, keys_alt, values, values_alt, n, segments,
                              d_offsets, stream, alt);
    else
      cub_segmented<uint64_t>(a, temp, temp_bytes, keys, keys_alt, values, values_alt, n, segments,
                              d_offsets, stream, alt);
  };
  size_t temp_bytes = 0;
  bool alt = false;
  sort(nullptr, temp_bytes, nullptr, nullptr, value_bytes ? (void*)1 : nullptr, nullptr, alt);
  row.scratch_bytes = ours ? temp_bytes : temp_bytes + set_bytes;

  RowMemory memory(p, key_size, value_size, temp_bytes, row.scratch_bytes);
  row.sets = memory.sets;
  const uint32_t spare = row.sets;
  auto &keys = memory.keys, &values = memory.values;
  DeviceMemory &keys_alt = memory.keys_alt, &values_alt = memory.values_alt, &temp = memory.temp;
  auto* up = static_cast<unsigned char*>(memory.upload_staging.p);
  auto* down = static_cast<unsigned char*>(memory.readback_staging.p);
  // Per set: its input's seed (generated again for the exact checks) and segment hash.
  std::vector<uint64_t> set_seed(row.sets + 1), set_hash(row.sets + 1);
  uint64_t run_index = 0;
  auto send = [&](uint32_t s) {
    set_seed[s] = run_seed(seed, c, n, run_index++);
    generate_input(c, n, set_seed[s], up, up + key_size);
    if (!argsort) set_hash[s] = segmented_hash(c, n, up, up + key_size, offsets);
    // argsort: only the keys go up; the values buffer is the iota the timed run writes.
    CUDA_CHECK(cudaMemcpyAsync(keys[s]->p, up, key_size, cudaMemcpyHostToDevice, stream));
    if (value_size && !argsort)
      CUDA_CHECK(
          cudaMemcpyAsync(values[s]->p, up + key_size, value_size, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  auto sort_set = [&](uint32_t s) {
    bool in_alt = false;
    sort(temp.p, temp_bytes, keys[s]->p, keys_alt.p, value_size ? values[s]->p : nullptr,
         values_alt.p, in_alt);
    CUDA_CHECK(cudaGetLastError());
    return in_alt;
  };
  send(spare);

  const uint32_t total = p.warmups + p.runs;
  std::vector<unsigned char> input;
  for (uint32_t first = 0; first < total; first += row.sets) {
    const uint32_t count = std::min(row.sets, total - first);
    for (uint32_t s = 0; s < count; ++s) send(s);
    row.spin =
        p.spin_up([&](uint32_t repeats) { gpu.begin_batch(repeats, [&] { sort_set(spare); }); },
                  [&] { return gpu.finish_batch(); });
    for (uint32_t s = 0; s < count; ++s) {
      bool in_alt = false;
      gpu.enqueue_run(
          s, [] {}, [&] { in_alt = sort_set(s); },
          [&] {
            if (in_alt) memory.copy_home(s, key_size, value_size, stream);
          });
    }
    read_clock(row, clock);
    while (gpu.batches_queued() > 0) gpu.finish_batch();
    const std::vector<float> ms = gpu.finish_runs(count);
    for (uint32_t s = 0; s < count; ++s) {
      CUDA_CHECK(cudaMemcpyAsync(down, keys[s]->p, key_size, cudaMemcpyDeviceToHost, stream));
      if (value_size)
        CUDA_CHECK(cudaMemcpyAsync(down + key_size, values[s]->p, value_size,
                                   cudaMemcpyDeviceToHost, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));
      if (exact) {
        input.resize(set_bytes);
        generate_input(c, n, set_seed[s], input.data(), input.data() + key_size);
      }
      const std::string wrong =
          argsort ? check_argsort(c, n, input.data(),
                                  reinterpret_cast<const uint32_t*>(down + key_size), down)
                  : check_segmented_output(c, n, down, down + key_size, offsets, set_hash[s], true,
                                           exact ? input.data() : nullptr,
                                           exact ? input.data() + key_size : nullptr, stable);
      if (!wrong.empty())
        throw std::runtime_error(row.implementation + " " + name_of(a) + " " + row.config +
                                 " n=" + std::to_string(n) + " run " + std::to_string(first + s) +
                                 ": " + wrong);
      if (first + s >= p.warmups) row.ms.push_back(ms[s]);
    }
  }
  row.finish(p);
  row.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return row;
}

double parse_double(const std::string& flag, const char* text) {
  char* end = nullptr;
  const double x = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(x >= 0))
    throw std::runtime_error(flag + ": not a non-negative number: " + text);
  return x;
}

uint32_t parse_u32(const std::string& flag, const char* text) {
  try {
    return uint32_t(std::stoul(text));
  } catch (...) {
    throw std::runtime_error(flag + ": not a number: " + text);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Protocol p;
    std::string keys, json, csv, command = "cub_baseline";
    uint64_t seed = 0;
    bool quick = false, segmented = false, with_gpusort = false;
    std::vector<SegmentFamily> families = segment_families();
    std::vector<std::pair<std::string, std::string>> overrides;
    for (int i = 1; i < argc; ++i) {
      std::string flag = argv[i];
      command += " " + flag;
      if (flag == "--quick") {
        quick = true;
        continue;
      }
      if (flag == "--segmented") {
        segmented = true;
        continue;
      }
      if (flag == "--gpusort") {
        with_gpusort = true;
        continue;
      }
      if (i + 1 >= argc) throw std::runtime_error(flag + " needs a value (or is unknown)");
      std::string value = argv[++i];
      command += " " + value;
      if (flag == "--keys")
        keys = value;
      else if (flag == "--json")
        json = value;
      else if (flag == "--csv")
        csv = value;
      else if (flag == "--layouts")
        families = parse_segment_families(value);
      else if (flag == "--seed")
        seed = std::stoull(value);
      else if (flag == "--time-budget")
        p.time_budget_s = std::stod(value);
      else if (flag == "--spin-up-ms" || flag == "--spin-up-max-ms" || flag == "--max-spread")
        overrides.emplace_back(flag, value);
      else if (flag == "--min-log2" || flag == "--max-log2" || flag == "--step" ||
               flag == "--warmups" || flag == "--runs")
        overrides.emplace_back(flag, value);
      else
        throw std::runtime_error("unknown option " + flag);
    }
    if (quick) p.make_quick();
    if (segmented) {  // one size unless asked: 2^24 (the issue's), 2^14 with --quick
      p.min_log2 = p.max_log2 = quick ? 14 : 24;
      if (keys.empty()) keys = "u32,u32+u32";
    }
    for (const auto& [flag, value] : overrides) {
      if (flag == "--spin-up-ms" || flag == "--spin-up-max-ms" || flag == "--max-spread") {
        const double x = parse_double(flag, value.c_str());
        if (flag == "--spin-up-ms")
          p.spin_up_ms = x;
        else if (flag == "--spin-up-max-ms")
          p.spin_up_max_ms = x;
        else
          p.max_spread = x / 100;
        continue;
      }
      uint32_t x = parse_u32(flag, value.c_str());
      if (flag == "--min-log2")
        p.min_log2 = x;
      else if (flag == "--max-log2")
        p.max_log2 = x;
      else if (flag == "--step")
        p.log2_step = x;
      else if (flag == "--warmups")
        p.warmups = x;
      else
        p.runs = x;
    }
    if (p.runs == 0 || p.log2_step == 0 || p.min_log2 > p.max_log2 || p.max_log2 > 32)
      throw std::runtime_error("need --runs >= 1, --step >= 1, --min-log2 <= --max-log2 <= 32");
    p.seed = fresh_seed(seed);
    std::vector<KeyConfig> configs = keys.empty() ? default_key_configs() : parse_key_configs(keys);

    int device = 0, runtime = 0, driver = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    std::string driver_text = "CUDA runtime " + std::to_string(runtime) + ", driver " +
                              std::to_string(driver) + ", CUB " + std::to_string(CUB_VERSION);
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::printf("cub_baseline on %s (%s); %u warm-ups, median of %u runs, seed %llu\n", prop.name,
                driver_text.c_str(), p.warmups, p.runs, (unsigned long long)p.seed);
    // The SM clock per row, from NVML (the GPU found by its UUID), where it is present.
    const SmClock sm_clock(reinterpret_cast<const unsigned char*>(prop.uuid.bytes), true);
    const SmClock* clock = sm_clock.available() ? &sm_clock : nullptr;
    watch_clock(p, clock);
    std::printf(
        "spin-up per row: the row's own sort until its time per sort holds within %.0f%% over "
        "%.0f ms (at least %.0f ms, at most %.0f ms); flagged NOT STEADY: spread above "
        "%.1f%% or an unsettled spin-up; SM clock: %s\n",
        100 * p.steady_tolerance, p.steady_window_ms, p.spin_up_ms,
        std::max(p.spin_up_ms, p.spin_up_max_ms), 100 * p.max_spread, sm_clock.how().c_str());
    CudaBatches gpu(stream, p.max_sets);
    print_header(clock);
    RunInfo info{"cub", prop.name, driver_text, command, p, p.seed, sm_clock.how()};
    std::vector<Row> rows;
    TimeBudget budget(p.time_budget_s);
    auto save = [&] {  // rewritten after every row, so a run cut short keeps what it measured
      if (!json.empty()) write_json(json, info, rows);
      if (!csv.empty()) write_csv(csv, rows);
    };
    for (uint32_t log2 = p.min_log2; segmented && log2 <= p.max_log2; log2 += p.log2_step) {
      const uint64_t n = uint64_t(1) << log2;
      auto add = [&](Row row) {
        print_row(row, clock);
        rows.push_back(std::move(row));
        save();
      };
      auto timed = [&](const std::string& kind, auto measure_row) {
        std::string skipped = budget.check(kind, n);
        if (!skipped.empty()) {
          Row row = measure_row(true);
          row.skipped = skipped;
          return add(row);
        }
        Row row = measure_row(false);
        budget.record(kind, n, row.wall_s);
        add(row);
      };
      for (const KeyConfig& c : configs)
        for (SegmentFamily f : families) {
          timed(segmented_config_name(c, f, uint64_t(1) << 24), [&](bool skip) {
            if (skip) {
              Row row = Row::of("cub", "DeviceSegmentedSort", c, n);
              row.config = segmented_config_name(c, f, n);
              return row;
            }
            // The faster of CUB's two segmented sorts, by median; the other is printed.
            Row a = measure_segmented(c, f, SegmentedAlgorithm::segmented_sort, n, p, p.seed,
                                      stream, gpu, clock);
            Row b = measure_segmented(c, f, SegmentedAlgorithm::segmented_radix_sort, n, p, p.seed,
                                      stream, gpu, clock);
            if (b.ms_median < a.ms_median) std::swap(a, b);
            std::printf("  (%s %s: %.4f ms, slower)\n", b.algorithm.c_str(), b.config.c_str(),
                        b.ms_median);
            a.wall_s += b.wall_s;
            return a;
          });
          if (with_gpusort && rows.back().skipped.empty()) {  // the CUDA face, same inputs
            const Row& cub = rows.back();
            const std::string versus = "  gpusort cuda / " + cub.algorithm + ": ";
            const double cub_ms = cub.ms_median;
            add(measure_segmented(c, f, SegmentedAlgorithm::gpusort, n, p, p.seed, stream, gpu,
                                  clock));
            std::printf("%s%.3fx\n", versus.c_str(), cub_ms / rows.back().ms_median);
          }
        }
      const KeyConfig u32 = parse_key_configs("u32")[0], u32_u32 = parse_key_configs("u32+u32")[0];
      timed("argsort", [&](bool skip) {
        if (!skip)
          return measure_segmented(u32, SegmentFamily::small, SegmentedAlgorithm::argsort, n, p,
                                   p.seed, stream, gpu, clock);
        Row row = Row::of("cub", name_of(SegmentedAlgorithm::argsort), u32, n);
        row.config = argsort_config_name(), row.value_bytes = 4;
        return row;
      });
      // The sort_by_key row argsort is compared with.
      timed("u32+u32", [&](bool skip) {
        if (!skip) return measure(u32_u32, n, p, p.seed, stream, gpu, clock);
        return Row::of("cub", "DeviceRadixSort", u32_u32, n);
      });
    }
    for (uint32_t log2 = p.min_log2; !segmented && log2 <= p.max_log2; log2 += p.log2_step)
      for (const KeyConfig& c : configs) {
        const uint64_t n = uint64_t(1) << log2;
        std::string skipped = budget.check(c.name, n);
        if (skipped.empty()) {
          rows.push_back(measure(c, n, p, p.seed, stream, gpu, clock));
          budget.record(c.name, n, rows.back().wall_s);
          if (with_gpusort) {  // the CUDA face on the same inputs, right after CUB's row
            print_row(rows.back(), clock);
            rows.push_back(measure(c, n, p, p.seed, stream, gpu, clock, true));
          }
        } else {
          Row row = Row::of("cub", "DeviceRadixSort", c, n);
          row.skipped = skipped;
          rows.push_back(row);
        }
        print_row(rows.back(), clock);
        if (with_gpusort && skipped.empty())
          std::printf("  gpusort cuda / cub: %.3fx\n",
                      rows[rows.size() - 2].ms_median / rows.back().ms_median);
        save();
      }
    print_unsteady_summary(rows);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cub_baseline: error: %s\n", e.what());
    return 1;
  }
}
