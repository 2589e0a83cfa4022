// `gpusort bench --end-to-end` (end_to_end.hpp). Per row: warm-ups, then timed runs of
// gpusort::sort on a fresh copy of the input in host memory (the copy is not timed), the median
// reported with its stages (SortTimings); every run's output checked (sorted, pair multiset).
// Before each run the GPU is spun up like the kernel rows' (Protocol::spin_up: sorts of
// device-resident keys until their time settles), and the call follows at once, because the
// H100's SM clock follows the recent load: from an idle GPU a 2^28 sort inside the call runs at
// 345 MHz, 5.3x slower (docs/design/host-path.md, clock probe). Rows report the spread of the
// calls' times and are flagged like the kernel rows (docs/design/benchmark-protocol.md). With
// --one-off, each row also reports calls made after 1 s of idle, with no spin-up: what a program
// that sorts once, on an otherwise idle GPU, sees. The floor is the bytes moved each way over the
// bandwidth measured first: a DMA between pinned host memory and device memory, each direction, the
// median of five.
#include "end_to_end.hpp"

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "host/key_order.hpp"
#include "gpu_batches.hpp"
#include "vulkan/buffer.hpp"

#ifdef GPUSORT_HAVE_GNU_PARALLEL
#include <omp.h>

#include <parallel/algorithm>
#endif

namespace gpusort::bench {
namespace {

struct Bandwidth {
  double up_gbps = 0, down_gbps = 0;
};

Bandwidth measure_bus(Context& ctx, uint64_t bytes) {
  auto& impl = ctx.impl();
  DeviceBuffer host(impl, bytes, MemoryKind::readback),
      device(impl, bytes, MemoryKind::device_local);
  std::memset(host.mapped(), 0x5a, bytes);
  auto copy_ms = [&](const DeviceBuffer& from, const DeviceBuffer& to) {
    std::vector<double> ms;
    for (int i = 0; i < 5; ++i)
      ms.push_back(impl.submit_timed([&](VkCommandBuffer cmd) {
        VkBufferCopy region{0, 0, bytes};
        vkCmdCopyBuffer(cmd, from.buffer(), to.buffer(), 1, &region);
      }));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  return {double(bytes) / (copy_ms(host, device) * 1e6),
          double(bytes) / (copy_ms(device, host) * 1e6)};
}

// Device-resident keys sorted again and again to bring the GPU to working clocks (2^24 random
// u32 keys: 0.7 ms a sort on the H100), in batches queued back to back (Protocol::spin_up).
class SpareSort {
 public:
  explicit SpareSort(Context& ctx, uint64_t n)
      : impl_(ctx.impl()),
        n_(n),
        sorter_(ctx, {.key = KeyType::u32}),
        keys_(impl_, n * 4, MemoryKind::device_local),
        scratch_(impl_, sorter_.scratch_bytes(n), MemoryKind::device_local),
        gpu_(impl_, 1) {
    DeviceBuffer staging(impl_, n * 4, MemoryKind::readback);
    // Random (bench_common's generator): every pass runs, none is skipped.
    generate_input(parse_key_configs("u32")[0], n, 0x5eed, staging.mapped(), nullptr);
    impl_.submit([&](VkCommandBuffer cmd) {
      VkBufferCopy region{0, 0, n * 4};
      vkCmdCopyBuffer(cmd, staging.buffer(), keys_.buffer(), 1, &region);
      Recorder::full_barrier(cmd);
    });
  }
  // Spins the GPU up; returns with nothing of it left queued. `clock` is read just before the
  // last batch ends (-1: not known).
  SpinUp spin_up(const Protocol& p, const SmClock* clock, int& mhz) {
    // No barrier of ours between the sorts: each ends with one (Sorter's contract).
    const SpinUp s = p.spin_up(
        [&](uint32_t repeats) {
          gpu_.begin_batch(repeats, [&](VkCommandBuffer cmd) {
            sorter_.record(cmd, keys_.ref(), {}, scratch_.ref(), n_);
          });
        },
        [&] { return gpu_.finish_batch(); });
    mhz = clock ? clock->mhz() : -1;
    while (gpu_.batches_queued() > 0) gpu_.finish_batch();
    return s;
  }

 private:
  Context::Impl& impl_;
  uint64_t n_;
  Sorter sorter_;
  DeviceBuffer keys_, scratch_;
  GpuBatches gpu_;
};

// Milliseconds of a CPU parallel sort of n keys K (with u32 values when given), by the keys'
// radix order (what gpusort sorts by); -1 without GNU parallel mode in this build.
template <class K>
double cpu_sort_ms(void* keys_in, const uint32_t* values_in, uint64_t n, unsigned threads) {
#ifdef GPUSORT_HAVE_GNU_PARALLEL
  omp_set_num_threads(int(threads));
  using clock = std::chrono::steady_clock;
  if (!values_in) {  // in place: at 2^32 u64 keys a copy would not fit beside the bench's two
    K* keys = static_cast<K*>(keys_in);
    const auto start = clock::now();
    __gnu_parallel::sort(keys, keys + n,
                         [](K a, K b) { return radix_order_of(a) < radix_order_of(b); });
    return std::chrono::duration<double, std::milli>(clock::now() - start).count();
  }
  struct Pair {
    K key;
    uint32_t value;
  };
  std::vector<Pair> pairs(n);
  for (uint64_t i = 0; i < n; ++i) {
    std::memcpy(&pairs[i].key, static_cast<const char*>(keys_in) + i * sizeof(K), sizeof(K));
    pairs[i].value = values_in[i];
  }
  const auto start = clock::now();
  __gnu_parallel::stable_sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) {
    return radix_order_of(a.key) < radix_order_of(b.key);
  });
  return std::chrono::duration<double, std::milli>(clock::now() - start).count();
#else
  (void)keys_in, (void)values_in, (void)n, (void)threads;
  return -1;
#endif
}

double cpu_sort_ms(const KeyConfig& c, void* keys, const uint32_t* values, uint64_t n) {
  constexpr unsigned threads = 16;
  const uint32_t* v = c.value_bytes ? values : nullptr;
  if (c.is_float)
    return c.key_bytes == 4 ? cpu_sort_ms<float>(keys, v, n, threads)
                            : cpu_sort_ms<double>(keys, v, n, threads);
  return c.key_bytes == 4 ? cpu_sort_ms<uint32_t>(keys, v, n, threads)
                          : cpu_sort_ms<uint64_t>(keys, v, n, threads);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

void run_end_to_end(Context& ctx, const EndToEndOptions& options) {
  Protocol p = options.protocol;
  std::vector<KeyConfig> configs = options.configs;
  if (configs.empty())
    for (const char* name : {"u32", "f32", "u64", "u32+u32"})
      configs.push_back(parse_key_configs(name)[0]);
  const uint64_t largest = uint64_t(1) << p.max_log2;
  const Bandwidth bus = measure_bus(ctx, std::clamp<uint64_t>(largest * 4, 1 << 20, 256 << 20));
  std::printf("host<->device bandwidth (DMA, pinned memory): %.1f GB/s up, %.1f GB/s down\n",
              bus.up_gbps, bus.down_gbps);
  SpareSort spare(ctx, p.spin_up_enabled() ? uint64_t(1) << 24 : 1024);
  const SmClock* clock = options.clock && options.clock->available() ? options.clock : nullptr;
  watch_clock(p, clock);
  std::printf("%-8s %11s %9s %10s %10s %10s %10s %8s %9s %7s %7s%s%s\n", "keys", "n", "MB", "ms",
              "upload", "sort GPU", "download", "GB/s", "floor ms", "/floor", "spread",
              clock ? "  SM MHz" : "",
              options.one_off ? "  one-off ms (upload sort download) /floor" : "");
  std::ofstream csv;
  if (!options.csv.empty()) {
    csv.open(options.csv);
    csv << "config,n,bytes,ms,upload_ms,sort_gpu_ms,download_ms,gb_per_s,floor_ms,"
           "up_gbps,down_gbps,one_off_ms,one_off_upload_ms,one_off_sort_gpu_ms,"
           "one_off_download_ms,spread,steady,unsteady,spin_up_state,spin_up_ms,sm_clock_mhz\n";
  }
  std::vector<Row> summary;  // the rows' spreads and flags, for the summary at the end
  for (const KeyConfig& c : configs) {
    const KeyType key = parse_key_type(c.key);
    for (uint32_t log2 = p.min_log2; log2 <= p.max_log2; log2 += p.log2_step) {
      const uint64_t n = uint64_t(1) << log2;
      std::vector<uint64_t> input_keys((n * c.key_bytes + 7) / 8), keys(input_keys.size());
      std::vector<uint32_t> input_values(c.value_bytes ? n : 0), values(input_values.size());
      const uint64_t hash =
          generate_input(c, n, p.seed + log2, input_keys.data(), input_values.data());
      auto restore = [&] {
        parallel_for(input_keys.size(), [&](uint64_t begin, uint64_t end, unsigned) {
          std::copy(input_keys.begin() + begin, input_keys.begin() + end, keys.begin() + begin);
        });
        parallel_for(input_values.size(), [&](uint64_t begin, uint64_t end, unsigned) {
          std::copy(input_values.begin() + begin, input_values.begin() + end,
                    values.begin() + begin);
        });
      };
      auto sort_and_check = [&] {
        SortTimings t;
        sort_raw(ctx, key, keys.data(), n, c.value_bytes ? values.data() : nullptr, c.value_bytes,
                 {.timings = &t, .device_memory_limit = options.device_memory_limit});
        const std::string wrong =
            check_output(c, n, keys.data(), values.data(), hash, false, nullptr, nullptr, true);
        if (!wrong.empty())
          throw Error("end-to-end " + std::string(c.name) + " n=" + std::to_string(n) + ": " +
                      wrong);
        return t;
      };
      // Per run: the input restored (host), the GPU spun up until the spare sort's time settles,
      // then at once the call. The row's spread is over the calls' total times; its spin-up and
      // clock (read as the spin-up ends) are the last run's.
      std::vector<SortTimings> runs, one_off;
      Row row = Row::of("gpusort", "end-to-end", c, n);
      for (uint32_t run = 0; run < p.warmups + p.runs; ++run) {
        restore();
        SpinUp spin = spare.spin_up(p, clock, row.sm_clock_mhz);
        const SortTimings t = sort_and_check();
        if (run >= p.warmups) runs.push_back(t), row.ms.push_back(t.total_ms);
        if (spin.state == SpinUp::State::cap || row.spin.state != SpinUp::State::cap)
          row.spin = spin;
      }
      row.finish(p);
      for (uint32_t run = 0; options.one_off && run < 3; ++run) {
        restore();
        std::this_thread::sleep_for(std::chrono::seconds(1));
        one_off.push_back(sort_and_check());
      }
      auto stage_of = [&](const std::vector<SortTimings>& list, double SortTimings::*field) {
        std::vector<double> v;
        for (auto& t : list) v.push_back(t.*field);
        return v.empty() ? 0.0 : median(v);
      };
      auto stage = [&](double SortTimings::*field) { return stage_of(runs, field); };
      auto one_off_stage = [&](double SortTimings::*field) { return stage_of(one_off, field); };
      const double ms = stage(&SortTimings::total_ms);
      const uint64_t bytes = runs[0].bytes;
      const double floor_ms =
          double(bytes) / (bus.up_gbps * 1e6) + double(bytes) / (bus.down_gbps * 1e6);
      std::printf("%-8s %11llu %9.1f %10.3f %10.3f %10.3f %10.3f %8.2f %9.3f %7.2f %6.1f%%", c.name,
                  (unsigned long long)n, double(bytes) / 1e6, ms, stage(&SortTimings::upload_ms),
                  stage(&SortTimings::sort_gpu_ms), stage(&SortTimings::download_ms),
                  double(bytes) / (ms * 1e6), floor_ms, ms / floor_ms, 100 * row.spread());
      if (clock && row.sm_clock_mhz >= 0)
        std::printf("  %6d", row.sm_clock_mhz);
      else if (clock)
        std::printf("  %6s", "-");
      const double one_off_ms = one_off_stage(&SortTimings::total_ms);
      if (options.one_off)
        std::printf("  %10.3f (%.1f %.1f %.1f) %5.2f", one_off_ms,
                    one_off_stage(&SortTimings::upload_ms),
                    one_off_stage(&SortTimings::sort_gpu_ms),
                    one_off_stage(&SortTimings::download_ms), one_off_ms / floor_ms);
      if (options.device_memory_limit) {
        // Shares of the call: transfers (upload and download, the runs' host copies included),
        // GPU sorting, and the CPU's merge (with the copy back into the caller's arrays).
        const double up = stage(&SortTimings::upload_ms), down = stage(&SortTimings::download_ms),
                     gpu = stage(&SortTimings::sort_gpu_ms), merge = stage(&SortTimings::merge_ms);
        std::printf("  %.3f GKeys/s, runs %llu: transfers %.0f%% sort %.0f%% merge %.0f%%",
                    double(n) / (ms * 1e6), (unsigned long long)runs[0].runs,
                    100 * (up + down) / ms, 100 * gpu / ms, 100 * merge / ms);
      }
      if (options.cpu_baseline) {
        std::vector<double> cpu;
        for (uint32_t run = 0; run < std::max(1u, p.runs); ++run) {
          restore();
          cpu.push_back(cpu_sort_ms(c, keys.data(), values.data(), n));
        }
        const double cpu_ms = median(cpu);
        if (cpu_ms < 0)
          std::printf("  CPU: not built (no OpenMP)");
        else
          std::printf("  CPU 16 threads %.1f ms (%.3f GKeys/s), gpusort %.2fx", cpu_ms,
                      double(n) / (cpu_ms * 1e6), cpu_ms / ms);
      }
      if (!row.steady()) std::printf("  NOT STEADY: %s", row.unsteady.c_str());
      std::printf("\n");
      std::fflush(stdout);
      if (csv.is_open())
        csv << c.name << "," << n << "," << bytes << "," << ms << ","
            << stage(&SortTimings::upload_ms) << "," << stage(&SortTimings::sort_gpu_ms) << ","
            << stage(&SortTimings::download_ms) << "," << double(bytes) / (ms * 1e6) << ","
            << floor_ms << "," << bus.up_gbps << "," << bus.down_gbps << "," << one_off_ms << ","
            << one_off_stage(&SortTimings::upload_ms) << ","
            << one_off_stage(&SortTimings::sort_gpu_ms) << ","
            << one_off_stage(&SortTimings::download_ms) << "," << row.spread() << ","
            << (row.steady() ? "true" : "false") << ",\"" << row.unsteady << "\","
            << SpinUp::name(row.spin.state) << "," << row.spin.ms << ","
            << (row.sm_clock_mhz >= 0 ? std::to_string(row.sm_clock_mhz) : std::string())
            << std::endl;
      summary.push_back(std::move(row));
    }
  }
  print_unsteady_summary(summary);
  if (ctx.validation_messages() != 0)
    throw Error("the Vulkan validation layer reported " +
                std::to_string(ctx.validation_messages()) + " message(s) (printed above)");
}

}  // namespace gpusort::bench
