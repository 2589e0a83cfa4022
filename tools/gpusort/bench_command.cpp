// gpusort bench: times every algorithm x key configuration x size with GPU timestamps, checks
// every result, prints a table and writes JSON / CSV (bench/benchmark.hpp, docs/PERFORMANCE.md).
#include <cstdio>
#include <gpusort/gpusort.hpp>
#include <memory>

#include "benchmark.hpp"
#include "commands.hpp"
#include "cuda_face.hpp"
#include "end_to_end.hpp"
#include "gpu_batches.hpp"
#include "segmented.hpp"
#include "topk.hpp"

namespace gpusort::cli {
namespace {

struct BenchArguments {
  std::string algorithms, keys, json, csv, device, layouts, device_memory_limit, kernels;
  bool quick = false, end_to_end = false, one_off = false, segmented = false;
  bool cpu_baseline = false;
  bool topk = false, smallest = false;
  std::string topk_shapes;
  uint32_t min_log2 = 10, max_log2 = 28, step = 2, warmups = 3, runs = 11;
  uint64_t seed = 0;
  double time_budget = 0;
  double spin_up_ms = 0, spin_up_max_ms = 0, max_spread = 0;
  std::string command_line;
};

void run_bench(const BenchArguments& a, const CLI::App& cmd) {
  bench::BenchOptions options;
  bench::Protocol& p = options.protocol;
  if (a.quick) p.make_quick();
  // Explicit options override --quick's choices.
  if (cmd.count("--min-log2")) p.min_log2 = a.min_log2;
  if (cmd.count("--max-log2")) p.max_log2 = a.max_log2;
  if (cmd.count("--step")) p.log2_step = a.step;
  if (cmd.count("--warmups")) p.warmups = a.warmups;
  if (cmd.count("--runs")) p.runs = a.runs;
  if (cmd.count("--spin-up-ms")) p.spin_up_ms = a.spin_up_ms;
  if (cmd.count("--spin-up-max-ms")) p.spin_up_max_ms = a.spin_up_max_ms;
  if (cmd.count("--max-spread")) p.max_spread = a.max_spread / 100;
  if (p.spin_up_ms < 0 || p.spin_up_max_ms < 0 || p.max_spread < 0)
    throw Error("bench: --spin-up-ms, --spin-up-max-ms and --max-spread must not be negative");
  p.seed = bench::fresh_seed(a.seed);
  p.time_budget_s = a.time_budget;
  // Up to 2^32 keys: in core where the device holds them (Onesweep and automatic;
  // the other algorithms' rows report their limit), end to end beyond that out of core.
  const uint32_t largest_log2 = 32;
  if (p.min_log2 > p.max_log2 || p.max_log2 > largest_log2 || p.log2_step == 0)
    throw Error("bench: need 0 <= --min-log2 <= --max-log2 <= " + std::to_string(largest_log2) +
                " and --step >= 1");
  if (!a.keys.empty()) {
    try {
      options.configs = bench::parse_key_configs(a.keys);
    } catch (const std::runtime_error& e) {
      throw Error(std::string("bench: ") + e.what());
    }
  }
  // `cuda` names the CUDA face's rows; the other names are the Vulkan face's algorithms.
  size_t start = 0;
  while (!a.algorithms.empty() && start <= a.algorithms.size()) {
    size_t end = a.algorithms.find(',', start);
    if (end == std::string::npos) end = a.algorithms.size();
    const std::string name = a.algorithms.substr(start, end - start);
    if (name == bench::cuda_face_name)
      options.cuda_face = true;
    else
      options.algorithms.push_back(parse_algorithm(name));
    start = end + 1;
  }
  options.vulkan_rows = !options.cuda_face || !options.algorithms.empty();

  start = 0;
  while (!a.kernels.empty() && start <= a.kernels.size()) {
    size_t end = a.kernels.find(',', start);
    if (end == std::string::npos) end = a.kernels.size();
    options.kernels.push_back(parse_kernel_path(a.kernels.substr(start, end - start)));
    start = end + 1;
  }

  Context ctx = Context::create({.device = a.device});
  const DeviceInfo& d = ctx.device_info();
  // The SM clock per row, where NVML reads it.
  const std::unique_ptr<bench::SmClock> clock = bench::sm_clock_of(ctx.impl());
  const bench::SmClock* row_clock = clock->available() ? clock.get() : nullptr;
  options.clock = row_clock;
  auto describe_protocol = [&] {
    if (p.spin_up_enabled())
      std::printf(
          "spin-up per row: the row's own sort of a spare input, batches back to back, until "
          "its time per sort holds within %.0f%% over %.0f ms (at least %.0f ms, at most "
          "%.0f ms); runs queued right behind it\n",
          100 * p.steady_tolerance, p.steady_window_ms, p.spin_up_ms,
          std::max(p.spin_up_ms, p.spin_up_max_ms));
    else
      std::printf("spin-up: off\n");
    std::printf(
        "flagged NOT STEADY: spread (interquartile range / median of the runs) above "
        "%.1f%%, or a spin-up that did not settle; SM clock: %s",
        100 * p.max_spread, clock->how().c_str());
    if (row_clock && clock->max_mhz() > 0) std::printf(" (max %d MHz)", clock->max_mhz());
    std::printf("\n");
  };
  if (a.topk) {
    bench::TopKBenchOptions t;
    t.quick = a.quick;
    t.largest = !a.smallest;
    t.shapes = a.topk_shapes;
    t.warmups = cmd.count("--warmups") ? a.warmups : (a.quick ? 1 : 3);
    t.runs = cmd.count("--runs") ? a.runs : (a.quick ? 3 : 11);
    if (cmd.count("--seed")) t.seed = uint32_t(a.seed);
    t.json = a.json;
    bench::run_topk_bench(ctx, t);
    return;
  }
  if (a.segmented) {
    // One size unless asked: 2^24, 2^14 with --quick.
    if (!cmd.count("--min-log2")) p.min_log2 = a.quick ? 14 : 24;
    if (!cmd.count("--max-log2")) p.max_log2 = std::max(p.min_log2, a.quick ? 14u : 24u);
    bench::SegmentedOptions seg{p, options.configs, {}, {}, row_clock, options.cuda_face};
    try {
      if (!a.layouts.empty()) seg.families = bench::parse_segment_families(a.layouts);
    } catch (const std::runtime_error& e) {
      throw Error(std::string("bench: ") + e.what());
    }
    std::printf(
        "gpusort bench --segmented on %s (%s); %u warm-ups, median of %u runs, seed "
        "%llu; SegmentedSorter::record and argsort on device buffers\n",
        d.name.c_str(), d.driver.c_str(), p.warmups, p.runs, (unsigned long long)p.seed);
    describe_protocol();
    bench::RunInfo info{"gpusort", d.name, d.driver, a.command_line, p, p.seed, clock->how()};
    seg.on_row = [&](const std::vector<bench::Row>& rows) {
      if (!a.json.empty()) bench::write_json(a.json, info, rows);
      if (!a.csv.empty()) bench::write_csv(a.csv, rows);
    };
    bench::run_segmented(ctx, seg);
    return;
  }
  if (a.end_to_end) {
    if (!cmd.count("--min-log2") && !a.quick) p.min_log2 = 20;
    if (!cmd.count("--warmups") && !a.quick) p.warmups = 2;
    if (!cmd.count("--runs") && !a.quick) p.runs = 5;
    std::printf(
        "gpusort bench --end-to-end on %s (%s); %u warm-ups, median of %u runs, seed "
        "%llu; gpusort::sort from host memory to host memory; device-resident sorts spin "
        "the GPU up before each run\n",
        d.name.c_str(), d.driver.c_str(), p.warmups, p.runs, (unsigned long long)p.seed);
    describe_protocol();
    const uint64_t limit = a.device_memory_limit.empty()
                               ? 0
                               : parse_bytes(a.device_memory_limit, "--device-memory-limit");
    if (limit)
      std::printf("out of core: device memory limit %llu bytes\n", (unsigned long long)limit);
    return bench::run_end_to_end(
        ctx, {p, options.configs, a.csv, a.one_off, limit, a.cpu_baseline, row_clock});
  }
  std::printf("gpusort bench on %s (%s); %u warm-ups, median of %u runs, seed %llu\n",
              d.name.c_str(), d.driver.c_str(), p.warmups, p.runs, (unsigned long long)p.seed);
  std::printf(
      "checked: every run's output is sorted and a permutation of its input (pair "
      "multiset hash); up to n = %llu also equal to std::stable_sort\n",
      (unsigned long long)p.exact_max_n);
  describe_protocol();
  bench::RunInfo info{"gpusort", d.name, d.driver, a.command_line, p, p.seed, clock->how()};
  // Rewritten after every row, so a run cut short keeps what it measured.
  options.on_row = [&](const std::vector<bench::Row>& rows) {
    if (!a.json.empty()) bench::write_json(a.json, info, rows);
    if (!a.csv.empty()) bench::write_csv(a.csv, rows);
  };
  bench::run_benchmark(ctx, options);
}

CommandRegistration registration([](CLI::App& app) {
  auto args = std::make_shared<BenchArguments>();
  auto* cmd = app.add_subcommand("bench",
                                 "Time the sorts (GPU timestamps), check every result, "
                                 "print a table, write JSON / CSV");
  cmd->add_option("--algorithms", args->algorithms,
                  "Comma-separated algorithms (default: every one this build has); `cuda` adds "
                  "the CUDA face's rows (gpusort::cuda::sort_raw on device memory, CUDA events, "
                  "the same inputs on the same GPU), skipped with one line on stderr where it "
                  "cannot run");
  cmd->add_option("--kernels", args->kernels,
                  "Comma-separated kernel paths of Onesweep's passes, one set of rows each: auto, "
                  "spirv, cuda (default auto; each row names the path it took)");
  cmd->add_option(
      "--keys", args->keys,
      "Comma-separated key configurations: u32, u64, f32, u32+u32, u64+u32 (default: all)");
  cmd->add_option("--min-log2", args->min_log2, "Smallest n is 2^this (default 10)");
  cmd->add_option("--max-log2", args->max_log2, "Largest n is 2^this (default 28)");
  cmd->add_option("--step", args->step, "log2(n) step (default 2)");
  cmd->add_option("--warmups", args->warmups, "Untimed runs per row (default 3)");
  cmd->add_option("--runs", args->runs, "Timed runs per row, the median is reported (default 11)");
  cmd->add_option("--seed", args->seed, "Random seed (default: a fresh one, printed)");
  cmd->add_option(
      "--time-budget", args->time_budget,
      "Seconds: rows run smallest n first; a row predicted to end past this is skipped");
  cmd->add_option("--spin-up-ms", args->spin_up_ms,
                  "Least spin-up per row: the row's own sort of a spare input runs at least this "
                  "long, and until its time settles, before the timed runs (default 200; 0 with "
                  "--spin-up-max-ms 0: none, as --quick)");
  cmd->add_option("--spin-up-max-ms", args->spin_up_max_ms,
                  "Most spin-up per row; a row whose times have not settled by then is flagged "
                  "(default 2000)");
  cmd->add_option("--max-spread", args->max_spread,
                  "Percent: a row whose runs' interquartile range exceeds this share of their "
                  "median is flagged NOT STEADY (default 5)");
  cmd->add_option("--device", args->device,
                  "Device index or name substring (default: GPUSORT_DEVICE, else the best)");
  cmd->add_option("--json", args->json, "Write the results as JSON here");
  cmd->add_option("--csv", args->csv, "Write the results as CSV here");
  cmd->add_flag("--end-to-end", args->end_to_end,
                "Time gpusort::sort from host memory to host memory (transfers included) beside "
                "the measured host<->device bandwidth (default n = 2^20..2^28, 5 runs)");
  cmd->add_flag(
      "--one-off", args->one_off,
      "With --end-to-end: also time 3 calls per row made after 1 s of idle with no spin-up "
      "(what a single sort on an idle GPU sees: the GPU's clocks are down)");
  cmd->add_option("--device-memory-limit", args->device_memory_limit,
                  "With --end-to-end: cap the device memory of each sort (K, M, G, T: powers of "
                  "1024), so that larger arrays sort out of core; rows add the runs and the shares "
                  "of transfers, GPU sorting and the CPU merge");
  cmd->add_flag("--cpu-baseline", args->cpu_baseline,
                "With --end-to-end: also time a 16-thread CPU parallel sort (GNU parallel mode) of "
                "the same input");
  cmd->add_flag("--segmented", args->segmented,
                "Segmented sort (SegmentedSorter::record) of --keys (default u32,u32+u32) over the "
                "--layouts, then argsort of u32 keys beside sort_by_key with u32 values (with "
                "--algorithms cuda: the CUDA face's too); default n = 2^24 (--quick: 2^14). Rows "
                "pair with `cub_baseline --segmented`");
  cmd->add_option("--layouts", args->layouts,
                  "With --segmented: comma-separated segment layouts, named by their shape at "
                  "n = 2^24: small (2^16x256: size 256 kept at other n), medium (2^10x2^14: "
                  "count kept), large (16x2^20: count kept), powerlaw (Pareto sizes, some "
                  "empty); default all");
  cmd->add_flag("--topk", args->topk,
                "Top-k (the radix select on device buffers) on torch.topk's anchor shapes: f32 "
                "arrays of 2^20..2^28 and i32 of 2^24..2^28 with k = 1, 32, 1024, 65536, and f32 "
                "rows (4096 x 2^14 k=64, 64 x 2^20 k=1024, 32768 x 4096 k=32); the k largest; "
                "every result checked (bench/topk_torch.py times torch.topk on the same inputs)");
  cmd->add_option("--topk-shapes", args->topk_shapes,
                  "With --topk: comma-separated families: whole (f32), i32, rows (default all)");
  cmd->add_flag("--smallest", args->smallest, "With --topk: the k smallest instead");
  cmd->add_flag("--quick", args->quick, "n = 2^10..2^14, 1 warm-up, 3 runs (CI on lavapipe)");
  cmd->callback([args, cmd] {
    args->command_line = "gpusort bench";
    for (const auto& [name, value] :
         std::vector<std::pair<std::string, std::string>>{{"--algorithms", args->algorithms},
                                                          {"--keys", args->keys},
                                                          {"--kernels", args->kernels},
                                                          {"--json", args->json},
                                                          {"--csv", args->csv},
                                                          {"--device", args->device},
                                                          {"--layouts", args->layouts}})
      if (!value.empty()) args->command_line += " " + name + " " + value;
    if (args->quick) args->command_line += " --quick";
    if (args->end_to_end) args->command_line += " --end-to-end";
    if (args->one_off) args->command_line += " --one-off";
    if (!args->device_memory_limit.empty())
      args->command_line += " --device-memory-limit " + args->device_memory_limit;
    if (args->cpu_baseline) args->command_line += " --cpu-baseline";
    if (args->segmented) args->command_line += " --segmented";
    if (args->topk) args->command_line += " --topk";
    for (const char* name : {"--min-log2", "--max-log2", "--step", "--warmups", "--runs", "--seed",
                             "--time-budget", "--spin-up-ms", "--spin-up-max-ms", "--max-spread"})
      if (cmd->count(name))
        args->command_line +=
            std::string(" ") + name + " " + cmd->get_option(name)->as<std::string>();
    run_bench(*args, *cmd);
  });
});

}  // namespace
}  // namespace gpusort::cli
