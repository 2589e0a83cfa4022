// The host-kernel contracts, read back from the embedded SPIR-V: each kernel's push-constant block
// ends where the C++ struct the host pushes ends (both come from one push.h, selected by the
// kernel's PUSH_* define: a kernel that selects another kernel's block fails here), and no kernel
// declares a specialization constant beyond the struct the host passes for it. No device needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <span>

#include "algorithms/networks/push.h"
#include "algorithms/onesweep/constants.h"
#include "algorithms/onesweep/push.h"
#include "algorithms/partition_sort/push.h"
#include "algorithms/radix_reduce_scan/push.h"
#include "algorithms/segmented_sort/constants.h"
#include "algorithms/segmented_sort/push.h"
#include "algorithms/small_sort/constants.h"
#include "algorithms/small_sort/push.h"
#include "api/push.h"
#include "kernels.hpp"
#include "primitives/push.h"

namespace gpusort {
namespace {

// What a kernel's SPIR-V says about its push constants and specialization constants.
struct Interface {
  uint32_t push_end = 0;     // bytes: the end of the push-constant block's last member
  uint32_t max_spec_id = 0;  // the largest SpecId (with has_spec)
  bool has_push = false, has_spec = false;
};

Interface read_interface(std::span<const uint32_t> code) {
  constexpr uint32_t op_type_int = 21, op_type_float = 22, op_type_struct = 30,
                     op_type_pointer = 32, op_variable = 59, op_decorate = 71,
                     op_member_decorate = 72;
  constexpr uint32_t decoration_spec_id = 1, decoration_offset = 35, storage_push_constant = 9;
  std::map<uint32_t, uint32_t> scalar_bytes;                 // type -> bytes
  std::map<uint32_t, std::vector<uint32_t>> struct_members;  // type -> member types
  std::map<uint32_t, std::map<uint32_t, uint32_t>> offsets;  // type -> member -> offset
  std::map<uint32_t, uint32_t> pointee;                      // pointer type -> type
  uint32_t push_pointer = 0;
  Interface result;
  for (size_t i = 5; i < code.size();) {
    const uint32_t words = code[i] >> 16, op = code[i] & 0xffff;
    if (words == 0 || i + words > code.size()) break;
    const uint32_t* w = &code[i];
    if ((op == op_type_int || op == op_type_float) && words >= 3) scalar_bytes[w[1]] = w[2] / 8;
    if (op == op_type_struct) struct_members[w[1]].assign(w + 2, w + words);
    if (op == op_type_pointer) pointee[w[1]] = w[3];
    if (op == op_variable && w[3] == storage_push_constant) push_pointer = w[1];
    if (op == op_decorate && w[2] == decoration_spec_id) {
      result.max_spec_id = result.has_spec ? std::max(result.max_spec_id, w[3]) : w[3];
      result.has_spec = true;
    }
    if (op == op_member_decorate && w[3] == decoration_offset) offsets[w[1]][w[2]] = w[4];
    i += words;
  }
  if (push_pointer == 0) return result;
  const uint32_t block = pointee.at(push_pointer);
  const std::vector<uint32_t>& members = struct_members.at(block);
  for (uint32_t m = 0; m < members.size(); ++m)
    result.push_end =
        std::max(result.push_end, offsets.at(block).at(m) + scalar_bytes.at(members[m]));
  result.has_push = true;
  return result;
}

struct Contract {
  Kernel kernel;
  size_t push_bytes, push_align;
  size_t spec_constants;  // 0: not described by a struct
};
template <class Push, class Spec = void>
Contract contract(Kernel kernel) {
  if constexpr (std::is_void_v<Spec>)
    return {kernel, sizeof(Push), alignof(Push), 0};
  else
    return {kernel, sizeof(Push), alignof(Push), sizeof(Spec) / 4};
}

std::vector<Contract> contracts() {
  return {
      contract<CountNarrowPush>(Kernel::count_narrow),
      contract<ScanBlocksPush>(Kernel::scan_blocks_u32),
      contract<ScanBlocksPush>(Kernel::scan_blocks_u64),
      contract<ScanAddPush>(Kernel::scan_add_u32),
      contract<ScanAddPush>(Kernel::scan_add_u64),
      contract<CopyElementsPush>(Kernel::copy_elements),
      contract<BitonicLocalPush, TileSpec>(Kernel::bitonic_local),
      contract<BitonicLocalPush, TileSpec>(Kernel::bitonic_local_disperse),
      contract<BitonicGlobalPush, SortKeySpec>(Kernel::bitonic_global),
      contract<OddEvenPush, TileSpec>(Kernel::odd_even),
      contract<OnesweepClearPush>(Kernel::onesweep_clear),
      contract<OnesweepHistogramPush, OnesweepHistogramSpec>(Kernel::onesweep_histogram),
      contract<OnesweepPassPush, OnesweepPassSpec>(Kernel::onesweep_pass),
      contract<OnesweepCopyBackPush, OnesweepCopyBackSpec>(Kernel::onesweep_copy_back),
      contract<PartitionPlanPush, KeySpec>(Kernel::partition_plan),
      contract<RadixCountPush>(Kernel::radix_count),
      contract<RadixScatterPush>(Kernel::radix_scatter),
      contract<SegmentIotaPush>(Kernel::segment_iota),
      contract<SegmentIdsPush>(Kernel::segment_ids),
      contract<SegmentGatherPush>(Kernel::segment_gather),
      contract<SegmentCountPush>(Kernel::segment_count),
      contract<SegmentClassifyPush, SegmentClassifySpec>(Kernel::segment_classify),
      contract<SegmentPlanPush, SegmentPlanSpec>(Kernel::segment_plan),
      contract<SegmentSortTilePush, SegmentSortTileSpec>(Kernel::segment_sort_tile_i2),
      contract<SegmentSortTilePush, SegmentSortTileSpec>(Kernel::segment_sort_tile_i4),
      contract<SegmentSortTilePush, SegmentSortTileSpec>(Kernel::segment_sort_tile_i8),
      contract<SegmentMergePush, SegmentMergeSpec>(Kernel::segment_merge_r4),
      contract<SegmentMergePush, SegmentMergeSpec>(Kernel::segment_merge_r8),
      contract<SegmentBucketPush, SegmentBucketSpec>(Kernel::segment_bucket),
      contract<SegmentLargeScanPush>(Kernel::segment_large_scan),
      contract<SegmentLargeCompactPush>(Kernel::segment_large_compact),
      contract<SegmentLargeGatherPush>(Kernel::segment_large_gather),
      contract<SmallSortTilePush, SmallSortTileSpec>(Kernel::small_sort_tile_i1),
      contract<SmallSortTilePush, SmallSortTileSpec>(Kernel::small_sort_tile_i2),
      contract<SmallSortTilePush, SmallSortTileSpec>(Kernel::small_sort_tile_i2_keys32),
      contract<SmallSortTilePush, SmallSortTileSpec>(Kernel::small_sort_tile_i2_keys64),
      contract<SmallSortTilePush, SmallSortTileSpec>(Kernel::small_sort_tile_i4),
      contract<SmallSortTilePush, SmallSortTileSpec>(Kernel::small_sort_tile_i4_keys32),
      contract<SmallSortTilePush, SmallSortTileSpec>(Kernel::small_sort_tile_i4_keys64),
      contract<SmallSortTilePush, SmallSortTileSpec>(Kernel::small_sort_tile_i8),
      contract<SmallSortMergePush, SmallSortMergeSpec>(Kernel::small_sort_merge_r4),
      contract<SmallSortMergePush, SmallSortMergeSpec>(Kernel::small_sort_merge_r8),
      contract<SmallSortMergePush, SmallSortMergeSpec>(Kernel::small_sort_merge_r4_lanes),
  };
}

TEST(KernelContracts, PushBlocksEndWhereTheHostStructsEnd) {
  std::set<Kernel> seen;
  for (const Contract& c : contracts()) {
    SCOPED_TRACE(std::string(kernel_name(c.kernel)));
    EXPECT_TRUE(seen.insert(c.kernel).second) << "listed twice";
    const Interface k = read_interface(embedded_shader(c.kernel));
    ASSERT_TRUE(k.has_push);
    // The C++ struct is the block rounded up to its alignment.
    EXPECT_EQ((k.push_end + c.push_align - 1) / c.push_align * c.push_align, c.push_bytes);
  }
}

TEST(KernelContracts, SpecializationConstantsWithinTheHostStructs) {
  for (const Contract& c : contracts()) {
    if (c.spec_constants == 0) continue;
    SCOPED_TRACE(std::string(kernel_name(c.kernel)));
    const Interface k = read_interface(embedded_shader(c.kernel));
    ASSERT_TRUE(k.has_spec);
    EXPECT_LT(k.max_spec_id, c.spec_constants);
  }
}

// The reader itself: a block of (u64, u32) ends at 12, and the largest SpecId is found.
TEST(KernelContracts, ReaderFindsBlockEndAndSpecIds) {
  // OpTypeInt %1 32 0; OpTypeInt %2 64 0; OpTypeStruct %3 %2 %1; OpTypePointer %4 PushConstant %3;
  // OpVariable %4 %5 PushConstant; OpMemberDecorate %3 0 Offset 0; OpMemberDecorate %3 1 Offset 8;
  // OpDecorate %6 SpecId 7; OpDecorate %7 SpecId 3.
  const std::vector<uint32_t> code = {0x07230203,
                                      0x00010500,
                                      0,
                                      8,
                                      0,
                                      (4u << 16) | 21,
                                      1,
                                      32,
                                      0,
                                      (4u << 16) | 21,
                                      2,
                                      64,
                                      0,
                                      (4u << 16) | 30,
                                      3,
                                      2,
                                      1,
                                      (4u << 16) | 32,
                                      4,
                                      9,
                                      3,
                                      (4u << 16) | 59,
                                      4,
                                      5,
                                      9,
                                      (5u << 16) | 72,
                                      3,
                                      0,
                                      35,
                                      0,
                                      (5u << 16) | 72,
                                      3,
                                      1,
                                      35,
                                      8,
                                      (4u << 16) | 71,
                                      6,
                                      1,
                                      7,
                                      (4u << 16) | 71,
                                      7,
                                      1,
                                      3};
  const Interface k = read_interface(code);
  EXPECT_TRUE(k.has_push);
  EXPECT_EQ(k.push_end, 12u);
  EXPECT_TRUE(k.has_spec);
  EXPECT_EQ(k.max_spec_id, 7u);
}

}  // namespace
}  // namespace gpusort
