// The experiment's host-side pieces shared by the three implementations it times (C++17, no
// CUDA or Vulkan types, so that the CUB sorter compiled by nvcc includes it too):
//   - Sorter: prepare an input once, then sort it (restored from a pristine copy each time) and
//     time the sort alone on the GPU, then read the output back;
//   - the plan and launch recipe of a sort with the project's kernels (onesweep.cu), which the
//     Vulkan (VK_NVX_binary_import) and the CUDA runtime sorters both replay.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "layout.hpp"

namespace nvx_onesweep {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline uint32_t key_bytes(KeyType t) {
  return t == KeyType::u32 || t == KeyType::u32_u32 ? 4u : 8u;
}
inline bool has_values(KeyType t) {
  return t == KeyType::u32_u32 || t == KeyType::u64_u32;
}
inline uint32_t pass_count(KeyType t) {
  return key_bytes(t) * 8 / kDigitBits;
}
const char* key_type_name(KeyType t);

// How our kernels run (the same for the Vulkan and the CUDA runtime launches).
struct KernelSettings {
  uint32_t variant = 0;         // index into kVariants
  bool ptx = false;             // load the PTX (driver JIT) instead of the cubin
  uint32_t lookback_slots = 0;  // table length in tiles, a power of two (0: min(1024, tiles))
  uint32_t spin_limit = 64;     // look-back rounds on an unpublished predecessor
  uint32_t refusal_period = 0;  // testing: tiles p % period == period - 1 never publish
  bool claim_by_id = false;     // block i sorts tile i (no atomic counter)
  uint32_t histogram_blocks_per_sm = 8;  // the histogram's grid: min(tiles, SMs x this)
  bool all_commands_barriers = false;  // Vulkan: ALL_COMMANDS barriers instead of compute->compute
};

struct SortPlan {
  uint32_t n = 0, tile = 0, tiles = 0, passes = 0, slots = 0;
  uint32_t pass_threads = 0, histogram_grid = 0;
  uint64_t state_bytes = 0;  // state words and look-back table: what the fill zeroes
  uint32_t first_tag(uint32_t pass) const { return 1 + pass * tiles; }
};
SortPlan make_plan(KeyType type, uint32_t n, const KernelSettings& settings, uint32_t sm_count);

const char* histogram_kernel(KeyType type);
const char* pass_kernel(KeyType type);

// One kernel launch: parameters are pointers (device addresses) or u32 scalars, each stored in
// its own 8-byte slot (a u32 in the low bytes), so that &args[i] is what cuLaunchKernel-style
// parameter arrays want.
struct KernelLaunch {
  const char* kernel = nullptr;
  uint32_t grid = 0, block = 0;
  std::vector<uint64_t> args;
  uint32_t shared_bytes = 0;  // dynamic shared memory
};
struct DeviceBuffers {
  uint64_t keys_a = 0, keys_b = 0, values_a = 0, values_b = 0, state = 0;
};
// The histogram, then every pass (ping-pong a -> b -> a ...; an even number of passes leaves the
// result in a). The state block must be zeroed before the first launch.
std::vector<KernelLaunch> sort_launches(KeyType type, const SortPlan& plan,
                                        const KernelSettings& settings,
                                        const DeviceBuffers& buffers);

// Everything a self-test stage reads back (main.cpp --self-test): the working buffers and the
// whole state block (as u32 words).
struct Snapshot {
  std::vector<uint8_t> keys_a, keys_b, values_a, values_b;
  std::vector<uint32_t> state;
};

class Sorter {
 public:
  virtual ~Sorter() = default;
  virtual std::string name() const = 0;
  // Allocates for `type` and n keys and uploads the input, kept as the pristine copy; values
  // only for key types with values.
  virtual void prepare(KeyType type, uint32_t n, const void* keys, const uint32_t* values) = 0;
  // Restores the input (outside the timing), sorts it; returns the sort's GPU time in ms.
  virtual double sort_once() = 0;
  // The last sort's output (values only for key types with values).
  virtual void read_output(void* keys, uint32_t* values) = 0;
  // Look-back fallbacks (recounted tiles) of the last sort; our kernels only.
  virtual uint32_t fallbacks() { return 0; }
  // Self-test, our kernels only (after prepare): the prepared sort's launches, with the buffers'
  // device addresses in their arguments.
  virtual const std::vector<KernelLaunch>& launches() const { throw Error("no launches"); }
  // Self-test: restores the input into keys_a (values_a), zeroes keys_b, values_b and the state
  // block, runs `launches` (any kernels of the module, barriers between) and reads back all.
  virtual Snapshot run_launches(const std::vector<KernelLaunch>&) { throw Error("no launches"); }
  virtual void release() = 0;
};

// Our kernels launched through VK_NVX_binary_import in a Vulkan command buffer (nvx_sorter.cpp),
// on the Vulkan device whose UUID is `device_uuid` (16 bytes: the CUDA device's), timed with
// timestamps. `description` receives the device's name and driver.
std::unique_ptr<Sorter> make_nvx_sorter(const uint8_t* device_uuid, const KernelSettings& settings,
                                        uint32_t sm_count, std::string& description);
// The same cubin (or PTX) launched through the CUDA runtime (cuda_sorter.cpp), timed with events.
std::unique_ptr<Sorter> make_cuda_sorter(const KernelSettings& settings, uint32_t sm_count);
// Registers, local memory (spills) and shared memory of each kernel as the CUDA driver loaded it
// (cudaFuncGetAttributes), one line per kernel.
std::string kernel_attributes(const KernelSettings& settings);

// cub::DeviceRadixSort (cub_sorter.cu), timed with CUDA events.
std::unique_ptr<Sorter> make_cub_sorter();
// Makes the GPU wait `microseconds` (a sleeping kernel) so that the host has enqueued a whole
// sort before the GPU reaches its start event (stream: a cudaStream_t).
void enqueue_gpu_delay(void* stream, uint32_t microseconds);

}  // namespace nvx_onesweep
