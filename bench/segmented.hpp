// `gpusort bench --segmented`: SegmentedSorter::record on device buffers for a few
// segment layouts (bench_common.hpp's families), and argsort of u32 keys beside sort_by_key with
// u32 values, in the protocol and schema of the other rows. cub_baseline --segmented measures
// the same rows on the same inputs.
#pragma once

#include <functional>
#include <gpusort/gpusort.hpp>
#include <vector>

#include "bench_common.hpp"

namespace gpusort::bench {

struct SegmentedOptions {
  Protocol protocol;                    // sizes (default n = 2^24 is set by the command)
  std::vector<KeyConfig> configs;       // empty: u32, u32+u32
  std::vector<SegmentFamily> families;  // empty: all four
  std::function<void(const std::vector<Row>&)> on_row;
  const SmClock* clock = nullptr;  // the SM clock per row (null or unavailable: no column)
  // The CUDA face's argsort and u32+u32 rows after the Vulkan ones (cuda_face.hpp); where the
  // face cannot run, one line on stderr says why and its rows are returned skipped (not printed).
  bool cuda_face = false;
};

// Per n: the segmented rows (config x layout), the argsort row ("u32 argsort", algorithm
// "argsort") and the sort_by_key row it is judged against ("u32+u32", algorithm "automatic",
// the ordinary row), each followed by the CUDA face's (algorithm "cuda") where asked. Prints
// each row; throws on a wrong result.
std::vector<Row> run_segmented(Context& ctx, const SegmentedOptions& options);

}  // namespace gpusort::bench
