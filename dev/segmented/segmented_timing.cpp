// Development timing tool for the segmented sort (not the project benchmark): one layout of
// bench_common.hpp, random keys (and u32 values) rotated over three input sets, GPU timestamps
// around the sort, and with SEGMENTED_PHASES a timestamp after every barrier of the recording,
// medians per phase. Checks the last result (each segment sorted, same per-segment multiset by
// sum). Prints the class table the device gets.
//   segmented_timing <u32|u64|f32> <value_bytes> <small|medium|large|powerlaw> <log2 n>
#include "algorithms/segmented_sort/segmented_sort.hpp"
#include "dispatch/dispatch.hpp"
#include "bench_common.hpp"
#include "vulkan/buffer.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace gpusort;

int main(int argc, char** argv) {
  if (argc < 5) return 2;
  const KeyType key = parse_key_type(argv[1]);
  const uint32_t value_bytes = atoi(argv[2]);
  const auto family = bench::parse_segment_family(argv[3]);
  const uint64_t n = 1ull << atoi(argv[4]);
  Context ctx = Context::create();
  auto& impl = ctx.impl();
  SegmentedSpec spec;
  spec.sort = make_sort_spec(key, value_bytes, std::getenv("SEGMENTED_DESCENDING") != nullptr, 0, 0);
  spec.offset_words = 1;
  auto table = segmented_class_table(impl, spec.sort);
  std::printf("classes:");
  for (auto s : table.class_slots) std::printf(" %llu", (unsigned long long)s);
  std::printf(" (largest tile %llu)\n", (unsigned long long)table.largest_tile);
  SegmentedOptions options;  // SEGMENTED_BUCKET="workgroup keys_per_thread"
  if (const char* b = std::getenv("SEGMENTED_BUCKET"))
    std::sscanf(b, "%u %u", &options.bucket_workgroup, &options.bucket_keys_per_thread);
  if (const char* m = std::getenv("SEGMENTED_MIN_TILE")) options.log2_min_tile = atoi(m);
  if (const char* m = std::getenv("SEGMENTED_ITEMS")) options.log2_items = atoi(m);
  auto sorter = make_segmented_sort(impl, spec, Algorithm::automatic, options);
  const std::vector<uint32_t> offsets = bench::make_segment_offsets(family, n, 7);
  const uint64_t segments = offsets.size() - 1;
  uint64_t largest = 0;
  for (uint64_t s = 0; s < segments; ++s) largest = std::max<uint64_t>(largest, offsets[s + 1] - offsets[s]);
  std::printf("segments %llu, largest %llu\n", (unsigned long long)segments, (unsigned long long)largest);
  const uint64_t kb = key_bytes(key), key_size = n * kb, value_size = n * value_bytes;
  const int inputs = 3, warmups = 3, runs = 11;
  std::vector<DeviceBuffer> in_keys;
  std::vector<std::vector<uint32_t>> host(inputs, std::vector<uint32_t>(key_size / 4));
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < inputs; ++i) {
    for (auto& h : host[i]) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      h = uint32_t(x >> 7);
    }
    in_keys.emplace_back(impl, key_size, MemoryKind::device_local);
    upload(impl, in_keys.back(), host[i].data(), key_size);
  }
  DeviceBuffer keys(impl, key_size, MemoryKind::device_local), values, in_values;
  if (value_bytes) {
    values = DeviceBuffer(impl, value_size, MemoryKind::device_local);
    in_values = DeviceBuffer(impl, value_size, MemoryKind::device_local);
    std::vector<uint32_t> iota(value_size / 4);
    for (uint64_t j = 0; j < iota.size(); ++j) iota[j] = uint32_t(j);
    upload(impl, in_values, iota.data(), value_size);
  }
  DeviceBuffer offsets_buffer(impl, offsets.size() * 4, MemoryKind::device_local);
  upload(impl, offsets_buffer, offsets.data(), offsets.size() * 4);
  DeviceBuffer scratch(impl, sorter->scratch_bytes(n, segments), MemoryKind::device_local);
  const bool phases = std::getenv("SEGMENTED_PHASES") != nullptr;
  constexpr uint32_t max_queries = 128;
  VkQueryPool pool = VK_NULL_HANDLE;
  if (phases) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = max_queries;
    vkCreateQueryPool(impl.device, &qi, nullptr, &pool);
  }
  std::vector<double> ms;
  std::vector<std::vector<double>> phase_ms;
  int last = 0;
  for (int r = 0; r < warmups + runs; ++r) {
    last = r % inputs;
    impl.submit([&](VkCommandBuffer cmd) {
      VkBufferCopy c{0, 0, key_size};
      vkCmdCopyBuffer(cmd, in_keys[last].buffer(), keys.buffer(), 1, &c);
      if (value_bytes) {
        VkBufferCopy v{0, 0, value_size};
        vkCmdCopyBuffer(cmd, in_values.buffer(), values.buffer(), 1, &v);
      }
    });
    uint32_t next = 1;
    double t = impl.submit_timed([&](VkCommandBuffer cmd) {
      Recorder rec(impl, cmd);
      if (phases) {
        vkCmdResetQueryPool(cmd, pool, 0, max_queries);
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, pool, 0);
        rec.profile_barriers(pool, &next);
      }
      SegmentedTargets t;
      t.keys = keys.address();
      t.values = value_bytes ? values.address() : 0;
      t.offsets = offsets_buffer.address();
      t.scratch = scratch.address();
      t.scratch_buffer = scratch.buffer();
      t.n = n;
      t.segments = segments;
      sorter->record(rec, t);
    });
    if (r >= warmups) ms.push_back(t);
    if (phases && r >= warmups) {
      std::vector<uint64_t> ticks(next);
      vkGetQueryPoolResults(impl.device, pool, 0, next, ticks.size() * 8, ticks.data(), 8,
                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
      phase_ms.resize(next - 1);
      for (uint32_t q = 1; q < next; ++q)
        phase_ms[q - 1].push_back(double(ticks[q] - ticks[q - 1]) * impl.info.timestamp_period_ns * 1e-6);
    }
  }
  std::sort(ms.begin(), ms.end());
  // Check the last run (u32/f32 keys compared as u32 bits for the multiset; order by the type).
  bool ok = true;
  if (kb == 4) {
    std::vector<uint32_t> out(n);
    download(impl, keys, out.data(), key_size);
    auto order = [&](uint32_t b) -> uint32_t {
      if (key == KeyType::f32) return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
      return b;
    };
    for (uint64_t s = 0; s < segments && ok; ++s) {
      uint64_t sum_in = 0, sum_out = 0;
      for (uint64_t j = offsets[s]; j < offsets[s + 1]; ++j) {
        sum_in += host[last][j], sum_out += out[j];
        if (j > offsets[s] && order(out[j]) < order(out[j - 1])) ok = false;
      }
      if (sum_in != sum_out) ok = false;
    }
  }
  std::printf("bucket %u x %u, min tile 2^%u, items 2^%u: ", options.bucket_workgroup,
              options.bucket_keys_per_thread, options.log2_min_tile, options.log2_items);
  std::printf("%s %u %s 2^%s: median %.4f ms (min %.4f max %.4f) %s\n", argv[1], value_bytes, argv[3],
              argv[4], ms[ms.size() / 2], ms.front(), ms.back(), ok ? "ok" : "WRONG");
  for (size_t q = 0; q < phase_ms.size(); ++q) {
    std::sort(phase_ms[q].begin(), phase_ms[q].end());
    std::printf("  phase %2zu: %.4f ms\n", q, phase_ms[q][phase_ms[q].size() / 2]);
  }
  return ok ? 0 : 1;
}
