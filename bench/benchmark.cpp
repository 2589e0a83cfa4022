// gpusort's benchmark loop over the engine face: the timed runs of a row are one submission,
// each run's Sorter::record dispatches between two timestamps, queued right behind the row's
// spin-up (gpu_batches.hpp); uploads, downloads and checks stay outside.
#include "benchmark.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>

#include "algorithms/sort_algorithm.hpp"
#include "cuda_face.hpp"
#include "gpu_batches.hpp"
#include "vulkan/buffer.hpp"

namespace gpusort::bench {

namespace {

KeyType key_type_of(const KeyConfig& c) {
  return parse_key_type(c.key);
}

// Bitonic sort does not keep equal keys in input order; every other algorithm is stable.
bool is_stable(Algorithm a) {
  return a != Algorithm::bitonic;
}

// Every buffer the benchmark uses, allocated once at the largest size any row needs: rows then
// share the same few large allocations (no dependence on the driver's allocation history, no
// allocation time per row). The inputs live in equal chunks, each holding whole sets, because a
// Vulkan buffer may be limited (DeviceInfo::max_buffer_bytes). The staging buffers are at most
// max_staging_bytes: a larger row keeps its input and output in host memory and moves them
// through the staging in slices.
struct Pools {
  std::vector<DeviceBuffer> input_chunks;
  uint64_t chunk_bytes = 0;
  DeviceBuffer scratch, upload_staging, readback_staging;
};

constexpr uint64_t max_staging_bytes = uint64_t(1) << 30;

// How one row lays out its input sets in the pools.
struct RowLayout {
  uint64_t key_size, value_size, value_offset, set_stride, staging_bytes;
  RowLayout(const KeyConfig& c, uint64_t n)
      : key_size(n * c.key_bytes),
        value_size(n * c.value_bytes),
        value_offset(align_up(key_size, 256)),
        set_stride(align_up(value_offset + value_size, 256)),
        staging_bytes(value_offset + value_size) {}
};

// One row's view of the pools: its input sets (the last one the spin-up's spare), the sort's
// scratch, and the host-visible staging through which inputs go up and outputs come back.
struct RowBuffers {
  Context::Impl& ctx;
  const KeyConfig& config;
  uint64_t n;
  RowLayout layout;
  uint64_t key_size, value_size, value_offset;
  bool keep_inputs;
  const Pools& pools;
  // Per set: the multiset hash of its input and, for the whole-output comparison at small n,
  // host copies of it; `pending` is the input in the upload staging, not yet sent.
  struct Input {
    uint64_t hash = 0;
    std::vector<unsigned char> keys, values;
  };
  std::vector<Input> inputs;
  Input pending;
  // A row larger than the staging buffers: its pending input and fetched output, in host memory
  // laid out like the staging (keys, then values at value_offset).
  bool sliced;
  std::unique_ptr<unsigned char[]> host_input, host_output;

  RowBuffers(Context::Impl& c, const KeyConfig& kc, uint64_t count, uint32_t sets, bool keep,
             const Pools& p)
      : ctx(c),
        config(kc),
        n(count),
        layout(kc, count),
        key_size(layout.key_size),
        value_size(layout.value_size),
        value_offset(layout.value_offset),
        keep_inputs(keep),
        pools(p),
        inputs(sets),
        sliced(layout.staging_bytes > p.upload_staging.bytes()) {
    if (sliced) {
      host_input.reset(new unsigned char[layout.staging_bytes]);
      host_output.reset(new unsigned char[layout.staging_bytes]);
    }
  }
  unsigned char* input_area() const {
    return sliced ? host_input.get() : static_cast<unsigned char*>(pools.upload_staging.mapped());
  }
  const unsigned char* output_area() const {
    return sliced ? host_output.get()
                  : static_cast<const unsigned char*>(pools.readback_staging.mapped());
  }
  // Host bytes to (up) or from a device buffer at `offset`, through the staging in slices.
  void copy_sliced(bool up, unsigned char* host, VkBuffer device, VkDeviceSize offset,
                   uint64_t bytes) {
    const DeviceBuffer& staging = up ? pools.upload_staging : pools.readback_staging;
    for (uint64_t done = 0; done < bytes; done += staging.bytes()) {
      const uint64_t size = std::min(staging.bytes(), bytes - done);
      if (up) std::memcpy(staging.mapped(), host + done, size);
      ctx.submit([&](VkCommandBuffer cmd) {
        Recorder::full_barrier(cmd);
        VkBufferCopy region{up ? 0 : offset + done, up ? offset + done : 0, size};
        vkCmdCopyBuffer(cmd, up ? staging.buffer() : device, up ? device : staging.buffer(), 1,
                        &region);
        Recorder::full_barrier(cmd);
      });
      if (!up) std::memcpy(host + done, staging.mapped(), size);
    }
  }

  uint64_t sets_per_chunk() const { return pools.chunk_bytes / layout.set_stride; }
  const DeviceBuffer& chunk(uint32_t s) const { return pools.input_chunks[s / sets_per_chunk()]; }
  VkDeviceSize keys_offset(uint32_t s) const { return (s % sets_per_chunk()) * layout.set_stride; }
  VkDeviceSize values_offset(uint32_t s) const { return keys_offset(s) + value_offset; }
  BufferRef keys_ref(uint32_t s) const { return chunk(s).ref(keys_offset(s)); }
  BufferRef values_ref(uint32_t s) const {
    return value_size ? chunk(s).ref(values_offset(s)) : BufferRef{};
  }
  BufferRef scratch_ref() const { return pools.scratch.ref(); }

  // Host only: a fresh random input into the upload staging.
  void generate(uint64_t seed) {
    unsigned char* staging = input_area();
    pending.hash = generate_input(config, n, seed, staging, staging + value_offset);
    if (keep_inputs) {
      pending.keys.assign(staging, staging + key_size);
      pending.values.assign(staging + value_offset, staging + value_offset + value_size);
    }
  }

  // The pending input becomes set s's.
  void send(uint32_t s) {
    if (sliced) {
      copy_sliced(true, host_input.get(), chunk(s).buffer(), keys_offset(s), key_size);
      if (value_size)
        copy_sliced(true, host_input.get() + value_offset, chunk(s).buffer(), values_offset(s),
                    value_size);
      std::swap(inputs[s], pending);
      return;
    }
    ctx.submit([&](VkCommandBuffer cmd) {
      VkBufferCopy k{0, keys_offset(s), key_size};
      vkCmdCopyBuffer(cmd, pools.upload_staging.buffer(), chunk(s).buffer(), 1, &k);
      if (value_size) {
        VkBufferCopy v{value_offset, values_offset(s), value_size};
        vkCmdCopyBuffer(cmd, pools.upload_staging.buffer(), chunk(s).buffer(), 1, &v);
      }
      Recorder::full_barrier(cmd);
    });
    std::swap(inputs[s], pending);
  }

  // Copies set s's output into the readback staging. No poisoning needed: a missed copy leaves
  // the previous run's output, whose pair hash is that of a different random input.
  void fetch(uint32_t s) {
    if (sliced) {
      copy_sliced(false, host_output.get(), chunk(s).buffer(), keys_offset(s), key_size);
      if (value_size)
        copy_sliced(false, host_output.get() + value_offset, chunk(s).buffer(), values_offset(s),
                    value_size);
      return;
    }
    ctx.submit([&](VkCommandBuffer cmd) {
      Recorder::full_barrier(cmd);
      VkBufferCopy k{keys_offset(s), 0, key_size};
      vkCmdCopyBuffer(cmd, chunk(s).buffer(), pools.readback_staging.buffer(), 1, &k);
      if (value_size) {
        VkBufferCopy v{values_offset(s), value_offset, value_size};
        vkCmdCopyBuffer(cmd, chunk(s).buffer(), pools.readback_staging.buffer(), 1, &v);
      }
      Recorder::full_barrier(cmd);
    });
  }

  // Checks the fetched output of set s against its input; returns "" or what is wrong.
  std::string verify(uint32_t s, bool stable) const {
    const unsigned char* staging = output_area();
    const Input& in = inputs[s];
    return check_output(config, n, staging, staging + value_offset, in.hash, false,
                        keep_inputs ? in.keys.data() : nullptr,
                        keep_inputs ? in.values.data() : nullptr, stable);
  }
};

// The input sets of a row (Protocol::sets_for), fewer only where device memory requires
// (reported in the row's `sets`; the runs then go in batches of `sets`). One more slot holds the
// spare input the spin-up sorts.
uint32_t sets_for_row(const Context::Impl& impl, const Protocol& p, const KeyConfig& config,
                      uint64_t n, uint64_t scratch_bytes) {
  const RowLayout layout(config, n);
  uint32_t sets = p.sets_for(layout.staging_bytes);
  const double usable = 0.8 * double(impl.info.device_local_bytes);
  while (sets > 1 && double(sets + 1) * layout.set_stride + scratch_bytes > usable) --sets;
  return sets;
}

Row measure(Context& ctx, const Sorter& sorter, Algorithm algorithm, const KeyConfig& config,
            uint64_t n, const Protocol& p, uint64_t seed, const Pools& pools, GpuBatches& gpu,
            const SmClock* clock) {
  Context::Impl& impl = ctx.impl();
  const auto started = std::chrono::steady_clock::now();
  Row row = Row::of("gpusort", to_string(algorithm), config, n);
  row.face = "vulkan";
  row.kernels = sorter.kernel_path(n);
  row.warmups = p.warmups;
  row.verified = p.verification(n);
  try {
    row.scratch_bytes = sorter.scratch_bytes(n);
  } catch (const Error& e) {
    if (e.result() != VK_SUCCESS) throw;
    row.skipped = std::string("rejected by the algorithm: ") + e.what();
    return row;
  }
  row.sets = sets_for_row(impl, p, config, n, row.scratch_bytes);
  const RowLayout layout(config, n);
  const uint64_t per_chunk =
      layout.set_stride <= pools.chunk_bytes ? pools.chunk_bytes / layout.set_stride : 0;
  if (per_chunk == 0 || (row.sets + 1 + per_chunk - 1) / per_chunk > pools.input_chunks.size() ||
      row.scratch_bytes > pools.scratch.bytes()) {
    row.skipped =
        "does not fit in device memory (or a set / the scratch exceeds the largest buffer)";
    return row;
  }
  auto buffers =
      std::make_unique<RowBuffers>(impl, config, n, row.sets + 1, n <= p.exact_max_n, pools);
  uint64_t run_index = 0;
  auto next_seed = [&] { return run_seed(seed, config, n, run_index++); };
  auto record_sort = [&](uint32_t s) {
    return [&, s](VkCommandBuffer cmd) {
      sorter.record(cmd, buffers->keys_ref(s), buffers->values_ref(s), buffers->scratch_ref(), n);
    };
  };
  const uint64_t messages_before = ctx.validation_messages();
  const uint32_t spare = row.sets;
  buffers->generate(next_seed()), buffers->send(spare);
  try {
    impl.submit(record_sort(spare));
  } catch (const Error& e) {
    // An argument the algorithm refuses (VK_SUCCESS) is a size limit.
    if (e.result() != VK_SUCCESS) throw;
    row.skipped = std::string("rejected by the algorithm: ") + e.what();
    return row;
  }

  // Batches of `sets` runs (one batch unless memory is short): upload every input, record the
  // runs, spin up (the row's own sort of the spare), queue the runs right behind the spin-up's
  // last batch, then check every output.
  const uint32_t total = p.warmups + p.runs;
  for (uint32_t first = 0; first < total; first += row.sets) {
    const uint32_t count = std::min(row.sets, total - first);
    for (uint32_t s = 0; s < count; ++s) buffers->generate(next_seed()), buffers->send(s);
    const std::vector<double> ms = gpu.spin_up_and_time(
        p, row, clock, count, [&](VkCommandBuffer cmd, uint32_t s) { record_sort(s)(cmd); },
        record_sort(spare));
    for (uint32_t s = 0; s < count; ++s) {
      buffers->fetch(s);
      std::string wrong = buffers->verify(s, is_stable(algorithm));
      if (!wrong.empty())
        throw Error(std::string("bench: ") + to_string(algorithm) + " " + config.name +
                    " n=" + std::to_string(n) + " run " + std::to_string(first + s) + ": " + wrong);
      if (first + s >= p.warmups) row.ms.push_back(ms[s]);
    }
  }
  if (ctx.validation_messages() != messages_before)
    throw Error(std::string("bench: validation messages while sorting ") + to_string(algorithm) +
                " " + config.name + " n=" + std::to_string(n));
  row.finish(p);
  row.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return row;
}

}  // namespace

std::vector<Algorithm> available_algorithms(Context& ctx) {
  std::vector<Algorithm> found;
  const uint32_t count = uint32_t(algorithm_names().size());
  for (uint32_t a = 0; a < count; ++a) {
    try {
      Sorter probe(ctx, {.key = KeyType::u32, .algorithm = Algorithm(a)});
      found.push_back(Algorithm(a));
    } catch (const Error& e) {
      if (std::string(e.what()).find("not available") == std::string::npos) throw;
    }
  }
  return found;
}

std::vector<Row> run_benchmark(Context& ctx, const BenchOptions& options) {
  Protocol p = options.protocol;
  if (p.runs == 0) throw Error("bench: at least one timed run is needed");
  std::vector<Algorithm> algorithms = !options.vulkan_rows         ? std::vector<Algorithm>{}
                                      : options.algorithms.empty() ? available_algorithms(ctx)
                                                                   : options.algorithms;
  std::vector<KeyConfig> configs =
      options.configs.empty() ? default_key_configs() : options.configs;
  const uint64_t seed = fresh_seed(p.seed);

  const std::vector<KernelPath> paths =
      options.kernels.empty() ? std::vector<KernelPath>{KernelPath::automatic} : options.kernels;
  // One Sorter per (algorithm and kernel path, configuration); a refusal is reported on each of
  // its rows.
  using SorterKey = std::pair<std::pair<Algorithm, KernelPath>, std::string>;
  std::map<SorterKey, std::unique_ptr<Sorter>> sorters;
  std::map<SorterKey, std::string> refusals;
  for (Algorithm algorithm : algorithms)
    for (KernelPath path : paths)
      for (const KeyConfig& config : configs) {
        try {
          sorters[{{algorithm, path}, config.name}] =
              std::make_unique<Sorter>(ctx, SorterConfig{.key = key_type_of(config),
                                                         .value_bytes = config.value_bytes,
                                                         .algorithm = algorithm,
                                                         .kernels = path});
        } catch (const Error& e) {
          if (e.result() != VK_SUCCESS) throw;
          refusals[{{algorithm, path}, config.name}] =
              std::string("rejected by the algorithm: ") + e.what();
        }
      }

  // The pools: the largest needs of the rows that fit in device memory and in allocations.
  Context::Impl& impl = ctx.impl();
  struct Need {
    uint64_t stride, sets;
  };
  std::vector<Need> needs;
  uint64_t scratch_bytes = 0, staging_bytes = 0, chunk_bytes = 0;
  const uint64_t largest = impl.info.max_buffer_bytes / 256 * 256;
  const double usable = 0.8 * double(impl.info.device_local_bytes);
  for (uint32_t log2 = p.min_log2; log2 <= p.max_log2; log2 += p.log2_step)
    for (const auto& [key, sorter] : sorters) {
      const KeyConfig& config = *std::find_if(
          configs.begin(), configs.end(), [&](const KeyConfig& c) { return key.second == c.name; });
      const uint64_t n = uint64_t(1) << log2;
      uint64_t scratch = 0;
      try {
        scratch = sorter->scratch_bytes(n);
      } catch (const Error& e) {
        if (e.result() != VK_SUCCESS) throw;
        continue;  // the row reports the rejection
      }
      const RowLayout layout(config, n);
      const uint64_t sets = sets_for_row(impl, p, config, n, scratch);
      const uint64_t slots = sets + 1;  // and the spare
      if (layout.set_stride > largest || scratch > largest ||
          double(slots * layout.set_stride) + double(scratch) > usable)
        continue;  // the row reports that it does not fit
      needs.push_back({layout.set_stride, slots});
      chunk_bytes =
          std::max(chunk_bytes, std::min(slots, largest / layout.set_stride) * layout.set_stride);
      scratch_bytes = std::max(scratch_bytes, scratch);
      staging_bytes = std::max(staging_bytes, layout.staging_bytes);
    }
  Pools pools;
  pools.chunk_bytes = chunk_bytes;
  uint64_t chunk_count = 0;
  for (const Need& need : needs) {
    const uint64_t per_chunk = chunk_bytes / need.stride;
    chunk_count = std::max(chunk_count, (need.sets + per_chunk - 1) / per_chunk);
  }
  if (!sorters.empty()) {  // else no row uses them
    for (uint64_t c = 0; c < chunk_count; ++c)
      pools.input_chunks.emplace_back(impl, chunk_bytes, MemoryKind::device_local);
    pools.scratch = DeviceBuffer(impl, scratch_bytes, MemoryKind::device_local);
    staging_bytes = std::min(
        staging_bytes, std::min(max_staging_bytes, impl.info.max_allocation_bytes / 256 * 256));
    pools.upload_staging = DeviceBuffer(impl, staging_bytes, MemoryKind::upload);
    pools.readback_staging = DeviceBuffer(impl, staging_bytes, MemoryKind::readback);
  }

  // The CUDA face on the same GPU, or one line saying why not.
  std::unique_ptr<CudaFaceRows> cuda_face;
  if (options.cuda_face) {
    cuda_face = std::make_unique<CudaFaceRows>(device_uuid(impl).data(), p.max_sets);
    if (!cuda_face->unavailable().empty())
      std::fprintf(stderr, "gpusort bench: the %s rows are skipped: %s\n", cuda_face_name,
                   cuda_face->unavailable().c_str());
  }

  std::vector<Row> rows;
  TimeBudget budget(p.time_budget_s);
  GpuBatches gpu(impl, p.max_sets);
  const SmClock* clock = options.clock && options.clock->available() ? options.clock : nullptr;
  watch_clock(p, clock);
  print_header(clock);
  for (uint32_t log2 = p.min_log2; log2 <= p.max_log2; log2 += p.log2_step) {
    const uint64_t n = uint64_t(1) << log2;
    for (const KeyConfig& config : configs) {
      for (Algorithm algorithm : algorithms)
        for (KernelPath path : paths) {
          const std::string kind = std::string(to_string(algorithm)) + " " + to_string(path) +
                                   " " + config.name;
          auto sorter = sorters.find({{algorithm, path}, config.name});
          std::string skipped = sorter == sorters.end()
                                    ? refusals[{{algorithm, path}, config.name}]
                                    : budget.check(kind, n);
          Row row;
          if (skipped.empty()) {
            row = measure(ctx, *sorter->second, algorithm, config, n, p, seed, pools, gpu, clock);
            budget.record(kind, n, row.wall_s);
          } else {
            row = Row::of("gpusort", to_string(algorithm), config, n);
            row.face = "vulkan";
            row.kernels = to_string(path);
            row.skipped = skipped;
          }
          print_row(row, clock);
          rows.push_back(std::move(row));
          if (options.on_row) options.on_row(rows);
        }
      if (cuda_face) {
        const std::string kind = std::string(cuda_face_name) + " " + config.name;
        const std::string skipped = budget.check(kind, n);
        Row row;
        if (skipped.empty()) {
          row = cuda_face->measure(config, n, p, seed, clock);
          if (row.skipped.empty()) budget.record(kind, n, row.wall_s);
        } else {
          row = Row::of("gpusort", cuda_face_name, config, n);
          row.face = cuda_face_name;
          row.skipped = skipped;
        }
        // A face that cannot run said so once (above); its rows stay out of the table.
        if (cuda_face->unavailable().empty()) print_row(row, clock);
        rows.push_back(std::move(row));
        if (options.on_row) options.on_row(rows);
      }
    }
  }
  if (options.summary) print_unsteady_summary(rows);
  return rows;
}

}  // namespace gpusort::bench
