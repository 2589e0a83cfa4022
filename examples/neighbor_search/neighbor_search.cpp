// Grid neighbour search, as SPH fluid solvers do it each step, with gpusort's engine face:
//   1. hash_cells       each particle's cell hash (linear index of its grid cell) and its index
//   2. gpusort::Sorter  sorts the (cell hash, particle index) pairs, in the same command buffer
//   3. cell_ranges      where each cell's run of sorted particles starts and ends
//   4. query_neighbors  each particle visits the 27 cells around it and counts the particles
//                       within the radius (and sums their indices as a checksum)
// The result is checked against a brute-force search on the CPU, and each step is timed with GPU
// timestamps. All buffers and the command buffer are this program's own, as in an engine.
//
// Usage: neighbor_search [particle_count] (default 20000). GPUSORT_DEVICE picks the device,
// GPUSORT_VALIDATION=1 or sync turns validation on (then any validation message fails the run).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <gpusort/gpusort.hpp>
#include <random>
#include <span>
#include <string_view>
#include <vector>

namespace neighbor_search {
// The example's own SPIR-V table (examples/neighbor_search/CMakeLists.txt).
std::span<const uint32_t> embedded_shader(std::string_view name);
}  // namespace neighbor_search

namespace {

// Search radius = cell size. Positions are multiples of 2^-10, so every difference of two
// positions in neighbouring cells (< 2 radii = 512 units) and the sum of its squares (< 2^20
// units^2) are exact in float: the GPU and the CPU agree on every pair, borderline ones included.
constexpr float radius = 0.25f;
constexpr float position_unit = 1.0f / 1024.0f;
// Particles per unit volume, for about 40 neighbours each as in a typical SPH kernel support.
constexpr double neighbors_wanted = 40.0;
constexpr uint32_t workgroup_size = 64;
constexpr uint32_t frames = 5;  // submissions of the same command buffer; timings are the best

void check(VkResult result, const char* what) {
  if (result != VK_SUCCESS) throw gpusort::Error(what, result);
}

// A buffer of this program's, created with the usage gpusort documents for its BufferRefs.
struct Buffer {
  VkDevice device = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceAddress address = 0;
  void* mapped = nullptr;

  Buffer(const gpusort::Context& ctx, VkDeviceSize bytes, bool host_visible)
      : device(ctx.device()) {
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = std::max<VkDeviceSize>(bytes, 16);
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                 VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    check(vkCreateBuffer(device, &info, nullptr, &buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, buffer, &req);
    VkPhysicalDeviceMemoryProperties props;
    vkGetPhysicalDeviceMemoryProperties(ctx.physical_device(), &props);
    const VkMemoryPropertyFlags wanted =
        host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                     : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    uint32_t type = 0;
    while (type < props.memoryTypeCount &&
           !((req.memoryTypeBits >> type & 1) &&
             (props.memoryTypes[type].propertyFlags & wanted) == wanted))
      ++type;
    if (type == props.memoryTypeCount) throw gpusort::Error("no memory type for a buffer");
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    check(vkAllocateMemory(device, &alloc, nullptr, &memory), "vkAllocateMemory");
    check(vkBindBufferMemory(device, buffer, memory, 0), "vkBindBufferMemory");
    if (host_visible)
      check(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
    VkBufferDeviceAddressInfo address_info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    address_info.buffer = buffer;
    address = vkGetBufferDeviceAddress(device, &address_info);
  }
  ~Buffer() {
    vkDestroyBuffer(device, buffer, nullptr);
    vkFreeMemory(device, memory, nullptr);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  gpusort::BufferRef ref() const { return {buffer, 0}; }
};

// The three compute kernels of the example: push constants only, no descriptor sets.
class Kernels {
 public:
  explicit Kernels(VkDevice device) : device_(device) {
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
    VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout.pushConstantRangeCount = 1;
    layout.pPushConstantRanges = &range;
    check(vkCreatePipelineLayout(device, &layout, nullptr, &layout_), "vkCreatePipelineLayout");
    for (const char* name : {"hash_cells", "cell_ranges", "query_neighbors"})
      pipelines_.push_back(create(name));
  }
  ~Kernels() {
    for (VkPipeline p : pipelines_) vkDestroyPipeline(device_, p, nullptr);
    vkDestroyPipelineLayout(device_, layout_, nullptr);
  }
  enum Kernel { hash_cells, cell_ranges, query_neighbors };

  template <class Push>
  void dispatch(VkCommandBuffer cmd, Kernel kernel, uint32_t invocations, const Push& push) const {
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_[kernel]);
    vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(Push), &push);
    vkCmdDispatch(cmd, (invocations + workgroup_size - 1) / workgroup_size, 1, 1);
  }

 private:
  VkPipeline create(const char* name) {
    auto code = neighbor_search::embedded_shader(name);
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = code.size_bytes();
    module_info.pCode = code.data();
    VkShaderModule module;
    check(vkCreateShaderModule(device_, &module_info, nullptr, &module), "vkCreateShaderModule");
    VkSpecializationMapEntry entry{0, 0, 4};  // constant_id 0: the workgroup size
    VkSpecializationInfo spec{1, &entry, 4, &workgroup_size};
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "main";
    info.stage.pSpecializationInfo = &spec;
    info.layout = layout_;
    VkPipeline pipeline;
    VkResult r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);
    vkDestroyShaderModule(device_, module, nullptr);
    check(r, name);
    return pipeline;
  }

  VkDevice device_;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  std::vector<VkPipeline> pipelines_;
};

// Push constants, laid out as the shaders declare them (addresses first, std430).
struct HashPush {
  VkDeviceAddress positions, cell_hashes, particle_ids;
  float cell_size;
  uint32_t grid_size, particle_count;
};
struct RangesPush {
  VkDeviceAddress sorted_hashes, cell_start, cell_end;
  uint32_t particle_count;
};
struct QueryPush {
  VkDeviceAddress positions, sorted_ids, cell_start, cell_end, neighbor_counts, neighbor_checksums;
  float cell_size;
  uint32_t grid_size, particle_count;
};

void memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = src_access;
  b.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
}
void compute_to_compute(VkCommandBuffer cmd) {
  memory_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                 VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

struct Neighbors {
  std::vector<uint32_t> counts, checksums;
};

// Every pair, once: the reference the GPU result must equal exactly.
Neighbors brute_force(const std::vector<float>& positions, uint32_t n) {
  Neighbors r{std::vector<uint32_t>(n, 0), std::vector<uint32_t>(n, 0)};
  const float radius_squared = radius * radius;
  for (uint32_t i = 0; i < n; ++i) {
    const float* p = &positions[4 * i];
    for (uint32_t j = i + 1; j < n; ++j) {
      const float* q = &positions[4 * j];
      float dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
      if (dx * dx + dy * dy + dz * dz <= radius_squared) {
        ++r.counts[i], ++r.counts[j];
        r.checksums[i] += j, r.checksums[j] += i;
      }
    }
  }
  return r;
}

int run(uint32_t n) {
  gpusort::Context ctx = gpusort::Context::create();
  VkDevice device = ctx.device();
  std::printf("device: %s\n", ctx.device_info().name.c_str());

  // Particles uniformly in a cube sized for about neighbors_wanted neighbours each.
  const double density = neighbors_wanted / (4.0 / 3.0 * M_PI * std::pow(radius, 3));
  const float box = float(std::cbrt(n / density));
  const uint32_t grid_size = uint32_t(std::ceil(box / radius));
  const uint32_t cell_count = grid_size * grid_size * grid_size;
  std::vector<float> positions(4 * size_t(n), 0.0f);
  std::mt19937 rng(1);
  std::uniform_int_distribution<uint32_t> coordinate(0, uint32_t(box / position_unit) - 1);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t axis = 0; axis < 3; ++axis)
      positions[4 * i + axis] = float(coordinate(rng)) * position_unit;
  std::printf("%u particles in a %.2f^3 box, radius %.2f, %u^3 cells\n", n, box, radius, grid_size);

  // Only the bits a cell hash can have take part in the sort: fewer radix passes.
  const uint32_t hash_bits = std::max(1u, uint32_t(std::bit_width(cell_count - 1)));
  gpusort::Sorter sorter(ctx,
                         {.key = gpusort::KeyType::u32, .value_bytes = 4, .end_bit = hash_bits});
  const Kernels kernels(device);

  Buffer upload(ctx, positions.size() * 4, true), readback(ctx, 2 * size_t(n) * 4, true);
  Buffer particles(ctx, positions.size() * 4, false), cell_hashes(ctx, n * 4, false),
      particle_ids(ctx, n * 4, false), scratch(ctx, sorter.scratch_bytes(n), false),
      cell_start(ctx, cell_count * 4, false), cell_end(ctx, cell_count * 4, false),
      neighbor_counts(ctx, n * 4, false), neighbor_checksums(ctx, n * 4, false);
  std::memcpy(upload.mapped, positions.data(), positions.size() * 4);

  enum Stamp { begin, hashed, sorted, ranged, queried, stamp_count };
  VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  query_info.queryCount = stamp_count;
  VkQueryPool stamps;
  check(vkCreateQueryPool(device, &query_info, nullptr, &stamps), "vkCreateQueryPool");
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = ctx.queue_family_index();
  VkCommandPool pool;
  check(vkCreateCommandPool(device, &pool_info, nullptr, &pool), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cmd;
  check(vkAllocateCommandBuffers(device, &alloc, &cmd), "vkAllocateCommandBuffers");

  // One command buffer for the whole step, recorded once and submitted every frame.
  VkCommandBufferBeginInfo begin_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check(vkBeginCommandBuffer(cmd, &begin_info), "vkBeginCommandBuffer");
  vkCmdResetQueryPool(cmd, stamps, 0, stamp_count);
  VkBufferCopy whole{0, 0, positions.size() * 4};
  vkCmdCopyBuffer(cmd, upload.buffer, particles.buffer, 1, &whole);
  vkCmdFillBuffer(cmd, cell_start.buffer, 0, VK_WHOLE_SIZE, 0);  // empty cells: start = end = 0
  vkCmdFillBuffer(cmd, cell_end.buffer, 0, VK_WHOLE_SIZE, 0);
  memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                 VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, stamps, begin);
  kernels.dispatch(
      cmd, Kernels::hash_cells, n,
      HashPush{particles.address, cell_hashes.address, particle_ids.address, radius, grid_size, n});
  // gpusort's contract: the keys and values it reads must be visible to compute shaders.
  compute_to_compute(cmd);
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, stamps, hashed);
  sorter.record(cmd, cell_hashes.ref(), particle_ids.ref(), scratch.ref(), n);
  // No barrier here: record() ends with one that makes its results visible to compute shaders.
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, stamps, sorted);
  kernels.dispatch(cmd, Kernels::cell_ranges, n,
                   RangesPush{cell_hashes.address, cell_start.address, cell_end.address, n});
  compute_to_compute(cmd);
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, stamps, ranged);
  kernels.dispatch(
      cmd, Kernels::query_neighbors, n,
      QueryPush{particles.address, particle_ids.address, cell_start.address, cell_end.address,
                neighbor_counts.address, neighbor_checksums.address, radius, grid_size, n});
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, stamps, queried);
  memory_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                 VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  VkBufferCopy counts_copy{0, 0, n * 4ull}, checksums_copy{0, n * 4ull, n * 4ull};
  vkCmdCopyBuffer(cmd, neighbor_counts.buffer, readback.buffer, 1, &counts_copy);
  vkCmdCopyBuffer(cmd, neighbor_checksums.buffer, readback.buffer, 1, &checksums_copy);
  memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");

  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  check(vkCreateFence(device, &fence_info, nullptr, &fence), "vkCreateFence");
  const double ns_per_tick = ctx.device_info().timestamp_period_ns;
  std::vector<double> best_ms(stamp_count, 1e30);
  for (uint32_t frame = 0; frame < frames; ++frame) {
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    check(vkResetFences(device, 1, &fence), "vkResetFences");
    check(vkQueueSubmit(ctx.queue(), 1, &submit, fence), "vkQueueSubmit");
    check(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    uint64_t ticks[stamp_count];
    check(vkGetQueryPoolResults(device, stamps, 0, stamp_count, sizeof ticks, ticks, 8,
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    for (int s = hashed; s < stamp_count; ++s)
      best_ms[s] = std::min(best_ms[s], double(ticks[s] - ticks[s - 1]) * ns_per_tick * 1e-6);
    best_ms[begin] =
        std::min(best_ms[begin], double(ticks[queried] - ticks[begin]) * ns_per_tick * 1e-6);
  }
  std::printf(
      "GPU ms (best of %u frames): hash %.3f, sort %.3f, cell ranges %.3f, query %.3f, "
      "total %.3f\n",
      frames, best_ms[hashed], best_ms[sorted], best_ms[ranged], best_ms[queried], best_ms[begin]);

  const auto* gpu = static_cast<const uint32_t*>(readback.mapped);
  const Neighbors expected = brute_force(positions, n);
  uint64_t total = 0, mismatches = 0;
  for (uint32_t i = 0; i < n; ++i) {
    total += expected.counts[i];
    if (gpu[i] != expected.counts[i] || gpu[n + i] != expected.checksums[i]) {
      if (mismatches++ < 5)
        std::printf("particle %u: GPU %u neighbours (checksum %u), brute force %u (checksum %u)\n",
                    i, gpu[i], gpu[n + i], expected.counts[i], expected.checksums[i]);
    }
  }
  std::printf("%.1f neighbours per particle on average; %s brute force (%llu mismatches)\n",
              n ? double(total) / n : 0.0, mismatches ? "DIFFERS from" : "matches",
              (unsigned long long)mismatches);

  vkDestroyFence(device, fence, nullptr);
  vkDestroyCommandPool(device, pool, nullptr);
  vkDestroyQueryPool(device, stamps, nullptr);
  if (ctx.validation_messages()) {
    std::printf("%llu Vulkan validation messages (printed above)\n",
                (unsigned long long)ctx.validation_messages());
    return 1;
  }
  return mismatches ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t n = argc > 1 ? uint32_t(std::strtoul(argv[1], nullptr, 10)) : 20000;
  if (n == 0) {
    std::fprintf(stderr, "usage: neighbor_search [particle_count >= 1]\n");
    return 2;
  }
  try {
    return run(n);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "neighbor_search: %s\n", e.what());
    return 1;
  }
}
