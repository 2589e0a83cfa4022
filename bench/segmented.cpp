// `gpusort bench --segmented`: each timed run is SegmentedSorter::record between two timestamps,
// on device buffers uploaded before the runs (benchmark.cpp's protocol: one input set per run,
// spin-up on a spare set until steady, warm-ups and timed runs back to back in one submission
// queued behind it, every output checked afterwards).
#include "segmented.hpp"

#include <chrono>
#include <optional>

#include "algorithms/sort_algorithm.hpp"
#include "benchmark.hpp"
#include "cuda_face.hpp"
#include "gpu_batches.hpp"
#include "vulkan/buffer.hpp"

namespace gpusort::bench {

namespace {

// The device buffers of the segmented rows, grown only when a row needs more (rows at one n
// are measured after `reserve` sized it for all of them), so that rows share a few allocations
// and do not depend on the driver's allocation history (benchmark.cpp's Pools). On the H100 and
// H200 (2026-11-23), with per-row allocations, whole rows (and only some of them) ran 3-5x
// slower, steadily over their 11 runs, and a row's timed runs changed speed from one input set to
// the next (docs/design/segmented-sort.md).
struct SegmentedPool {
  std::vector<DeviceBuffer> sets;  // sets[i]: one input set (keys | values | indices)
  uint64_t set_bytes = 0;
  DeviceBuffer scratch, offsets, up, down;
  uint64_t scratch_bytes = 0, offsets_bytes = 0;

  void reserve(Context::Impl& impl, uint32_t set_count, uint64_t set_size, uint64_t scratch_size,
               uint64_t offsets_size) {
    if (set_size > set_bytes) {
      sets.clear();
      up = DeviceBuffer(impl, set_size, MemoryKind::upload);
      down = DeviceBuffer(impl, set_size, MemoryKind::readback);
      set_bytes = set_size;
    }
    while (sets.size() < set_count) sets.emplace_back(impl, set_bytes, MemoryKind::device_local);
    if (scratch_size > scratch_bytes) {
      scratch = DeviceBuffer(impl, scratch_size, MemoryKind::device_local);
      scratch_bytes = scratch_size;
    }
    if (offsets_size > offsets_bytes) {
      offsets = DeviceBuffer(impl, offsets_size, MemoryKind::device_local);
      offsets_bytes = offsets_size;
    }
  }
};

// What one row needs from the pool.
struct RowNeeds {
  uint32_t sets;  // including the spare
  uint64_t set_bytes, scratch_bytes, offsets_bytes;
};

// One row: a segmented sort of `config` with the layout of `family`, or (no family) the argsort
// of u32 keys (keys-only SegmentedSorter, one segment, indices out).
// Its buffers: set layout keys | values | indices (argsort), each 256-aligned.
struct SetLayout {
  uint64_t key_size, value_size, index_size, value_offset, index_offset, set_bytes;
  SetLayout(const KeyConfig& config, bool argsort, uint64_t n)
      : key_size(n * config.key_bytes),
        value_size(n * config.value_bytes),
        index_size(argsort ? n * 4 : 0),
        value_offset(align_up(key_size, 256)),
        index_offset(align_up(value_offset + value_size, 256)),
        set_bytes(align_up(index_offset + index_size, 256)) {}
};

std::vector<uint32_t> row_offsets(std::optional<SegmentFamily> family, uint64_t n, uint64_t seed) {
  return family ? make_segment_offsets(*family, n, seed) : std::vector<uint32_t>{0, uint32_t(n)};
}

SegmentedSorterConfig sorter_config(const KeyConfig& config) {
  return {.key = parse_key_type(config.key), .value_bytes = config.value_bytes, .offset_bytes = 4};
}

RowNeeds row_needs(Context& ctx, const KeyConfig& config, bool argsort, uint64_t n,
                   uint64_t segments, uint64_t scratch_bytes, const Protocol& p) {
  const SetLayout l(config, argsort, n);
  RowNeeds needs{p.sets_for(l.key_size + l.value_size) + 1, l.set_bytes, scratch_bytes,
                 (segments + 1) * 4};
  const double usable = 0.8 * double(ctx.impl().info.device_local_bytes);
  while (needs.sets > 2 &&
         double(needs.sets) * double(l.set_bytes) + double(needs.scratch_bytes) > usable)
    --needs.sets;
  return needs;
}

Row measure(Context& ctx, const KeyConfig& config, std::optional<SegmentFamily> family, uint64_t n,
            const Protocol& p, uint64_t seed, SegmentedPool& pool, GpuBatches& gpu,
            const SmClock* clock) {
  Context::Impl& impl = ctx.impl();
  const auto started = std::chrono::steady_clock::now();
  const bool argsort = !family;
  Row row = Row::of("gpusort", argsort ? "argsort" : "segmented", config, n);
  if (argsort)
    row.config = argsort_config_name(), row.value_bytes = 4;  // the indices
  else
    row.config = segmented_config_name(config, *family, n);
  row.warmups = p.warmups;
  const bool exact = argsort || n <= p.exact_max_n;
  row.verified = argsort ? "every run: indices == the stable sorting permutation, keys in its order"
                 : exact ? "every run: each segment == std::stable_sort of it"
                         : "every run: each segment sorted + per-segment pair multiset hash";

  const std::vector<uint32_t> offsets = row_offsets(family, n, seed);
  const uint64_t segments = offsets.size() - 1;
  const SegmentedSorter sorter(ctx, sorter_config(config));
  row.scratch_bytes = sorter.scratch_bytes(n, segments);

  const SetLayout l(config, argsort, n);
  const uint64_t value_size = l.value_size, value_offset = l.value_offset,
                 index_offset = l.index_offset, set_bytes = l.set_bytes;
  const RowNeeds needs = row_needs(ctx, config, argsort, n, segments, row.scratch_bytes, p);
  pool.reserve(impl, needs.sets, needs.set_bytes, needs.scratch_bytes, needs.offsets_bytes);
  row.sets = needs.sets - 1;
  const uint32_t spare = row.sets;
  std::vector<DeviceBuffer>& sets = pool.sets;
  // Offsets are only read by the sort: one copy serves every run (CUB's rows do the same).
  DeviceBuffer& offsets_buffer = pool.offsets;
  upload(impl, offsets_buffer, offsets.data(), offsets.size() * 4);
  DeviceBuffer &scratch = pool.scratch, &up = pool.up, &down = pool.down;
  auto* up_bytes = static_cast<unsigned char*>(up.mapped());
  const auto* down_bytes = static_cast<const unsigned char*>(down.mapped());

  // Per set: its input's seed (the input is generated again for the exact checks) and hash.
  std::vector<uint64_t> set_seed(row.sets + 1), set_hash(row.sets + 1);
  uint64_t run_index = 0;
  auto send = [&](uint32_t s) {
    const uint64_t input_seed = run_seed(seed, config, n, run_index++);
    generate_input(config, n, input_seed, up_bytes, up_bytes + value_offset);
    set_seed[s] = input_seed;
    if (!argsort)
      set_hash[s] = segmented_hash(config, n, up_bytes, up_bytes + value_offset, offsets);
    impl.submit([&](VkCommandBuffer cmd) {
      VkBufferCopy copy{0, 0, value_offset + value_size};
      vkCmdCopyBuffer(cmd, up.buffer(), sets[s].buffer(), 1, &copy);
      Recorder::full_barrier(cmd);
    });
  };
  auto record_sort = [&](uint32_t s) {
    return [&, s](VkCommandBuffer cmd) {
      sorter.record(cmd, sets[s].ref(), value_size ? sets[s].ref(value_offset) : BufferRef{},
                    offsets_buffer.ref(), argsort ? sets[s].ref(index_offset) : BufferRef{},
                    scratch.ref(), n, segments);
    };
  };
  auto verify = [&](uint32_t s) {
    impl.submit([&](VkCommandBuffer cmd) {
      Recorder::full_barrier(cmd);
      VkBufferCopy copy{0, 0, set_bytes};
      vkCmdCopyBuffer(cmd, sets[s].buffer(), down.buffer(), 1, &copy);
      Recorder::full_barrier(cmd);
    });
    std::vector<unsigned char> input;
    if (exact) {
      input.resize(set_bytes);
      generate_input(config, n, set_seed[s], input.data(), input.data() + value_offset);
    }
    if (argsort)
      return check_argsort(config, n, input.data(),
                           reinterpret_cast<const uint32_t*>(down_bytes + index_offset),
                           down_bytes);
    return check_segmented_output(config, n, down_bytes, down_bytes + value_offset, offsets,
                                  set_hash[s], false, exact ? input.data() : nullptr,
                                  exact ? input.data() + value_offset : nullptr, true);
  };

  const uint64_t messages_before = ctx.validation_messages();
  send(spare);
  impl.submit(record_sort(spare));
  const uint32_t total = p.warmups + p.runs;
  for (uint32_t first = 0; first < total; first += row.sets) {
    const uint32_t count = std::min(row.sets, total - first);
    for (uint32_t s = 0; s < count; ++s) send(s);
    const std::vector<double> ms = gpu.spin_up_and_time(
        p, row, clock, count, [&](VkCommandBuffer cmd, uint32_t s) { record_sort(s)(cmd); },
        record_sort(spare));
    for (uint32_t s = 0; s < count; ++s) {
      std::string wrong = verify(s);
      if (!wrong.empty())
        throw Error("bench: " + row.algorithm + " " + row.config + " n=" + std::to_string(n) +
                    " run " + std::to_string(first + s) + ": " + wrong);
      if (first + s >= p.warmups) row.ms.push_back(ms[s]);
    }
  }
  if (ctx.validation_messages() != messages_before)
    throw Error("bench: validation messages while sorting " + row.algorithm + " " + row.config +
                " n=" + std::to_string(n));
  row.finish(p);
  row.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return row;
}

}  // namespace

std::vector<Row> run_segmented(Context& ctx, const SegmentedOptions& options) {
  Protocol p = options.protocol;
  if (p.runs == 0) throw Error("bench: at least one timed run is needed");
  std::vector<KeyConfig> configs =
      options.configs.empty() ? parse_key_configs("u32,u32+u32") : options.configs;
  const std::vector<SegmentFamily>& families =
      options.families.empty() ? segment_families() : options.families;
  const uint64_t seed = fresh_seed(p.seed);
  const KeyConfig u32 = parse_key_configs("u32")[0];
  std::vector<Row> rows;
  TimeBudget budget(p.time_budget_s);
  SegmentedPool pool;
  GpuBatches gpu(ctx.impl(), p.max_sets);
  const SmClock* clock = options.clock && options.clock->available() ? options.clock : nullptr;
  watch_clock(p, clock);
  auto add = [&](Row row) {
    print_row(row, clock);
    rows.push_back(std::move(row));
    if (options.on_row) options.on_row(rows);
  };
  // The CUDA face on the same GPU, or one line saying why not.
  std::unique_ptr<CudaFaceRows> cuda_face;
  if (options.cuda_face) {
    cuda_face = std::make_unique<CudaFaceRows>(device_uuid(ctx.impl()).data(), p.max_sets);
    if (!cuda_face->unavailable().empty())
      std::fprintf(stderr, "gpusort bench: the %s rows are skipped: %s\n", cuda_face_name,
                   cuda_face->unavailable().c_str());
  }
  print_header(clock);
  for (uint32_t log2 = p.min_log2; log2 <= p.max_log2; log2 += p.log2_step) {
    const uint64_t n = uint64_t(1) << log2;
    // The CUDA face's row of c (argsort or sort), after the Vulkan one.
    auto cuda_row = [&](const KeyConfig& c, bool argsort) {
      if (!cuda_face) return;
      const std::string kind = std::string(cuda_face_name) + (argsort ? " argsort " : " ") + c.name;
      Row row;
      if (std::string skipped = budget.check(kind, n); !skipped.empty()) {
        row = Row::of("gpusort", cuda_face_name, c, n);
        row.face = cuda_face_name;
        if (argsort) row.config = argsort_config_name(), row.value_bytes = 4;
        row.skipped = skipped;
      } else {
        row = argsort ? cuda_face->measure_argsort(c, n, p, seed, clock)
                      : cuda_face->measure(c, n, p, seed, clock);
        if (row.skipped.empty()) budget.record(kind, n, row.wall_s);
      }
      if (cuda_face->unavailable().empty()) print_row(row, clock);
      rows.push_back(std::move(row));
      if (options.on_row) options.on_row(rows);
    };
    auto timed = [&](const std::string& kind, const KeyConfig& c, std::optional<SegmentFamily> f) {
      std::string skipped = budget.check(kind, n);
      Row row;
      if (skipped.empty()) {
        row = measure(ctx, c, f, n, p, seed, pool, gpu, clock);
        budget.record(kind, n, row.wall_s);
      } else {
        row = Row::of("gpusort", f ? "segmented" : "argsort", c, n);
        row.config = f ? segmented_config_name(c, *f, n) : argsort_config_name();
        row.skipped = skipped;
      }
      add(std::move(row));
    };
    // The pool sized for every row at this n before the first one runs.
    auto reserve = [&](const KeyConfig& c, std::optional<SegmentFamily> f) {
      const uint64_t segments = row_offsets(f, n, seed).size() - 1;
      const SegmentedSorter sorter(ctx, sorter_config(c));
      const RowNeeds needs =
          row_needs(ctx, c, !f, n, segments, sorter.scratch_bytes(n, segments), p);
      pool.reserve(ctx.impl(), needs.sets, needs.set_bytes, needs.scratch_bytes,
                   needs.offsets_bytes);
    };
    for (const KeyConfig& c : configs)
      for (SegmentFamily f : families) reserve(c, f);
    reserve(u32, std::nullopt);
    for (const KeyConfig& c : configs)
      for (SegmentFamily f : families) timed(segmented_config_name(c, f, uint64_t(1) << 24), c, f);
    timed("argsort", u32, std::nullopt);
    cuda_row(u32, true);
    // The row argsort is judged against (within 10 %): the ordinary u32+u32 row.
    BenchOptions by_key{p, {Algorithm::automatic}, parse_key_configs("u32+u32"), {}, clock, false};
    by_key.protocol.min_log2 = by_key.protocol.max_log2 = log2;
    by_key.protocol.seed = seed;
    for (Row& row : run_benchmark(ctx, by_key)) {  // run_benchmark printed it
      rows.push_back(std::move(row));
      if (options.on_row) options.on_row(rows);
    }
    cuda_row(by_key.configs[0], false);
  }
  print_unsteady_summary(rows);
  return rows;
}

}  // namespace gpusort::bench
