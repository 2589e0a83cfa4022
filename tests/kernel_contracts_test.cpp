// The host-kernel contracts, read back from the embedded SPIR-V, for every kernel of the generated
// kernel list (kernels.hpp): each kernel's kernels.cmake entry names the structs the host passes
// to it (push=, spec=; kernel_contracts.hpp, generated from those lists), its push-constant block
// has the members and ends where that C++ struct ends (both come from one push.h, selected by the
// kernel's PUSH_* define: a kernel that selects another kernel's block fails here), and it
// declares no specialization constant beyond that spec struct. A kernel whose entry names no
// structs fails. No device needed.
#include "kernel_contracts.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "primitives/glsl/spec_constants.h"
#include "vulkan/context_impl.hpp"

namespace gpusort {
namespace {

// The pipeline cache reads each kernel's workgroup size where the kernels declare it.
static_assert(workgroup_spec_id == SPEC_ID_WORKGROUP);

// What a kernel's SPIR-V says about its push constants and specialization constants.
struct Interface {
  uint32_t push_end = 0;      // bytes: the end of the push-constant block's last member
  uint32_t push_members = 0;  // the block's members
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
  result.push_members = uint32_t(members.size());
  result.has_push = true;
  return result;
}

// The host's structs for each kernel, and what its SPIR-V declares.
struct Checked {
  Kernel kernel;
  kernel_contracts::Row contract;
  Interface interface;
};
std::vector<Checked> every_kernel() {
  std::vector<Checked> kernels;
  for (uint32_t k = 0; k < kernel_count; ++k) {
    const Kernel kernel = Kernel(k);
    kernels.push_back(
        {kernel, kernel_contracts::table()[k], read_interface(embedded_shader(kernel))});
  }
  return kernels;
}

TEST(KernelContracts, EveryKernelNamesItsStructs) {
  for (const Checked& c : every_kernel()) {
    SCOPED_TRACE(std::string(kernel_name(c.kernel)));
    EXPECT_FALSE(c.contract.push.empty()) << "its kernels.cmake entry names no push= struct";
    EXPECT_FALSE(c.contract.spec.empty()) << "its kernels.cmake entry names no spec= struct";
  }
}

TEST(KernelContracts, PushBlocksMatchTheHostStructs) {
  for (const Checked& c : every_kernel()) {
    if (c.contract.push.empty()) continue;  // EveryKernelNamesItsStructs fails
    SCOPED_TRACE(std::string(kernel_name(c.kernel)) + " pushes " + std::string(c.contract.push));
    ASSERT_TRUE(c.interface.has_push);
    EXPECT_EQ(c.interface.push_members, c.contract.push_members);
    // The C++ struct is the block rounded up to its alignment.
    const size_t align = c.contract.push_align;
    EXPECT_EQ((c.interface.push_end + align - 1) / align * align, c.contract.push_bytes);
  }
}

TEST(KernelContracts, SpecializationConstantsWithinTheHostStructs) {
  for (const Checked& c : every_kernel()) {
    if (c.contract.spec.empty()) continue;  // EveryKernelNamesItsStructs fails
    SCOPED_TRACE(std::string(kernel_name(c.kernel)) + " takes " + std::string(c.contract.spec));
    ASSERT_TRUE(c.interface.has_spec);  // the workgroup size at least
    EXPECT_LT(c.interface.max_spec_id, c.contract.spec_constants);
  }
}

// The member counter of the generated table: a push block's scalars.
TEST(KernelContracts, MemberCountCountsScalars) {
  struct Three {
    uint64_t a;
    uint32_t b, c;
  };
  EXPECT_EQ(kernel_contracts::member_count<Three>(), 3u);
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
  EXPECT_EQ(k.push_members, 2u);
  EXPECT_TRUE(k.has_spec);
  EXPECT_EQ(k.max_spec_id, 7u);
}

}  // namespace
}  // namespace gpusort
