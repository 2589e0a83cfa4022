// The benchmark's own submissions on a Context's queue, for Protocol::spin_up and the timed runs
// after it: command buffers submitted without waiting, so that the GPU runs one spin-up batch
// while the host records and submits the next, and the timed runs are queued behind the last
// batch with no idle gap between (docs/design/benchmark-protocol.md). Timestamps: at
// BOTTOM_OF_PIPE, i.e. when everything before them on the queue has finished, so a run's time is
// its sort alone even when the GPU was still busy with earlier work as it was submitted.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "bench_common.hpp"
#include "vulkan/context_impl.hpp"
#include "vulkan/recorder.hpp"

namespace gpusort::bench {

class GpuBatches {
 public:
  // Up to max_runs timed runs per record_runs().
  GpuBatches(Context::Impl& impl, uint32_t max_runs) : impl_(impl), max_runs_(max_runs) {
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(impl.physical, &families, nullptr);
    std::vector<VkQueueFamilyProperties> props(families);
    vkGetPhysicalDeviceQueueFamilyProperties(impl.physical, &families, props.data());
    const uint32_t bits = props.at(impl.family).timestampValidBits;
    mask_ = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = impl.family;
    check(vkCreateCommandPool(impl.device, &pool, nullptr, &pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = slots;
    check(vkAllocateCommandBuffers(impl.device, &alloc, commands_), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    fence.flags = VK_FENCE_CREATE_SIGNALED_BIT;
    for (VkFence& f : fences_)
      check(vkCreateFence(impl.device, &fence, nullptr, &f), "vkCreateFence");
    VkQueryPoolCreateInfo query{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    query.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query.queryCount = 2 * batch_slots + 2 * max_runs;
    check(vkCreateQueryPool(impl.device, &query, nullptr, &queries_), "vkCreateQueryPool");
  }
  ~GpuBatches() {
    vkWaitForFences(impl_.device, slots, fences_, VK_TRUE, UINT64_MAX);
    vkDestroyQueryPool(impl_.device, queries_, nullptr);
    for (VkFence f : fences_) vkDestroyFence(impl_.device, f, nullptr);
    vkDestroyCommandPool(impl_.device, pool_, nullptr);
  }
  GpuBatches(const GpuBatches&) = delete;
  GpuBatches& operator=(const GpuBatches&) = delete;

  // Protocol::spin_up's begin: `repeats` x record_one between two timestamps, submitted.
  void begin_batch(uint32_t repeats, const std::function<void(VkCommandBuffer)>& record_one) {
    if (queued_ == batch_slots) throw std::logic_error("GpuBatches: more than two batches queued");
    const uint32_t slot = (oldest_ + queued_) % batch_slots;
    record(slot, [&](VkCommandBuffer cmd) {
      vkCmdResetQueryPool(cmd, queries_, 2 * slot, 2);
      vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 2 * slot);
      for (uint32_t r = 0; r < repeats; ++r) record_one(cmd);
      vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 2 * slot + 1);
    });
    submit(slot);
    ++queued_;
  }
  // Protocol::spin_up's finish: waits for the oldest queued batch, returns its GPU ms.
  double finish_batch() {
    if (queued_ == 0) throw std::logic_error("GpuBatches: no batch queued");
    const uint32_t slot = oldest_;
    wait(slot);
    oldest_ = (oldest_ + 1) % batch_slots, --queued_;
    return elapsed_ms(2 * slot)[0];
  }
  uint32_t batches_queued() const { return queued_; }

  // The timed runs: one command buffer, run r (0 <= r < count) recorded by record_run(cmd, r)
  // between two timestamps, after prepare(cmd, r) when given (untimed: e.g. restoring the input;
  // it ends with the barrier the run needs). Recorded ahead (before the spin-up), submitted by
  // submit_runs().
  void record_runs(uint32_t count, const std::function<void(VkCommandBuffer, uint32_t)>& record_run,
                   const std::function<void(VkCommandBuffer, uint32_t)>& prepare = {}) {
    if (count > max_runs_)
      throw std::logic_error("GpuBatches: more runs than the query pool holds");
    runs_ = count;
    record(runs_slot, [&](VkCommandBuffer cmd) {
      vkCmdResetQueryPool(cmd, queries_, 2 * batch_slots, 2 * count);
      for (uint32_t r = 0; r < count; ++r) {
        if (prepare) prepare(cmd, r);
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_,
                            2 * batch_slots + 2 * r);
        record_run(cmd, r);
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_,
                            2 * batch_slots + 2 * r + 1);
      }
    });
  }
  // Submits the recorded runs (again, if they ran before: then the inputs must be restored,
  // e.g. by record_runs' prepare).
  void submit_runs() {
    wait(runs_slot);
    submit(runs_slot);
  }
  // Waits for the runs; their GPU ms, in order.
  std::vector<double> finish_runs() {
    wait(runs_slot);
    return elapsed_ms(2 * batch_slots, runs_);
  }
  // One batch of a row's timed runs, as the protocol has them: the runs recorded, the spin-up
  // (record_spare: the row's own sort of its spare input), the runs queued right behind the
  // spin-up's last batch and the SM clock read while they are queued; their GPU ms, in order.
  std::vector<double> spin_up_and_time(
      const Protocol& p, Row& row, const SmClock* clock, uint32_t count,
      const std::function<void(VkCommandBuffer, uint32_t)>& record_run,
      const std::function<void(VkCommandBuffer)>& record_spare) {
    record_runs(count, record_run);
    row.spin = p.spin_up([&](uint32_t repeats) { begin_batch(repeats, record_spare); },
                         [&] { return finish_batch(); });
    submit_runs();
    read_clock(row, clock);
    while (batches_queued() > 0) finish_batch();
    return finish_runs();
  }

 private:
  static constexpr uint32_t batch_slots = 2, runs_slot = batch_slots, slots = batch_slots + 1;

  void record(uint32_t slot, const std::function<void(VkCommandBuffer)>& body) {
    wait(slot);  // a finished command buffer may be recorded again
    VkCommandBuffer cmd = commands_[slot];
    check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    // The runs may be submitted again (the demo times one recording per run).
    begin.flags = slot == runs_slot ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    // The inputs' uploads (earlier submissions) visible to the sorts.
    Recorder::full_barrier(cmd);
    body(cmd);
    check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  }
  void submit(uint32_t slot) {
    check(vkResetFences(impl_.device, 1, &fences_[slot]), "vkResetFences");
    impl_.queue_submit(commands_[slot], fences_[slot]);
  }
  void wait(uint32_t slot) {
    check(vkWaitForFences(impl_.device, 1, &fences_[slot], VK_TRUE, UINT64_MAX), "vkWaitForFences");
  }
  // Milliseconds between the timestamp pairs (first + 2i, first + 2i + 1), i < pairs.
  std::vector<double> elapsed_ms(uint32_t first, uint32_t pairs = 1) {
    std::vector<uint64_t> ticks(2 * pairs);
    if (pairs == 0) return {};
    check(vkGetQueryPoolResults(impl_.device, queries_, first, 2 * pairs, ticks.size() * 8,
                                ticks.data(), 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    std::vector<double> ms(pairs);
    for (uint32_t i = 0; i < pairs; ++i)
      ms[i] =
          double((ticks[2 * i + 1] - ticks[2 * i]) & mask_) * impl_.info.timestamp_period_ns * 1e-6;
    return ms;
  }

  Context::Impl& impl_;
  uint32_t max_runs_;
  uint64_t mask_ = ~uint64_t(0);
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_[slots] = {};
  VkFence fences_[slots] = {};
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t oldest_ = 0, queued_ = 0, runs_ = 0;
};

// The Vulkan device's UUID (VkPhysicalDeviceIDProperties), for SmClock.
inline std::vector<unsigned char> device_uuid(const Context::Impl& impl) {
  VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &id;
  vkGetPhysicalDeviceProperties2(impl.physical, &props);
  return std::vector<unsigned char>(id.deviceUUID, id.deviceUUID + VK_UUID_SIZE);
}

// The SM clock of the Context's device through NVML (mhz() -1 where NVML or the GPU is absent);
// the only GPU NVML sees stands in only where the Vulkan device is NVIDIA's.
inline std::unique_ptr<SmClock> sm_clock_of(const Context::Impl& impl) {
  const std::vector<unsigned char> uuid = device_uuid(impl);
  return std::make_unique<SmClock>(uuid.data(), impl.info.vendor_id == 0x10DE);
}

}  // namespace gpusort::bench
