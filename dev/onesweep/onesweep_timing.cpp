// Development timing tool for Onesweep (not the project benchmark): sorts random inputs rotated
// over three buffers, GPU timestamps around the sort only, median of the timed runs; checks
// the last result (sorted, same multiset by sum/xor, pairs intact).
//   onesweep_timing <u32|u64> <value_bytes> <log2 n> [workgroup keys_per_thread] [algorithm]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "algorithms/onesweep/onesweep.hpp"
#include "dispatch/dispatch.hpp"
#include "onesweep_env.hpp"
#include "vulkan/buffer.hpp"

using namespace gpusort;

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  KeyType key = parse_key_type(argv[1]);
  uint32_t value_bytes = atoi(argv[2]);
  uint64_t n = 1ull << atoi(argv[3]);
  OnesweepOptions options;
  if (argc > 5) options.workgroup = atoi(argv[4]), options.keys_per_thread = atoi(argv[5]);
  onesweep_options_from_env(options);
  if (std::getenv("ONESWEEP_HISTOGRAM_ONLY")) options.profiling.histogram_only = true;
  if (const char* p = std::getenv("ONESWEEP_PROFILE_OMIT"))
    options.profiling.profile_omit = atoi(p);
  bool classic = argc > 6 && std::string(argv[6]) == "radix_reduce_scan";
  Context ctx = Context::create();
  auto& impl = ctx.impl();
  // ONESWEEP_END_BIT sorts fewer digits: time per pass = difference between bit ranges.
  // ONESWEEP_BEGIN_BIT leaves the low digits out (e.g. 32: a u64 sort's passes over the high word
  // alone).
  const char* end_bit = std::getenv("ONESWEEP_END_BIT");
  const char* begin_bit = std::getenv("ONESWEEP_BEGIN_BIT");
  SortSpec spec = make_sort_spec(key, value_bytes, std::getenv("ONESWEEP_DESCENDING") != nullptr,
                                 begin_bit ? atoi(begin_bit) : 0, end_bit ? atoi(end_bit) : 0);
  std::unique_ptr<SortAlgorithm> algorithm;
  if (classic)
    algorithm = make_sort_algorithm(impl, spec, Algorithm::radix_reduce_scan);
  else
    algorithm = make_onesweep(impl, spec, options);
  const uint64_t kb = key_bytes(key), key_size = n * kb, value_size = n * value_bytes;
  const int inputs = 3, warmups = 3, runs = 15;
  std::vector<DeviceBuffer> in_keys;
  std::vector<uint64_t> host(n * kb / 8 + 1);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  std::vector<uint64_t> sums(inputs), xors(inputs);
  for (int i = 0; i < inputs; ++i) {
    for (auto& h : host) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      h = x;
    }
    auto* w32 = reinterpret_cast<uint32_t*>(host.data());
    for (uint64_t j = 0; j < n; ++j) {
      uint64_t k = kb == 4 ? w32[j] : host[j];
      sums[i] += k, xors[i] ^= k;
    }
    in_keys.emplace_back(impl, key_size, MemoryKind::device_local);
    upload(impl, in_keys.back(), host.data(), key_size);
  }
  DeviceBuffer keys(impl, key_size, MemoryKind::device_local), values, in_values;
  if (value_bytes) {
    values = DeviceBuffer(impl, value_size, MemoryKind::device_local);
    in_values = DeviceBuffer(impl, value_size, MemoryKind::device_local);
    std::vector<uint32_t> iota(value_size / 4);
    for (uint64_t j = 0; j < iota.size(); ++j) iota[j] = uint32_t(value_bytes == 4 ? j : j / 2);
    upload(impl, in_values, iota.data(), value_size);
  }
  DeviceBuffer scratch(impl, algorithm->scratch_bytes(n), MemoryKind::device_local);
  std::vector<double> ms;
  int last_input = 0;
  // ONESWEEP_PHASES: a timestamp after every barrier of the sort (clear, histogram with the plan,
  // each pass, copy-back), medians per phase printed at the end.
  const bool phases = std::getenv("ONESWEEP_PHASES") != nullptr;
  constexpr uint32_t max_queries = 64;
  VkQueryPool phase_pool = VK_NULL_HANDLE;
  if (phases) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = max_queries;
    vkCreateQueryPool(impl.device, &qi, nullptr, &phase_pool);
  }
  std::vector<std::vector<double>> phase_ms;
  for (int r = 0; r < warmups + runs; ++r) {
    last_input = r % inputs;
    impl.submit([&](VkCommandBuffer cmd) {
      VkBufferCopy c{0, 0, key_size};
      vkCmdCopyBuffer(cmd, in_keys[last_input].buffer(), keys.buffer(), 1, &c);
      if (value_bytes) {
        VkBufferCopy v{0, 0, value_size};
        vkCmdCopyBuffer(cmd, in_values.buffer(), values.buffer(), 1, &v);
      }
    });
    uint32_t next_query = 1;
    double t = impl.submit_timed([&](VkCommandBuffer cmd) {
      Recorder rec(impl, cmd);
      if (phases) {
        vkCmdResetQueryPool(cmd, phase_pool, 0, max_queries);
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, phase_pool, 0);
        rec.profile_barriers(phase_pool, &next_query);
      }
      algorithm->record(rec, {keys.address(), value_bytes ? values.address() : 0, scratch.address(),
                              scratch.buffer(), 0, 0, n});
    });
    if (r >= warmups) ms.push_back(t);
    if (phases && r >= warmups) {
      std::vector<uint64_t> ticks(next_query);
      vkGetQueryPoolResults(impl.device, phase_pool, 0, next_query, ticks.size() * 8, ticks.data(),
                            8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
      phase_ms.resize(next_query - 1);
      for (uint32_t q = 1; q < next_query; ++q)
        phase_ms[q - 1].push_back(double(ticks[q] - ticks[q - 1]) * impl.info.timestamp_period_ns *
                                  1e-6);
    }
  }
  std::sort(ms.begin(), ms.end());
  uint32_t fallbacks = 0;
  if (!classic) {
    auto offset = static_cast<OnesweepSort&>(*algorithm).fallback_count_offset(n);
    DeviceBuffer rb(impl, 4, MemoryKind::device_local);
    impl.submit([&](VkCommandBuffer cmd) {
      VkBufferCopy c{offset, 0, 4};
      vkCmdCopyBuffer(cmd, scratch.buffer(), rb.buffer(), 1, &c);
    });
    download(impl, rb, &fallbacks, 4);
  }
  double med = ms[ms.size() / 2];
  // Check the last run.
  std::vector<uint64_t> out(n * kb / 8 + 1);
  download(impl, keys, out.data(), key_size);
  auto* o32 = reinterpret_cast<uint32_t*>(out.data());
  uint64_t sum = 0, xr = 0;
  bool sorted = true;
  for (uint64_t j = 0; j < n; ++j) {
    uint64_t k = kb == 4 ? o32[j] : out[j];
    sum += k, xr ^= k;
    // Floats compare by IEEE-754 totalOrder, as gpusort sorts them.
    auto order = [&](uint64_t bits) -> uint64_t {
      if (key != KeyType::f32) return bits;
      return (bits & 0x80000000u) ? uint32_t(~bits) : uint32_t(bits | 0x80000000u);
    };
    if (j && order(k) < order(kb == 4 ? o32[j - 1] : out[j - 1])) sorted = false;
  }
  if (end_bit || begin_bit || options.profiling.histogram_only)
    sorted = true;  // only some digits are ordered
  bool ok = sorted && ((sum == sums[last_input] && xr == xors[last_input]) ||
                       options.profiling.histogram_only);
  if (value_bytes && ok && !end_bit && !begin_bit) {
    // Values carried the input index: the pair must match the input key at that index.
    std::vector<uint32_t> v(value_size / 4);
    download(impl, values, v.data(), value_size);
    for (int i = 0; i < inputs; ++i)
      if (i == last_input) {
        x = 0x9e3779b97f4a7c15ull;  // regenerate the input
        for (int j = 0; j <= i; ++j)
          for (auto& h : host) x ^= x << 13, x ^= x >> 7, x ^= x << 17, h = x;
      }
    auto* h32 = reinterpret_cast<uint32_t*>(host.data());
    for (uint64_t j = 0; j < n && ok; ++j) {
      uint32_t idx = value_bytes == 4 ? v[j] : v[2 * j];
      uint64_t want = kb == 4 ? h32[idx] : host[idx];
      uint64_t got = kb == 4 ? o32[j] : out[j];
      if (idx >= n || want != got) ok = false;
      if (j && got == (kb == 4 ? o32[j - 1] : out[j - 1]) &&
          idx < (value_bytes == 4 ? v[j - 1] : v[2 * j - 2]))
        ok = false;
    }
  }
  printf(
      "%-8s %s v%u 2^%-2d wg %3u kpt %2u  median %8.3f ms  min %8.3f  %6.2f GKeys/s  scratch %llu "
      "B (+%llu beyond ping-pong) fallbacks %u %s\n",
      classic ? "classic" : "onesweep", argv[1], value_bytes, atoi(argv[3]), options.workgroup,
      options.keys_per_thread, med, ms.front(), n / med / 1e6,
      (unsigned long long)algorithm->scratch_bytes(n),
      (unsigned long long)(algorithm->scratch_bytes(n) - align_up(n * kb, 256) -
                           align_up(value_size, 256)),
      fallbacks, ok ? "OK" : "WRONG");
  if (phases) {
    printf("  phases (ms, median):");
    for (auto& p : phase_ms) {
      std::sort(p.begin(), p.end());
      printf(" %.3f", p[p.size() / 2]);
    }
    printf("\n");
  }
  return ok ? 0 : 1;
}
