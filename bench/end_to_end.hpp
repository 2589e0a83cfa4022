// `gpusort bench --end-to-end`: host memory to host memory through the convenient face
// (gpusort::sort / sort_by_key on host arrays), beside the machine's measured host<->device
// bandwidth: how close the whole call comes to the time the bus alone needs.
#pragma once

#include <gpusort/gpusort.hpp>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace gpusort::bench {

struct EndToEndOptions {
  Protocol protocol;               // sizes, warm-ups, runs, seed
  std::vector<KeyConfig> configs;  // empty: u32, f32, u64, u32+u32
  std::string csv;                 // written after every row when set
  bool one_off = false;            // also 3 calls per row after 1 s of idle, no spin-up
  // Out of core: SortOptions::device_memory_limit of every call (0: none); the rows then add the
  // runs and the shares of the time in transfers, GPU sorting and the CPU's merge.
  uint64_t device_memory_limit = 0;
  // Also time a 16-thread CPU parallel sort of the same input (GNU parallel mode; keys by the
  // same radix order, pairs stably), the median of the runs.
  bool cpu_baseline = false;
  const SmClock* clock = nullptr;  // the SM clock per row (null or unavailable: no column)
};

// Measures and prints every row; throws when a result is wrong.
void run_end_to_end(Context& ctx, const EndToEndOptions& options);

}  // namespace gpusort::bench
