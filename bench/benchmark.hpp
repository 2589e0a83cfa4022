// gpusort's own benchmark: times Sorter::record'ed sorts with GPU timestamps (protocol in
// bench_common.hpp) for each algorithm x key configuration x size. Used by `gpusort bench`.
#pragma once

#include <functional>
#include <gpusort/gpusort.hpp>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace gpusort::bench {

struct BenchOptions {
  Protocol protocol;
  std::vector<Algorithm> algorithms;  // empty: every algorithm this build can construct
  std::vector<KeyConfig> configs;     // empty: default_key_configs()
  // Called with all rows so far after each row (to save partial results of a long run).
  std::function<void(const std::vector<Row>&)> on_row;
  // Reads the SM clock of each row while its runs are queued (null or unavailable: no column).
  const SmClock* clock = nullptr;
  // Print the summary of the rows that were not steady after the table.
  bool summary = true;
  // Onesweep's pass kernels (KernelPath), one set of rows each; empty: {automatic}. Each row
  // names the path it took (Row::kernels).
  std::vector<KernelPath> kernels;
  // The CUDA face's rows (cuda_face.hpp) after each configuration's Vulkan rows at every n: the
  // same inputs, on the Vulkan device's GPU. Where the face cannot run, one line on stderr says
  // why and its rows are returned skipped (not printed).
  bool cuda_face = false;
  // false: no Vulkan rows (`--algorithms cuda`: the CUDA face's alone).
  bool vulkan_rows = true;
};

// Every algorithm gpusort can construct on this context (those answering "not available" are
// left out), in Algorithm order.
std::vector<Algorithm> available_algorithms(Context& ctx);

// Measures every row, printing each as it is done; a row an algorithm rejects (its size limit)
// or that does not fit in memory is returned with `skipped` set. Throws on a wrong result.
std::vector<Row> run_benchmark(Context& ctx, const BenchOptions& options);

}  // namespace gpusort::bench
