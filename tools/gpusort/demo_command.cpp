// gpusort demo: sorts a random array of a few million keys on the best device, checks the whole
// result against std::sort, and prints the median time and throughput of --runs runs two ways:
//  - GPU sort time: GPU timestamps around the sort's dispatches only (engine face: Sorter
//    recording into a command buffer on device buffers), what the GPU itself spends;
//  - end-to-end: wall time of gpusort::sort on host memory (convenient face), which adds the
//    copies to and from the device (its buffers and staging memory, kept by the Context, come
//    from an untimed first call), with the stages of the median run.
// Before every timed run the GPU is spun up as `gpusort bench` does (docs/design/benchmark-protocol.md):
// an idle GPU runs at a lowered clock, and the host's work between runs (restoring and checking
// the keys) is long enough at large n for the clock to drop.
//
// gpusort demo --first-call: one gpusort::sort in this fresh process, with no warm-up and no
// spin-up, reporting its stages: what a program that sorts once sees (bench/first_call.sh runs
// it after the GPU has idled).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <gpusort/gpusort.hpp>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "commands.hpp"
#include "gpu_batches.hpp"
#include "vulkan/buffer.hpp"
#include "vulkan/recorder.hpp"

namespace gpusort::cli {
namespace {

struct DemoArguments {
  uint64_t n = 4'000'000;
  std::string type = "u32";
  std::string device;
  uint64_t seed = std::random_device{}();
  uint32_t runs = 3;
  bool first_call = false;
};

const char* device_kind(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "CPU";
    default:
      return "other";
  }
}

// Integers: uniformly random bits. Floats: uniformly random finite values of both signs, so
// std::sort's operator< is a strict weak order and agrees with the GPU's totalOrder.
template <class K>
std::vector<K> random_keys(uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> keys(n);
  if constexpr (std::is_floating_point_v<K>) {
    std::uniform_real_distribution<K> value(K(-1e6), K(1e6));
    for (auto& k : keys) k = value(rng);
  } else {
    for (auto& k : keys) k = K(rng());
  }
  return keys;
}

// Compares bit patterns: the whole array, every element.
template <class K>
void verify(const std::vector<K>& result, const std::vector<K>& expected, const char* what) {
  if (std::memcmp(result.data(), expected.data(), result.size() * sizeof(K)) == 0) return;
  size_t i = 0;
  while (std::memcmp(&result[i], &expected[i], sizeof(K)) == 0) ++i;
  throw Error(std::string("verification failed: ") + what +
              " differs from std::sort first at index " + std::to_string(i) + " of " +
              std::to_string(result.size()));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double gkeys_per_s(uint64_t n, double ms) {
  return ms > 0 ? double(n) / (ms * 1e-3) / 1e9 : 0.0;
}

template <class K>
void print_header(Context& ctx, const DemoArguments& a) {
  std::printf("device: %s (%s)\n", ctx.device_info().name.c_str(),
              device_kind(ctx.device_info().type));
  std::printf("keys:   %" PRIu64 " random %s (seed %" PRIu64 ")\n", a.n,
              to_string(key_type_of<K>()), a.seed);
  std::fflush(stdout);
}

// "upload 26.912 ms (39.89 GB/s)": a transfer stage and its rate, the bytes moved over that
// stage's own time (not the whole call's).
std::string stage_rate(const char* name, double ms, uint64_t bytes) {
  char text[96];
  std::snprintf(text, sizeof text, "%s %.3f ms (%.2f GB/s)", name, ms,
                ms > 0 ? double(bytes) / (ms * 1e6) : 0.0);
  return text;
}

template <class K>
void run_demo_typed(Context& ctx, const DemoArguments& a) {
  auto& impl = ctx.impl();
  const uint64_t n = a.n, bytes = n * sizeof(K);
  print_header<K>(ctx, a);

  const std::vector<K> input = random_keys<K>(n, a.seed);
  std::vector<K> expected = input;
  std::sort(expected.begin(), expected.end());

  // The spin-up before every timed run (bench's protocol: the sort of a spare input, batches
  // back to back, until its time per sort settles), on up to 2^22 keys of the input.
  bench::Protocol protocol;
  // A CPU device (lavapipe) has no clock to bring up.
  if (ctx.device_info().type == VK_PHYSICAL_DEVICE_TYPE_CPU)
    protocol.spin_up_ms = protocol.spin_up_max_ms = 0;
  Sorter sorter(ctx, {.key = key_type_of<K>()});
  const uint64_t spare_n = std::min<uint64_t>(n, uint64_t(1) << 22);
  DeviceBuffer spare(impl, spare_n * sizeof(K), MemoryKind::device_local);
  DeviceBuffer spare_scratch(impl, sorter.scratch_bytes(spare_n), MemoryKind::device_local);
  upload(impl, spare, input.data(), spare_n * sizeof(K));
  bench::GpuBatches gpu(impl, 1);
  auto spin_up = [&] {
    protocol.spin_up(
        [&](uint32_t repeats) {
          gpu.begin_batch(repeats, [&](VkCommandBuffer cmd) {
            sorter.record(cmd, spare.ref(), {}, spare_scratch.ref(), spare_n);
          });
        },
        [&] { return gpu.finish_batch(); });
  };

  // Engine face, timed on the GPU like `gpusort bench`: per run the spin-up, and queued right
  // behind it the input restored from a device copy (untimed) and the sort between timestamps;
  // one untimed run first. Every run is verified.
  std::vector<double> gpu_ms, wall_ms;
  std::vector<SortTimings> stages;
  {
    DeviceBuffer source(impl, bytes, MemoryKind::device_local);
    DeviceBuffer keys(impl, bytes, MemoryKind::device_local);
    DeviceBuffer scratch(impl, sorter.scratch_bytes(n), MemoryKind::device_local);
    DeviceBuffer readback(impl, bytes, MemoryKind::readback);
    upload(impl, source, input.data(), bytes);
    gpu.record_runs(
        1,
        [&](VkCommandBuffer cmd, uint32_t) {
          sorter.record(cmd, keys.ref(), {}, scratch.ref(), n);
        },
        [&](VkCommandBuffer cmd, uint32_t) {
          VkBufferCopy region{0, 0, bytes};
          vkCmdCopyBuffer(cmd, source.buffer(), keys.buffer(), 1, &region);
          Recorder::full_barrier(cmd);
        });
    std::vector<K> gpu_result(n);
    for (uint32_t run = 0; run <= a.runs; ++run) {
      spin_up();
      gpu.submit_runs();
      while (gpu.batches_queued() > 0) gpu.finish_batch();
      const double ms = gpu.finish_runs()[0];
      if (run > 0) gpu_ms.push_back(ms);
      impl.submit([&](VkCommandBuffer cmd) {
        VkBufferCopy region{0, 0, bytes};
        vkCmdCopyBuffer(cmd, keys.buffer(), readback.buffer(), 1, &region);
        Recorder::full_barrier(cmd);
      });
      std::memcpy(gpu_result.data(), readback.mapped(), bytes);
      verify(gpu_result, expected, "the engine-face result");
    }
  }
  // Convenient face, wall time on host memory: one untimed call first (it allocates the
  // buffers and staging memory the Context then keeps), then the timed runs, each right after a
  // spin-up.
  std::vector<K> keys(n);
  for (uint32_t run = 0; run <= a.runs; ++run) {
    std::copy(input.begin(), input.end(), keys.begin());
    SortTimings t;
    if (run > 0) spin_up();
    while (gpu.batches_queued() > 0) gpu.finish_batch();
    sort(ctx, std::span<K>(keys), {.timings = &t});
    if (run > 0) wall_ms.push_back(t.total_ms), stages.push_back(t);
    verify(keys, expected, "the gpusort::sort result");
  }
  if (ctx.validation_messages() != 0)
    throw Error("the Vulkan validation layer reported " +
                std::to_string(ctx.validation_messages()) + " message(s) (printed above)");

  const double gpu_median = median(gpu_ms), wall = median(wall_ms);
  std::printf("median of %u runs%s:\n", a.runs,
              protocol.spin_up_enabled() ? ", the GPU spun up before each" : "");
  std::printf(
      "GPU sort time:              %10.3f ms  %9.4f GKeys/s  (GPU timestamps around the sort's "
      "dispatches)\n",
      gpu_median, gkeys_per_s(n, gpu_median));
  std::printf(
      "end-to-end incl. transfers: %10.3f ms  %9.4f GKeys/s  (wall time of gpusort::sort on host "
      "memory)\n",
      wall, gkeys_per_s(n, wall));
  std::sort(stages.begin(), stages.end(),
            [](const SortTimings& x, const SortTimings& y) { return x.total_ms < y.total_ms; });
  const SortTimings& mid = stages[stages.size() / 2];
  std::printf("  of which (median run): %s, sort %.3f ms (GPU), %s; GB/s: the %" PRIu64
              " bytes of "
              "keys over that stage's time\n",
              stage_rate("upload", mid.upload_ms, bytes).c_str(), mid.sort_gpu_ms,
              stage_rate("download", mid.download_ms, bytes).c_str(), bytes);
  std::printf(
      "a lone call on an idle GPU takes longer (lowered clocks): gpusort demo --first-call "
      "measures one\n");
  std::printf("verified: all %u results equal std::sort on all %" PRIu64 " keys\n", 2 * a.runs, n);
}

// The order-independent hash of an array's bit patterns (a permutation keeps it).
template <class K>
uint64_t multiset_hash(const std::vector<K>& keys) {
  uint64_t sum = 0;
  for (const K& k : keys) {
    uint64_t bits = 0;
    std::memcpy(&bits, &k, sizeof(K));
    sum += bench::mix64(bits + bench::golden);
  }
  return sum;
}

// --first-call: one gpusort::sort in this process, nothing before it on the GPU but the
// Context's creation (timed, `device_ms`). The check is sortedness and the multiset hash, so
// that large n stays quick (std::sort of 2^28 keys would take longer than the sort).
template <class K>
void run_first_call(Context& ctx, const DemoArguments& a, double device_ms) {
  const uint64_t n = a.n, bytes = n * sizeof(K);
  print_header<K>(ctx, a);
  std::vector<K> keys = random_keys<K>(n, a.seed);
  const uint64_t hash = multiset_hash(keys);
  const std::unique_ptr<bench::SmClock> clock = bench::sm_clock_of(ctx.impl());
  const int mhz_before = clock->mhz();
  SortTimings t;
  const auto started = std::chrono::steady_clock::now();
  sort(ctx, std::span<K>(keys), {.timings = &t});
  const double call_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  const int mhz_after = clock->mhz();
  if (!std::is_sorted(keys.begin(), keys.end()) || multiset_hash(keys) != hash)
    throw Error("verification failed: the first call's result is not the sorted input");
  if (ctx.validation_messages() != 0)
    throw Error("the Vulkan validation layer reported " +
                std::to_string(ctx.validation_messages()) + " message(s) (printed above)");
  // The call's own stages (SortTimings) cover its staged part; what comes before it (argument
  // checks, the host path's objects) is the call's wall time less total_ms. On a first call
  // the upload stage includes allocating the staging and device buffers and creating the sort's
  // pipelines (recorded with the work).
  const double setup_ms = std::max(0.0, call_ms - t.total_ms);
  auto clock_text = [](int mhz) {
    return mhz >= 0 ? std::to_string(mhz) + " MHz" : std::string("-");
  };
  std::printf("first call in this process, no warm-up, no spin-up (SM clock: %s)\n",
              clock->how().c_str());
  std::printf("  device    %10.3f ms  Context::create: Vulkan instance and device\n", device_ms);
  std::printf("  call      %10.3f ms  wall time of gpusort::sort on host memory\n", call_ms);
  std::printf("    setup   %10.3f ms  before the staged part (the host path's objects)\n",
              setup_ms);
  std::printf(
      "    upload  %10.3f ms  %6.2f GB/s  until the sort could start (first call: staging "
      "and device buffers allocated, pipelines created)\n",
      t.upload_ms, t.upload_ms > 0 ? double(bytes) / (t.upload_ms * 1e6) : 0.0);
  std::printf("    sort    %10.3f ms  %6.2f GKeys/s  GPU timestamps around the sort\n",
              t.sort_gpu_ms, gkeys_per_s(n, t.sort_gpu_ms));
  std::printf("    download%10.3f ms  %6.2f GB/s  from the sort's end\n", t.download_ms,
              t.download_ms > 0 ? double(bytes) / (t.download_ms * 1e6) : 0.0);
  std::printf("  SM clock  %s before the call, %s after it\n", clock_text(mhz_before).c_str(),
              clock_text(mhz_after).c_str());
  std::printf("verified: the result is sorted and a permutation of the %" PRIu64 " keys\n", n);
  // One line for scripts (bench/first_call.sh).
  std::printf(
      "first_call device_ms=%.3f call_ms=%.3f setup_ms=%.3f upload_ms=%.3f sort_gpu_ms=%.3f "
      "download_ms=%.3f sm_mhz_before=%d sm_mhz_after=%d\n",
      device_ms, call_ms, setup_ms, t.upload_ms, t.sort_gpu_ms, t.download_ms, mhz_before,
      mhz_after);
}

void run_demo(const DemoArguments& a) {
  KeyType type = parse_key_type(a.type);
  ContextOptions options;
  options.device = a.device;
  const auto started = std::chrono::steady_clock::now();
  Context ctx = Context::create(options);
  const double device_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  auto run = [&]<class K>(K*) {
    if (a.first_call) return run_first_call<K>(ctx, a, device_ms);
    run_demo_typed<K>(ctx, a);
  };
  switch (type) {
    case KeyType::u32:
      return run((uint32_t*)nullptr);
    case KeyType::i32:
      return run((int32_t*)nullptr);
    case KeyType::f32:
      return run((float*)nullptr);
    case KeyType::u64:
      return run((uint64_t*)nullptr);
    case KeyType::i64:
      return run((int64_t*)nullptr);
    case KeyType::f64:
      return run((double*)nullptr);
  }
}

CommandRegistration registration([](CLI::App& app) {
  auto args = std::make_shared<DemoArguments>();
  auto* cmd = app.add_subcommand(
      "demo",
      "Sort a random array on the best device, verify it against std::sort, print the throughput");
  cmd->add_option("-n,--n", args->n, "Number of keys")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t(1), max_elements));
  cmd->add_option("-t,--type", args->type, "Key type: u32 i32 f32 u64 i64 f64")
      ->capture_default_str();
  cmd->add_option("--device", args->device,
                  "Device index or name substring (default: GPUSORT_DEVICE, else the best device)");
  cmd->add_option("--runs", args->runs, "Timed runs of each face (the median is reported)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--seed", args->seed, "Seed of the random keys (default: a fresh one)");
  cmd->add_flag("--first-call", args->first_call,
                "Sort once, as a program that sorts one array does: no warm-up, no spin-up; print "
                "the Context's creation and the call's stages (bench/first_call.sh)");
  cmd->callback([args] { run_demo(*args); });
});

}  // namespace
}  // namespace gpusort::cli
