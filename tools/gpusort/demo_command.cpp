// gpusort demo: sorts a random array of a few million keys on the best device, checks the whole
// result against std::sort, and prints the median time and throughput of --runs runs two ways:
//  - GPU sort time: GPU timestamps around the sort's dispatches only (engine face: Sorter
//    recording into a command buffer on device buffers), what the GPU itself spends;
//  - end-to-end: wall time of gpusort::sort on host memory (convenient face), which adds the
//    copies to and from the device (its buffers and staging memory, kept by the Context, come
//    from an untimed first call), with the stages of the median run.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <gpusort/gpusort.hpp>
#include <random>
#include <string>
#include <vector>

#include "commands.hpp"
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
void run_demo_typed(Context& ctx, const DemoArguments& a) {
  auto& impl = ctx.impl();
  const uint64_t n = a.n, bytes = n * sizeof(K);
  std::printf("device: %s (%s)\n", ctx.device_info().name.c_str(),
              device_kind(ctx.device_info().type));
  std::printf("keys:   %" PRIu64 " random %s (seed %" PRIu64 ")\n", n, to_string(key_type_of<K>()),
              a.seed);
  std::fflush(stdout);

  const std::vector<K> input = random_keys<K>(n, a.seed);
  std::vector<K> expected = input;
  std::sort(expected.begin(), expected.end());

  // Engine face, timed on the GPU like `gpusort bench`: the input is restored from a device copy
  // before each run (not timed), the GPU's clocks are brought up first by untimed sorts for
  // spin_up_ms (an idle H100 runs at 345 MHz under Vulkan and needs a few hundred ms of work
  // to reach 1980: a sort timed cold takes 5x longer), then warm-ups, then the timed runs.
  // Recording creates the pipelines before anything is timed. Every run is verified.
  constexpr double spin_up_ms = 300;
  constexpr uint32_t warmups = 3;
  Sorter sorter(ctx, {.key = key_type_of<K>()});
  std::vector<double> gpu_ms, wall_ms;
  std::vector<SortTimings> stages;
  {
    DeviceBuffer source(impl, bytes, MemoryKind::device_local);
    DeviceBuffer keys(impl, bytes, MemoryKind::device_local);
    DeviceBuffer scratch(impl, sorter.scratch_bytes(n), MemoryKind::device_local);
    upload(impl, source, input.data(), bytes);
    auto restore_and_sort = [&] {
      impl.submit([&](VkCommandBuffer cmd) {
        VkBufferCopy region{0, 0, bytes};
        vkCmdCopyBuffer(cmd, source.buffer(), keys.buffer(), 1, &region);
        Recorder::full_barrier(cmd);
      });
      return impl.submit_timed(
          [&](VkCommandBuffer cmd) { sorter.record(cmd, keys.ref(), {}, scratch.ref(), n); });
    };
    auto start = std::chrono::steady_clock::now();
    for (uint32_t i = 0; i < warmups ||
                         std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                                 .count() < spin_up_ms;
         ++i)
      restore_and_sort();
    // Each result is checked between runs through readback memory allocated once, so that
    // the GPU idles only for a copy and a compare (a long pause lowers its clocks again).
    DeviceBuffer readback(impl, bytes, MemoryKind::readback);
    std::vector<K> gpu_result(n);
    for (uint32_t run = 0; run < a.runs; ++run) {
      gpu_ms.push_back(restore_and_sort());
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
  // buffers and staging memory the Context then keeps), then the timed runs.
  std::vector<K> keys(n);
  for (uint32_t run = 0; run <= a.runs; ++run) {
    std::copy(input.begin(), input.end(), keys.begin());
    SortTimings t;
    sort(ctx, std::span<K>(keys), {.timings = &t});
    if (run > 0) wall_ms.push_back(t.total_ms), stages.push_back(t);
    verify(keys, expected, "the gpusort::sort result");
  }
  if (ctx.validation_messages() != 0)
    throw Error("the Vulkan validation layer reported " +
                std::to_string(ctx.validation_messages()) + " message(s) (printed above)");

  const double gpu = median(gpu_ms), wall = median(wall_ms);
  std::printf("median of %u runs:\n", a.runs);
  std::printf(
      "GPU sort time:              %10.3f ms  %9.4f GKeys/s  (GPU timestamps around the sort's "
      "dispatches)\n",
      gpu, gkeys_per_s(n, gpu));
  std::printf(
      "end-to-end incl. transfers: %10.3f ms  %9.4f GKeys/s  (wall time of gpusort::sort on host "
      "memory)\n",
      wall, gkeys_per_s(n, wall));
  std::sort(stages.begin(), stages.end(),
            [](const SortTimings& x, const SortTimings& y) { return x.total_ms < y.total_ms; });
  const SortTimings& mid = stages[stages.size() / 2];
  std::printf("  of which (median run): upload %.3f ms, sort %.3f ms (GPU), download %.3f ms; "
              "%.2f GB/s of keys each way\n",
              mid.upload_ms, mid.sort_gpu_ms, mid.download_ms,
              double(bytes) / (mid.total_ms * 1e6));
  std::printf("verified: all %u results equal std::sort on all %" PRIu64 " keys\n", 2 * a.runs, n);
}

void run_demo(const DemoArguments& a) {
  KeyType type = parse_key_type(a.type);
  ContextOptions options;
  options.device = a.device;
  Context ctx = Context::create(options);
  switch (type) {
    case KeyType::u32:
      return run_demo_typed<uint32_t>(ctx, a);
    case KeyType::i32:
      return run_demo_typed<int32_t>(ctx, a);
    case KeyType::f32:
      return run_demo_typed<float>(ctx, a);
    case KeyType::u64:
      return run_demo_typed<uint64_t>(ctx, a);
    case KeyType::i64:
      return run_demo_typed<int64_t>(ctx, a);
    case KeyType::f64:
      return run_demo_typed<double>(ctx, a);
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
  cmd->callback([args] { run_demo(*args); });
});

}  // namespace
}  // namespace gpusort::cli
