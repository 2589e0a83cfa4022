// `gpusort bench --segmented`: each timed run is one submission holding two timestamps around
// SegmentedSorter::record, on device buffers uploaded before the runs (benchmark.cpp's protocol:
// one input set per run, spin-up on a spare set, warm-ups, timed runs back to back, every output
// checked afterwards).
#include "segmented.hpp"

#include <chrono>
#include <optional>

#include "algorithms/sort_algorithm.hpp"
#include "benchmark.hpp"
#include "vulkan/buffer.hpp"

namespace gpusort::bench {

namespace {

// One row: a segmented sort of `config` with the layout of `family`, or (no family) the argsort
// of u32 keys (keys-only SegmentedSorter, one segment, indices out).
Row measure(Context& ctx, const KeyConfig& config, std::optional<SegmentFamily> family, uint64_t n,
            const Protocol& p, uint64_t seed) {
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

  const std::vector<uint32_t> offsets =
      argsort ? std::vector<uint32_t>{0, uint32_t(n)} : make_segment_offsets(*family, n, seed);
  const uint64_t segments = offsets.size() - 1;
  const SegmentedSorter sorter(
      ctx,
      {.key = parse_key_type(config.key), .value_bytes = config.value_bytes, .offset_bytes = 4});
  row.scratch_bytes = sorter.scratch_bytes(n, segments);

  // A set: keys | values | indices (argsort), each 256-aligned; the staging buffers mirror it.
  const uint64_t key_size = n * config.key_bytes, value_size = n * config.value_bytes;
  const uint64_t index_size = argsort ? n * 4 : 0;
  const uint64_t value_offset = align_up(key_size, 256);
  const uint64_t index_offset = align_up(value_offset + value_size, 256);
  const uint64_t set_bytes = align_up(index_offset + index_size, 256);
  row.sets = p.sets_for(key_size + value_size);
  const double usable = 0.8 * double(impl.info.device_local_bytes);
  while (row.sets > 1 && double(row.sets + 1) * set_bytes + row.scratch_bytes > usable) --row.sets;
  const uint32_t spare = row.sets;
  std::vector<DeviceBuffer> sets;
  for (uint32_t s = 0; s <= row.sets; ++s)
    sets.emplace_back(impl, set_bytes, MemoryKind::device_local);
  // Offsets are only read by the sort: one copy serves every run (CUB's rows do the same).
  DeviceBuffer offsets_buffer(impl, offsets.size() * 4, MemoryKind::device_local);
  upload(impl, offsets_buffer, offsets.data(), offsets.size() * 4);
  DeviceBuffer scratch(impl, row.scratch_bytes, MemoryKind::device_local);
  DeviceBuffer up(impl, set_bytes, MemoryKind::upload), down(impl, set_bytes, MemoryKind::readback);
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
    p.spin_up([&](uint32_t repeats) {
      impl.submit([&](VkCommandBuffer cmd) {
        for (uint32_t r = 0; r < repeats; ++r) record_sort(spare)(cmd);
      });
    });
    std::vector<double> ms(count);
    for (uint32_t s = 0; s < count; ++s) ms[s] = impl.submit_timed(record_sort(s));
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
  row.finish();
  row.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return row;
}

}  // namespace

std::vector<Row> run_segmented(Context& ctx, const SegmentedOptions& options) {
  const Protocol& p = options.protocol;
  if (p.runs == 0) throw Error("bench: at least one timed run is needed");
  std::vector<KeyConfig> configs =
      options.configs.empty() ? parse_key_configs("u32,u32+u32") : options.configs;
  const std::vector<SegmentFamily>& families =
      options.families.empty() ? segment_families() : options.families;
  const uint64_t seed = fresh_seed(p.seed);
  const KeyConfig u32 = parse_key_configs("u32")[0];
  std::vector<Row> rows;
  TimeBudget budget(p.time_budget_s);
  auto add = [&](Row row) {
    print_row(row);
    rows.push_back(std::move(row));
    if (options.on_row) options.on_row(rows);
  };
  print_header();
  for (uint32_t log2 = p.min_log2; log2 <= p.max_log2; log2 += p.log2_step) {
    const uint64_t n = uint64_t(1) << log2;
    auto timed = [&](const std::string& kind, const KeyConfig& c, std::optional<SegmentFamily> f) {
      std::string skipped = budget.check(kind, n);
      Row row;
      if (skipped.empty()) {
        row = measure(ctx, c, f, n, p, seed);
        budget.record(kind, n, row.wall_s);
      } else {
        row = Row::of("gpusort", f ? "segmented" : "argsort", c, n);
        row.config = f ? segmented_config_name(c, *f, n) : argsort_config_name();
        row.skipped = skipped;
      }
      add(std::move(row));
    };
    for (const KeyConfig& c : configs)
      for (SegmentFamily f : families) timed(segmented_config_name(c, f, uint64_t(1) << 24), c, f);
    timed("argsort", u32, std::nullopt);
    // The row argsort is judged against (issue #13: within 10 %): the ordinary u32+u32 row.
    BenchOptions by_key{p, {Algorithm::automatic}, parse_key_configs("u32+u32"), {}};
    by_key.protocol.min_log2 = by_key.protocol.max_log2 = log2;
    by_key.protocol.seed = seed;
    for (Row& row : run_benchmark(ctx, by_key)) {  // run_benchmark printed it
      rows.push_back(std::move(row));
      if (options.on_row) options.on_row(rows);
    }
  }
  return rows;
}

}  // namespace gpusort::bench
