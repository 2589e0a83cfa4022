// The distributed sort's device-resident path (DeviceExchange::device / shared_device,
// docs/distributed.md "Device-resident path"): each rank's keys stay on its GPU from the upload
// to the download; the exchange writes straight into the other ranks' GPU memory.
#pragma once

#include <mpi.h>

#include <gpusort/distributed.hpp>
#include <memory>
#include <string>

namespace gpusort {
class HostImports;
}

namespace gpusort::distributed::detail {

// What decides whether the device-resident path runs, gathered over the ranks: each *_error is
// empty when the condition holds on every rank, else "rank R: why" for the lowest rank where it
// does not.
struct DevicePathFacts {
  DeviceExchange requested = DeviceExchange::automatic;
  bool balanced = true;
  bool partition_first = false;
  bool custom_exchange = false;
  bool stable_algorithm = true;  // the final sort must keep the pieces' (rank) order
  std::string node_error;        // a rank of the communicator is on another node
  std::string backend_error;  // no CUDA driver / build / extension; shared_device: devices differ
  std::string peer_error;     // a rank's GPU cannot access another rank's
  std::string fit_error;      // a share or slice does not fit one in-core sort on its GPU
};

// "" when the device-resident path runs; else why not (in the order the facts are checked).
std::string device_path_refusal(const DevicePathFacts& facts);

// The GPU buffers, peer mappings and engine sorters of the path, kept between sorts by a Sorter.
class DevicePath;
using DevicePathState = std::shared_ptr<DevicePath>;

// Sorts on the device-resident path when it can: returns true with `slice` set and the output
// written. Returns false, with timings.device_refused saying why, when the host path must run
// instead: nothing was asked of the output allocators then.
// Collective; throws gpusort::Error on every rank when DeviceExchange::device / shared_device was
// asked for and cannot run, or when a step fails after the output was asked for.
bool device_path_sort(Context& ctx, MPI_Comm comm, DevicePathState& state, KeyType key_type,
                      const void* keys, uint64_t n, const void* values, uint32_t value_bytes,
                      const Allocate& keys_out, const Allocate& values_out,
                      const DistributedOptions& options, const HostImports* imports,
                      DistributedTimings& timings, Slice& slice);

// The caller's storage for a rank's `count` output elements, keys and (where value_bytes) values,
// as both paths ask for it; throws gpusort::Error where an allocator gives none for a non-empty
// output.
void allocate_outputs(const Allocate& keys_out, const Allocate& values_out, uint64_t count,
                      uint32_t value_bytes, void*& keys, void*& values);

// Frees the state's GPU buffers (collective: peers' mappings go first).
void release_device_path(MPI_Comm comm, DevicePathState& state);

}  // namespace gpusort::distributed::detail
