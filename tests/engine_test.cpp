// The engine face (Sorter::record / record_indirect) on buffers the test owns, recorded into the
// test's own command buffers together with other work (fills, copies, the caller's barriers),
// with synchronization validation on. Every algorithm the library accepts is run; one that is
// "not available yet" is skipped with a note, so algorithms merged later are covered here too.
// Every buffer the GPU touches is first poisoned with 0xDEADBEEF, and each check compares the
// whole buffer (guards before and after the sorted range included) with the expected bytes.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <thread>

#include "test_support.hpp"
#include "vulkan/context_impl.hpp"

namespace gpusort::test {
namespace {

constexpr uint32_t poison = 0xDEADBEEF;
// Bytes of poison kept before and after each sorted range, to catch writes outside it. A
// multiple of 16 so that the range itself starts at an allowed offset.
constexpr VkDeviceSize guard_bytes = 256;

// The usage flags gpusort.hpp asks for, plus transfers for the test's own copies and fills.
constexpr VkBufferUsageFlags sort_usage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
    VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
    VK_BUFFER_USAGE_TRANSFER_DST_BIT;
constexpr VkBufferUsageFlags staging_usage =
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// A buffer created the way an engine creates its own: VkBuffer + VkDeviceMemory, nothing of
// gpusort's. Host-visible ones are mapped.
class CallerBuffer {
 public:
  CallerBuffer(VkDeviceSize bytes, VkBufferUsageFlags usage, bool host_visible) : bytes_(bytes) {
    VkDevice device = context().device();
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = bytes;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(device, &info, nullptr, &buffer_), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, buffer_, &req);
    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties(context().physical_device(), &memory);
    const VkMemoryPropertyFlags wanted =
        host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                     : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < memory.memoryTypeCount && type == UINT32_MAX; ++i)
      if ((req.memoryTypeBits & (1u << i)) &&
          (memory.memoryTypes[i].propertyFlags & wanted) == wanted)
        type = i;
    if (type == UINT32_MAX) throw Error("test: no memory type for a caller buffer");
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    if (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) alloc.pNext = &flags;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    check(vkAllocateMemory(device, &alloc, nullptr, &memory_), "vkAllocateMemory");
    check(vkBindBufferMemory(device, buffer_, memory_, 0), "vkBindBufferMemory");
    if (host_visible)
      check(vkMapMemory(device, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
  }
  ~CallerBuffer() {
    vkDestroyBuffer(context().device(), buffer_, nullptr);
    vkFreeMemory(context().device(), memory_, nullptr);
  }
  CallerBuffer(const CallerBuffer&) = delete;
  CallerBuffer& operator=(const CallerBuffer&) = delete;

  VkBuffer buffer() const { return buffer_; }
  VkDeviceSize bytes() const { return bytes_; }
  uint8_t* mapped() const { return static_cast<uint8_t*>(mapped_); }
  BufferRef at(VkDeviceSize offset) const { return {buffer_, offset}; }

 private:
  VkDeviceSize bytes_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
};

// The test's own command pool, command buffer and fence on the Context's queue.
class Commands {
 public:
  Commands() {
    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.queueFamilyIndex = context().queue_family_index();
    check(vkCreateCommandPool(context().device(), &pool, nullptr, &pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(context().device(), &alloc, &cmd_), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(context().device(), &fence, nullptr, &fence_), "vkCreateFence");
  }
  ~Commands() {
    vkDestroyFence(context().device(), fence_, nullptr);
    vkDestroyCommandPool(context().device(), pool_, nullptr);
  }
  VkCommandBuffer begin() {
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    check(vkBeginCommandBuffer(cmd_, &begin), "vkBeginCommandBuffer");
    return cmd_;
  }
  void end() { check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer"); }
  // Submits the recorded command buffer (again, when called again) and waits for it.
  void submit_and_wait() {
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd_;
    check(vkResetFences(context().device(), 1, &fence_), "vkResetFences");
    check(vkQueueSubmit(context().queue(), 1, &submit, fence_), "vkQueueSubmit");
    check(vkWaitForFences(context().device(), 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  }

 private:
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
};

void memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = src_access;
  b.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
}

// What the contract asks of the caller before a sort whose inputs were produced by transfers.
void transfers_to_sort(VkCommandBuffer cmd) {
  memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                 VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}
// ... and after it, before transfers read the result.
void sort_to_transfers(VkCommandBuffer cmd) {
  memory_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                 VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
}
void transfers_to_host(VkCommandBuffer cmd) {
  memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
}

void copy(VkCommandBuffer cmd, const CallerBuffer& src, VkDeviceSize src_offset,
          const CallerBuffer& dst, VkDeviceSize dst_offset, VkDeviceSize bytes) {
  if (bytes == 0) return;
  VkBufferCopy region{src_offset, dst_offset, bytes};
  vkCmdCopyBuffer(cmd, src.buffer(), dst.buffer(), 1, &region);
}

// Every Algorithm value the library names (its registry, through algorithm_names).
std::vector<Algorithm> every_algorithm() {
  std::vector<Algorithm> all;
  for (const std::string& name : algorithm_names()) all.push_back(parse_algorithm(name));
  return all;
}

// A Sorter, or nullopt (printed) when this algorithm is not in the library yet.
std::optional<Sorter> make_sorter(const SorterConfig& config) {
  try {
    return Sorter(context(), config);
  } catch (const Error& e) {
    if (std::string(e.what()).find("not available yet") == std::string::npos) throw;
    std::printf("(algorithm %s skipped here: %s)\n", to_string(config.algorithm), e.what());
    return std::nullopt;
  }
}

std::string hex(uint8_t byte) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", byte);
  return text;
}

std::string describe(const SorterConfig& c) {
  return std::string(to_string(c.algorithm)) + " " + to_string(c.key) +
         " values=" + std::to_string(c.value_bytes) + (c.descending ? " descending" : " ascending");
}

// One sort on caller buffers: keys (and values) at guard_bytes into their own buffers, poisoned
// around. Input comes from a host-visible staging buffer through vkCmdCopyBuffer; the result
// goes back to a host-visible readback buffer the same way, in the same command buffer.
class SortJob {
 public:
  // count: the GPU count for record_indirect (nullopt: record with n = max_n), a u32 or a u64
  // as config.count_bytes says (staged as a u64: little-endian, its low word is the u32).
  SortJob(const SorterConfig& config, uint64_t max_n, std::optional<uint64_t> count,
          Distribution distribution, uint64_t seed)
      : config_(config),
        max_n_(max_n),
        count_(count),
        key_size_(key_bytes(config.key)),
        keys_bytes_(2 * guard_bytes + (max_n * key_size_ + 15) / 16 * 16),
        values_bytes_(2 * guard_bytes + (max_n * config.value_bytes + 15) / 16 * 16),
        keys_(keys_bytes_, sort_usage, false),
        values_(config.value_bytes ? values_bytes_ : 16, sort_usage, false),
        count_buffer_(16, sort_usage, false),
        upload_(keys_bytes_ + values_bytes_ + 16, staging_usage, true),
        readback_(keys_bytes_ + values_bytes_, staging_usage, true),
        seed_(seed) {
    std::mt19937_64 rng(seed);
    key_bits_ = make_key_bits(config.key, max_n, distribution, rng);
    stage_input();
  }

  // Writes fresh input into the staging buffer (for the next frame of a reused command buffer).
  void restage(Distribution distribution, uint64_t seed, std::optional<uint64_t> count) {
    seed_ = seed;
    count_ = count;
    std::mt19937_64 rng(seed);
    key_bits_ = make_key_bits(config_.key, max_n_, distribution, rng);
    stage_input();
  }

  // Everything before the sort: poison, input copies, the count, the caller's barrier.
  void record_inputs(VkCommandBuffer cmd) const {
    vkCmdFillBuffer(cmd, keys_.buffer(), 0, VK_WHOLE_SIZE, poison);
    vkCmdFillBuffer(cmd, values_.buffer(), 0, VK_WHOLE_SIZE, poison);
    memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    copy(cmd, upload_, 0, keys_, guard_bytes, max_n_ * key_size_);
    copy(cmd, upload_, keys_bytes_, values_, guard_bytes, max_n_ * config_.value_bytes);
    // The count comes from the staging buffer too, so a re-submitted command buffer sees the
    // count of the frame.
    copy(cmd, upload_, keys_bytes_ + values_bytes_, count_buffer_, 0, 8);
  }

  void record_sort(VkCommandBuffer cmd, const Sorter& sorter, BufferRef scratch) {
    stable_ = sorter.stable();
    BufferRef values = config_.value_bytes ? values_.at(guard_bytes) : BufferRef{};
    if (count_)
      sorter.record_indirect(cmd, keys_.at(guard_bytes), values, scratch, count_buffer_.at(0),
                             max_n_);
    else
      sorter.record(cmd, keys_.at(guard_bytes), values, scratch, max_n_);
  }

  // Everything after the sort: copies of the whole keys and values buffers to the host.
  void record_outputs(VkCommandBuffer cmd) const {
    copy(cmd, keys_, 0, readback_, 0, keys_bytes_);
    if (config_.value_bytes) copy(cmd, values_, 0, readback_, keys_bytes_, values_bytes_);
  }

  // Compares every byte of the keys and values buffers with what they must hold.
  ::testing::AssertionResult check() const {
    const uint64_t n = count_ ? std::min<uint64_t>(*count_, max_n_) : max_n_;
    std::vector<uint64_t> order(max_n_);
    std::iota(order.begin(), order.end(), 0);
    auto radix = [&](uint64_t i) {
      return radix_order(config_.key, key_bits_[i], config_.descending);
    };
    std::stable_sort(order.begin(), order.begin() + n,
                     [&](uint64_t a, uint64_t b) { return radix(a) < radix(b); });
    auto expect_buffer = [&](uint64_t buffer_bytes, uint32_t element_bytes, auto element) {
      std::vector<uint8_t> bytes(buffer_bytes);
      for (size_t i = 0; i < bytes.size(); i += 4) std::memcpy(&bytes[i], &poison, 4);
      for (uint64_t i = 0; i < max_n_; ++i) {
        uint64_t v = element(order[i]);
        std::memcpy(&bytes[guard_bytes + i * element_bytes], &v, element_bytes);
      }
      return bytes;
    };
    auto compare = [&](const char* what, const uint8_t* got, const std::vector<uint8_t>& want,
                       uint32_t element_bytes) -> ::testing::AssertionResult {
      for (size_t i = 0; i < want.size(); ++i)
        if (got[i] != want[i]) {
          const int64_t element = (int64_t(i) - int64_t(guard_bytes)) / int64_t(element_bytes);
          return ::testing::AssertionFailure()
                 << describe(config_) << " max_n=" << max_n_
                 << " count=" << (count_ ? std::to_string(*count_) : "host") << " seed=" << seed_
                 << ": " << what << " byte " << i << " (element " << element << ") is "
                 << hex(got[i]) << ", expected " << hex(want[i]);
        }
      return ::testing::AssertionSuccess();
    };
    auto keys = expect_buffer(keys_bytes_, key_size_, [&](uint64_t i) { return key_bits_[i]; });
    if (auto r = compare("keys", readback_.mapped(), keys, key_size_); !r) return r;
    if (config_.value_bytes) {
      auto values = expect_buffer(values_bytes_, config_.value_bytes,
                                  [&](uint64_t i) { return value_of(i); });
      const uint8_t* got = readback_.mapped() + keys_bytes_;
      std::vector<uint8_t> got_ordered;
      if (!stable_) {
        // Within each run of equal keys only the multiset of values is defined: compare both
        // sides with every run's values in byte order.
        got_ordered.assign(got, got + values_bytes_);
        // Each value (4 or 8 bytes) is compared as an integer: any order does, the same for both.
        const uint32_t width = config_.value_bytes;
        auto sort_run = [&](std::vector<uint8_t>& bytes, uint64_t begin, uint64_t end) {
          std::vector<uint64_t> run(end - begin, 0);
          for (uint64_t i = begin; i < end; ++i)
            std::memcpy(&run[i - begin], &bytes[guard_bytes + i * width], width);
          std::sort(run.begin(), run.end());
          for (uint64_t i = begin; i < end; ++i)
            std::memcpy(&bytes[guard_bytes + i * width], &run[i - begin], width);
        };
        for (uint64_t begin = 0, end; begin < n; begin = end) {
          for (end = begin + 1; end < n && radix(order[end]) == radix(order[begin]);) ++end;
          sort_run(values, begin, end);
          sort_run(got_ordered, begin, end);
        }
        got = got_ordered.data();
      }
      if (auto r = compare("values", got, values, config_.value_bytes); !r) return r;
    }
    return ::testing::AssertionSuccess();
  }

 private:
  // Input positions with scrambled high bits: a lost, moved or unstably ordered value shows.
  uint64_t value_of(uint64_t i) const { return i ^ 0xA5A5A5A500000000ull; }

  void stage_input() {
    uint8_t* up = upload_.mapped();
    for (uint64_t i = 0; i < max_n_; ++i) {
      std::memcpy(up + i * key_size_, &key_bits_[i], key_size_);
      uint64_t v = value_of(i);
      std::memcpy(up + keys_bytes_ + i * config_.value_bytes, &v, config_.value_bytes);
    }
    const uint64_t count = count_.value_or(0);
    std::memcpy(up + keys_bytes_ + values_bytes_, &count, 8);
  }

  SorterConfig config_;
  uint64_t max_n_;
  std::optional<uint64_t> count_;
  bool stable_ = true;  // an unstable sort (bitonic) may order values of equal keys freely
  uint32_t key_size_;
  VkDeviceSize keys_bytes_, values_bytes_;
  CallerBuffer keys_, values_, count_buffer_, upload_, readback_;
  std::vector<uint64_t> key_bits_;
  uint64_t seed_;
};

// Poisons scratch: sorts must not depend on its contents.
void poison_scratch(VkCommandBuffer cmd, const CallerBuffer& scratch) {
  vkCmdFillBuffer(cmd, scratch.buffer(), 0, VK_WHOLE_SIZE, poison);
}

// Records jobs[i] sorted by sorters[i] into one command buffer with the other work around them,
// all sharing one scratch (the contract's closing barrier orders sorts that share it), submits
// once and checks every job.
void run_in_one_submit(const std::vector<const Sorter*>& sorters, std::vector<SortJob*> jobs,
                       uint64_t max_n) {
  uint64_t scratch_bytes = 16;
  for (auto* s : sorters) scratch_bytes = std::max(scratch_bytes, s->scratch_bytes(max_n));
  CallerBuffer scratch(guard_bytes + scratch_bytes, sort_usage, false);
  const uint64_t messages = context().validation_messages();
  Commands commands;
  VkCommandBuffer cmd = commands.begin();
  poison_scratch(cmd, scratch);
  for (auto* job : jobs) job->record_inputs(cmd);
  transfers_to_sort(cmd);
  for (size_t i = 0; i < jobs.size(); ++i)
    jobs[i]->record_sort(cmd, *sorters[i], scratch.at(guard_bytes));
  sort_to_transfers(cmd);
  for (auto* job : jobs) job->record_outputs(cmd);
  transfers_to_host(cmd);
  commands.end();
  commands.submit_and_wait();
  for (auto* job : jobs) EXPECT_TRUE(job->check());
  EXPECT_EQ(context().validation_messages(), messages)
      << "Vulkan validation messages (printed above)";
}

// A few configurations that between them reach every key kind, value width and direction.
std::vector<SorterConfig> engine_configs(Algorithm algorithm) {
  return {{KeyType::u32, 0, algorithm, false},
          {KeyType::f32, 4, algorithm, true},
          {KeyType::i64, 8, algorithm, false}};
}

TEST(Engine, RecordSortsCallerBuffersInsideOneSubmitWithOtherWork) {
  for (Algorithm algorithm : every_algorithm()) {
    for (const SorterConfig& config : engine_configs(algorithm)) {
      auto sorter = make_sorter(config);
      if (!sorter) break;
      SCOPED_TRACE(describe(config));
      uint64_t seed = fresh_seed();
      const uint64_t n = std::min<uint64_t>(5000, sorter->max_elements());
      SortJob job(
          config, n, std::nullopt,
          config.key == KeyType::f32 ? Distribution::special_floats : Distribution::few_unique,
          seed);
      run_in_one_submit({&*sorter}, {&job}, n);
    }
  }
}

// One record_indirect sort per count (uniform keys, fresh seeds) of one sorter, in one submit.
void run_counts_in_one_submit(const Sorter& sorter, uint64_t max_n,
                              std::initializer_list<uint64_t> counts) {
  std::vector<std::unique_ptr<SortJob>> jobs;
  for (uint64_t count : counts)
    jobs.push_back(std::make_unique<SortJob>(sorter.config(), max_n, count, Distribution::uniform,
                                             fresh_seed()));
  std::vector<const Sorter*> sorters(jobs.size(), &sorter);
  std::vector<SortJob*> raw;
  for (auto& j : jobs) raw.push_back(j.get());
  run_in_one_submit(sorters, raw, max_n);
}

TEST(Engine, RecordIndirectReadsTheCountOnTheGpuAndClampsIt) {
  for (Algorithm algorithm : every_algorithm()) {
    for (const SorterConfig& config : engine_configs(algorithm)) {
      auto sorter = make_sorter(config);
      if (!sorter) break;
      const uint64_t max_n = std::min<uint64_t>(3000, sorter->max_elements());
      SCOPED_TRACE(describe(config));
      // 0 and 1: nothing to sort; a middle value; exactly max_n; beyond max_n (clamped).
      run_counts_in_one_submit(*sorter, max_n,
                               {0, 1, 2, max_n / 3, max_n, max_n + 1000, uint64_t(~0u)});
    }
  }
}

// SorterConfig::count_bytes = 8: the count is a u64, clamped to max_n as a whole (2^32 + 2 is not
// 2: its high word counts).
TEST(Engine, RecordIndirectReadsA64BitCount) {
  for (Algorithm algorithm : every_algorithm()) {
    for (SorterConfig config : engine_configs(algorithm)) {
      config.count_bytes = 8;
      // From construction on (it creates the pipelines, count_narrow's among them).
      const uint64_t messages = context().validation_messages();
      auto sorter = make_sorter(config);
      if (!sorter) break;
      const uint64_t max_n = std::min<uint64_t>(3000, sorter->max_elements());
      SCOPED_TRACE(describe(config) + " count_bytes=8");
      run_counts_in_one_submit(*sorter, max_n,
                               {0, 2, max_n / 3, max_n, max_n + 1000, (uint64_t(1) << 32) + 2,
                                (uint64_t(1) << 40) + max_n / 2, ~uint64_t(0)});
      EXPECT_EQ(context().validation_messages(), messages)
          << "Vulkan validation messages (printed above)";
    }
  }
}

TEST(Engine, RecordIndirectHandlesMaxNOfZeroAndOne) {
  for (Algorithm algorithm : every_algorithm()) {
    auto sorter = make_sorter({KeyType::u32, 4, algorithm});
    if (!sorter) continue;
    for (uint64_t max_n : {0u, 1u}) {
      SortJob job(sorter->config(), max_n, 1u, Distribution::uniform, fresh_seed());
      run_in_one_submit({&*sorter}, {&job}, max_n);
    }
  }
}

TEST(Engine, SeveralSortersOfDifferentKeyTypesShareOneCommandBuffer) {
  for (Algorithm algorithm : every_algorithm()) {
    std::vector<std::optional<Sorter>> sorters;
    for (auto config :
         {SorterConfig{KeyType::u32, 4, algorithm}, SorterConfig{KeyType::f64, 0, algorithm, true},
          SorterConfig{KeyType::i32, 8, algorithm}, SorterConfig{KeyType::u64, 4, algorithm}}) {
      sorters.push_back(make_sorter(config));
      if (!sorters.back()) break;
    }
    if (!sorters.back()) continue;
    SCOPED_TRACE(to_string(algorithm));
    uint64_t max_n = 2500;
    for (auto& s : sorters) max_n = std::min(max_n, s->max_elements());
    std::vector<std::unique_ptr<SortJob>> jobs;
    std::vector<const Sorter*> raw_sorters;
    std::vector<SortJob*> raw_jobs;
    for (size_t i = 0; i < sorters.size(); ++i) {
      // Alternate record and record_indirect between the sorters.
      std::optional<uint32_t> count;
      if (i % 2) count = uint32_t(max_n - max_n / 25 * i);
      jobs.push_back(std::make_unique<SortJob>(sorters[i]->config(), max_n, count,
                                               Distribution::uniform, fresh_seed()));
      raw_sorters.push_back(&*sorters[i]);
      raw_jobs.push_back(jobs.back().get());
    }
    run_in_one_submit(raw_sorters, raw_jobs, max_n);
  }
}

// One command buffer recorded once and submitted every "frame" with new input and a new count
// staged by the host: the usual shape of an engine that sorts particles each frame.
TEST(Engine, OneRecordedCommandBufferReplaysAcrossFrames) {
  for (Algorithm algorithm : every_algorithm()) {
    auto sorter = make_sorter({KeyType::u32, 4, algorithm});
    if (!sorter) continue;
    SCOPED_TRACE(to_string(algorithm));
    const uint64_t max_n = std::min<uint64_t>(4000, sorter->max_elements());
    SortJob job(sorter->config(), max_n, 10u, Distribution::uniform, fresh_seed());
    CallerBuffer scratch(sorter->scratch_bytes(max_n), sort_usage, false);
    const uint64_t messages = context().validation_messages();
    Commands commands;
    VkCommandBuffer cmd = commands.begin();
    poison_scratch(cmd, scratch);
    job.record_inputs(cmd);
    transfers_to_sort(cmd);
    job.record_sort(cmd, *sorter, scratch.at(0));
    sort_to_transfers(cmd);
    job.record_outputs(cmd);
    transfers_to_host(cmd);
    commands.end();
    for (uint32_t count : {10u, uint32_t(max_n), 0u, uint32_t(max_n - 1), 77u}) {
      job.restage(Distribution::low_entropy, fresh_seed(), count);
      commands.submit_and_wait();
      EXPECT_TRUE(job.check()) << "frame with count " << count;
    }
    EXPECT_EQ(context().validation_messages(), messages);
  }
}

// Pipelines are created when the Sorter is, for the radix sorts whose plans do not depend on n:
// their record() then creates none. Every algorithm reuses its pipelines across frames: once
// a frame of given sizes has been recorded, recording it again creates none.
TEST(Engine, RecordReusesPipelinesAcrossFrames) {
  for (Algorithm algorithm : every_algorithm()) {
    auto sorter = make_sorter({KeyType::f32, 8, algorithm, true});
    if (!sorter) continue;
    SCOPED_TRACE(to_string(algorithm));
    const bool created_at_construction =
        algorithm == Algorithm::radix_reduce_scan || algorithm == Algorithm::onesweep;
    const uint64_t max_n = std::min<uint64_t>(50000, sorter->max_elements());
    CallerBuffer keys(max_n * 4, sort_usage, false), values(max_n * 8, sort_usage, false),
        scratch(sorter->scratch_bytes(max_n), sort_usage, false), count(16, sort_usage, false);
    size_t pipelines = context().impl().pipeline_count();
    for (int frame = 0; frame < 3; ++frame) {
      Commands commands;
      VkCommandBuffer cmd = commands.begin();
      for (uint64_t n : {uint64_t(2), uint64_t(100), uint64_t(4096), max_n})
        if (n <= max_n) sorter->record(cmd, keys.at(0), values.at(0), scratch.at(0), n);
      sorter->record_indirect(cmd, keys.at(0), values.at(0), scratch.at(0), count.at(0), max_n);
      commands.end();  // never submitted: recording alone is what is measured
      if (frame == 0 && !created_at_construction) pipelines = context().impl().pipeline_count();
      EXPECT_EQ(context().impl().pipeline_count(), pipelines) << "frame " << frame;
    }
  }
}

// One Sorter recorded from several threads at once, each into its own command buffer (the
// caller's part of the rule: command pools are not shared between threads), then submitted.
TEST(Engine, OneSorterRecordsFromSeveralThreads) {
  for (Algorithm algorithm : every_algorithm()) {
    auto sorter = make_sorter({KeyType::u64, 4, algorithm});
    if (!sorter) continue;
    SCOPED_TRACE(to_string(algorithm));
    const uint64_t max_n = std::min<uint64_t>(3000, sorter->max_elements());
    const size_t thread_count = 4;
    std::vector<std::unique_ptr<SortJob>> jobs;
    std::vector<std::unique_ptr<CallerBuffer>> scratches;
    std::vector<std::unique_ptr<Commands>> commands;
    for (size_t t = 0; t < thread_count; ++t) {
      std::optional<uint32_t> count;
      if (t % 2) count = uint32_t(max_n / (t + 1));
      jobs.push_back(std::make_unique<SortJob>(sorter->config(), max_n, count,
                                               Distribution::few_unique, fresh_seed()));
      scratches.push_back(
          std::make_unique<CallerBuffer>(sorter->scratch_bytes(max_n), sort_usage, false));
      commands.push_back(std::make_unique<Commands>());
    }
    const uint64_t messages = context().validation_messages();
    std::vector<std::thread> threads;
    for (size_t t = 0; t < thread_count; ++t)
      threads.emplace_back([&, t] {
        VkCommandBuffer cmd = commands[t]->begin();
        poison_scratch(cmd, *scratches[t]);
        jobs[t]->record_inputs(cmd);
        transfers_to_sort(cmd);
        jobs[t]->record_sort(cmd, *sorter, scratches[t]->at(0));
        sort_to_transfers(cmd);
        jobs[t]->record_outputs(cmd);
        transfers_to_host(cmd);
        commands[t]->end();
      });
    for (auto& thread : threads) thread.join();
    for (size_t t = 0; t < thread_count; ++t) {
      commands[t]->submit_and_wait();
      EXPECT_TRUE(jobs[t]->check());
    }
    EXPECT_EQ(context().validation_messages(), messages);
  }
}

TEST(Engine, RejectsInvalidBuffersWithClearErrors) {
  Sorter keys_only(context(), {KeyType::u32, 0, Algorithm::radix_reduce_scan});
  Sorter pairs(context(), {KeyType::u64, 4, Algorithm::radix_reduce_scan});
  const uint64_t n = 1000;
  CallerBuffer keys(n * 8 + 64, sort_usage, false), values(n * 4 + 64, sort_usage, false),
      scratch(pairs.scratch_bytes(n) + 64, sort_usage, false), count(16, sort_usage, false);
  Commands commands;
  VkCommandBuffer cmd = commands.begin();
  // The call must throw gpusort::Error with `expected` in its message.
  auto expect_error = [](auto&& call, const std::string& expected) {
    std::string message = "(no error)";
    try {
      call();
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_NE(message.find(expected), std::string::npos)
        << "expected '" << expected << "', got '" << message << "'";
  };
  expect_error([&] { keys_only.record(cmd, {}, {}, scratch.at(0), n); },
               "keys.buffer is VK_NULL_HANDLE");
  expect_error([&] { keys_only.record(cmd, keys.at(8), {}, scratch.at(0), n); },
               "keys.offset 8 is not a multiple of 16");
  expect_error([&] { keys_only.record(cmd, keys.at(0), {}, {}, n); },
               "scratch.buffer is VK_NULL_HANDLE");
  expect_error([&] { keys_only.record(cmd, keys.at(0), values.at(0), scratch.at(0), n); },
               "values given, but the Sorter was configured with value_bytes = 0");
  expect_error([&] { pairs.record(cmd, keys.at(0), {}, scratch.at(0), n); },
               "values.buffer is VK_NULL_HANDLE, but the Sorter was configured with "
               "value_bytes = 4");
  expect_error([&] { pairs.record(cmd, keys.at(0), values.at(0), keys.at(16), n); },
               "keys and scratch overlap");
  expect_error([&] { pairs.record_indirect(cmd, keys.at(0), values.at(0), scratch.at(0), {}, n); },
               "count.buffer is VK_NULL_HANDLE");
  expect_error(
      [&] { pairs.record_indirect(cmd, keys.at(0), values.at(0), scratch.at(0), count.at(2), n); },
      "count.offset 2 is not a multiple of 4");
  expect_error(
      [&] { pairs.record_indirect(cmd, keys.at(0), values.at(0), scratch.at(0), values.at(0), n); },
      "values and count overlap");
  expect_error([&] { pairs.record(VK_NULL_HANDLE, keys.at(0), values.at(0), scratch.at(0), n); },
               "command buffer is VK_NULL_HANDLE");
  expect_error(
      [&] { pairs.record(cmd, keys.at(0), values.at(0), scratch.at(0), max_elements + 1); },
      "gpusort sorts at most");
  expect_error(
      [] {
        Sorter(context(), {KeyType::u32, 2});
      },
      "values must be 0, 4 or 8 bytes wide, not 2");
  expect_error([] { Sorter(context(), {.key = KeyType::u32, .count_bytes = 2}); },
               "count_bytes is 2: record_indirect's count is a u32 (4) or a u64 (8)");
  Sorter wide(context(),
              {.key = KeyType::u32, .algorithm = Algorithm::radix_reduce_scan, .count_bytes = 8});
  expect_error([&] { wide.record_indirect(cmd, keys.at(0), {}, scratch.at(0), count.at(4), n); },
               "count.offset 4 is not a multiple of 8");
  Sorter moved = std::move(pairs);
  expect_error([&] { pairs.scratch_bytes(n); }, "moved from");
  commands.end();
}

}  // namespace
}  // namespace gpusort::test
