// Times the small-array paths on one device: Algorithm::automatic, bitonic, odd_even and the
// classic radix sort through the engine face (Sorter::record inside Context::Impl::submit_timed,
// GPU timestamps), plus a sweep of small-array sort shapes (tile sizes, merge lanes and levels), at
// n = 2^10 ... 2^16 (or 2^max_log2) u32 keys and u32+u32 pairs. Every configuration is checked once
// against std::stable_sort before it is timed; each time is the median of `runs` sorts of fresh
// random keys (see docs/design/small-sort.md). Built by dev/CMakeLists.txt
// (GPUSORT_BUILD_DEV_TOOLS) as build/dev/small_sort_timing.
// Run: small_sort_timing [runs=25] [warmup_copies=8] [shapes] [max_log2=16]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>

#include "algorithms/small_sort/small_sort.hpp"
#include "dispatch/dispatch.hpp"
#include "primitives/constants.h"
#include "primitives/push.h"
#include "vulkan/buffer.hpp"

using namespace gpusort;

namespace {

struct Candidate {
  std::string label;
  Algorithm algorithm;     // used when !shape
  bool has_shape = false;  // a small-array sort shape, built directly
  SmallSortShape shape;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Brings the GPU out of its idle clocks before every timed sort, inside the same command
// buffer: small sorts alone leave the GPU idle between submissions, and the clocks it then
// runs at (measured: 345 MHz at rest against 1980 MHz maximum on the H100) dominate the time.
struct Warmup {
  static constexpr uint64_t words = uint64_t(1) << 25;  // 128 MiB per copy
  int copies;                                           // 8: about 1 ms on an H100
  DeviceBuffer src, dst;
  Warmup(Context::Impl& impl, int copies)
      : copies(copies),
        src(impl, words * 4, MemoryKind::device_local),
        dst(impl, words * 4, MemoryKind::device_local) {}
  void record(Recorder& rec) const {
    const uint32_t groups = 4096;
    for (int i = 0; i < copies; ++i)
      rec.dispatch(Kernel::copy_elements, spec_constants(CopyElementsSpec{256, 1}), groups,
                   CopyElementsPush{src.address(), dst.address(), 0, uint32_t(words), groups});
  }
};

// Returns the median ms, or a negative value when the configuration does not apply.
double time_one(Context& ctx, const Warmup& warmup, VkQueryPool queries, const Candidate& c,
                uint32_t value_bytes, uint64_t n, int runs, std::string& error) {
  auto& impl = ctx.impl();
  SortSpec spec = make_sort_spec(KeyType::u32, value_bytes, false, 0, 0);
  std::unique_ptr<SortAlgorithm> algorithm;
  try {
    if (c.has_shape) {
      SmallSortShape shape = small_sort_shape(impl, spec, c.shape);
      if (n > small_sort_max_n(shape)) return -1;
      algorithm = make_small_sort(impl, spec, shape);
    } else {
      algorithm = make_sort_algorithm(impl, spec, c.algorithm);
    }
    algorithm->scratch_bytes(n);
  } catch (const Error&) {
    return -1;  // e.g. odd_even beyond shared memory
  }
  // n^2 work: odd_even past 2^10 would take most of the device time (937 us at 2^12 measured).
  if (!c.has_shape && c.algorithm == Algorithm::odd_even && n > 1024) return -1;
  // Several input sets, rotated, each copied in before its sort inside the timed submission.
  constexpr int input_sets = 4;
  DeviceBuffer pristine(impl, input_sets * n * 4, MemoryKind::device_local);
  DeviceBuffer keys(impl, n * 4, MemoryKind::device_local);
  DeviceBuffer values(impl, n * 4, MemoryKind::device_local);
  DeviceBuffer scratch(impl, std::max<uint64_t>(algorithm->scratch_bytes(n), 16),
                       MemoryKind::device_local);
  std::mt19937_64 rng(n * 7 + value_bytes);
  std::vector<uint32_t> host_keys(input_sets * n), host_values(n), out_keys(n), out_values(n);
  for (auto& k : host_keys) k = uint32_t(rng());
  std::iota(host_values.begin(), host_values.end(), 0u);
  upload(impl, pristine, host_keys.data(), input_sets * n * 4);
  int set = 0;
  auto record = [&](VkCommandBuffer cmd, bool timed) {
    VkBufferCopy region{uint64_t(set) * n * 4, 0, n * 4};
    vkCmdCopyBuffer(cmd, pristine.buffer(), keys.buffer(), 1, &region);
    Recorder rec(impl, cmd);
    if (timed) warmup.record(rec);
    Recorder::full_barrier(cmd);
    if (timed) vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 0);
    SortTargets t{keys.address(),
                  value_bytes ? values.address() : 0,
                  scratch.address(),
                  scratch.buffer(),
                  0,
                  0,
                  n};
    algorithm->record(rec, t);
    if (timed) vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
  };
  // Check once (also compiles the pipelines outside the timed runs).
  if (value_bytes) upload(impl, values, host_values.data(), n * 4);
  impl.submit([&](VkCommandBuffer cmd) { record(cmd, false); });
  download(impl, keys, out_keys.data(), n * 4);
  if (value_bytes) download(impl, values, out_values.data(), n * 4);
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return host_keys[a] < host_keys[b]; });
  // bitonic is not stable: its values need only be a permutation that keeps each key's.
  const bool stable = c.has_shape || c.algorithm != Algorithm::bitonic;
  if (!stable && value_bytes) {
    std::vector<std::pair<uint32_t, uint32_t>> got(n), want(n);
    for (uint64_t i = 0; i < n; ++i)
      got[i] = {out_keys[i], out_values[i]}, want[i] = {host_keys[i], uint32_t(i)};
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    if (got != want) {
      error = c.label + " n=" + std::to_string(n) + ": the pairs are not the input's";
      return -2;
    }
  }
  for (uint64_t i = 0; i < n; ++i) {
    if (out_keys[i] != host_keys[order[i]] ||
        (value_bytes && stable && out_values[i] != order[i])) {
      error = c.label + " n=" + std::to_string(n) + " values=" + std::to_string(value_bytes) +
              ": WRONG at " + std::to_string(i);
      return -2;
    }
  }
  std::vector<double> times;
  for (int r = 0; r < runs + 3; ++r) {
    set = r % input_sets;
    impl.submit([&](VkCommandBuffer cmd) {
      vkCmdResetQueryPool(cmd, queries, 0, 2);
      record(cmd, true);
    });
    uint64_t ticks[2];
    vkGetQueryPoolResults(impl.device, queries, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t),
                          VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r >= 3) times.push_back(double(ticks[1] - ticks[0]) * impl.info.timestamp_period_ns * 1e-6);
  }
  return median(times);
}

}  // namespace

int main(int argc, char** argv) {
  // Arguments: runs per configuration (25), warm-up copies before each timed sort (8), and
  // "shapes" to also sweep small-array sort shapes.
  int runs = argc > 1 ? std::atoi(argv[1]) : 25;
  Context ctx = Context::create();
  const auto& info = ctx.device_info();
  std::printf("device: %s (%s), subgroup %u, shared %u B, max workgroup %u, max comparison wg %u\n",
              info.name.c_str(), info.driver.c_str(), info.subgroup_size, info.shared_memory_bytes,
              info.max_workgroup_size, max_comparison_workgroup(ctx.impl()));
  VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  query_info.queryCount = 2;
  VkQueryPool queries;
  if (vkCreateQueryPool(ctx.device(), &query_info, nullptr, &queries) != VK_SUCCESS) return 2;
  Warmup warmup(ctx.impl(), argc > 2 ? std::atoi(argv[2]) : 8);
  {
    std::vector<double> empty;
    for (int r = 0; r < runs + 3; ++r)
      empty.push_back(ctx.impl().submit_timed([](VkCommandBuffer) {}));
    std::printf("empty timestamp pair (idle clocks): %.2f us\n", median(empty) * 1e3);
    // One dispatch of one workgroup that does nothing, after the warm-up: the floor of any sort.
    // Variants: with and without the warm-up; without the closing barrier; timestamps at the
    // compute stage instead of top/bottom of pipe; two dispatches (the cost of one more).
    struct Floor {
      const char* label;
      bool warm, closing_barrier, compute_stage;
      int dispatches;
      bool indirect_barrier = false;  // the barrier gpusort recorded before: dst also DRAW_INDIRECT
      // The floor of any sort of copy_keys keys: one dispatch that reads them from global memory
      // (evicted from L2 by the warm-up, like a sort's input) and writes them, by copy_groups
      // workgroups of copy_workgroup invocations (grid-stride).
      uint32_t copy_keys = 0, copy_workgroup = 256, copy_groups = 1;
    };
    const Floor floors[] = {
        {"one empty dispatch + barrier (no warm-up)", false, true, false, 1},
        {"one empty dispatch + barrier (after warm-up)", true, true, false, 1},
        {"one empty dispatch, no closing barrier", true, false, false, 1},
        {"one empty dispatch, timestamps at the compute stage", true, false, true, 1},
        {"two empty dispatches + barriers", true, true, false, 2},
        {"one empty dispatch + barrier to compute|draw-indirect", true, true, false, 1, true},
        {"two empty dispatches + barriers to compute|draw-indirect", true, true, false, 2, true},
        {"copy 2^10 keys, 1 workgroup of 1024 + barrier", true, true, false, 1, false, 1 << 10,
         1024, 1},
        {"copy 2^10 keys, 4 workgroups of 256 + barrier", true, true, false, 1, false, 1 << 10, 256,
         4},
        {"copy 2^12 keys, 1 workgroup of 1024 + barrier", true, true, false, 1, false, 1 << 12,
         1024, 1},
        {"copy 2^12 keys, 16 workgroups of 256 + barrier", true, true, false, 1, false, 1 << 12,
         256, 16},
        {"copy 2^14 keys, 64 workgroups of 256 + barrier", true, true, false, 1, false, 1 << 14,
         256, 64},
        {"copy 2^16 keys, 256 workgroups of 256 + barrier", true, true, false, 1, false, 1 << 16,
         256, 256},
    };
    auto barrier = [](VkCommandBuffer cmd, bool indirect) {
      if (!indirect) return Recorder::barrier(cmd);
      VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
      b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                        VK_ACCESS_INDIRECT_COMMAND_READ_BIT;
      vkCmdPipelineBarrier(
          cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT, 0, 1, &b, 0,
          nullptr, 0, nullptr);
    };
    DeviceBuffer floor_keys(ctx.impl(), 4 << 16, MemoryKind::device_local);
    for (const Floor& f : floors) {
      std::vector<double> one;
      for (int r = 0; r < runs + 3; ++r) {
        ctx.impl().submit([&](VkCommandBuffer cmd) {
          vkCmdResetQueryPool(cmd, queries, 0, 2);
          Recorder rec(ctx.impl(), cmd);
          if (f.warm) warmup.record(rec);
          Recorder::full_barrier(cmd);
          vkCmdWriteTimestamp(cmd,
                              f.compute_stage ? VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
                                              : VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                              queries, 0);
          for (int d = 0; d < f.dispatches; ++d) {
            if (d) barrier(cmd, f.indirect_barrier);
            rec.dispatch(Kernel::copy_elements,
                         spec_constants(CopyElementsSpec{f.copy_workgroup, 1}), f.copy_groups,
                         CopyElementsPush{warmup.src.address(), floor_keys.address(), 0,
                                          f.copy_keys, f.copy_groups});
          }
          if (f.closing_barrier) barrier(cmd, f.indirect_barrier);
          vkCmdWriteTimestamp(cmd,
                              f.compute_stage ? VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
                                              : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                              queries, 1);
        });
        uint64_t ticks[2];
        vkGetQueryPoolResults(ctx.device(), queries, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
        if (r >= 3) one.push_back(double(ticks[1] - ticks[0]) * info.timestamp_period_ns * 1e-6);
      }
      std::printf("%s: %.2f us\n", f.label, median(one) * 1e3);
    }
  }
  std::vector<Candidate> candidates = {
      {"automatic", Algorithm::automatic},
      {"bitonic", Algorithm::bitonic},
      {"odd_even", Algorithm::odd_even},
      {"radix_reduce_scan", Algorithm::radix_reduce_scan},
  };
  // Label: keys per invocation (i), single-dispatch workgroup (s), tile workgroup (t), tiles per
  // merge round (r), merge workgroup (m), merge bucket bits (b, 0: log2 of the tile's keys).
  // Lanes per key in the merge (l), tiles per first-level merge group (g, two merge levels).
  auto shape = [&](uint32_t items, uint32_t single, uint32_t tile, uint32_t merge_round = 4,
                   uint32_t merge = 256, uint32_t bucket_bits = 0, uint32_t lanes = 1,
                   uint32_t group = 0) {
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on the chain of
    // `const char* + std::string` inlined here.
    std::string label = "i";
    label.append(std::to_string(items));
    auto add = [&label](const char* tag, uint32_t value) {
      label.append(tag).append(std::to_string(value));
    };
    add(" s", single);
    add(" t", tile);
    add(" r", merge_round);
    add(" m", merge);
    add(" b", bucket_bits);
    if (lanes > 1) add(" l", lanes);
    if (group) add(" g", group);
    candidates.push_back({label,
                          Algorithm::automatic,
                          true,
                          {.items = items,
                           .single_workgroup = single,
                           .tile_workgroup = tile,
                           .merge_workgroup = merge,
                           .merge_tiles_per_round = merge_round,
                           .merge_bucket_bits = bucket_bits,
                           .merge_lanes = lanes,
                           .merge_group_tiles = group}});
  };
  const bool sweep_shapes = argc > 3 && std::string(argv[3]) == "shapes";
  if (sweep_shapes) {
    // automatic's bands (tiles and merge lanes), then two merge levels: groups of 4-16 tiles merged
    // into runs, then the runs (bucket bits log2(tile), or 12 for longer runs).
    shape(2, 512, 256, 4, 256, 0, 8);
    shape(2, 512, 512, 4, 256, 0, 4);
    shape(2, 512, 1024, 4, 256, 0, 4);
    shape(2, 512, 256, 4, 256, 0, 4);  // tiles of 512 and 1024 with other lanes
    shape(2, 512, 512, 4, 256, 0, 8);
    shape(2, 1024, 256, 4, 256, 0, 8);  // one dispatch up to 2048 keys (1024 x 2)
    shape(4, 512, 256, 4, 256, 0, 8);   // one dispatch up to 2048 keys (512 x 4)
    shape(4, 1024, 256, 4, 256, 0, 8);  // one dispatch up to 4096 keys (1024 x 4)
    for (uint32_t group : {4u, 8u, 16u}) shape(2, 512, 256, 4, 256, 0, 8, group);
    for (uint32_t group : {4u, 8u, 16u}) shape(2, 512, 512, 4, 256, 0, 4, group);
    for (uint32_t group : {4u, 8u, 16u}) shape(2, 512, 1024, 4, 256, 0, 4, group);
    shape(2, 512, 512, 4, 256, 12, 4, 16);
    shape(2, 512, 1024, 4, 256, 12, 4, 8);
    shape(2, 512, 1024, 4, 256, 12, 4, 16);
    // Other shapes (merge lanes 2-32, merge workgroups of 512 and 1024, merge rounds of 8, bucket
    // bits 8, 1 or 4 keys per invocation, tiles of 4096) lost at every size on the H100:
    // docs/design/small-sort.md.
  }
  // Sizes 2^10 ... 2^max (argument 4, default 16; above 2^16 automatic is Onesweep).
  const int max_log2 = argc > 4 ? std::atoi(argv[4]) : 16;
  std::vector<uint64_t> sizes;
  for (int log2 = 10; log2 <= max_log2; ++log2) sizes.push_back(uint64_t(1) << log2);
  int wrong = 0;
  for (uint32_t value_bytes : {0u, 4u}) {
    std::printf("\nu32 keys%s: median us over %d runs\n%-30s", value_bytes ? " + u32 values" : "",
                runs, "config");
    for (uint64_t n : sizes)
      std::printf(" %10s", ("2^" + std::to_string(std::countr_zero(n))).c_str());
    std::printf("\n");
    for (const auto& c : candidates) {
      std::printf("%-30s", c.label.c_str());
      for (uint64_t n : sizes) {
        std::string error;
        double ms = time_one(ctx, warmup, queries, c, value_bytes, n, runs, error);
        if (ms == -2) {
          ++wrong;
          std::printf(" %10s", "WRONG");
          std::fprintf(stderr, "%s\n", error.c_str());
        } else if (ms < 0) {
          std::printf(" %10s", "-");
        } else {
          std::printf(" %10.2f", ms * 1e3);
        }
        std::fflush(stdout);
      }
      std::printf("\n");
    }
  }
  return wrong ? 1 : 0;
}
