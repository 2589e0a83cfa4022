// Development profiling tool for Onesweep: where a tile's time goes, read off the SM
// clock inside the pass. Sorts random u32 keys with the pass's CLOCK_PROFILE variant (build with
// -DGPUSORT_ONESWEEP_VARIANTS=ON), whose invocation 0 records per tile its SM and the clock at
// the phase boundaries (src/algorithms/onesweep/onesweep_pass.comp), and prints per pass:
//   - each phase's cycles per tile (mean, p10, p50, p90),
//   - the gap on one SM between a workgroup's end and the next one's start (launch, exit),
//   - how much of each SM's span its workgroups were running.
// The variant adds two barriers per tile (after the loads, at the end) and waits for the keys
// before ranking, so its total runs a little slower than the product pass.
//   onesweep_clock <log2 n> [workgroup keys_per_thread]   (0 x 0 printed: the device table's shape)
// Creates its own device with VK_KHR_shader_clock and VK_NV_shader_sm_builtins (NVIDIA only).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "../common/dev_vulkan.hpp"
#include "algorithms/onesweep/onesweep.hpp"
#include "onesweep_env.hpp"
#include "vulkan/buffer.hpp"

using namespace gpusort;

namespace {

using dev::check_vk;

Context make_context() {
  const dev::DevPhysical d = dev::pick_dev_physical(0x10de);
  VkInstance instance = d.instance;
  VkPhysicalDevice physical = d.physical;
  const uint32_t family = d.family;

  VkPhysicalDeviceShaderSMBuiltinsFeaturesNV sm{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_FEATURES_NV};
  VkPhysicalDeviceShaderClockFeaturesKHR clock{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR, &sm};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                       &clock};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  vkGetPhysicalDeviceFeatures2(physical, &features);  // everything the device has
  const char* extensions[] = {VK_KHR_SHADER_CLOCK_EXTENSION_NAME,
                              VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME};
  VkDevice device = dev::create_dev_device(d, &features, extensions, 2);
  VkQueue queue;
  vkGetDeviceQueue(device, family, 0, &queue);
  return Context::wrap(instance, physical, device, queue, family);
}

struct Stats {
  double mean, p10, p50, p90;
};
Stats stats(std::vector<double> v) {
  if (v.empty()) return {0, 0, 0, 0};
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  auto at = [&](double q) { return v[std::min(v.size() - 1, size_t(q * v.size()))]; };
  return {sum / v.size(), at(0.1), at(0.5), at(0.9)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const uint64_t n = 1ull << atoi(argv[1]);
  OnesweepOptions options;
  if (argc > 3) options.workgroup = atoi(argv[2]), options.keys_per_thread = atoi(argv[3]);
  onesweep_options_from_env(options);
  Context ctx = make_context();
  auto& impl = ctx.impl();
  SortSpec spec = make_sort_spec(KeyType::u32, 0, false, 0, 0);
  std::vector<uint32_t> host(n);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (auto& h : host) x ^= x << 13, x ^= x >> 7, x ^= x << 17, h = uint32_t(x);
  DeviceBuffer input(impl, n * 4, MemoryKind::device_local),
      keys(impl, n * 4, MemoryKind::device_local);
  upload(impl, input, host.data(), n * 4);
  // One record per tile and pass (CLOCK_FIELDS words in onesweep_pass.comp).
  const uint64_t passes = 4, fields = 12;
  const uint64_t tile = make_onesweep(impl, spec, options)->tile_keys(),
                 tiles = (n + tile - 1) / tile;
  DeviceBuffer records(impl, tiles * passes * fields * 4, MemoryKind::device_local);
  options.profiling.clock_profile = records.address();
  auto profiled = make_onesweep(impl, spec, options);
  options.profiling.clock_profile = 0;
  auto plain = make_onesweep(impl, spec, options);
  DeviceBuffer scratch(impl, std::max(profiled->scratch_bytes(n), plain->scratch_bytes(n)),
                       MemoryKind::device_local);
  // Each sort's look-back fallbacks (the control word the clear zeroes), read back after it.
  DeviceBuffer fallback_word(impl, 4, MemoryKind::device_local);
  auto run = [&](OnesweepSort& algorithm, std::string& log) {
    impl.submit([&](VkCommandBuffer cmd) {
      VkBufferCopy c{0, 0, n * 4};
      vkCmdCopyBuffer(cmd, input.buffer(), keys.buffer(), 1, &c);
    });
    double ms = impl.submit_timed([&](VkCommandBuffer cmd) {
      Recorder rec(impl, cmd);
      algorithm.record(rec, {keys.address(), 0, scratch.address(), scratch.buffer(), 0, 0, n});
    });
    impl.submit([&](VkCommandBuffer cmd) {
      VkBufferCopy c{algorithm.fallback_count_offset(n), 0, 4};
      vkCmdCopyBuffer(cmd, scratch.buffer(), fallback_word.buffer(), 1, &c);
    });
    uint32_t fallbacks = 0;
    download(impl, fallback_word, &fallbacks, 4);
    char entry[64];
    std::snprintf(entry, sizeof entry, " %.2f/%u", ms, fallbacks);
    log += entry;
    return ms;
  };
  std::vector<double> plain_ms, profiled_ms;
  std::string plain_log, profiled_log;
  for (int r = 0; r < 8; ++r)
    plain_ms.push_back(run(*plain, plain_log)), profiled_ms.push_back(run(*profiled, profiled_log));
  std::printf("runs (ms/fallbacks): plain%s; profiled%s\n", plain_log.c_str(),
              profiled_log.c_str());
  std::sort(plain_ms.begin(), plain_ms.end());
  std::sort(profiled_ms.begin(), profiled_ms.end());
  std::vector<uint32_t> out(n), rec(tiles * passes * fields);
  download(impl, keys, out.data(), n * 4);
  bool sorted = std::is_sorted(out.begin(), out.end());
  download(impl, records, rec.data(), rec.size() * 4);
  std::printf(
      "u32 2^%d, %u x %u (tile %llu, %llu tiles): plain %.4f ms, profiled %.4f ms (medians of 8), "
      "%s\n",
      atoi(argv[1]), options.workgroup, options.keys_per_thread, (unsigned long long)tile,
      (unsigned long long)tiles, plain_ms[4], profiled_ms[4], sorted ? "sorted" : "NOT SORTED");
  const char* names[] = {"claim", "keys arrive", "ranking", "counts+scan", "look-back", "stores"};
  for (uint64_t pass = 0; pass < passes; ++pass) {
    std::vector<std::vector<double>> phase(6);
    std::vector<double> walk, reads, before_walk;
    uint64_t guessed = 0;
    std::map<uint32_t, std::vector<std::pair<uint32_t, uint32_t>>> by_sm;  // start, end
    for (uint64_t tile_index = 0; tile_index < tiles; ++tile_index) {
      const uint32_t* r = &rec[(pass * tiles + tile_index) * fields];
      for (int f = 0; f < 6; ++f) phase[f].push_back(double(uint32_t(r[f + 2] - r[f + 1])));
      if (tile_index) {  // tile 0 does not look back
        walk.push_back(double(uint32_t(r[8] - r[5])));
        reads.push_back(double(r[9]));
      }
      guessed += r[10];
      if (tile_index) before_walk.push_back(double(uint32_t(r[11] - r[5])));
      by_sm[r[0]].push_back({r[1], r[7]});
    }
    std::printf("pass %llu, cycles per tile: ", (unsigned long long)pass);
    double total = 0;
    for (int f = 0; f < 6; ++f) {
      Stats s = stats(phase[f]);
      total += s.mean;
      std::printf("%s %.0f (p10 %.0f p50 %.0f p90 %.0f); ", names[f], s.mean, s.p10, s.p50, s.p90);
    }
    std::vector<double> gaps, busy;
    for (auto& [sm, spans] : by_sm) {
      std::sort(spans.begin(), spans.end(),
                [](auto a, auto b) { return int32_t(a.first - b.first) < 0; });
      double running = 0;
      for (size_t i = 0; i < spans.size(); ++i) {
        running += uint32_t(spans[i].second - spans[i].first);
        if (i) gaps.push_back(double(int32_t(spans[i].first - spans[i - 1].second)));
      }
      double span = uint32_t(spans.back().second - spans.front().first);
      if (span > 0) busy.push_back(running / span);
    }
    Stats w = stats(walk), rd = stats(reads), bw = stats(before_walk);
    std::printf(
        "to the look-back's start %.0f (p50 %.0f); digit 0's walk ends %.0f (p10 %.0f p50 %.0f p90 "
        "%.0f), its window reads %.2f (p50 %.0f p90 %.0f); "
        "guessed tiles %.3f; ",
        bw.mean, bw.p50, w.mean, w.p10, w.p50, w.p90, rd.mean, rd.p50, rd.p90,
        double(guessed) / tiles);
    Stats g = stats(gaps), b = stats(busy);
    std::printf(
        "total %.0f; %zu SMs, gap between tiles on an SM %.0f (p10 %.0f p50 %.0f p90 %.0f); "
        "busy %.3f (p10 %.3f)\n",
        total, by_sm.size(), g.mean, g.p10, g.p50, g.p90, b.mean, b.p10);
  }
  return sorted ? 0 : 1;
}
