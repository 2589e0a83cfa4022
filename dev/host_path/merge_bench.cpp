// Development benchmark for the out-of-core merge: merge_runs (core/out_of_core.hpp)
// of k sorted runs of u64 keys into host arrays, keys only and with u32 values, on 1..T threads.
// Prints M keys/s per thread (best of `reps`). Inputs: uniform random keys; all keys equal (the
// merge may take whole runs at once); already sorted input (run r holds the r-th slice of the
// key range: runs do not interleave). The output is touched before timing (in the out-of-core
// sort it is the caller's array), so page faults are not counted. Last, the copy back that
// sort_arrays_out_of_core made before commit 1c32f9e (streaming_copy of the merged keys and values
// into the caller's arrays, on the same threads), in the same unit.
// Built by dev/CMakeLists.txt (GPUSORT_BUILD_DEV_TOOLS) as build/dev/merge_bench.
//   merge_bench [log2 total keys, default 26] [reps, default 3] [max threads, default 2]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "host/out_of_core.hpp"

using namespace gpusort;
using clock_type = std::chrono::steady_clock;

int main(int argc, char** argv) {
  const uint64_t n = uint64_t(1) << (argc > 1 ? atoi(argv[1]) : 26);
  const int reps = argc > 2 ? atoi(argv[2]) : 3;
  const unsigned max_threads = argc > 3 ? unsigned(atoi(argv[3])) : 2;
  std::vector<uint64_t> keys(n), out_keys(n);
  std::vector<uint32_t> values(n), out_values(n);
  for (uint64_t i = 0; i < n; ++i) values[i] = uint32_t(i);
  std::printf("%-8s %3s %-6s %7s %12s\n", "input", "k", "values", "threads", "Mkeys/s/thr");
  for (const char* input : {"uniform", "equal", "sorted"}) {
    for (uint64_t k : {9u, 16u}) {
      std::mt19937_64 rng(k);
      for (uint64_t i = 0; i < n; ++i) keys[i] = input[0] == 'u' ? rng() : input[0] == 'e' ? 42 : i;
      std::vector<SortedRun> runs;
      for (uint64_t r = 0; r < k; ++r) {
        const uint64_t begin = n * r / k, end = n * (r + 1) / k;
        std::sort(keys.begin() + begin, keys.begin() + end);
        runs.push_back({keys.data() + begin, values.data() + begin, end - begin});
      }
      for (uint32_t value_bytes : {0u, 4u}) {
        const SortSpec spec = make_sort_spec(KeyType::u64, value_bytes, false, 0, 0);
        for (unsigned threads = 1; threads <= max_threads; threads *= 2) {
          double best = 1e30;
          for (int rep = 0; rep < reps; ++rep) {
            std::memset(out_keys.data(), 0, n * 8);
            std::memset(out_values.data(), 0, n * 4);
            const auto start = clock_type::now();
            merge_runs(spec, runs,
                       MergeTarget{reinterpret_cast<char*>(out_keys.data()),
                                   reinterpret_cast<char*>(out_values.data())},
                       threads);
            best = std::min(best, std::chrono::duration<double>(clock_type::now() - start).count());
          }
          // A cheap check that the output is sorted (the tests check everything else).
          if (!std::is_sorted(out_keys.begin(), out_keys.end())) std::printf("NOT SORTED\n");
          std::printf("%-8s %3llu %-6s %7u %12.1f\n", input, (unsigned long long)k,
                      value_bytes ? "u32" : "none", threads, n / best / 1e6 / threads);
        }
      }
    }
  }
  for (uint32_t value_bytes : {0u, 4u})
    for (unsigned threads = 1; threads <= max_threads; threads *= 2) {
      double best = 1e30;
      for (int rep = 0; rep < reps; ++rep) {
        const auto start = clock_type::now();
        std::vector<std::thread> copies;
        for (unsigned t = 0; t < threads; ++t)
          copies.emplace_back([&, t] {
            const uint64_t begin = n * t / threads, end = n * (t + 1) / threads;
            streaming_copy(&keys[begin], &out_keys[begin], (end - begin) * 8);
            if (value_bytes)
              streaming_copy(&values[begin], &out_values[begin], (end - begin) * value_bytes);
          });
        for (auto& c : copies) c.join();
        best = std::min(best, std::chrono::duration<double>(clock_type::now() - start).count());
      }
      std::printf("%-8s %3s %-6s %7u %12.1f\n", "copyback", "-", value_bytes ? "u32" : "none",
                  threads, n / best / 1e6 / threads);
    }
}
