// Out-of-core sorting (SortOptions::device_memory_limit): an array larger than the device budget
// is cut into runs that fit, each run is sorted on the device through the HostPath (upload, sort
// and download overlapped within the run), and the sorted runs are merged on the CPU by a stable
// k-way merge: the output is split among threads by multi-sequence selection (the positions in
// every run of the first r merged elements, found by a binary search over the key field), so each
// thread merges an independent range with a loser tree over the runs; ties go to the earlier run.
#pragma once

#include <span>

#include "host/host_path.hpp"

namespace gpusort {

// The run length for n elements under `limit` bytes of device memory (0: the device's heap and
// largest allocation): n when the whole array fits (or when n is beyond what the algorithm takes
// anyway, so that the in-core path reports it). Throws Error when more than max_runs runs would
// be needed.
inline constexpr uint64_t max_runs = 65536;
uint64_t run_elements(Context::Impl& ctx, const SortSpec& spec, Algorithm requested, uint64_t n,
                      uint64_t limit);

// Where a merge writes: host arrays (keys, and values when the spec has them), or writers
// called with pieces from several threads.
struct MergeTarget {
  char* keys = nullptr;
  char* values = nullptr;
  const HostWriter* keys_writer = nullptr;
  const HostWriter* values_writer = nullptr;
};
// Merges sorted runs (SortedRun in gpusort.hpp) stably; `threads` 0: the host's, at most 16.
void merge_runs(const SortSpec& spec, std::span<const SortedRun> runs, const MergeTarget& target,
                unsigned threads = 0);

// Sorts n elements in runs of `run` elements, the sorted runs kept in a host buffer and merged
// into the destination: host arrays (read run by run, then merged into in place), or streams
// (read through the readers, merged into the writers).
void sort_arrays_out_of_core(Context::Impl& ctx, const SortSpec& spec, Algorithm requested,
                             uint64_t n, void* keys, void* values, uint64_t run,
                             SortTimings* timings);
void sort_streamed_out_of_core(Context::Impl& ctx, const SortSpec& spec, Algorithm requested,
                               uint64_t n, const HostStream& keys, const HostStream& values,
                               uint64_t run, SortTimings* timings);

}  // namespace gpusort
