// `gpusort bench --topk` (topk.hpp): each row uploads its input once, then times warm-ups and
// runs of the top-k recorded on device buffers (one submission each, GPU timestamps around the
// recording), and checks the last run's result: k distinct positions whose keys are the outputs,
// in (key, position) order, and exactly k elements of the input (per row) at or before the last
// of them in that order, so the result is the first k of the stable sort.
#include "topk.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "algorithms/topk/topk.hpp"
#include "dispatch/dispatch.hpp"
#include "host/key_order.hpp"
#include "vulkan/buffer.hpp"

namespace gpusort::bench {

namespace {

struct Shape {
  KeyType key;
  uint64_t rows, length, k;  // rows == 0: a whole array of `length` keys
  uint64_t n() const { return std::max<uint64_t>(rows, 1) * length; }
  uint64_t results() const { return std::max<uint64_t>(rows, 1) * std::min(k, length); }
  std::string name() const {
    auto log2 = [](uint64_t x) {
      uint32_t l = 0;
      while ((uint64_t(1) << l) < x) ++l;
      return (uint64_t(1) << l) == x ? "2^" + std::to_string(l) : std::to_string(x);
    };
    std::string s = std::string(to_string(key)) + " ";
    if (rows) s += std::to_string(rows) + " rows x ";
    return s + log2(length) + " k=" + std::to_string(k);
  }
};

std::vector<Shape> shapes_of(const TopKBenchOptions& o) {
  std::vector<Shape> shapes;
  auto wanted = [&](const char* family) {
    return o.shapes.empty() || ("," + o.shapes + ",").find("," + std::string(family) + ",") !=
                                   std::string::npos;
  };
  const std::vector<uint64_t> ks{1, 32, 1024, 65536};
  if (o.quick) {
    if (wanted("whole"))
      for (uint64_t k : {uint64_t(1), uint64_t(32), uint64_t(1024)})
        shapes.push_back({KeyType::f32, 0, 1 << 14, k});
    if (wanted("i32")) shapes.push_back({KeyType::i32, 0, 1 << 14, 100});
    if (wanted("rows")) {
      shapes.push_back({KeyType::f32, 64, 1 << 10, 8});
      shapes.push_back({KeyType::f32, 4, 1 << 12, 64});
    }
    return shapes;
  }
  if (wanted("whole"))
    for (uint32_t log2 : {20u, 24u, 26u, 28u})
      for (uint64_t k : ks) shapes.push_back({KeyType::f32, 0, uint64_t(1) << log2, k});
  if (wanted("i32"))
    for (uint32_t log2 : {24u, 26u, 28u})
      for (uint64_t k : ks) shapes.push_back({KeyType::i32, 0, uint64_t(1) << log2, k});
  if (wanted("rows")) {
    shapes.push_back({KeyType::f32, 4096, 1 << 14, 64});
    shapes.push_back({KeyType::f32, 64, 1 << 20, 1024});
    shapes.push_back({KeyType::f32, 32768, 4096, 32});
  }
  return shapes;
}

// The check of one row's results (positions in the whole array), or why they are wrong.
std::string check(const Shape& s, bool largest, const std::vector<uint32_t>& keys,
                  const std::vector<uint32_t>& out, const std::vector<uint32_t>& positions) {
  const SortSpec spec = make_sort_spec(s.key, 0, largest, 0, 0);
  const KeyField field(spec);
  auto order = [&](uint32_t bits) {
    return s.key == KeyType::f32 ? field(std::bit_cast<float>(bits))
                                 : field(std::bit_cast<int32_t>(bits));
  };
  const uint64_t rows = std::max<uint64_t>(s.rows, 1), kept = std::min(s.k, s.length);
  std::vector<uint8_t> seen;
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t begin = r * s.length, at = r * kept;
    seen.assign(s.length, 0);
    for (uint64_t j = 0; j < kept; ++j) {
      const uint32_t p = positions[at + j];
      if (p < begin || p >= begin + s.length || seen[p - begin]++)
        return "row " + std::to_string(r) + ": position " + std::to_string(p) +
               " out of the row or repeated";
      if (out[at + j] != keys[p])
        return "row " + std::to_string(r) + ": output " + std::to_string(j) +
               " is not the key at its position";
      if (j && std::make_pair(order(out[at + j - 1]), positions[at + j - 1]) >
                   std::make_pair(order(out[at + j]), p))
        return "row " + std::to_string(r) + ": outputs " + std::to_string(j - 1) + " and " +
               std::to_string(j) + " out of (key, position) order";
    }
    const auto last = std::make_pair(order(out[at + kept - 1]), positions[at + kept - 1]);
    uint64_t within = 0;
    for (uint64_t i = begin; i < begin + s.length; ++i)
      within += std::make_pair(order(keys[i]), uint32_t(i)) <= last;
    if (within != kept)
      return "row " + std::to_string(r) + ": " + std::to_string(within) +
             " keys at or before the last result, not k = " + std::to_string(kept);
  }
  return "";
}

}  // namespace

void run_topk_bench(Context& ctx, const TopKBenchOptions& o) {
  Context::Impl& impl = ctx.impl();
  std::printf("gpusort bench --topk on %s (%s); %s; %u warm-ups, median of %u runs, seed %u\n",
              impl.info.name.c_str(), impl.info.driver.c_str(),
              o.largest ? "the k largest (torch.topk's default)" : "the k smallest", o.warmups,
              o.runs, o.seed);
  std::printf("%-32s %12s %10s %10s %10s  %s\n", "shape", "n", "ms", "min ms", "GB/s read",
              "check");
  std::string json = "{\"device\": \"" + impl.info.name + "\", \"largest\": " +
                     (o.largest ? "true" : "false") + ", \"rows\": [";
  bool first_row = true;
  for (const Shape& s : shapes_of(o)) {
    const uint64_t n = s.n(), results = s.results();
    std::vector<uint32_t> keys(n);
    for (uint64_t i = 0; i < n; ++i) {
      const uint32_t x = topk_key(i, o.seed);
      keys[i] = s.key == KeyType::f32 ? std::bit_cast<uint32_t>(float(x >> 8) * 0x1p-24f) : x;
    }
    const SortSpec spec = make_sort_spec(s.key, 0, o.largest, 0, 0);
    const auto topk = make_topk(
        impl, spec, [&](const SortSpec& x) { return make_sort_algorithm(impl, x, Algorithm::automatic); },
        s.rows ? 1 : 0,
        [&](const SegmentedSpec& x) { return make_segmented_sort(impl, x, Algorithm::automatic); });
    std::vector<uint32_t> offsets;
    if (s.rows)
      for (uint64_t r = 0; r <= s.rows; ++r) offsets.push_back(uint32_t(r * s.length));
    const uint64_t scratch_bytes = s.rows ? topk->segments_scratch_bytes(n, s.rows, results)
                                          : topk->scratch_bytes(n, s.k);
    DeviceBuffer keys_d(impl, n * 4, MemoryKind::device_local),
        out_d(impl, results * 4, MemoryKind::device_local),
        positions_d(impl, results * 4, MemoryKind::device_local),
        offsets_d(impl, std::max<uint64_t>(offsets.size(), 1) * 4, MemoryKind::device_local),
        scratch(impl, std::max<uint64_t>(scratch_bytes, 256), MemoryKind::device_local);
    upload(impl, keys_d, keys.data(), n * 4);
    if (s.rows) upload(impl, offsets_d, offsets.data(), offsets.size() * 4);
    auto record = [&](VkCommandBuffer cmd) {
      Recorder rec(impl, cmd);
      if (s.rows) {
        TopKSegmentsTargets t;
        t.keys = keys_d.address();
        t.offsets = offsets_d.address();
        t.keys_out = out_d.address();
        t.positions = positions_d.address();
        t.scratch = scratch.address();
        t.scratch_buffer = scratch.buffer();
        t.n = n, t.segments = s.rows, t.k = s.k, t.results = results;
        topk->record_segments(rec, t);
      } else {
        TopKTargets t;
        t.keys = keys_d.address();
        t.keys_out = out_d.address();
        t.positions = positions_d.address();
        t.scratch = scratch.address();
        t.scratch_buffer = scratch.buffer();
        t.n = n, t.k = s.k;
        topk->record(rec, t);
      }
    };
    for (uint32_t w = 0; w < o.warmups; ++w) impl.submit(record);
    std::vector<double> ms;
    for (uint32_t r = 0; r < o.runs; ++r) ms.push_back(impl.submit_timed(record));
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    std::vector<uint32_t> out(results), positions(results);
    download(impl, out_d, out.data(), results * 4);
    download(impl, positions_d, positions.data(), results * 4);
    const std::string problem = check(s, o.largest, keys, out, positions);
    std::printf("%-32s %12llu %10.3f %10.3f %10.1f  %s\n", s.name().c_str(),
                (unsigned long long)n, median, ms.front(), double(n) * 4 / (median * 1e6),
                problem.empty() ? "first k of the stable sort" : ("WRONG: " + problem).c_str());
    std::fflush(stdout);
    json += std::string(first_row ? "" : ",") + "\n  {\"shape\": \"" + s.name() +
            "\", \"key\": \"" + to_string(s.key) + "\", \"rows\": " + std::to_string(s.rows) +
            ", \"length\": " + std::to_string(s.length) + ", \"k\": " + std::to_string(s.k) +
            ", \"ms_median\": " + std::to_string(median) + ", \"ms_min\": " +
            std::to_string(ms.front()) + ", \"verified\": " + (problem.empty() ? "true" : "false") +
            "}";
    first_row = false;
    if (!o.json.empty()) std::ofstream(o.json) << json << "\n]}\n";
    if (!problem.empty()) throw Error("bench --topk: " + s.name() + ": " + problem);
  }
}

}  // namespace gpusort::bench
