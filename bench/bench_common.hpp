// What the gpusort benchmark and the CUB baseline share, so both follow one protocol and write
// one schema: the key configurations, the random inputs (uniform random bits from a
// counter-based generator, identical in both programs), the output checks, the statistics and
// the JSON / CSV / table writers. Host code only, C++17 (nvcc compiles it too).
//
// Protocol (both implementations):
//  - every run sorts its own fresh random input in its own buffer set; all sets of a row are
//    uploaded first (not timed), at least one per run and enough to exceed rotate_bytes (>= 2.5x
//    the H100's 50 MB L2), so no timed run finds its input in the cache;
//  - spin-up: the row's own sort of a spare input, in batches queued back to back, until its
//    GPU time per sort has settled (Protocol::spin_up; docs/design/benchmark-protocol.md);
//  - then, queued behind the spin-up's last batch with no host wait between, `warmups` untimed
//    runs and `runs` timed runs back to back in one submission (device timestamps / events
//    around each sort alone); the median reported with the spread (interquartile range /
//    median), a row spread more than max_spread, or whose spin-up did not settle, flagged;
//    the SM clock (NVML, where present) read while the runs are queued;
//  - every run's output (warm-ups included) is checked: keys sorted and (key, value) pairs a
//    permutation of the input (a 64-bit multiset hash of the pairs); up to exact_max_n the whole
//    output is also compared with std::stable_sort of the same input.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gpusort::bench {

struct KeyConfig {
  const char* name;  // "u32", "u64", "f32", "u32+u32", "u64+u32"
  const char* key;   // key type name as gpusort spells it
  uint32_t key_bytes;
  uint32_t value_bytes;  // 0: keys only
  bool is_float;
  // One bucket holding 99 % of the keys: 99 % of the keys get the top byte (of 32 or
  // 64 bits) skewed_top_byte, the rest stay uniform. Bench only on request (--keys), at 2^20 and
  // 2^22.
  bool skewed = false;
  // Keys below 2^low_bits (0: all 32 bits random), as small integers or quantized values are: the
  // top bits are all zero. Bench only on request (--keys).
  uint32_t low_bits = 0;
  // Every key the same (equal_key; both words of a 64-bit key). Bench only on request (--keys).
  bool equal = false;
};
inline constexpr uint32_t equal_key = 0x5A5A5A5A;
inline constexpr uint32_t skewed_top_byte = 0x5A;

inline const std::vector<KeyConfig>& key_configs() {
  static const std::vector<KeyConfig> configs{{"u32", "u32", 4, 0, false},
                                              {"u64", "u64", 8, 0, false},
                                              {"f32", "f32", 4, 0, true},
                                              {"u32+u32", "u32", 4, 4, false},
                                              {"u64+u32", "u64", 8, 4, false},
                                              {"u32-skew99", "u32", 4, 0, false, true},
                                              {"u32+u32-skew99", "u32", 4, 4, false, true},
                                              {"u32-low16", "u32", 4, 0, false, false, 16},
                                              {"u32-few16", "u32", 4, 0, false, false, 4},
                                              {"u32-equal", "u32", 4, 0, false, false, 0, true},
                                              {"u64-skew99", "u64", 8, 0, false, true},
                                              {"u64-low16", "u64", 8, 0, false, false, 16},
                                              {"u64-few16", "u64", 8, 0, false, false, 4},
                                              {"u64-equal", "u64", 8, 0, false, false, 0, true}};
  return configs;
}
// What runs without --keys: the uniform configurations.
inline std::vector<KeyConfig> default_key_configs() {
  std::vector<KeyConfig> chosen;
  for (const auto& c : key_configs())
    if (!c.skewed && c.low_bits == 0 && !c.equal) chosen.push_back(c);
  return chosen;
}

inline std::vector<KeyConfig> parse_key_configs(const std::string& list) {
  std::vector<KeyConfig> chosen;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(start, end - start);
    bool found = false;
    for (const auto& c : key_configs())
      if (name == c.name) chosen.push_back(c), found = true;
    if (!found)
      throw std::runtime_error("unknown key configuration '" + name +
                               "' (expected u32, u64, f32, u32+u32, u64+u32, u32-skew99, "
                               "u32+u32-skew99, u32-low16, u32-few16, u32-equal, u64-skew99, "
                               "u64-low16, u64-few16, u64-equal)");
    start = end + 1;
  }
  return chosen;
}

// What a row's spin-up did (Protocol::spin_up).
struct SpinUp {
  enum class State {
    off,     // no spin-up (spin_up_ms and spin_up_max_ms 0: --quick)
    steady,  // the spare sort's times of the last steady_window_ms agreed within steady_tolerance
    few,     // the cap came before steady_min_samples batches finished (each sort long): the GPU
             // was busy all along, but convergence could not be judged
    cap,     // the cap came with the times still disagreeing: the row is flagged
  };
  State state = State::off;
  double ms = 0;            // wall time of the spin-up
  uint32_t batches = 0;     // batches finished
  uint64_t sorts = 0;       // spare sorts in them
  double per_sort_ms = 0;   // GPU time per sort of the last finished batch
  uint32_t unfinished = 0;  // batches still queued on return: the caller finishes them after
                            // queuing its timed runs behind them
  static const char* name(State s) {
    switch (s) {
      case State::off:
        return "off";
      case State::steady:
        return "steady";
      case State::few:
        return "few";
      default:
        return "cap";
    }
  }
};

struct Protocol {
  uint32_t min_log2 = 10, max_log2 = 28, log2_step = 2;
  uint32_t warmups = 3, runs = 11;
  uint64_t rotate_bytes = uint64_t(128) << 20;  // rotated sets together exceed this
  uint32_t min_sets = 3, max_sets = 64;
  uint64_t exact_max_n = uint64_t(1) << 16;  // whole-output comparison with std::stable_sort
  uint64_t seed = 0;                         // 0: a fresh seed per invocation
  double time_budget_s = 0;  // > 0: skip rows predicted to end past this many seconds

  // Spin-up (docs/design/benchmark-protocol.md). The GPU lowers its clocks while the host prepares
  // a row's inputs (the H100's SM clock falls to 345 MHz from 1980 within a fraction of a second of
  // idle) and needs a few hundred ms of busy GPU to bring them back. So before a row's timed
  // runs its own sort runs on a spare input, in batches kept queued back to back (the GPU never
  // waits for the host), until the batches' GPU time per sort of the last steady_window_ms (at
  // least steady_min_samples batches) agrees within steady_tolerance, after at least spin_up_ms
  // and at most spin_up_max_ms; the timed runs are queued behind the last batch, so no idle gap
  // lies between them.
  double spin_up_ms = 200;       // minimum
  double spin_up_max_ms = 2000;  // cap (the row is flagged when its times still disagree)
  double steady_window_ms = 50;
  uint32_t steady_min_samples = 5;
  double steady_tolerance = 0.03;  // (max - min) / min of the window's per-sort times
  // A batch holds `repeats` sorts; repeats double while a batch's GPU time is below
  // spin_up_submission_ms, so small sorts go many to a batch.
  double spin_up_submission_ms = 2;
  uint32_t spin_up_max_repeats = 4096;  // bounds one command buffer's length
  // A row whose timed runs spread more than this (interquartile range / median) is flagged as
  // not steady, in the printed table, the JSON and the CSV; compare.py leaves it out.
  double max_spread = 0.05;
  // ... and by more than this in absolute terms: rows of a few microseconds spread a few tenths
  // of a microsecond from one dispatch to the next (timestamp and launch jitter, measured on an
  // H200 on 2026-11-26: 5-9 % of 6-12 us rows, CUB's as gpusort's), which is not a clock ramp.
  double spread_floor_ms = 0.001;
  // Where the SM clock can be read (watch_clock): whether it is up, at least min_clock_fraction
  // of its maximum. The spin-up goes on until it is (within its cap), and a row whose clock was
  // below it is flagged: a row can settle at a lowered clock (seen on an H200 on 2026-11-26: the
  // first segmented row, steady at 345 MHz after 200 ms of spin-up).
  std::function<bool()> clock_up;
  double min_clock_fraction = 0.9;

  // --quick: a few small sizes and runs, for CI on a CPU driver.
  void make_quick() {
    min_log2 = 10, max_log2 = 14, log2_step = 2;
    warmups = 1, runs = 3;
    min_sets = 3, max_sets = 4;
    spin_up_ms = 0, spin_up_max_ms = 0;
  }
  bool spin_up_enabled() const { return spin_up_ms > 0 || spin_up_max_ms > 0; }
  // One input set per run (warm-ups included), so that the runs go back to back; more where
  // that is needed for the sets to exceed rotate_bytes.
  uint32_t sets_for(uint64_t set_bytes) const {
    uint64_t sets = (rotate_bytes + set_bytes - 1) / std::max<uint64_t>(set_bytes, 1);
    uint64_t lower = std::min<uint64_t>(std::max<uint64_t>(min_sets, warmups + runs), max_sets);
    return uint32_t(std::clamp<uint64_t>(sets, lower, max_sets));
  }

  // samples: (host ms since the spin-up began when the batch was seen finished, GPU ms per sort
  // of that batch), oldest first. Steady when the samples of the last steady_window_ms, and at
  // least the last steady_min_samples, lie within steady_tolerance of their minimum.
  bool steady(const std::vector<std::pair<double, double>>& samples) const {
    if (samples.size() < std::max<uint32_t>(steady_min_samples, 1)) return false;
    const double now = samples.back().first;
    double lo = samples.back().second, hi = lo;
    size_t count = 0;
    for (auto it = samples.rbegin(); it != samples.rend(); ++it, ++count) {
      if (count >= steady_min_samples && now - it->first > steady_window_ms) break;
      lo = std::min(lo, it->second), hi = std::max(hi, it->second);
    }
    return hi <= lo * (1 + steady_tolerance);
  }

  // Runs the spin-up. `begin(repeats)` queues a batch of `repeats` sorts of the spare input
  // behind whatever is queued and returns at once; `finish()` waits for the oldest unfinished
  // batch and returns its GPU time in ms. Two batches are kept queued, so the GPU runs the next
  // while the host reads the last. Returns with one batch still queued (SpinUp::unfinished): the
  // caller queues its timed runs and then calls finish() that many times.
  template <class Begin, class Finish>
  SpinUp spin_up(Begin begin, Finish finish) const {
    using clock = std::chrono::steady_clock;
    SpinUp result;
    if (!spin_up_enabled()) return result;
    const auto start = clock::now();
    auto elapsed = [&] {
      return std::chrono::duration<double, std::milli>(clock::now() - start).count();
    };
    const double cap = std::max(spin_up_ms, spin_up_max_ms);
    std::vector<uint32_t> queued;  // repeats of the queued batches, oldest first
    std::vector<std::pair<double, double>> samples;
    uint32_t repeats = 1;
    begin(repeats), queued.push_back(repeats);
    for (;;) {
      begin(repeats), queued.push_back(repeats);
      const double gpu_ms = finish();
      const uint32_t done = queued.front();
      queued.erase(queued.begin());
      ++result.batches, result.sorts += done;
      result.per_sort_ms = gpu_ms / done;
      const double t = elapsed();
      samples.emplace_back(t, result.per_sort_ms);
      if (gpu_ms < spin_up_submission_ms)
        repeats = std::min(std::max(repeats, done) * 2, spin_up_max_repeats);
      if (t >= spin_up_ms && steady(samples) && (!clock_up || clock_up())) {
        result.state = SpinUp::State::steady;
        break;
      }
      if (t >= cap) {
        result.state =
            samples.size() < steady_min_samples ? SpinUp::State::few : SpinUp::State::cap;
        break;
      }
    }
    result.ms = elapsed();
    result.unfinished = uint32_t(queued.size());
    return result;
  }
  std::string verification(uint64_t n) const {
    return n <= exact_max_n ? "every run: whole output == std::stable_sort"
                            : "every run: sorted + pair multiset hash";
  }
};

// ---- random inputs ----

inline uint64_t mix64(uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline constexpr uint64_t golden = 0x9e3779b97f4a7c15ull;

// Hash of one (key, value) pair; the multiset hash of an array is the wrapping sum over pairs,
// which does not depend on their order. One bijective mix keeps the check cheap at n = 2^28.
inline uint64_t pair_hash(uint64_t key_bits, uint64_t value_bits) {
  return mix64(key_bits ^ (value_bits * golden + 0x5851f42d4c957f2dull));
}

// Runs body(begin, end, part) over [0, n) in parts on all host cores; returns nothing.
template <class Body>
void parallel_for(uint64_t n, Body body) {
  unsigned parts = n < (1u << 16) ? 1u : std::clamp(std::thread::hardware_concurrency(), 1u, 32u);
  if (parts == 1) return body(uint64_t(0), n, 0u);
  std::vector<std::thread> threads;
  for (unsigned p = 0; p < parts; ++p)
    threads.emplace_back(body, n * p / parts, n * (p + 1) / parts, p);
  for (auto& t : threads) t.join();
}

inline uint64_t load_key(const void* keys, uint32_t key_bytes, uint64_t i) {
  if (key_bytes == 4) return static_cast<const uint32_t*>(keys)[i];
  return static_cast<const uint64_t*>(keys)[i];
}
inline uint64_t load_value(const void* values, uint32_t value_bytes, uint64_t i) {
  return value_bytes == 0 ? 0 : static_cast<const uint32_t*>(values)[i];
}

// Fills keys[n] (and values[n] when the configuration has values) with uniform random bits of
// stream `seed` (skewed configurations: see KeyConfig::skewed); returns the multiset hash of the
// pairs. The same seed gives the same input in both programs.
inline uint64_t generate_input(const KeyConfig& c, uint64_t n, uint64_t seed, void* keys,
                               void* values) {
  std::vector<uint64_t> partial(64, 0);
  parallel_for(n, [&](uint64_t begin, uint64_t end, unsigned part) {
    uint64_t sum = 0;
    for (uint64_t i = begin; i < end; ++i) {
      // 32-bit keys and values share one 64-bit draw; 64-bit keys take a second for the value.
      uint64_t r = mix64(seed + (i + 1) * golden), k, v = 0;
      if (c.key_bytes == 4) {
        k = uint32_t(r);
        if (c.skewed && mix64(r ^ golden) % 100 != 0) k = (k & 0xffffffu) | (skewed_top_byte << 24);
        if (c.low_bits != 0) k &= (1u << c.low_bits) - 1u;
        if (c.equal) k = equal_key;
        static_cast<uint32_t*>(keys)[i] = uint32_t(k);
        if (c.value_bytes) v = r >> 32;
      } else {
        k = r;
        if (c.skewed && mix64(r ^ golden) % 100 != 0)
          k = (k & 0xffffffffffffffull) | (uint64_t(skewed_top_byte) << 56);
        if (c.low_bits != 0) k &= (uint64_t(1) << c.low_bits) - 1u;
        if (c.equal) k = uint64_t(equal_key) << 32 | equal_key;
        static_cast<uint64_t*>(keys)[i] = k;
        if (c.value_bytes) v = uint32_t(mix64(seed ^ (i + 1) * 0xd6e8feb86659fd93ull));
      }
      if (c.value_bytes) static_cast<uint32_t*>(values)[i] = uint32_t(v);
      sum += pair_hash(k, v);
    }
    partial[part] = sum;
  });
  uint64_t sum = 0;
  for (auto s : partial) sum += s;
  return sum;
}

// Ascending order of key bits: unsigned as is; floats by IEEE-754 totalOrder (gpusort's order).
// zero_signs_equal: -0 orders as +0 (cub::DeviceRadixSort treats them as equal).
inline uint64_t key_order(const KeyConfig& c, uint64_t bits, bool zero_signs_equal) {
  if (!c.is_float) return bits;
  uint32_t b = uint32_t(bits);
  if (zero_signs_equal && b == 0x80000000u) b = 0;
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

// Checks one output; returns "" when correct, else what is wrong. `input_keys/values` (the
// host copy of this run's input) enables the whole-output comparison; `stable` says whether
// equal keys must keep their input order (else the pairs of equal keys may come in any order).
inline std::string check_output(const KeyConfig& c, uint64_t n, const void* keys,
                                const void* values, uint64_t expected_hash, bool zero_signs_equal,
                                const void* input_keys, const void* input_values, bool stable) {
  std::vector<uint64_t> partial(64, 0), first_unsorted(64, UINT64_MAX);
  parallel_for(n, [&](uint64_t begin, uint64_t end, unsigned part) {
    uint64_t sum = 0, bad = UINT64_MAX;
    for (uint64_t i = begin; i < end; ++i) {
      uint64_t k = load_key(keys, c.key_bytes, i);
      sum += pair_hash(k, load_value(values, c.value_bytes, i));
      if (i > 0 && bad == UINT64_MAX &&
          key_order(c, load_key(keys, c.key_bytes, i - 1), zero_signs_equal) >
              key_order(c, k, zero_signs_equal))
        bad = i;
    }
    partial[part] = sum;
    first_unsorted[part] = bad;
  });
  uint64_t sum = 0, bad = UINT64_MAX;
  for (int p = 0; p < 64; ++p) sum += partial[p], bad = std::min(bad, first_unsorted[p]);
  if (bad != UINT64_MAX) return "output not sorted at index " + std::to_string(bad);
  if (sum != expected_hash)
    return "output is not a permutation of the input (multiset hash differs)";
  if (!input_keys) return "";

  // Whole-output comparison with std::stable_sort (for unstable sorts: pairs compared as
  // multisets within each run of equal keys, by sorting both sides by (key, value)).
  struct Pair {
    uint64_t order, key, value;
  };
  std::vector<Pair> expected(n), actual(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t k = load_key(input_keys, c.key_bytes, i);
    expected[i] = {key_order(c, k, zero_signs_equal), k,
                   load_value(input_values, c.value_bytes, i)};
    k = load_key(keys, c.key_bytes, i);
    actual[i] = {key_order(c, k, zero_signs_equal), k, load_value(values, c.value_bytes, i)};
  }
  if (stable) {
    std::stable_sort(expected.begin(), expected.end(),
                     [](const Pair& a, const Pair& b) { return a.order < b.order; });
  } else {
    auto by_pair = [](const Pair& a, const Pair& b) {
      return a.order != b.order ? a.order < b.order : a.value < b.value;
    };
    std::sort(expected.begin(), expected.end(), by_pair);
    std::stable_sort(actual.begin(), actual.end(), by_pair);
  }
  for (uint64_t i = 0; i < n; ++i)
    if (expected[i].key != actual[i].key || expected[i].value != actual[i].value)
      return "output differs from std::stable_sort at index " + std::to_string(i);
  return "";
}

// ---- results ----

// Quantile q of sorted values, interpolated between neighbours (NumPy's default "linear").
inline double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double at = q * double(sorted.size() - 1);
  const size_t i = size_t(at);
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (at - double(i)) * (sorted[i + 1] - sorted[i]);
}

struct Row {
  std::string implementation;  // "gpusort" or "cub"
  std::string algorithm;       // gpusort's algorithm name, or "DeviceRadixSort"
  std::string kernels;         // gpusort: the path the row took (Sorter::kernel_path), "" for CUB
  std::string face;            // gpusort: the face that sorted, "vulkan" or "cuda"; "" for CUB
  std::string config;          // key configuration name
  uint32_t key_bytes = 0, value_bytes = 0;
  uint64_t n = 0;
  std::string skipped;     // non-empty: why this row was not measured
  std::vector<double> ms;  // timed runs
  double ms_median = 0, ms_min = 0, ms_max = 0;
  double ms_q1 = 0, ms_q3 = 0;  // quartiles of the timed runs
  uint64_t scratch_bytes = 0;
  uint32_t warmups = 0, sets = 0;
  std::string verified;
  double wall_s = 0;  // the whole row on the host: inputs, runs, checks
  // The spin-up before the timed runs (of the last batch of runs, where memory cut them into
  // batches), and the SM clock read while the runs were queued (-1: not known).
  SpinUp spin;
  int sm_clock_mhz = -1;
  int sm_clock_max_mhz = -1;
  // Set by finish(): empty when the row is steady, else why not (its spread above
  // Protocol::max_spread, its spin-up capped with the times still moving).
  std::string unsteady;

  // Minimal traffic model: every key and value read once and written once.
  double model_bytes() const { return 2.0 * double(n) * (key_bytes + value_bytes); }
  double gkeys_per_s() const { return ms_median > 0 ? double(n) / (ms_median * 1e6) : 0; }
  double gb_per_s() const { return ms_median > 0 ? model_bytes() / (ms_median * 1e6) : 0; }
  // Interquartile range of the timed runs over their median.
  double spread() const { return ms_median > 0 ? (ms_q3 - ms_q1) / ms_median : 0; }
  bool steady() const { return unsteady.empty(); }
  // A row's identity: which implementation sorted which configuration at which n.
  static Row of(std::string implementation, std::string algorithm, const KeyConfig& c, uint64_t n) {
    Row row;
    row.implementation = std::move(implementation);
    row.algorithm = std::move(algorithm);
    row.config = c.name;
    row.key_bytes = c.key_bytes;
    row.value_bytes = c.value_bytes;
    row.n = n;
    return row;
  }

  // The statistics of the timed runs, and whether the row is steady.
  void finish(const Protocol& p) {
    std::vector<double> s = ms;
    std::sort(s.begin(), s.end());
    if (s.empty()) return;
    ms_median = quantile(s, 0.5);
    ms_q1 = quantile(s, 0.25), ms_q3 = quantile(s, 0.75);
    ms_min = s.front(), ms_max = s.back();
    unsteady.clear();
    char text[160];
    if (spread() > p.max_spread && ms_q3 - ms_q1 > p.spread_floor_ms) {
      std::snprintf(text, sizeof text, "spread %.1f%% > %.1f%%", 100 * spread(),
                    100 * p.max_spread);
      unsteady = text;
    }
    if (sm_clock_mhz >= 0 && sm_clock_max_mhz > 0 &&
        sm_clock_mhz < p.min_clock_fraction * sm_clock_max_mhz) {
      std::snprintf(text, sizeof text, "%sSM clock %d MHz < %.0f%% of %d",
                    unsteady.empty() ? "" : "; ", sm_clock_mhz, 100 * p.min_clock_fraction,
                    sm_clock_max_mhz);
      unsteady += text;
    }
    if (spin.state == SpinUp::State::cap) {
      std::snprintf(text, sizeof text, "%sspin-up unsettled after %.0f ms",
                    unsteady.empty() ? "" : "; ", spin.ms);
      unsteady += text;
    }
  }
};

// The SM clock of one NVIDIA GPU through NVML, loaded at run time (dlopen of libnvidia-ml.so.1,
// the functions declared here): no build dependency, and absent (mhz() -1) wherever NVML is.
// The GPU is found by its UUID (Vulkan's VkPhysicalDeviceIDProperties::deviceUUID and CUDA's
// cudaDeviceProp::uuid are the UUID NVML prints as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"),
// else, when `sole_fallback` and NVML sees exactly one GPU, that one.
class SmClock {
 public:
  SmClock(const unsigned char* uuid, bool sole_fallback) {
    library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library_) {
      how_ = "no NVML (libnvidia-ml.so.1 not found)";
      return;
    }
    auto find = [&](const char* name) { return dlsym(library_, name); };
    init_ = reinterpret_cast<Status (*)()>(find("nvmlInit_v2"));
    shutdown_ = reinterpret_cast<Status (*)()>(find("nvmlShutdown"));
    auto by_uuid =
        reinterpret_cast<Status (*)(const char*, Device*)>(find("nvmlDeviceGetHandleByUUID"));
    auto count = reinterpret_cast<Status (*)(unsigned*)>(find("nvmlDeviceGetCount_v2"));
    auto by_index =
        reinterpret_cast<Status (*)(unsigned, Device*)>(find("nvmlDeviceGetHandleByIndex_v2"));
    clock_ = reinterpret_cast<Status (*)(Device, int, unsigned*)>(find("nvmlDeviceGetClockInfo"));
    max_clock_ =
        reinterpret_cast<Status (*)(Device, int, unsigned*)>(find("nvmlDeviceGetMaxClockInfo"));
    if (!init_ || !shutdown_ || !by_uuid || !count || !by_index || !clock_ || init_() != 0) {
      how_ = "NVML present but not usable";
      init_ = nullptr;
      return;
    }
    if (uuid) {
      char text[48];
      std::snprintf(text, sizeof text,
                    "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                    uuid[0], uuid[1], uuid[2], uuid[3], uuid[4], uuid[5], uuid[6], uuid[7], uuid[8],
                    uuid[9], uuid[10], uuid[11], uuid[12], uuid[13], uuid[14], uuid[15]);
      if (by_uuid(text, &device_) == 0) {
        how_ = std::string("NVML, GPU ") + text;
        return;
      }
      device_ = nullptr;
    }
    unsigned gpus = 0;
    if (sole_fallback && count(&gpus) == 0 && gpus == 1 && by_index(0, &device_) == 0) {
      how_ = "NVML, the only GPU it sees";
      return;
    }
    device_ = nullptr;
    how_ = "NVML sees no GPU with this device's UUID";
  }
  ~SmClock() {
    if (init_) shutdown_();
    if (library_) dlclose(library_);
  }
  SmClock(const SmClock&) = delete;
  SmClock& operator=(const SmClock&) = delete;

  bool available() const { return device_ != nullptr; }
  // The SM clock now (MHz), -1 when unknown.
  int mhz() const { return read(clock_); }
  int max_mhz() const { return read(max_clock_); }
  // Where the clock comes from, or why it does not.
  const std::string& how() const { return how_; }

 private:
  using Status = int;                 // nvmlReturn_t: 0 is NVML_SUCCESS
  using Device = void*;               // nvmlDevice_t
  static constexpr int clock_sm = 1;  // NVML_CLOCK_SM
  int read(Status (*f)(Device, int, unsigned*)) const {
    unsigned value = 0;
    if (!device_ || !f || f(device_, clock_sm, &value) != 0) return -1;
    return int(value);
  }
  void* library_ = nullptr;
  Device device_ = nullptr;
  Status (*init_)() = nullptr;
  Status (*shutdown_)() = nullptr;
  Status (*clock_)(Device, int, unsigned*) = nullptr;
  Status (*max_clock_)(Device, int, unsigned*) = nullptr;
  std::string how_;
};

// The protocol's clock check (Protocol::clock_up) on `clock` (none: no check), and the row's
// clock and its maximum.
inline void watch_clock(Protocol& p, const SmClock* clock) {
  if (!clock) return;
  p.clock_up = [clock, fraction = p.min_clock_fraction] {
    const int mhz = clock->mhz(), max = clock->max_mhz();
    return mhz < 0 || max <= 0 || mhz >= fraction * max;
  };
}
inline void read_clock(Row& row, const SmClock* clock) {
  if (!clock) return;
  row.sm_clock_mhz = clock->mhz();
  row.sm_clock_max_mhz = clock->max_mhz();
}

struct RunInfo {
  std::string implementation, device, driver, command;
  Protocol protocol;
  uint64_t seed = 0;
  std::string clock_source;  // SmClock::how()
};

inline std::string utc_now() {
  char text[32];
  std::time_t t = std::time(nullptr);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\', out += ch;
    else if (static_cast<unsigned char>(ch) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", ch);
      out += esc;
    } else
      out += ch;
  }
  return out + "\"";
}

inline std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

// The schema stays "gpusort-bench-1": every field of before keeps its name and meaning; rows
// add ms_q1, ms_q3, spread, steady (and unsteady: why not), spin_up (state, ms, batches, sorts,
// per-sort ms of the last batch), sm_clock_mhz (only where known) and face (gpusort's rows of
// `gpusort bench`: "vulkan", or "cuda" for the CUDA face's).
inline void write_json(const std::string& path, const RunInfo& info, const std::vector<Row>& rows) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  const Protocol& p = info.protocol;
  f << "{\n  \"schema\": \"gpusort-bench-1\",\n  \"implementation\": "
    << json_string(info.implementation) << ",\n  \"device\": " << json_string(info.device)
    << ",\n  \"driver\": " << json_string(info.driver)
    << ",\n  \"date\": " << json_string(utc_now())
    << ",\n  \"command\": " << json_string(info.command) << ",\n  \"seed\": " << info.seed
    << ",\n  \"sm_clock_source\": " << json_string(info.clock_source)
    << ",\n  \"protocol\": {\"warmups\": " << p.warmups << ", \"runs\": " << p.runs
    << ", \"rotate_bytes\": " << p.rotate_bytes << ", \"min_sets\": " << p.min_sets
    << ", \"max_sets\": " << p.max_sets << ", \"exact_max_n\": " << p.exact_max_n
    << ", \"time_budget_s\": " << number(p.time_budget_s)
    << ", \"spin_up_ms\": " << number(p.spin_up_ms)
    << ", \"spin_up_max_ms\": " << number(p.spin_up_max_ms)
    << ", \"steady_window_ms\": " << number(p.steady_window_ms)
    << ", \"steady_min_samples\": " << p.steady_min_samples
    << ", \"steady_tolerance\": " << number(p.steady_tolerance)
    << ", \"spin_up_submission_ms\": " << number(p.spin_up_submission_ms)
    << ", \"max_spread\": " << number(p.max_spread)
    << ", \"traffic_model\": \"bytes = 2 * n * (key_bytes + value_bytes)\"},\n  \"results\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    f << (i ? ",\n" : "\n") << "    {\"implementation\": " << json_string(r.implementation)
      << ", \"algorithm\": " << json_string(r.algorithm);
    if (!r.face.empty()) f << ", \"face\": " << json_string(r.face);
    if (!r.kernels.empty()) f << ", \"kernels\": " << json_string(r.kernels);
    f << ", \"config\": " << json_string(r.config) << ", \"key_bytes\": " << r.key_bytes
      << ", \"value_bytes\": " << r.value_bytes << ", \"n\": " << r.n;
    if (!r.skipped.empty()) {
      f << ", \"skipped\": " << json_string(r.skipped) << "}";
      continue;
    }
    f << ", \"ms_median\": " << number(r.ms_median) << ", \"ms_min\": " << number(r.ms_min)
      << ", \"ms_max\": " << number(r.ms_max) << ", \"ms_q1\": " << number(r.ms_q1)
      << ", \"ms_q3\": " << number(r.ms_q3) << ", \"spread\": " << number(r.spread())
      << ", \"steady\": " << (r.steady() ? "true" : "false");
    if (!r.steady()) f << ", \"unsteady\": " << json_string(r.unsteady);
    f << ", \"spin_up\": {\"state\": \"" << SpinUp::name(r.spin.state)
      << "\", \"ms\": " << number(r.spin.ms) << ", \"batches\": " << r.spin.batches
      << ", \"sorts\": " << r.spin.sorts << ", \"per_sort_ms\": " << number(r.spin.per_sort_ms)
      << "}";
    if (r.sm_clock_mhz >= 0) f << ", \"sm_clock_mhz\": " << r.sm_clock_mhz;
    f << ", \"gkeys_per_s\": " << number(r.gkeys_per_s())
      << ", \"gb_per_s\": " << number(r.gb_per_s()) << ", \"scratch_bytes\": " << r.scratch_bytes
      << ", \"warmups\": " << r.warmups << ", \"runs\": " << r.ms.size() << ", \"sets\": " << r.sets
      << ", \"verified\": " << json_string(r.verified) << ", \"wall_s\": " << number(r.wall_s)
      << ", \"ms\": [";
    for (size_t j = 0; j < r.ms.size(); ++j) f << (j ? ", " : "") << number(r.ms[j]);
    f << "]}";
  }
  f << "\n  ]\n}\n";
}

// The columns of before keep their order; the new ones follow `skipped`.
inline void write_csv(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << "implementation,algorithm,config,key_bytes,value_bytes,n,ms_median,ms_min,ms_max,"
       "gkeys_per_s,gb_per_s,scratch_bytes,warmups,runs,sets,verified,skipped,"
       "ms_q1,ms_q3,spread,steady,unsteady,spin_up_state,spin_up_ms,sm_clock_mhz,kernels,face\n";
  for (const Row& r : rows) {
    f << r.implementation << ',' << r.algorithm << ',' << r.config << ',' << r.key_bytes << ','
      << r.value_bytes << ',' << r.n << ',';
    if (r.skipped.empty())
      f << number(r.ms_median) << ',' << number(r.ms_min) << ',' << number(r.ms_max) << ','
        << number(r.gkeys_per_s()) << ',' << number(r.gb_per_s()) << ',' << r.scratch_bytes << ','
        << r.warmups << ',' << r.ms.size() << ',' << r.sets << ",\"" << r.verified << "\",,"
        << number(r.ms_q1) << ',' << number(r.ms_q3) << ',' << number(r.spread()) << ','
        << (r.steady() ? "true" : "false") << ",\"" << r.unsteady << "\","
        << SpinUp::name(r.spin.state) << ',' << number(r.spin.ms) << ','
        << (r.sm_clock_mhz >= 0 ? std::to_string(r.sm_clock_mhz) : std::string()) << ",\""
        << r.kernels << "\"," << r.face << '\n';
    else
      f << ",,,,,,,,,,\"" << r.skipped << "\",,,,,,,,,\"" << r.kernels << "\"," << r.face << '\n';
  }
}

// The text table: `clock` adds the SM clock column (when NVML reads it).
inline void print_header(bool clock = false) {
  std::printf("%-10s %-18s %-8s %11s %10s %9s %9s %12s %7s %7s %7s%s\n", "impl", "algorithm",
              "keys", "n", "ms", "GKeys/s", "GB/s", "scratch B", "row s", "spread", "spin ms",
              clock ? "  SM MHz" : "");
}

// The algorithm column: gpusort's algorithm and, where Onesweep's passes are CUDA kernels, "/cuda".
inline std::string shown_algorithm(const Row& r) {
  return r.kernels.rfind("cuda", 0) == 0 ? r.algorithm + "/cuda" : r.algorithm;
}

inline void print_row(const Row& r, bool clock = false) {
  if (!r.skipped.empty()) {
    std::printf("%-10s %-18s %-8s %11llu   skipped: %s\n", r.implementation.c_str(),
                shown_algorithm(r).c_str(), r.config.c_str(), (unsigned long long)r.n, r.skipped.c_str());
  } else {
    char spin[16] = "-", mhz[16] = "";
    if (r.spin.state != SpinUp::State::off) std::snprintf(spin, sizeof spin, "%.0f", r.spin.ms);
    if (clock && r.sm_clock_mhz >= 0)
      std::snprintf(mhz, sizeof mhz, "  %6d", r.sm_clock_mhz);
    else if (clock)
      std::snprintf(mhz, sizeof mhz, "  %6s", "-");
    std::printf("%-10s %-18s %-8s %11llu %10.4f %9.4g %9.1f %12llu %7.2f %6.1f%% %7s%s%s%s\n",
                r.implementation.c_str(), shown_algorithm(r).c_str(), r.config.c_str(),
                (unsigned long long)r.n, r.ms_median, r.gkeys_per_s(), r.gb_per_s(),
                (unsigned long long)r.scratch_bytes, r.wall_s, 100 * r.spread(), spin, mhz,
                r.steady() ? "" : "  NOT STEADY: ", r.unsteady.c_str());
  }
  std::fflush(stdout);
}

// After the table: the rows flagged as not steady, or that there were none.
inline void print_unsteady_summary(const std::vector<Row>& rows) {
  size_t measured = 0, flagged = 0;
  for (const Row& r : rows)
    if (r.skipped.empty()) ++measured, flagged += !r.steady();
  if (flagged == 0) {
    std::printf("steady: all %zu measured rows\n", measured);
    return;
  }
  std::printf("NOT STEADY: %zu of %zu measured rows (compare.py leaves them out):\n", flagged,
              measured);
  for (const Row& r : rows)
    if (r.skipped.empty() && !r.steady())
      std::printf("  %s %s %s n=%llu: %s\n", r.implementation.c_str(), r.algorithm.c_str(),
                  r.config.c_str(), (unsigned long long)r.n, r.unsteady.c_str());
}

inline uint64_t fresh_seed(uint64_t requested) {
  if (requested) return requested;
  return mix64(uint64_t(std::time(nullptr)) ^ (uint64_t(std::clock()) << 32) ^
               uint64_t(reinterpret_cast<uintptr_t>(&requested)));
}

// Rows run smallest n first (every implementation and configuration at one n before the next
// n), so a time budget cuts the largest sizes. A row is skipped when the same implementation and
// configuration at the previous size, scaled by the growth of n, predicts it would end past the
// budget.
class TimeBudget {
 public:
  explicit TimeBudget(double seconds)
      : seconds_(seconds), start_(std::chrono::steady_clock::now()) {}
  // "" when the row may run, else why it is skipped.
  std::string check(const std::string& row_kind, uint64_t n) const {
    auto last = last_.find(row_kind);
    if (seconds_ <= 0 || last == last_.end()) return "";
    double predicted = last->second.second * double(n) / double(last->second.first);
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed + predicted <= seconds_) return "";
    return "over the time budget (" + number(seconds_) + " s; " + number(elapsed) +
           " s spent, this row predicted at " + number(predicted) + " s)";
  }
  void record(const std::string& row_kind, uint64_t n, double wall_s) {
    last_[row_kind] = {n, wall_s};
  }

 private:
  double seconds_;
  std::chrono::steady_clock::time_point start_;
  std::map<std::string, std::pair<uint64_t, double>> last_;
};

// The stream of run `run` of a row: distinct for every row, run and invocation seed.
inline uint64_t run_seed(uint64_t seed, const KeyConfig& c, uint64_t n, uint64_t run) {
  uint64_t h = mix64(seed ^ mix64(n * golden ^ c.key_bytes ^ (uint64_t(c.value_bytes) << 8) ^
                                  (uint64_t(c.is_float) << 16)));
  return mix64(h + run * golden);
}

// ---- segmented rows: segment layouts, per-segment checks, argsort checks ----

// The layout families of the segmented rows, named by their shape at n = 2^24 (the default n).
// At another n the small family keeps its segment size (256) and the others their segment count
// (2^10, 16), so each family keeps the property it stands for; where n is smaller than the kept
// quantity, the layout degrades to n segments of 1 (or one of n).
enum class SegmentFamily { small, medium, large, powerlaw };

inline const std::vector<SegmentFamily>& segment_families() {
  static const std::vector<SegmentFamily> families{SegmentFamily::small, SegmentFamily::medium,
                                                   SegmentFamily::large, SegmentFamily::powerlaw};
  return families;
}

// 2^k for powers of two from 1024 up, else decimal: "2^16x256", "2^10x2^14", "16x2^20".
inline std::string segment_count_text(uint64_t x) {
  if (x >= 1024 && (x & (x - 1)) == 0) {
    int k = 0;
    while ((uint64_t(1) << k) != x) ++k;
    return "2^" + std::to_string(k);
  }
  return std::to_string(x);
}

// The layout's seed depends on the invocation seed and n only, so every key configuration (and
// both programs) sorts the same power-law layout at one n.
inline uint64_t layout_seed(uint64_t seed, uint64_t n) {
  return mix64(seed ^ mix64(n * golden ^ 0x5e67e47ull));
}

// CSR offsets (S + 1 entries, first 0, last n) of family f for n keys.
// powerlaw: sizes 16 * u^(-1/1.2) (a Pareto law: most segments a few dozen keys, a few up to
// the cap n/8), one in 16 segments empty, drawn from layout_seed until they sum to n (the last
// one cut). Deterministic for (seed, n): both programs sort the same layout.
inline std::vector<uint32_t> make_segment_offsets(SegmentFamily f, uint64_t n, uint64_t seed) {
  std::vector<uint32_t> offsets{0};
  auto even = [&](uint64_t segments) {
    segments = std::clamp<uint64_t>(segments, 1, std::max<uint64_t>(n, 1));
    for (uint64_t s = 1; s <= segments; ++s) offsets.push_back(uint32_t(n * s / segments));
  };
  switch (f) {
    case SegmentFamily::small:
      for (uint64_t end = 256; offsets.back() < n; end += 256)
        offsets.push_back(uint32_t(std::min(end, n)));
      if (n == 0) offsets.push_back(0);
      break;
    case SegmentFamily::medium:
      even(1024);
      break;
    case SegmentFamily::large:
      even(16);
      break;
    case SegmentFamily::powerlaw: {
      const uint64_t cap = std::max<uint64_t>(n / 8, 1), s0 = layout_seed(seed, n);
      for (uint64_t i = 0; offsets.back() < n || offsets.size() == 1; ++i) {
        const uint64_t r = mix64(s0 + (i + 1) * golden);
        uint64_t size = 0;
        if ((r & 15) != 0) {                                 // else an empty segment
          const double u = double((r >> 11) + 1) * 0x1p-53;  // (0, 1]
          size = std::min<uint64_t>(cap, uint64_t(16.0 * std::pow(u, -1.0 / 1.2)));
        }
        offsets.push_back(uint32_t(std::min<uint64_t>(offsets.back() + size, n)));
      }
      offsets.push_back(uint32_t(n));  // a trailing empty segment, so both ends are exercised
      break;
    }
  }
  return offsets;
}

// "2^16x256" at n = 2^24; for powerlaw "powerlaw" (its shape is random, its count printed).
inline std::string segment_layout_name(SegmentFamily f, uint64_t n) {
  if (f == SegmentFamily::powerlaw) return "powerlaw";
  std::vector<uint32_t> o = make_segment_offsets(f, n, 0);
  return segment_count_text(o.size() - 1) + "x" + segment_count_text(o[1]);
}

inline SegmentFamily parse_segment_family(const std::string& name) {
  if (name == "small") return SegmentFamily::small;
  if (name == "medium") return SegmentFamily::medium;
  if (name == "large") return SegmentFamily::large;
  if (name == "powerlaw") return SegmentFamily::powerlaw;
  throw std::runtime_error("unknown segment layout '" + name +
                           "' (expected small, medium, large, powerlaw)");
}

inline std::vector<SegmentFamily> parse_segment_families(const std::string& list) {
  std::vector<SegmentFamily> chosen;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    chosen.push_back(parse_segment_family(list.substr(start, end - start)));
    start = end + 1;
  }
  return chosen;
}

// The row's configuration name, e.g. "u32 seg 2^16x256", "u32+u32 seg powerlaw": the same in
// both programs, so compare.py pairs gpusort's and CUB's rows by it.
inline std::string segmented_config_name(const KeyConfig& c, SegmentFamily f, uint64_t n) {
  return std::string(c.name) + " seg " + segment_layout_name(f, n);
}
inline const char* argsort_config_name() {
  return "u32 argsort";
}

// Runs body(begin, end, part, segment of begin) over the elements in parts, as parallel_for.
template <class Body>
void parallel_for_segments(uint64_t n, const std::vector<uint32_t>& offsets, Body body) {
  parallel_for(n, [&](uint64_t begin, uint64_t end, unsigned part) {
    // The last segment whose start is <= begin (empty segments before it skipped).
    uint64_t seg = uint64_t(std::upper_bound(offsets.begin(), offsets.end(), uint32_t(begin)) -
                            offsets.begin()) -
                   1;
    body(begin, end, part, seg);
  });
}

// The multiset hash of the (segment, key, value) triples: equal for an output only when every
// segment holds exactly its input's pairs (an element moved across a segment boundary changes it).
inline uint64_t segment_pair_hash(uint64_t key_bits, uint64_t value_bits, uint64_t segment) {
  return mix64(pair_hash(key_bits, value_bits) + (segment + 1) * 0xd6e8feb86659fd93ull);
}

inline uint64_t segmented_hash(const KeyConfig& c, uint64_t n, const void* keys, const void* values,
                               const std::vector<uint32_t>& offsets) {
  std::vector<uint64_t> partial(64, 0);
  parallel_for_segments(n, offsets, [&](uint64_t begin, uint64_t end, unsigned part, uint64_t seg) {
    uint64_t sum = 0;
    for (uint64_t i = begin; i < end; ++i) {
      while (offsets[seg + 1] <= i) ++seg;
      sum += segment_pair_hash(load_key(keys, c.key_bytes, i), load_value(values, c.value_bytes, i),
                               seg);
    }
    partial[part] = sum;
  });
  uint64_t sum = 0;
  for (auto s : partial) sum += s;
  return sum;
}

// Checks a segmented sort's output: every segment sorted and holding exactly its input's pairs
// (segmented_hash); with input_keys (the host copy of the input) also every segment equal to
// std::stable_sort of that segment (unstable sorts: pairs of equal keys compared as multisets).
inline std::string check_segmented_output(const KeyConfig& c, uint64_t n, const void* keys,
                                          const void* values, const std::vector<uint32_t>& offsets,
                                          uint64_t expected_hash, bool zero_signs_equal,
                                          const void* input_keys, const void* input_values,
                                          bool stable) {
  std::vector<uint64_t> partial(64, 0), first_unsorted(64, UINT64_MAX);
  parallel_for_segments(n, offsets, [&](uint64_t begin, uint64_t end, unsigned part, uint64_t seg) {
    uint64_t sum = 0, bad = UINT64_MAX;
    for (uint64_t i = begin; i < end; ++i) {
      while (offsets[seg + 1] <= i) ++seg;
      const uint64_t k = load_key(keys, c.key_bytes, i);
      sum += segment_pair_hash(k, load_value(values, c.value_bytes, i), seg);
      if (i > offsets[seg] && bad == UINT64_MAX &&
          key_order(c, load_key(keys, c.key_bytes, i - 1), zero_signs_equal) >
              key_order(c, k, zero_signs_equal))
        bad = i;
    }
    partial[part] = sum;
    first_unsorted[part] = bad;
  });
  uint64_t sum = 0, bad = UINT64_MAX;
  for (int p = 0; p < 64; ++p) sum += partial[p], bad = std::min(bad, first_unsorted[p]);
  if (bad != UINT64_MAX) return "segment not sorted at index " + std::to_string(bad);
  if (sum != expected_hash)
    return "a segment's output is not a permutation of its input (segment multiset hash differs)";
  if (!input_keys) return "";

  struct Pair {
    uint64_t order, key, value;
  };
  std::vector<Pair> expected, actual;
  auto by_key = [](const Pair& a, const Pair& b) { return a.order < b.order; };
  auto by_pair = [](const Pair& a, const Pair& b) {
    return a.order != b.order ? a.order < b.order : a.value < b.value;
  };
  for (size_t s = 0; s + 1 < offsets.size(); ++s) {
    expected.clear(), actual.clear();
    for (uint64_t i = offsets[s]; i < offsets[s + 1]; ++i) {
      uint64_t k = load_key(input_keys, c.key_bytes, i);
      expected.push_back(
          {key_order(c, k, zero_signs_equal), k, load_value(input_values, c.value_bytes, i)});
      k = load_key(keys, c.key_bytes, i);
      actual.push_back(
          {key_order(c, k, zero_signs_equal), k, load_value(values, c.value_bytes, i)});
    }
    if (stable) {
      std::stable_sort(expected.begin(), expected.end(), by_key);
    } else {
      std::sort(expected.begin(), expected.end(), by_pair);
      std::stable_sort(actual.begin(), actual.end(), by_pair);
    }
    for (size_t i = 0; i < expected.size(); ++i)
      if (expected[i].key != actual[i].key || expected[i].value != actual[i].value)
        return "segment " + std::to_string(s) + " differs from std::stable_sort at index " +
               std::to_string(offsets[s] + i);
  }
  return "";
}

// Checks an argsort's u32 indices against the input keys: a permutation of 0..n-1 under which
// the keys are sorted, equal keys in increasing index order. The stable sorting permutation is
// unique, so this is a whole-output check at every n. `sorted_keys` (optional): the keys the
// sort left, which must then be input_keys[indices[i]].
inline std::string check_argsort(const KeyConfig& c, uint64_t n, const void* input_keys,
                                 const uint32_t* indices, const void* sorted_keys) {
  std::vector<unsigned char> seen(n, 0);
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t j = indices[i];
    if (j >= n || seen[j])
      return "indices are not a permutation (at index " + std::to_string(i) + ")";
    seen[j] = 1;
  }
  std::vector<uint64_t> first_bad(64, UINT64_MAX);
  parallel_for(n, [&](uint64_t begin, uint64_t end, unsigned part) {
    for (uint64_t i = begin; i < end; ++i) {
      const uint64_t k = load_key(input_keys, c.key_bytes, indices[i]);
      if (sorted_keys && load_key(sorted_keys, c.key_bytes, i) != k)
        return void(first_bad[part] = i);
      if (i == 0) continue;
      const uint64_t a = key_order(c, load_key(input_keys, c.key_bytes, indices[i - 1]), false),
                     b = key_order(c, k, false);
      if (a > b || (a == b && indices[i - 1] > indices[i])) return void(first_bad[part] = i);
    }
  });
  const uint64_t bad = *std::min_element(first_bad.begin(), first_bad.end());
  if (bad != UINT64_MAX)
    return "not the stable sorting permutation (or keys not in its order) at index " +
           std::to_string(bad);
  return "";
}

}  // namespace gpusort::bench
