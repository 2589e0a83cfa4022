// What the gpusort benchmark and the CUB baseline share, so both follow one protocol and write
// one schema: the key configurations, the random inputs (uniform random bits from a
// counter-based generator, identical in both programs), the output checks, the statistics and
// the JSON / CSV / table writers. Host code only, C++17 (nvcc compiles it too).
//
// Protocol (both implementations):
//  - every run sorts its own fresh random input in its own buffer set; all sets of a row are
//    uploaded first (not timed), at least one per run and enough to exceed rotate_bytes (>= 2.5x
//    the H100's 50 MB L2), so no timed run finds its input in the cache;
//  - spin-up: untimed sorts of a spare input for spin_up_ms, so the GPU's clocks are up;
//  - then `warmups` untimed runs and `runs` timed runs back to back (device timestamps / events
//    around the sort alone), the median reported; outputs are checked after the runs;
//  - every run's output (warm-ups included) is checked: keys sorted and (key, value) pairs a
//    permutation of the input (a 64-bit multiset hash of the pairs); up to exact_max_n the whole
//    output is also compared with std::stable_sort of the same input.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
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
};

inline const std::vector<KeyConfig>& key_configs() {
  static const std::vector<KeyConfig> configs{{"u32", "u32", 4, 0, false},
                                              {"u64", "u64", 8, 0, false},
                                              {"f32", "f32", 4, 0, true},
                                              {"u32+u32", "u32", 4, 4, false},
                                              {"u64+u32", "u64", 8, 4, false}};
  return configs;
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
                               "' (expected u32, u64, f32, u32+u32, u64+u32)");
    start = end + 1;
  }
  return chosen;
}

struct Protocol {
  uint32_t min_log2 = 10, max_log2 = 28, log2_step = 2;
  uint32_t warmups = 3, runs = 11;
  uint64_t rotate_bytes = uint64_t(128) << 20;  // rotated sets together exceed this
  uint32_t min_sets = 3, max_sets = 64;
  uint64_t exact_max_n = uint64_t(1) << 16;  // whole-output comparison with std::stable_sort
  uint64_t seed = 0;                         // 0: a fresh seed per invocation
  double time_budget_s = 0;  // > 0: skip rows predicted to end past this many seconds
  // Before a row's runs, untimed sorts of a spare input for this long: the GPU lowers its clocks
  // while the host prepares inputs (seen on the H100 with Vulkan: 345-1980 MHz), and a few
  // warm-up sorts of microseconds do not bring them back up.
  double spin_up_ms = 200;

  // --quick: a few small sizes and runs, for CI on a CPU driver.
  void make_quick() {
    min_log2 = 10, max_log2 = 14, log2_step = 2;
    warmups = 1, runs = 3;
    min_sets = 3, max_sets = 4;
    spin_up_ms = 0;
  }
  // One input set per run (warm-ups included), so that the runs go back to back; more where
  // that is needed for the sets to exceed rotate_bytes.
  uint32_t sets_for(uint64_t set_bytes) const {
    uint64_t sets = (rotate_bytes + set_bytes - 1) / std::max<uint64_t>(set_bytes, 1);
    uint64_t lower = std::min<uint64_t>(std::max<uint64_t>(min_sets, warmups + runs), max_sets);
    return uint32_t(std::clamp<uint64_t>(sets, lower, max_sets));
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
template <class Body> void parallel_for(uint64_t n, Body body) {
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
// stream `seed`; returns the multiset hash of the pairs. The same seed gives the same input in
// both programs.
inline uint64_t generate_input(const KeyConfig& c, uint64_t n, uint64_t seed, void* keys, void* values) {
  std::vector<uint64_t> partial(64, 0);
  parallel_for(n, [&](uint64_t begin, uint64_t end, unsigned part) {
    uint64_t sum = 0;
    for (uint64_t i = begin; i < end; ++i) {
      // 32-bit keys and values share one 64-bit draw; 64-bit keys take a second for the value.
      uint64_t r = mix64(seed + (i + 1) * golden), k, v = 0;
      if (c.key_bytes == 4) {
        k = uint32_t(r);
        static_cast<uint32_t*>(keys)[i] = uint32_t(k);
        if (c.value_bytes) v = r >> 32;
      } else {
        k = r;
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
inline std::string check_output(const KeyConfig& c, uint64_t n, const void* keys, const void* values,
                                uint64_t expected_hash, bool zero_signs_equal,
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
  if (bad != UINT64_MAX)
    return "output not sorted at index " + std::to_string(bad);
  if (sum != expected_hash) return "output is not a permutation of the input (multiset hash differs)";
  if (!input_keys) return "";

  // Whole-output comparison with std::stable_sort (for unstable sorts: pairs compared as
  // multisets within each run of equal keys, by sorting both sides by (key, value)).
  struct Pair { uint64_t order, key, value; };
  std::vector<Pair> expected(n), actual(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t k = load_key(input_keys, c.key_bytes, i);
    expected[i] = {key_order(c, k, zero_signs_equal), k, load_value(input_values, c.value_bytes, i)};
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

struct Row {
  std::string implementation;  // "gpusort" or "cub"
  std::string algorithm;       // gpusort's algorithm name, or "DeviceRadixSort"
  std::string config;          // key configuration name
  uint32_t key_bytes = 0, value_bytes = 0;
  uint64_t n = 0;
  std::string skipped;  // non-empty: why this row was not measured
  std::vector<double> ms;  // timed runs
  double ms_median = 0, ms_min = 0, ms_max = 0;
  uint64_t scratch_bytes = 0;
  uint32_t warmups = 0, sets = 0;
  std::string verified;
  double wall_s = 0;  // the whole row on the host: inputs, runs, checks

  // Minimal traffic model: every key and value read once and written once.
  double model_bytes() const { return 2.0 * double(n) * (key_bytes + value_bytes); }
  double gkeys_per_s() const { return ms_median > 0 ? double(n) / (ms_median * 1e6) : 0; }
  double gb_per_s() const { return ms_median > 0 ? model_bytes() / (ms_median * 1e6) : 0; }
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

  void finish() {
    std::vector<double> s = ms;
    std::sort(s.begin(), s.end());
    if (s.empty()) return;
    size_t m = s.size() / 2;
    ms_median = s.size() % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
    ms_min = s.front(), ms_max = s.back();
  }
};

struct RunInfo {
  std::string implementation, device, driver, command;
  Protocol protocol;
  uint64_t seed = 0;
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
    if (ch == '"' || ch == '\\') out += '\\', out += ch;
    else if (static_cast<unsigned char>(ch) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", ch);
      out += esc;
    } else out += ch;
  }
  return out + "\"";
}

inline std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

inline void write_json(const std::string& path, const RunInfo& info, const std::vector<Row>& rows) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  const Protocol& p = info.protocol;
  f << "{\n  \"schema\": \"gpusort-bench-1\",\n  \"implementation\": " << json_string(info.implementation)
    << ",\n  \"device\": " << json_string(info.device) << ",\n  \"driver\": " << json_string(info.driver)
    << ",\n  \"date\": " << json_string(utc_now()) << ",\n  \"command\": " << json_string(info.command)
    << ",\n  \"seed\": " << info.seed << ",\n  \"protocol\": {\"warmups\": " << p.warmups
    << ", \"runs\": " << p.runs << ", \"rotate_bytes\": " << p.rotate_bytes
    << ", \"min_sets\": " << p.min_sets << ", \"max_sets\": " << p.max_sets
    << ", \"exact_max_n\": " << p.exact_max_n << ", \"time_budget_s\": " << number(p.time_budget_s)
    << ", \"spin_up_ms\": " << number(p.spin_up_ms)
    << ", \"traffic_model\": \"bytes = 2 * n * (key_bytes + value_bytes)\"},\n  \"results\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    f << (i ? ",\n" : "\n") << "    {\"implementation\": " << json_string(r.implementation)
      << ", \"algorithm\": " << json_string(r.algorithm) << ", \"config\": " << json_string(r.config)
      << ", \"key_bytes\": " << r.key_bytes << ", \"value_bytes\": " << r.value_bytes
      << ", \"n\": " << r.n;
    if (!r.skipped.empty()) {
      f << ", \"skipped\": " << json_string(r.skipped) << "}";
      continue;
    }
    f << ", \"ms_median\": " << number(r.ms_median) << ", \"ms_min\": " << number(r.ms_min)
      << ", \"ms_max\": " << number(r.ms_max) << ", \"gkeys_per_s\": " << number(r.gkeys_per_s())
      << ", \"gb_per_s\": " << number(r.gb_per_s()) << ", \"scratch_bytes\": " << r.scratch_bytes
      << ", \"warmups\": " << r.warmups << ", \"runs\": " << r.ms.size() << ", \"sets\": " << r.sets
      << ", \"verified\": " << json_string(r.verified) << ", \"wall_s\": " << number(r.wall_s)
      << ", \"ms\": [";
    for (size_t j = 0; j < r.ms.size(); ++j) f << (j ? ", " : "") << number(r.ms[j]);
    f << "]}";
  }
  f << "\n  ]\n}\n";
}

inline void write_csv(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << "implementation,algorithm,config,key_bytes,value_bytes,n,ms_median,ms_min,ms_max,"
       "gkeys_per_s,gb_per_s,scratch_bytes,warmups,runs,sets,verified,skipped\n";
  for (const Row& r : rows) {
    f << r.implementation << ',' << r.algorithm << ',' << r.config << ',' << r.key_bytes << ','
      << r.value_bytes << ',' << r.n << ',';
    if (r.skipped.empty())
      f << number(r.ms_median) << ',' << number(r.ms_min) << ',' << number(r.ms_max) << ','
        << number(r.gkeys_per_s()) << ',' << number(r.gb_per_s()) << ',' << r.scratch_bytes << ','
        << r.warmups << ',' << r.ms.size() << ',' << r.sets << ",\"" << r.verified << "\",\n";
    else
      f << ",,,,,,,,,,\"" << r.skipped << "\"\n";
  }
}

inline void print_header() {
  std::printf("%-10s %-18s %-8s %11s %10s %9s %9s %12s %7s\n", "impl", "algorithm", "keys", "n", "ms",
              "GKeys/s", "GB/s", "scratch B", "row s");
}

inline void print_row(const Row& r) {
  if (!r.skipped.empty()) {
    std::printf("%-10s %-18s %-8s %11llu   skipped: %s\n", r.implementation.c_str(),
                r.algorithm.c_str(), r.config.c_str(), (unsigned long long)r.n, r.skipped.c_str());
  } else {
    std::printf("%-10s %-18s %-8s %11llu %10.4f %9.4g %9.1f %12llu %7.2f\n", r.implementation.c_str(),
                r.algorithm.c_str(), r.config.c_str(), (unsigned long long)r.n, r.ms_median,
                r.gkeys_per_s(), r.gb_per_s(), (unsigned long long)r.scratch_bytes, r.wall_s);
  }
  std::fflush(stdout);
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
  explicit TimeBudget(double seconds) : seconds_(seconds), start_(std::chrono::steady_clock::now()) {}
  // "" when the row may run, else why it is skipped.
  std::string check(const std::string& row_kind, uint64_t n) const {
    auto last = last_.find(row_kind);
    if (seconds_ <= 0 || last == last_.end()) return "";
    double predicted = last->second.second * double(n) / double(last->second.first);
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed + predicted <= seconds_) return "";
    return "over the time budget (" + number(seconds_) + " s; " + number(elapsed) +
           " s spent, this row predicted at " + number(predicted) + " s)";
  }
  void record(const std::string& row_kind, uint64_t n, double wall_s) { last_[row_kind] = {n, wall_s}; }

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

}  // namespace gpusort::bench
