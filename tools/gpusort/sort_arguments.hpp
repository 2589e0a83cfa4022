// The options of `gpusort sort`, shared by the single-process sort (sort_command.cpp) and the
// collective sort under mpirun (distributed/collective_sort.cpp, built when MPI is found).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace gpusort::cli {

struct SortArguments {
  std::string in, out;
  std::string type, values_in, values_out, value_type;
  bool descending = false;
  std::string algorithm = "automatic";
  std::string kernels = "auto";  // Onesweep's pass kernels: auto, spirv, cuda (KernelPath)
  std::string device;
  uint32_t begin_bit = 0, end_bit = 0;
  bool in_place = false;
  bool timings = false;
  std::string segments, segment_type, indices_out;
  std::string device_memory_limit, host_memory_limit;
  bool quiet = false;
};

// Set (at static initialization) by the collective sort when the CLI is built with MPI: runs
// `gpusort sort` over every rank and returns true when this process was started by mpirun (or
// another MPI launcher) with more than one rank; returns false, having done nothing (MPI not even
// initialized), otherwise. Unset: the CLI has no collective sort.
// In gpusort (no MPI), mpi_launch.cpp's hook runs gpusort-mpi in the process's place instead.
inline std::function<bool(const SortArguments&)>& collective_sort() {
  static std::function<bool(const SortArguments&)> hook;
  return hook;
}

// The number of processes an MPI launcher (mpirun) started, from its environment (0: none).
long launched_ranks();

}  // namespace gpusort::cli
