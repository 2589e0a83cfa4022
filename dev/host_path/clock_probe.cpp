// Development probe (not product code): how the H100's SM clock follows gpusort's host path.
// Prints, from an idle GPU (2 s asleep first):
//  A. 2^24 u32 device-resident sorts back to back, each submitted and waited: the sort time of
//     each against wall time since the first (the clock's ramp under a steady sort load);
//  B. gpusort::sort of 2^28 f32 host to host, 8 calls back to back with no pause, per engine
//     (GPUSORT_COPY_ENGINE dma / shader): each call's stages;
//  C. the same with 1 s of idle before each call (a one-off call);
//  D. the same with --busy: ~200 ms of device-only sorting right before each call.
//   clock_probe [log2n=28]
#include <gpusort/gpusort.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "vulkan/buffer.hpp"
#include "vulkan/context_impl.hpp"

using namespace gpusort;
using clock_type = std::chrono::steady_clock;

static double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

int main(int argc, char** argv) {
  const int log2n = argc > 1 ? atoi(argv[1]) : 28;
  const uint64_t n = uint64_t(1) << log2n;
  std::vector<float> input(n), keys(n);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> dist(-1e6f, 1e6f);
  for (auto& k : input) k = dist(rng);

  for (const char* engine : {"dma", "shader"}) {
    setenv("GPUSORT_COPY_ENGINE", engine, 1);
    Context ctx = Context::create();
    auto& impl = ctx.impl();
    const uint64_t small_n = std::min<uint64_t>(uint64_t(1) << 24, n);
    Sorter sorter(ctx, {.key = KeyType::u32});
    DeviceBuffer scratch(impl, sorter.scratch_bytes(small_n), MemoryKind::device_local);
    DeviceBuffer device(impl, small_n * 4, MemoryKind::device_local);
    auto device_sort = [&] {
      return impl.submit_timed([&](VkCommandBuffer cmd) {
        sorter.record(cmd, device.ref(), {}, scratch.ref(), small_n);
      });
    };
    auto busy = [&](double ms) {
      const auto t = clock_type::now();
      while (ms_since(t) < ms) device_sort();
    };
    auto host_sort = [&] {
      std::copy(input.begin(), input.end(), keys.begin());
      SortTimings t;
      sort(ctx, std::span<float>(keys), {.timings = &t});
      if (!std::is_sorted(keys.begin(), keys.end())) std::printf("NOT SORTED\n");
      return t;
    };
    host_sort();  // first use: allocations
    auto show = [&](const char* what, int i, const SortTimings& t) {
      std::printf("%-6s %-10s %d: total %7.2f  upload %6.2f  sort %6.2f  download %6.2f\n", engine,
                  what, i, t.total_ms, t.upload_ms, t.sort_gpu_ms, t.download_ms);
    };
    std::this_thread::sleep_for(std::chrono::seconds(2));
    if (std::string(engine) == "dma") {
      const auto start = clock_type::now();
      for (int i = 0; i < 400 && ms_since(start) < 600; ++i) {
        const double at = ms_since(start);
        const double ms = device_sort();
        if (i < 12 || i % 20 == 0) std::printf("A sort 2^24 #%d at %7.2f ms: %.3f ms\n", i, at, ms);
      }
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    // B: back to back (the input copy between calls is ~0.1 s on one thread... keep it: a user's
    // own work between calls).
    for (int i = 0; i < 6; ++i) show("b2b", i, host_sort());
    for (int i = 0; i < 3; ++i) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      show("after1s", i, host_sort());
    }
    for (int i = 0; i < 3; ++i) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      std::copy(input.begin(), input.end(), keys.begin());
      busy(200);
      SortTimings t;
      sort(ctx, std::span<float>(keys), {.timings = &t});
      show("busy200", i, t);
    }
    for (int i = 0; i < 3; ++i) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      std::copy(input.begin(), input.end(), keys.begin());
      busy(20);
      SortTimings t;
      sort(ctx, std::span<float>(keys), {.timings = &t});
      show("busy20", i, t);
    }
  }
  return 0;
}
