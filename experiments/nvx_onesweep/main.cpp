// nvx_onesweep: can gpusort's own CUDA Onesweep kernels, launched through VK_NVX_binary_import in
// a Vulkan command buffer, match CUB? For each key type, distribution and size it sorts the same
// input with
//   nvx   our kernels (onesweep.cu, embedded cubin or PTX) in a Vulkan command buffer
//   cuda  the same cubin launched by the CUDA runtime (kernel speed without the NVX path)
//   cub   cub::DeviceRadixSort
// spins the GPU up until the times converge, reports the median of --runs sorts, and checks the
// whole output of each against a host reference (a stable radix sort, itself checked against
// std::stable_sort up to 2^--stable-max-log2 keys). Values are the input indices, so the pairs'
// values must be the stable permutation. See README.md.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "embedded.hpp"
#include "inputs.hpp"
#include "sorter.hpp"

using namespace nvx_onesweep;

namespace {

const char* const kUsage = R"(usage: nvx_onesweep [options]
  --types LIST         u32,u32+u32,u64,u64+u32 (default: all four)
  --dists LIST         uniform,equal,skew99,sorted (default: uniform)
  --min-log2 N --max-log2 N --step N   sizes 2^N (default 18, 28, 2)
  --sizes LIST         explicit sizes instead (e.g. 1,1000,7681,1048593)
  --impls LIST         nvx,cuda,cub (default: all three)
  --variant NAME       kernel tuning (default: the first; --info lists them)
  --variants LIST      several tunings in one run, each on the same inputs (nvx and cuda per
                       variant, one row each; CUB once per input); "all": every variant
  --ptx                load the PTX (driver JIT) instead of the cubin, for nvx and cuda
  --slots N            look-back table length in tiles (power of two; default min(1024, tiles))
  --spin-limit N       look-back rounds on an unpublished predecessor before recounting it (64)
  --refuse P           testing: tiles p % P == P - 1 never publish (fallbacks must happen)
  --claim-by-id        block i sorts tile i instead of claiming tiles from a counter
  --hist-blocks-per-sm N   histogram grid: min(tiles, SMs x N) (default 8)
  --all-barriers       Vulkan barriers ALL_COMMANDS -> ALL_COMMANDS instead of compute -> compute
  --check              correctness mode: --runs sorts each checked, no spin-up, no timing table
  --runs N             timed sorts per row (default 11; --check: 3)
  --min-spinup-s X --max-spinup-s X --first-spinup-s X   spin-up (default 0.3, 3, 2)
  --stable-max-log2 N  cross-check the host reference with std::stable_sort up to 2^N (22)
  --seed S             input seed (default 1)
  --csv FILE           also append the rows to FILE
  --cuda-device N      CUDA device (the Vulkan device is the one with its UUID; default 0)
  --self-test          stage by stage, nvx and cuda (first failing stage named): parameters echoed
                       and a copy, the histogram, each pass alone; blocks resident per SM
  --info               print the device, the variants and each kernel's registers, then exit
  --write-kernels DIR  write the embedded cubins, PTX and ptxas reports to DIR, then exit
)";

struct Options {
  std::vector<KeyType> types{KeyType::u32, KeyType::u32_u32, KeyType::u64, KeyType::u64_u32};
  std::vector<Dist> dists{Dist::uniform};
  uint32_t min_log2 = 18, max_log2 = 28, step = 2;
  std::vector<uint32_t> sizes;
  bool nvx = true, cuda = true, cub = true;
  KernelSettings settings;
  std::vector<uint32_t> variants;  // --variants (empty: settings.variant alone)
  bool check = false;
  int runs = -1;
  double min_spinup_s = 0.3, max_spinup_s = 3, first_spinup_s = 2;
  uint32_t stable_max_log2 = 22;
  uint64_t seed = 1;
  std::string csv;
  int cuda_device = 0;
  bool info = false;
  bool self_test = false;
  std::string write_kernels;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

uint64_t parse_number(const std::string& s, const char* option) {
  try {
    size_t used = 0;
    const unsigned long long v = std::stoull(s, &used, 0);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  throw Error(std::string(option) + " expects a number, got '" + s + "'");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(a + " needs a value");
      return argv[++i];
    };
    auto number = [&]() { return parse_number(value(), a.c_str()); };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--types") {
      o.types.clear();
      for (const auto& t : split(value())) {
        bool found = false;
        for (KeyType k : {KeyType::u32, KeyType::u32_u32, KeyType::u64, KeyType::u64_u32})
          if (t == key_type_name(k)) o.types.push_back(k), found = true;
        if (!found)
          throw Error("unknown key type '" + t + "' (expected u32, u32+u32, u64, u64+u32)");
      }
    } else if (a == "--dists") {
      o.dists.clear();
      for (const auto& d : split(value())) {
        Dist dist;
        if (!parse_dist(d, dist))
          throw Error("unknown distribution '" + d + "' (expected uniform, equal, skew99, sorted)");
        o.dists.push_back(dist);
      }
    } else if (a == "--min-log2") {
      o.min_log2 = uint32_t(number());
    } else if (a == "--max-log2") {
      o.max_log2 = uint32_t(number());
    } else if (a == "--step") {
      o.step = std::max<uint32_t>(1, uint32_t(number()));
    } else if (a == "--sizes") {
      for (const auto& s : split(value())) o.sizes.push_back(uint32_t(parse_number(s, "--sizes")));
    } else if (a == "--impls") {
      o.nvx = o.cuda = o.cub = false;
      for (const auto& s : split(value())) {
        if (s == "nvx")
          o.nvx = true;
        else if (s == "cuda")
          o.cuda = true;
        else if (s == "cub")
          o.cub = true;
        else
          throw Error("unknown implementation '" + s + "' (expected nvx, cuda, cub)");
      }
    } else if (a == "--variant") {
      const std::string name = value();
      bool found = false;
      for (uint32_t v = 0; v < kVariantCount; ++v)
        if (name == kVariants[v].name) o.settings.variant = v, found = true;
      if (!found) throw Error("unknown variant '" + name + "' (--info lists them)");
    } else if (a == "--variants") {
      o.variants.clear();
      for (const auto& name : split(value())) {
        bool found = false;
        for (uint32_t v = 0; v < kVariantCount; ++v)
          if (name == "all" || name == kVariants[v].name) o.variants.push_back(v), found = true;
        if (!found) throw Error("unknown variant '" + name + "' (--info lists them)");
      }
    } else if (a == "--ptx") {
      o.settings.ptx = true;
    } else if (a == "--slots") {
      o.settings.lookback_slots = uint32_t(number());
    } else if (a == "--spin-limit") {
      o.settings.spin_limit = std::max<uint32_t>(1, uint32_t(number()));
    } else if (a == "--refuse") {
      o.settings.refusal_period = uint32_t(number());
      if (o.settings.refusal_period == 1)
        throw Error("--refuse 1 would let no tile publish (use 2 or more)");
    } else if (a == "--claim-by-id") {
      o.settings.claim_by_id = true;
    } else if (a == "--hist-blocks-per-sm") {
      o.settings.histogram_blocks_per_sm = std::max<uint32_t>(1, uint32_t(number()));
    } else if (a == "--all-barriers") {
      o.settings.all_commands_barriers = true;
    } else if (a == "--check") {
      o.check = true;
    } else if (a == "--runs") {
      o.runs = int(std::max<uint64_t>(1, number()));
    } else if (a == "--min-spinup-s") {
      o.min_spinup_s = std::stod(value());
    } else if (a == "--max-spinup-s") {
      o.max_spinup_s = std::stod(value());
    } else if (a == "--first-spinup-s") {
      o.first_spinup_s = std::stod(value());
    } else if (a == "--stable-max-log2") {
      o.stable_max_log2 = uint32_t(number());
    } else if (a == "--seed") {
      o.seed = number();
    } else if (a == "--csv") {
      o.csv = value();
    } else if (a == "--cuda-device") {
      o.cuda_device = int(number());
    } else if (a == "--self-test") {
      o.self_test = true;
    } else if (a == "--info") {
      o.info = true;
    } else if (a == "--write-kernels") {
      o.write_kernels = value();
    } else {
      throw Error("unknown option '" + a + "' (--help lists them)");
    }
  }
  if (o.runs < 0) o.runs = o.check ? 3 : 11;
  if (o.sizes.empty()) {
    if (o.max_log2 > 31 || o.min_log2 > o.max_log2)
      throw Error("sizes must satisfy min-log2 <= max-log2 <= 31");
    for (uint32_t l = o.min_log2; l <= o.max_log2; l += o.step) o.sizes.push_back(uint32_t(1) << l);
  }
  for (uint32_t n : o.sizes)
    if (n == 0) throw Error("sizes must be at least 1");
  if (o.variants.empty()) o.variants.push_back(o.settings.variant);
  return o;
}

void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(status));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct Timing {
  double median_ms = NAN, min_ms = NAN, max_ms = NAN;
  int spinup_runs = 0;
};

// Sorts in batches of five until two batch medians agree within 1 % (after min_s seconds) or
// max_s seconds have passed, then `runs` timed sorts.
Timing measure(Sorter& sorter, int runs, double min_s, double max_s) {
  Timing t;
  const auto start = std::chrono::steady_clock::now();
  double previous = 0;
  for (;;) {
    std::vector<double> batch(5);
    for (double& ms : batch) ms = sorter.sort_once();
    t.spinup_runs += 5;
    const double m = median(batch);
    const double elapsed = seconds_since(start);
    if ((elapsed >= min_s && previous > 0 && std::fabs(m - previous) <= 0.01 * m) ||
        elapsed >= max_s)
      break;
    previous = m;
  }
  std::vector<double> times(static_cast<size_t>(runs));
  for (double& ms : times) ms = sorter.sort_once();
  t.median_ms = median(times);
  t.min_ms = *std::min_element(times.begin(), times.end());
  t.max_ms = *std::max_element(times.begin(), times.end());
  return t;
}

struct Result {
  bool ran = false, ok = true;
  Timing timing;
  uint32_t fallbacks = 0;
  std::string problem;
};

std::string format(const char* fmt, double v) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

std::string size_name(uint32_t n) {
  if (n >= 2 && (n & (n - 1)) == 0) return "2^" + std::to_string(31 - __builtin_clz(n));
  return std::to_string(n);
}

int write_kernels(const std::string& dir) {
  for (uint32_t v = 0; v < kVariantCount; ++v) {
    const EmbeddedKernels& k = embedded_kernels(v);
    const std::string base = dir + "/onesweep_" + kVariants[v].name;
    std::ofstream(base + ".cubin", std::ios::binary)
        .write(reinterpret_cast<const char*>(k.cubin), std::streamsize(k.cubin_size));
    std::ofstream(base + ".ptx", std::ios::binary).write(k.ptx, std::streamsize(k.ptx_size));
    std::ofstream(base + ".ptxas.txt") << k.ptxas_info;
    std::printf("wrote %s.cubin (%zu bytes), .ptx (%zu bytes), .ptxas.txt\n", base.c_str(),
                k.cubin_size, k.ptx_size);
  }
  return 0;
}

std::string describe_variant(const Variant& v) {
  return std::string(v.name) + ": " + std::to_string(v.threads) + " threads, min " +
         std::to_string(v.min_blocks) + " blocks/SM, keys per thread u32 " +
         std::to_string(v.items_u32) + ", u32+u32 " + std::to_string(v.items_u32_u32) + ", u64 " +
         std::to_string(v.items_u64) + ", u64+u32 " + std::to_string(v.items_u64_u32) +
         "; look-back window " + std::to_string(v.lookback_window) +
         (v.early_values ? ", values loaded before the look-back" : "") +
         (v.exchange == kExchangeWhole ? "; whole tile staged in shared memory"
          : v.exchange == kExchangeSegments
              ? "; staged in segments that fit the blocks in 48 KiB/SM, keys held in registers"
          : v.exchange == kExchangeSegmentsReload
              ? "; staged in segments that fit the blocks in 48 KiB/SM, keys loaded again"
              : "; scattered straight from registers") +
         ((v.hints & kHintPrefetchValues) != 0 ? "; values prefetched into L2 at the claim" : "") +
         ((v.hints & kHintPackedFallback) != 0 ? "; 16-bit fallback counts" : "");
}

// One implementation timed: our kernels of one variant through one path, or CUB (variant -1).
struct Timed {
  Sorter* sorter;
  int variant;
  bool spun_up = false;  // whether it has been spun up once
};

template <class K>
bool run_width(const Options& o, const std::vector<KeyType>& types, std::vector<Timed>& sorters,
               std::FILE* csv) {
  bool all_ok = true;
  for (Dist dist : o.dists) {
    for (uint32_t n : o.sizes) {
      const auto generated = std::chrono::steady_clock::now();
      const std::vector<K> keys = make_keys<K>(dist, n, o.seed);
      std::vector<uint32_t> values(n);
      std::iota(values.begin(), values.end(), 0u);
      std::vector<K> expected;
      std::vector<uint32_t> permutation;
      reference_sort(keys, expected, permutation);
      std::string reference_note = "host radix";
      if (uint64_t(n) <= (uint64_t(1) << o.stable_max_log2)) {
        const std::string diff = cross_check(keys, expected, permutation);
        if (!diff.empty()) throw Error(diff);
        reference_note = "host radix = std::stable_sort";
      }
      const double host_s = seconds_since(generated);
      for (KeyType type : types) {
        std::vector<Result> results(sorters.size());
        for (size_t s = 0; s < sorters.size(); ++s) {
          Sorter& sorter = *sorters[s].sorter;
          Result& r = results[s];
          r.ran = true;
          try {
            sorter.prepare(type, n, keys.data(), has_values(type) ? values.data() : nullptr);
            std::vector<K> got(n);
            std::vector<uint32_t> got_values(has_values(type) ? n : 0);
            auto verify = [&] {
              sorter.read_output(got.data(), has_values(type) ? got_values.data() : nullptr);
              const std::string diff = compare(expected, has_values(type) ? &permutation : nullptr,
                                               got, has_values(type) ? &got_values : nullptr);
              if (!diff.empty() && r.problem.empty()) r.problem = diff;
            };
            if (o.check) {
              std::vector<double> times;
              for (int run = 0; run < o.runs; ++run) {
                times.push_back(sorter.sort_once());
                verify();
                r.fallbacks = std::max(r.fallbacks, sorter.fallbacks());
              }
              r.timing.median_ms = median(times);
            } else {
              const bool first = !sorters[s].spun_up;
              r.timing = measure(sorter, o.runs, first ? o.first_spinup_s : o.min_spinup_s,
                                 o.max_spinup_s);
              sorters[s].spun_up = true;
              verify();
              r.fallbacks = sorter.fallbacks();
            }
            // With refusing tiles, some successor must have recounted one (ours only).
            if (sorters[s].variant >= 0 && o.settings.refusal_period != 0 && r.problem.empty()) {
              KernelSettings settings = o.settings;
              settings.variant = uint32_t(sorters[s].variant);
              const SortPlan plan = make_plan(type, n, settings, 1);
              if (plan.tiles > o.settings.refusal_period && r.fallbacks == 0)
                r.problem = "tiles refused to publish but no look-back fell back";
            }
            sorter.release();
          } catch (const Error& e) {
            r.problem = e.what();
            sorter.release();
          }
          r.ok = r.problem.empty();
          all_ok &= r.ok;
        }
        // One row per variant (CUB's result repeated in each).
        for (uint32_t variant : o.variants) {
          auto find = [&](const std::string& prefix) -> size_t {
            for (size_t s = 0; s < sorters.size(); ++s)
              if ((sorters[s].variant < 0 || sorters[s].variant == int(variant)) &&
                  sorters[s].sorter->name().rfind(prefix, 0) == 0)
                return s;
            return sorters.size();
          };
          const size_t in_row[3] = {find("nvx"), find("cuda"), find("cub")};
          auto result = [&](size_t s) -> const Result* {
            return s < sorters.size() ? &results[s] : nullptr;
          };
          const Result* nvx = result(in_row[0]);
          const Result* cuda = result(in_row[1]);
          const Result* cub = result(in_row[2]);
          auto ms = [](const Result* r) { return r ? r->timing.median_ms : NAN; };
          const double gkeys = 1e-6 * n;
          std::string checks;
          bool row_ok = true;
          for (size_t s : in_row) {
            if (s >= sorters.size()) continue;
            if (!checks.empty()) checks += " ";
            checks += sorters[s].sorter->name() + (results[s].ok ? ":ok" : ":FAIL");
            row_ok &= results[s].ok;
          }
          const std::string fallbacks = (nvx ? std::to_string(nvx->fallbacks) : "-") + "/" +
                                        (cuda ? std::to_string(cuda->fallbacks) : "-");
          std::printf(
              "%-8s %-8s %-9s %-12s %9s %9s %9s %8s %8s %8s %8s %9s %8s  %s\n", key_type_name(type),
              dist_name(dist), size_name(n).c_str(), kVariants[variant].name,
              format("%.4f", ms(nvx)).c_str(), format("%.4f", ms(cuda)).c_str(),
              format("%.4f", ms(cub)).c_str(), format("%.2f", gkeys / ms(nvx)).c_str(),
              format("%.2f", gkeys / ms(cub)).c_str(), format("%.3f", ms(cub) / ms(nvx)).c_str(),
              format("%.3f", ms(cub) / ms(cuda)).c_str(),
              format("%.1f", 1e3 * (ms(nvx) - ms(cuda))).c_str(), fallbacks.c_str(),
              checks.c_str());
          for (size_t s : in_row)
            if (s < sorters.size() && !results[s].ok)
              std::printf("    %s FAILED: %s\n", sorters[s].sorter->name().c_str(),
                          results[s].problem.c_str());
          if (csv) {
            std::fprintf(csv, "%s,%s,%u,%s,%s,%s,%s,%s,%s,%s,%s,%u,%s\n", key_type_name(type),
                         dist_name(dist), n, kVariants[variant].name,
                         o.settings.ptx ? "ptx" : "cubin", format("%.5f", ms(nvx)).c_str(),
                         format("%.5f", ms(cuda)).c_str(), format("%.5f", ms(cub)).c_str(),
                         format("%.5f", nvx ? nvx->timing.min_ms : NAN).c_str(),
                         format("%.5f", cub ? cub->timing.min_ms : NAN).c_str(), fallbacks.c_str(),
                         o.check ? 1u : 0u, row_ok ? "ok" : "FAIL");
            std::fflush(csv);
          }
        }
        std::fflush(stdout);
      }
      if (host_s > 5)
        std::printf("    (inputs and %s reference: %.1f s)\n", reference_note.c_str(), host_s);
    }
  }
  return all_ok;
}

// --self-test: for each implementation of our kernels, key type and size, stage by stage, each
// from a fresh restore: (1) selftest_echo with pass 0's arguments (every parameter as received,
// a copy keys_a -> keys_b), (2) the histogram (counts and offsets of every pass), (3) histogram
// and passes 0..k, for each k (the pass's output buffer against the host's stable sort by the
// digits so far). Stops a combination at its first failing stage. Then the residency probe.
template <class K>
std::string check_stages(Sorter& sorter, KeyType type, uint32_t n, uint64_t seed) {
  const std::vector<K> keys = make_keys<K>(Dist::uniform, n, seed);
  std::vector<uint32_t> values(n);
  std::iota(values.begin(), values.end(), 0u);
  sorter.prepare(type, n, keys.data(), has_values(type) ? values.data() : nullptr);
  const std::vector<KernelLaunch> all = sorter.launches();
  // (1) parameters and a copy.
  KernelLaunch echo = all[1];
  echo.kernel = "selftest_echo";
  echo.args[6] = uint32_t(n * sizeof(K) / 4);
  Snapshot s = sorter.run_launches({echo});
  for (int i = 0; i < 6; ++i) {
    const uint64_t got = s.state[2 * i] | uint64_t(s.state[2 * i + 1]) << 32;
    if (got != echo.args[size_t(i)])
      return "echo: pointer parameter " + std::to_string(i) + " arrived as " + std::to_string(got) +
             ", passed " + std::to_string(echo.args[size_t(i)]);
  }
  for (int i = 0; i < 7; ++i)
    if (s.state[12 + i] != uint32_t(echo.args[size_t(6 + i)]))
      return "echo: integer parameter " + std::to_string(6 + i) + " arrived as " +
             std::to_string(s.state[12 + i]) + ", passed " +
             std::to_string(echo.args[size_t(6 + i)]);
  if (s.state[19] != echo.grid || s.state[20] != echo.block)
    return "echo: grid/block arrived as " + std::to_string(s.state[19]) + "/" +
           std::to_string(s.state[20]);
  if (std::memcmp(s.keys_a.data(), keys.data(), n * sizeof(K)) != 0)
    return "echo: keys_a (restored input, read back) differs from the input";
  if (s.keys_b != s.keys_a) return "echo: the copy keys_a -> keys_b differs";
  // (2) the histogram.
  const uint32_t passes = pass_count(type);
  std::vector<uint32_t> counts(passes * kRadix, 0);
  for (K k : keys)
    for (uint32_t p = 0; p < passes; ++p) ++counts[p * kRadix + uint32_t(k >> (8 * p)) % kRadix];
  s = sorter.run_launches({all[0]});
  for (uint32_t p = 0; p < passes; ++p) {
    uint32_t sum = 0;
    for (uint32_t d = 0; d < kRadix; ++d) {
      if (s.state[kStateCounts + p * kRadix + d] != counts[p * kRadix + d])
        return "histogram: pass " + std::to_string(p) + " digit " + std::to_string(d) + " count " +
               std::to_string(s.state[kStateCounts + p * kRadix + d]) + ", expected " +
               std::to_string(counts[p * kRadix + d]);
      if (s.state[kStateOffsets + p * kRadix + d] != sum)
        return "histogram: pass " + std::to_string(p) + " digit " + std::to_string(d) + " offset " +
               std::to_string(s.state[kStateOffsets + p * kRadix + d]) + ", expected " +
               std::to_string(sum);
      sum += counts[p * kRadix + d];
    }
  }
  // (3) passes.
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  for (uint32_t p = 0; p < passes; ++p) {
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      return uint32_t(keys[x] >> (8 * p)) % kRadix < uint32_t(keys[y] >> (8 * p)) % kRadix;
    });
    s = sorter.run_launches(std::vector<KernelLaunch>(all.begin(), all.begin() + 2 + p));
    const std::vector<uint8_t>& out = p % 2 == 0 ? s.keys_b : s.keys_a;
    const std::vector<uint8_t>& vout = p % 2 == 0 ? s.values_b : s.values_a;
    uint32_t wrong = 0, first = n, zeros = 0;
    for (uint32_t i = 0; i < n; ++i) {
      K got;
      std::memcpy(&got, out.data() + i * sizeof(K), sizeof(K));
      zeros += got == 0;
      bool bad = got != keys[order[i]];
      if (has_values(type)) {
        uint32_t v;
        std::memcpy(&v, vout.data() + i * 4, 4);
        bad |= v != order[i];
      }
      if (bad) {
        ++wrong;
        if (first == n) first = i;
      }
    }
    if (wrong)
      return "pass " + std::to_string(p) + ": " + std::to_string(wrong) + " of " +
             std::to_string(n) + " wrong, first at " + std::to_string(first) + " (" +
             std::to_string(zeros) + " zero keys; tile counter " +
             std::to_string(s.state[kStateControl + kControlTileCounter + p]) + " of " +
             std::to_string(all[1 + p].grid) + " tiles)";
  }
  return "";
}

// Blocks of the pass kernels' shape and shared memory resident at once on one SM, through this
// launch path (the most seen on any SM).
uint32_t resident_blocks(Sorter& sorter, const char* kernel, uint32_t shared_bytes, uint32_t sms,
                         std::string& note) {
  const uint32_t blocks = sms * 8;           // more than fit: the most resident at once is seen
  const uint32_t n = blocks * 3 * 2 + 1024;  // keys_a of u32 words enough for the output
  std::vector<uint32_t> keys(n, 0);
  sorter.prepare(KeyType::u32, n, keys.data(), nullptr);
  const uint64_t out = sorter.launches()[1].args[0];  // keys_a
  KernelLaunch l{kernel, blocks, sorter.launches()[1].block, {out, 200000}, shared_bytes};
  const Snapshot s = sorter.run_launches({l});
  std::vector<uint64_t> rec(blocks * 3);
  std::memcpy(rec.data(), s.keys_a.data(), rec.size() * 8);
  uint32_t most = 0;
  std::vector<std::vector<std::pair<uint64_t, int>>> events(1024);
  for (uint32_t b = 0; b < blocks; ++b) {
    if (rec[3 * b] >> 40) note = " (shared memory check failed)";
    const uint32_t sm = uint32_t(rec[3 * b] & 1023);
    events[sm].push_back({rec[3 * b + 1], 1});
    events[sm].push_back({rec[3 * b + 2], -1});
  }
  for (auto& e : events) {
    std::sort(e.begin(), e.end(), [](auto& x, auto& y) {
      return x.first != y.first ? x.first < y.first : x.second < y.second;
    });
    int now = 0;
    for (auto& [t, d] : e) most = std::max<uint32_t>(most, uint32_t(now += d));
  }
  return most;
}

// The pass kernels' exchange shape per key type, as compiled (selftest_shape): keys per thread,
// exchange segments (0: direct scatter), keys per thread a segment, static shared bytes.
std::string pass_shapes(Sorter& sorter) {
  std::vector<uint32_t> zeros(1024, 0);
  sorter.prepare(KeyType::u32, uint32_t(zeros.size()), zeros.data(), nullptr);
  const uint64_t out = sorter.launches()[1].args[0];  // keys_a
  const Snapshot s = sorter.run_launches({KernelLaunch{"selftest_shape", 1, 1, {out}, 0}});
  uint32_t w[16];
  std::memcpy(w, s.keys_a.data(), sizeof(w));
  std::string text;
  const KeyType types[] = {KeyType::u32, KeyType::u32_u32, KeyType::u64, KeyType::u64_u32};
  for (int t = 0; t < 4; ++t) {
    const uint32_t* v = w + 4 * t;
    text += std::string(text.empty() ? "" : "; ") + key_type_name(types[t]) + " " +
            std::to_string(v[0]) + " keys/thread, " +
            (v[1] == 0 ? std::string("direct scatter")
                       : std::to_string(v[1]) + " segment(s) of " + std::to_string(v[2])) +
            ", " + std::to_string(v[3]) + " B shared";
  }
  return text;
}

bool self_test(const Options& o, uint32_t variant, const std::vector<Sorter*>& sorters,
               uint32_t sms) {
  bool ok = true;
  const Variant& v = kVariants[variant];
  std::printf("self-test of %s (stage by stage; the first failing stage of each is named):\n",
              v.name);
  for (Sorter* sorter : sorters) {
    for (KeyType type : o.types) {
      for (uint32_t n : {1u, 2u, 1000u, 7681u, 100003u}) {
        std::string problem;
        try {
          problem = key_bytes(type) == 4 ? check_stages<uint32_t>(*sorter, type, n, o.seed)
                                         : check_stages<uint64_t>(*sorter, type, n, o.seed);
        } catch (const Error& e) {
          problem = e.what();
        }
        sorter->release();
        std::printf("  %-8s %-12s %-8s n=%-7u %s\n", sorter->name().c_str(), v.name,
                    key_type_name(type), n,
                    problem.empty() ? "ok" : ("FAILED: " + problem).c_str());
        ok &= problem.empty();
      }
    }
    if (sorter == sorters.front()) {
      try {
        std::printf("  %-8s %-12s pass shapes: %s\n", sorter->name().c_str(), v.name,
                    pass_shapes(*sorter).c_str());
      } catch (const Error& e) {
        std::printf("  %-8s %-12s pass shapes: FAILED: %s\n", sorter->name().c_str(), v.name,
                    e.what());
      }
      sorter->release();
    }
    struct Probe {
      const char* kernel;
      uint32_t shared_bytes;
      const char* what;
      bool generic;  // the same for every variant of this block size: the first variant only
    };
    const Probe probes[] = {
        {"selftest_residency_u32", 0, "u32 pass shape, its static shared", false},
        {"selftest_residency_u32_u32", 0, "u32+u32 pass shape, its static shared", false},
        {"selftest_residency_u64", 0, "u64 pass shape, its static shared", false},
        {"selftest_residency_u64_u32", 0, "u64+u32 pass shape, its static shared", false},
        {"selftest_residency_static_8", 0, "8 KiB static", true},
        {"selftest_residency_static_16", 0, "16 KiB static", true},
        {"selftest_residency_static_24", 0, "24 KiB static", true},
        {"selftest_residency_static_30", 0, "30 KiB static", true},
        {"selftest_residency_static_40", 0, "40 KiB static", true},
        {"selftest_residency_dynamic", 0, "no shared", true},
        {"selftest_residency_dynamic", 16 * 1024, "16 KiB dynamic", true},
        {"selftest_residency_dynamic", 30 * 1024, "30 KiB dynamic", true},
        {"selftest_residency_dynamic", 40 * 1024, "40 KiB dynamic", true},
        {"selftest_residency_dynamic", 48 * 1024, "48 KiB dynamic", true},
    };
    for (const Probe& p : probes) {
      if (p.generic && variant != o.variants.front()) continue;
      // Through NVX a block of 48 KiB of dynamic shared memory lost the device (README.md).
      if (p.shared_bytes >= 48 * 1024 && sorter->name().rfind("nvx", 0) == 0) continue;
      std::string note;
      try {
        const uint32_t most = resident_blocks(*sorter, p.kernel, p.shared_bytes, sms, note);
        std::printf(
            "  %-8s %-12s residency: %u threads, %s: %u blocks per SM at once%s (kernels ask "
            "for %u)\n",
            sorter->name().c_str(), v.name, v.threads, p.what, most, note.c_str(), v.min_blocks);
      } catch (const Error& e) {
        std::printf("  %-8s %-12s residency (%s): FAILED: %s\n", sorter->name().c_str(), v.name,
                    p.what, e.what());
      }
      sorter->release();
      std::fflush(stdout);
    }
    std::fflush(stdout);
  }
  return ok;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (!o.write_kernels.empty()) return write_kernels(o.write_kernels);

  cuda_check(cudaSetDevice(o.cuda_device), "cudaSetDevice");
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, o.cuda_device), "cudaGetDeviceProperties");
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  std::printf("CUDA device %d: %s, sm_%d%d, %d SMs, CUDA runtime %d, driver %d\n", o.cuda_device,
              prop.name, prop.major, prop.minor, prop.multiProcessorCount, runtime, driver);
  const uint32_t sms = uint32_t(prop.multiProcessorCount);
  const Variant& variant = kVariants[o.settings.variant];
  for (uint32_t v : o.variants)
    std::printf("kernels: %s (%s)\n", describe_variant(kVariants[v]).c_str(),
                o.settings.ptx ? "PTX, driver JIT" : "cubin");
  std::printf("look-back: %s slots, spin limit %u, %s%s; histogram %u blocks/SM; %s barriers\n",
              o.settings.lookback_slots ? std::to_string(o.settings.lookback_slots).c_str()
                                        : "min(1024, tiles)",
              o.settings.spin_limit,
              o.settings.claim_by_id ? "tiles by block id" : "tiles from a counter",
              o.settings.refusal_period
                  ? (", tiles p % " + std::to_string(o.settings.refusal_period) +
                     " == " + std::to_string(o.settings.refusal_period - 1) + " refuse to publish")
                        .c_str()
                  : "",
              o.settings.histogram_blocks_per_sm,
              o.settings.all_commands_barriers ? "ALL_COMMANDS" : "compute->compute");
  for (uint32_t v : o.variants) {
    KernelSettings settings = o.settings;
    settings.variant = v;
    std::printf("registers as loaded by the CUDA driver (%s):\n%s", kVariants[v].name,
                kernel_attributes(settings).c_str());
  }
  std::fflush(stdout);
  if (o.info) {
    std::printf("variants:\n");
    for (uint32_t v = 0; v < kVariantCount; ++v)
      std::printf("  %s\n", describe_variant(kVariants[v]).c_str());
    std::printf("ptxas at build time (%s):\n%s\n", variant.name,
                embedded_kernels(o.settings.variant).ptxas_info);
  }

  // Our kernels: for each variant, through NVX and through the CUDA runtime; then CUB.
  std::vector<std::unique_ptr<Sorter>> owned;
  std::vector<Timed> sorters;
  for (uint32_t v : o.variants) {
    KernelSettings settings = o.settings;
    settings.variant = v;
    if (o.nvx) {
      std::string description;
      owned.push_back(make_nvx_sorter(reinterpret_cast<const uint8_t*>(prop.uuid.bytes), settings,
                                      sms, description));
      sorters.push_back({owned.back().get(), int(v)});
      if (v == o.variants.front()) std::printf("Vulkan device: %s\n", description.c_str());
    }
    if (o.info) continue;
    if (o.cuda) {
      owned.push_back(make_cuda_sorter(settings, sms));
      sorters.push_back({owned.back().get(), int(v)});
    }
  }
  if (o.info) return 0;

  if (o.self_test) {
    bool ok = true;
    for (uint32_t v : o.variants) {
      std::vector<Sorter*> ours;
      for (const Timed& t : sorters)
        if (t.variant == int(v)) ours.push_back(t.sorter);
      ok &= self_test(o, v, ours, sms);
    }
    std::printf("self-test: %s\n", ok ? "all outputs correct" : "SOME OUTPUTS WRONG");
    return ok ? 0 : 1;
  }
  if (o.cub) {
    owned.push_back(make_cub_sorter());
    sorters.push_back({owned.back().get(), -1});
  }

  std::FILE* csv = nullptr;
  if (!o.csv.empty()) {
    const bool fresh = !std::ifstream(o.csv).good();
    csv = std::fopen(o.csv.c_str(), "a");
    if (!csv) throw Error("cannot open " + o.csv);
    if (fresh)
      std::fprintf(csv,
                   "type,dist,n,variant,binary,nvx_ms,cuda_ms,cub_ms,nvx_min_ms,cub_min_ms,"
                   "fallbacks_nvx/cuda,check_mode,ok\n");
  }
  std::printf(
      "%s: median of %d sorts in ms%s; GK/s = n / median; CUB/x = CUB ms / x ms (> 1: x is "
      "faster);\n"
      "NVX-CUDA = the same kernels' median through VK_NVX_binary_import minus through the CUDA "
      "runtime (us)\n",
      o.check ? "correctness mode" : "timing", o.runs, o.check ? ", every output checked" : "");
  std::printf("%-8s %-8s %-9s %-12s %9s %9s %9s %8s %8s %8s %8s %9s %8s  %s\n", "type", "dist", "n",
              "variant", "nvx_ms", "cuda_ms", "cub_ms", "nvx_GK/s", "cub_GK/s", "CUB/NVX",
              "CUB/CUDA", "NVX-CUDA", "fallbk", "checks");
  std::vector<KeyType> narrow, wide;
  for (KeyType t : o.types) (key_bytes(t) == 4 ? narrow : wide).push_back(t);
  bool ok = true;
  if (!narrow.empty()) ok &= run_width<uint32_t>(o, narrow, sorters, csv);
  if (!wide.empty()) ok &= run_width<uint64_t>(o, wide, sorters, csv);
  if (csv) std::fclose(csv);
  std::printf("%s\n", ok ? "all outputs correct" : "SOME OUTPUTS WRONG");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nvx_onesweep: error: %s\n", e.what());
    return 2;
  }
}
