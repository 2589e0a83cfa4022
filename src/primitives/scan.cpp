// Prefix scan, three steps per level: scan_blocks scans each block of WORKGROUP * ITEMS elements
// (Blelloch up-sweep/down-sweep over the invocations' partial sums in shared memory) and writes
// the block totals; the totals are scanned the same way (recursively, exclusive); scan_add adds
// each block's prefix to its elements. Scratch: the totals of every level.
#include "primitives/scan.hpp"

#include "primitives/constants.h"
#include "primitives/push.h"
#include "primitives/sort_spec.hpp"

namespace gpusort {

namespace {

constexpr uint32_t scan_workgroup = 256;
constexpr uint32_t scan_items = 8;
constexpr uint64_t scan_block = scan_workgroup * scan_items;

uint64_t element_bytes(const ScanSpec& spec) {
  return spec.u64 ? 8 : 4;
}

}  // namespace

uint64_t scan_scratch_bytes(uint64_t n, const ScanSpec& spec) {
  uint64_t bytes = 0;
  for (uint64_t blocks = (n + scan_block - 1) / scan_block; blocks > 1;
       blocks = (blocks + scan_block - 1) / scan_block)
    bytes += align_up(blocks * element_bytes(spec), 16);
  return bytes;
}

void record_scan(Recorder& rec, VkDeviceAddress in, VkDeviceAddress out, uint64_t n,
                 const ScanSpec& spec, VkDeviceAddress scratch) {
  if (n == 0) return;
  const Kernel blocks_kernel = spec.u64 ? Kernel::scan_blocks_u64 : Kernel::scan_blocks_u32;
  const Kernel add_kernel = spec.u64 ? Kernel::scan_add_u64 : Kernel::scan_add_u32;
  const std::vector<uint32_t> specialization =
      spec_constants(ScanKernelSpec{scan_workgroup, scan_items});
  uint64_t blocks = (n + scan_block - 1) / scan_block;
  VkDeviceAddress totals = blocks > 1 ? scratch : 0;
  rec.dispatch(blocks_kernel, specialization, blocks,
               ScanBlocksPush{in, out, totals, uint32_t(n), spec.inclusive, uint32_t(blocks)});
  if (blocks == 1) return;
  rec.compute_barrier();
  VkDeviceAddress next_scratch = scratch + align_up(blocks * element_bytes(spec), 16);
  record_scan(rec, totals, totals, blocks, {spec.u64, false}, next_scratch);
  rec.compute_barrier();
  rec.dispatch(add_kernel, specialization, blocks,
               ScanAddPush{out, totals, uint32_t(n), uint32_t(blocks)});
}

}  // namespace gpusort
