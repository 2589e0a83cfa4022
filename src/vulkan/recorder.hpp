// Recording helpers: every gpusort kernel is a compute pipeline with one push-constant block and
// no descriptor sets (buffers are reached through device addresses).
#pragma once

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels.hpp"
#include "vulkan/context_impl.hpp"

namespace gpusort {

class Recorder {
 public:
  Recorder(Context::Impl& ctx, VkCommandBuffer cmd) : ctx_(ctx), cmd_(cmd) {}

  Context::Impl& context() const { return ctx_; }
  VkCommandBuffer command_buffer() const { return cmd_; }

  // Dispatches `groups` workgroups, split over x and y when above the device's x limit; shaders
  // recover the linear id with linear_workgroup_id() (src/primitives/glsl/common.glsl) and must
  // ignore ids >= the group count they are given.
  template <class Push>
  void dispatch(Kernel kernel, const std::vector<uint32_t>& specialization, uint64_t groups,
                const Push& push) {
    if (groups == 0) return;
    bind(kernel, specialization, push);
    uint64_t x = std::min<uint64_t>(groups, ctx_.info.max_workgroup_count_x);
    uint64_t y = (groups + x - 1) / x;
    vkCmdDispatch(cmd_, uint32_t(x), uint32_t(y), 1);
    ends_with_barrier_ = false;
  }

  // Dispatches the workgroup counts (a VkDispatchIndirectCommand) found at `offset` of `buffer`
  // when the command executes; the shader must accept a y dimension (linear_workgroup_id).
  template <class Push>
  void dispatch_indirect(Kernel kernel, const std::vector<uint32_t>& specialization,
                         VkBuffer buffer, VkDeviceSize offset, const Push& push) {
    bind(kernel, specialization, push);
    vkCmdDispatchIndirect(cmd_, buffer, offset);
    ends_with_barrier_ = false;
  }

  // Launches CUDA function `function` (VK_NVX_binary_import, Context::Impl::nvx) with `grid`
  // blocks of `block` threads and static shared memory only; params[i] points at the kernel's
  // i-th parameter (Vulkan consumes them when the command is recorded). Ordered against compute
  // dispatches by the same compute barriers.
  void cuda_launch(VkCuFunctionNVX function, uint32_t grid, uint32_t block,
                   const std::vector<const void*>& params) {
    if (grid == 0) return;
    VkCuLaunchInfoNVX info{VK_STRUCTURE_TYPE_CU_LAUNCH_INFO_NVX};
    info.function = function;
    info.gridDimX = grid;
    info.gridDimY = info.gridDimZ = 1;
    info.blockDimX = block;
    info.blockDimY = info.blockDimZ = 1;
    info.sharedMemBytes = 0;
    info.paramCount = params.size();
    info.pParams = params.data();
    ctx_.nvx.launch(cmd_, &info);
    ends_with_barrier_ = false;
  }

  // compute_barrier(), and the shaders' writes before it also reach the indirect-command reads
  // of dispatch_indirect after it. Only where an indirect dispatch follows: the NVIDIA driver
  // waits longer at this one (see compute_barrier).
  void indirect_barrier() const {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
    b.dstAccessMask =
        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_INDIRECT_COMMAND_READ_BIT;
    vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT,
                         0, 1, &b, 0, nullptr, 0, nullptr);
    ends_with_barrier_ = true;
#if GPUSORT_PROFILING
    if (profile_pool_) vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, profile_pool_, (*profile_next_)++);
#endif
  }

  // Shader reads and writes before this happen before, and are visible to, shader reads and
  // writes after it. Compute to compute only: a destination stage such as DRAW_INDIRECT makes
  // the NVIDIA driver wait longer (docs/design/small-sort.md: 2.5 us more per barrier on the H100).
  void compute_barrier() const {
    barrier(cmd_);
    ends_with_barrier_ = true;
#if GPUSORT_PROFILING
    if (profile_pool_) vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, profile_pool_, (*profile_next_)++);
#endif
  }
#if GPUSORT_PROFILING
  // Development profiling (dev/; only in the gpusort_profiling library): a timestamp into `pool` after every
  // compute_barrier(), at query *next, which then advances.
  void profile_barriers(VkQueryPool pool, uint32_t* next) {
    profile_pool_ = pool;
    profile_next_ = next;
  }
#endif
  static void barrier(VkCommandBuffer cmd) {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
    b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         0, 1, &b, 0, nullptr, 0, nullptr);
  }
  // Whether the last command recorded through this Recorder is a compute_barrier().
  bool ends_with_barrier() const { return ends_with_barrier_; }
  // Orders everything before against everything after (transfers, host, compute).
  static void full_barrier(VkCommandBuffer cmd) {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    b.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                         0, 1, &b, 0, nullptr, 0, nullptr);
  }

 private:
  template <class Push>
  void bind(Kernel kernel, const std::vector<uint32_t>& specialization, const Push& push) {
    static_assert(std::is_trivially_copyable_v<Push> && sizeof(Push) <= push_constant_bytes);
    vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, ctx_.pipeline(kernel, specialization));
    vkCmdPushConstants(cmd_, ctx_.pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(Push), &push);
  }

  Context::Impl& ctx_;
  VkCommandBuffer cmd_;
  mutable bool ends_with_barrier_ = false;
#if GPUSORT_PROFILING
  VkQueryPool profile_pool_ = VK_NULL_HANDLE;
  uint32_t* profile_next_ = nullptr;
#endif
};

}  // namespace gpusort
