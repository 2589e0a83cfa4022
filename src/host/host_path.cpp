// The convenient face between host memory and the device (see host_path.hpp).
#include "dispatch/dispatch.hpp"
#include "host/host_path.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "host/byte_count.hpp"
#include "host/tuning.hpp"
#include "primitives/constants.h"
#include "primitives/push.h"

namespace gpusort {

void streaming_copy(void* destination, const void* source, uint64_t bytes) {
#if defined(__SSE2__)
  constexpr uint64_t streaming_min_bytes = 64 * 1024;  // smaller copies stay in the cache
  if (bytes >= streaming_min_bytes) {
    auto* to = static_cast<char*>(destination);
    const auto* from = static_cast<const char*>(source);
    const uint64_t head = (16 - reinterpret_cast<uintptr_t>(to) % 16) % 16;
    std::memcpy(to, from, head);
    to += head, from += head, bytes -= head;
    const uint64_t body = bytes & ~uint64_t(63);
    for (uint64_t i = 0; i < body; i += 64) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i + 32));
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(to + i), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(to + i + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(to + i + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(to + i + 48), d);
    }
    std::memcpy(to + body, from + body, bytes - body);
    _mm_sfence();  // the streaming stores are ordered before whatever this thread does next
    return;
  }
#endif
  std::memcpy(destination, source, bytes);
}

HostReader memory_reader(const void* array) {
  const auto* bytes = static_cast<const char*>(array);
  return [bytes](uint64_t offset, void* to, uint64_t size) {
    streaming_copy(to, bytes + offset, size);
  };
}
HostWriter memory_writer(void* array) {
  auto* bytes = static_cast<char*>(array);
  return [bytes](uint64_t offset, const void* from, uint64_t size) {
    streaming_copy(bytes + offset, from, size);
  };
}

// ---- HostThreads ----

HostThreads::HostThreads(unsigned count) {
  for (unsigned i = 1; i < count; ++i) workers_.emplace_back([this] { work(); });
}

HostThreads::~HostThreads() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void HostThreads::parallel_for(uint64_t bytes, uint64_t min_piece,
                               const std::function<void(uint64_t, uint64_t)>& f) {
  if (bytes == 0) return;
  const uint64_t piece = align_up(std::max(min_piece, (bytes + size() - 1) / size()), 4096);
  if (piece >= bytes || workers_.empty()) return f(0, bytes);
  std::lock_guard job(job_mutex_);
  {
    std::lock_guard lock(mutex_);
    job_ = &f;
    job_bytes_ = bytes;
    piece_ = piece;
    next_ = 0;
    pieces_left_ = (bytes + piece - 1) / piece;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  run_pieces();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return pieces_left_ == 0; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

void HostThreads::run_pieces() {
  for (;;) {
    const std::function<void(uint64_t, uint64_t)>* f;
    uint64_t begin, end;
    {
      std::lock_guard lock(mutex_);
      if (!job_ || next_ >= job_bytes_) return;
      f = job_;
      begin = next_;
      end = std::min(begin + piece_, job_bytes_);
      next_ = end;
    }
    try {
      (*f)(begin, end);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    if (--pieces_left_ == 0) done_.notify_all();
  }
}

void HostThreads::work() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    run_pieces();
  }
}

// ---- Resources: what one sort at a time uses, kept between calls ----

namespace {

// A device buffer's size as the host path allocates it: rounded up (rounded_allocation), but not
// past the largest allocation where the bytes fit one (a sparse buffer is only for what must be),
// nor past the largest buffer.
uint64_t allocated_bytes(const DeviceInfo& info, uint64_t bytes) {
  const uint64_t rounded = rounded_allocation(bytes, info.max_allocation_bytes);
  return rounded > info.max_buffer_bytes && bytes <= info.max_buffer_bytes ? bytes : rounded;
}

constexpr uint32_t sort_index = HostPath::slot_count;  // the sort's own command buffer and fence
constexpr uint64_t piece_alignment = 256;              // of pieces inside a slot
constexpr uint64_t parallel_copy_bytes = uint64_t(1) << 20;  // smaller pieces: one thread

void memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = src;
  b.dstAccessMask = dst;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
}

// The copy engine per device family: HostTuning (tuning.cpp), each row with the measurement that
// chose it.
HostPath::CopyEngine default_copy_engine(const DeviceInfo& device) {
  return host_tuning(device).shader_copies ? HostPath::CopyEngine::shader
                                               : HostPath::CopyEngine::dma;
}

double ms_between(std::chrono::steady_clock::time_point a,
                  std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// One piece of a transfer: `bytes` of stream `stream` (0 keys, 1 values) from byte `offset`,
// at `slot_offset` in its batch's staging slot.
struct Piece {
  uint32_t stream;
  uint64_t offset, bytes, slot_offset;
};

}  // namespace

struct HostPath::Resources {
  Context::Impl& ctx;
  VkCommandPool pool = VK_NULL_HANDLE;
  std::array<VkCommandBuffer, slot_count + 1> cmd{};
  std::array<VkFence, slot_count + 1> fence{};
  std::array<bool, slot_count + 1> pending{};
  VkQueryPool timestamps = VK_NULL_HANDLE;
  std::vector<DeviceBuffer> slots;
  uint64_t slot_bytes = 0;
  DeviceBuffer keys, values, scratch;
  DeviceBuffer offsets, indices;  // HostPath::run's other roles

  explicit Resources(Context::Impl& c) : ctx(c) {
    VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    info.queueFamilyIndex = ctx.family;
    check(vkCreateCommandPool(ctx.device, &info, nullptr, &pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = uint32_t(cmd.size());
    check(vkAllocateCommandBuffers(ctx.device, &alloc, cmd.data()), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    for (auto& f : fence)
      check(vkCreateFence(ctx.device, &fence_info, nullptr, &f), "vkCreateFence");
    VkQueryPoolCreateInfo query{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    query.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query.queryCount = 2;
    check(vkCreateQueryPool(ctx.device, &query, nullptr, &timestamps), "vkCreateQueryPool");
  }

  ~Resources() {
    wait_all();
    for (auto f : fence)
      if (f) vkDestroyFence(ctx.device, f, nullptr);
    if (timestamps) vkDestroyQueryPool(ctx.device, timestamps, nullptr);
    if (pool) vkDestroyCommandPool(ctx.device, pool, nullptr);
  }

  void wait(uint32_t i) {
    if (!pending[i]) return;
    check(vkWaitForFences(ctx.device, 1, &fence[i], VK_TRUE, UINT64_MAX), "vkWaitForFences");
    pending[i] = false;
  }
  // Never throws: used on the way out of a failed sort, so that nothing is in flight.
  void wait_all() noexcept {
    for (uint32_t i = 0; i < fence.size(); ++i)
      if (pending[i]) vkWaitForFences(ctx.device, 1, &fence[i], VK_TRUE, UINT64_MAX);
    pending.fill(false);
  }
  VkCommandBuffer begin(uint32_t i) {
    wait(i);
    check(vkResetFences(ctx.device, 1, &fence[i]), "vkResetFences");
    check(vkResetCommandBuffer(cmd[i], 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd[i], &info), "vkBeginCommandBuffer");
    return cmd[i];
  }
  void submit(uint32_t i) {
    check(vkEndCommandBuffer(cmd[i]), "vkEndCommandBuffer");
    ctx.queue_submit(cmd[i], fence[i]);
    pending[i] = true;
  }

  // Returns whether it allocated.
  bool ensure(DeviceBuffer& b, uint64_t bytes, MemoryKind kind) {
    if (b.bytes() >= bytes) return false;
    b = DeviceBuffer();  // free before allocating the larger one
    b = DeviceBuffer(ctx, allocated_bytes(ctx.info, bytes), kind);
    return true;
  }
  // Slots of at least `bytes` (at most `max_bytes`), `count` of them; returns allocations made.
  uint64_t ensure_slots(uint64_t bytes, uint64_t max_bytes, size_t count) {
    uint64_t made = 0;
    if (slot_bytes < bytes || slot_bytes > max_bytes) {
      slots.clear();
      slot_bytes = bytes;
    }
    while (slots.size() < count) {
      slots.emplace_back(ctx, slot_bytes, MemoryKind::readback);
      ++made;
    }
    return made;
  }
  char* slot(uint32_t i) const { return static_cast<char*>(slots[i].mapped()); }
};

// ---- HostPath ----

HostPath::HostPath(Context::Impl& ctx) : ctx_(ctx) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(ctx.physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(ctx.physical, &count, families.data());
  timestamps_ = ctx.family < count && families[ctx.family].timestampValidBits > 0;
  copy_engine = default_copy_engine(ctx.info);
  if (const char* engine = std::getenv("GPUSORT_COPY_ENGINE")) {
    const std::string name = engine;
    if (name == "dma")
      copy_engine = CopyEngine::dma;
    else if (name == "shader")
      copy_engine = CopyEngine::shader;
    else
      throw Error("GPUSORT_COPY_ENGINE='" + name + "': expected dma or shader");
  }
  if (const auto bytes = staging_slot_bytes(std::getenv("GPUSORT_STAGING_BYTES")))
    max_slot_bytes = *bytes;
}

std::optional<uint64_t> staging_slot_bytes(const char* variable) {
  if (!variable || !*variable) return std::nullopt;  // set but empty: as if unset
  const std::optional<uint64_t> bytes = parse_byte_count(variable);
  if (!bytes || *bytes < min_staging_slot_bytes || *bytes > max_staging_slot_bytes)
    throw Error(std::string("GPUSORT_STAGING_BYTES='") + variable +
                "': expected a byte count from 4096 (4K) to 1073741824 (1G), such as 65536, 64K "
                "or 32M (K, M, G: powers of 1024)");
  return bytes;
}
HostPath::~HostPath() = default;

std::unique_ptr<HostPath::Resources> HostPath::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto r = std::move(idle_.back());
      idle_.pop_back();
      return r;
    }
  }
  return std::make_unique<Resources>(ctx_);
}

void HostPath::give_back(std::unique_ptr<Resources> r) {
  // Bounded: the sets of at most two concurrent sorts are kept.
  constexpr size_t max_idle = 2;
  std::lock_guard lock(mutex_);
  if (idle_.size() < max_idle) idle_.push_back(std::move(r));
}

void HostPath::release_cached_memory() {
  std::vector<std::unique_ptr<Resources>> released;
  std::lock_guard lock(mutex_);
  released.swap(idle_);
}

uint64_t rounded_allocation(uint64_t bytes, uint64_t largest) {
  const uint64_t rounded = bytes <= (uint64_t(1) << 20)
                               ? std::max<uint64_t>(align_up(bytes, 4096), 4096)
                               : align_up(bytes, std::bit_floor(bytes) / 8);
  return largest != 0 && rounded > largest && bytes <= largest ? bytes : rounded;
}

uint64_t HostPath::device_bytes(const SortSpec& spec, Algorithm requested, uint64_t n) {
  uint64_t bytes = 0;
  for (uint64_t buffer : buffer_bytes(spec, requested, n))
    bytes += allocated_bytes(ctx_.info, buffer);
  return bytes;
}

std::array<uint64_t, 3> HostPath::buffer_bytes(const SortSpec& spec, Algorithm requested,
                                               uint64_t n) {
  const SortAlgorithm& sorter = algorithm(spec, requested);
  return {n * spec.key_words * 4, n * spec.value_words * 4,
          std::max<uint64_t>(sorter.scratch_bytes(n), 256)};
}

uint64_t HostPath::max_elements(const SortSpec& spec, Algorithm requested) {
  return algorithm(spec, requested).max_elements();
}

void HostPath::release_cached_beyond(uint64_t bytes) {
  std::vector<std::unique_ptr<Resources>> released;
  std::lock_guard lock(mutex_);
  for (auto& r : idle_) {
    const uint64_t held = r->keys.bytes() + r->values.bytes() + r->scratch.bytes() +
                          r->offsets.bytes() + r->indices.bytes();
    if (held > bytes) released.push_back(std::move(r));
  }
  std::erase(idle_, nullptr);
}

const SortAlgorithm& HostPath::algorithm(const SortSpec& spec, Algorithm requested) {
  std::lock_guard lock(mutex_);
  auto key = std::make_tuple(uint32_t(spec.key), spec.value_words, uint32_t(requested),
                             spec.descending, spec.begin_bit, spec.end_bit, uint32_t(spec.kernels));
  auto& slot = algorithms_[key];
  if (!slot) slot = make_sort_algorithm(ctx_, spec, requested);
  return *slot;
}

HostThreads& HostPath::threads() {
  std::lock_guard lock(mutex_);
  if (!threads_)
    threads_ =
        std::make_unique<HostThreads>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
  return *threads_;
}

void HostPath::sort(const SortSpec& spec, Algorithm requested, uint64_t n, const HostStream& keys,
                    const HostStream& values, SortTimings* timings) {
  const SortAlgorithm& sorter = algorithm(spec, requested);
  Job job;
  job.scratch_bytes = sorter.scratch_bytes(n);  // refuses an n the algorithm cannot sort
  job.bytes[size_t(JobBuffer::keys)] = n * spec.key_words * 4;
  job.bytes[size_t(JobBuffer::values)] = n * spec.value_words * 4;
  job.uploads.emplace_back(JobBuffer::keys, keys.read);
  job.downloads.emplace_back(JobBuffer::keys, keys.write);
  if (spec.value_words) {
    job.uploads.emplace_back(JobBuffer::values, values.read);
    job.downloads.emplace_back(JobBuffer::values, values.write);
  }
  job.record = [&](Recorder& rec, const JobAddresses& a) {
    if (n > 1)
      sorter.record(
          rec, SortTargets{a.buffer[size_t(JobBuffer::keys)], a.buffer[size_t(JobBuffer::values)],
                           a.scratch, a.scratch_buffer, 0, 0, n});
  };
  run(job, timings);
}

namespace {

// Pieces in batches (batch b fills slot b % slot_count) for the uploads' or the downloads'
// list; Piece::stream indexes the list.
template <class List>
std::vector<std::vector<Piece>> plan_batches(const HostPath::Job& job, const List& list,
                                             uint64_t slot_bytes) {
  std::vector<std::vector<Piece>> batches;
  uint64_t used = slot_bytes;
  for (uint32_t s = 0; s < list.size(); ++s) {
    const uint64_t total = job.bytes[size_t(list[s].first)];
    for (uint64_t offset = 0; offset < total;) {
      if (used + piece_alignment > slot_bytes) batches.emplace_back(), used = 0;
      uint64_t bytes = std::min(total - offset, slot_bytes - used);
      batches.back().push_back({s, offset, bytes, used});
      offset += bytes;
      used = align_up(used + bytes, piece_alignment);
    }
  }
  return batches;
}

// One HostPath::run: its job on a set of resources, the steps that move a batch of pieces
// between the caller's streams, the staging slots and the device buffers, and the GPU work.
class StagedJob {
 public:
  using clock = std::chrono::steady_clock;

  StagedJob(Context::Impl& ctx, HostPath::Resources& r, HostThreads& pool, const HostPath::Job& job,
            bool shader_copies, bool timestamps)
      : ctx_(ctx),
        r_(r),
        pool_(pool),
        job_(job),
        device_{&r.keys, &r.values, &r.offsets, &r.indices},
        shader_copies_(shader_copies),
        timestamps_(timestamps) {}

  // The uploads of one batch: the host threads fill the slot, then the copies to the device
  // buffers are recorded.
  void copy_in(uint32_t slot, const std::vector<Piece>& batch, VkCommandBuffer cmd) {
    read_ms +=
        over_pieces(slot, batch, [&](const Piece& p, uint64_t at, char* staging, uint64_t bytes) {
          job_.uploads[p.stream].second(p.offset + at, staging, bytes);
        });
    // Earlier uses of the device buffers (the last call's copies out, its GPU work) come first.
    memory_barrier(cmd, copy_stages, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                   copy_stages, VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    for (const Piece& p : batch)
      record_copy(cmd, r_.slots[slot], p.slot_offset,
                  *device_[size_t(job_.uploads[p.stream].first)], p.offset, p.bytes);
  }
  // The job's GPU work between barriers (and timestamps, where the queue writes them).
  void record_work(VkCommandBuffer cmd) {
    memory_barrier(cmd, copy_stages, VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    if (timestamps_) {
      vkCmdResetQueryPool(cmd, r_.timestamps, 0, 2);
      vkCmdWriteTimestamp(cmd, copy_stage(), r_.timestamps, 0);
    }
    HostPath::JobAddresses a;
    for (size_t b = 0; b < device_.size(); ++b)
      a.buffer[b] = job_.bytes[b] ? device_[b]->address() : 0;
    a.scratch = r_.scratch.address();
    a.scratch_buffer = r_.scratch.buffer();
    Recorder rec(ctx_, cmd);
    job_.record(rec, a);
    if (timestamps_)
      vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, r_.timestamps, 1);
    memory_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   copy_stages, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_SHADER_READ_BIT);
  }
  // The copies of one batch from the device buffers into its slot.
  void record_copy_out(uint32_t slot, const std::vector<Piece>& batch, VkCommandBuffer cmd) {
    for (const Piece& p : batch)
      record_copy(cmd, *device_[size_t(job_.downloads[p.stream].first)], p.offset, r_.slots[slot],
                  p.slot_offset, p.bytes);
    memory_barrier(cmd, copy_stages, VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  }
  // The downloads of one batch: the host threads empty the slot into the caller's writers.
  void copy_out(uint32_t slot, const std::vector<Piece>& batch) {
    write_ms +=
        over_pieces(slot, batch, [&](const Piece& p, uint64_t at, char* staging, uint64_t bytes) {
          job_.downloads[p.stream].second(p.offset + at, staging, bytes);
        });
  }

  // Copy in, work and copy out in one submission (at most one batch each way); returns when
  // the GPU was done.
  clock::time_point run_at_once(const std::vector<std::vector<Piece>>& in_batches,
                                const std::vector<std::vector<Piece>>& out_batches) {
    VkCommandBuffer cmd = r_.begin(0);
    if (!in_batches.empty()) copy_in(0, in_batches[0], cmd);
    record_work(cmd);
    if (!out_batches.empty()) record_copy_out(0, out_batches[0], cmd);
    r_.submit(0);
    r_.wait(0);
    const clock::time_point done = clock::now();
    if (!out_batches.empty()) copy_out(0, out_batches[0]);
    return done;
  }

  // The batches through the slots in turn, the work in its own submission between; returns
  // when the GPU was done with the work.
  clock::time_point run_pipelined(const std::vector<std::vector<Piece>>& in_batches,
                                  const std::vector<std::vector<Piece>>& out_batches) {
    constexpr uint32_t slot_count = HostPath::slot_count;
    const size_t in_count = in_batches.size(), out_count = out_batches.size();
    for (size_t b = 0; b < in_count; ++b) {
      const uint32_t slot = uint32_t(b % slot_count);
      VkCommandBuffer cmd = r_.begin(slot);
      copy_in(slot, in_batches[b], cmd);
      r_.submit(slot);
    }
    record_work(r_.begin(sort_index));
    r_.submit(sort_index);
    // Copies out are queued behind the work before waiting for it, so the DMA starts at once.
    for (size_t b = 0; b < std::min<size_t>(slot_count, out_count); ++b) {
      VkCommandBuffer cmd = r_.begin(uint32_t(b));
      record_copy_out(uint32_t(b), out_batches[b], cmd);
      r_.submit(uint32_t(b));
    }
    r_.wait(sort_index);
    const clock::time_point done = clock::now();
    for (size_t b = 0; b < out_count; ++b) {
      const uint32_t slot = uint32_t(b % slot_count);
      r_.wait(slot);
      copy_out(slot, out_batches[b]);
      if (b + slot_count < out_count) {
        VkCommandBuffer cmd = r_.begin(slot);
        record_copy_out(slot, out_batches[b + slot_count], cmd);
        r_.submit(slot);
      }
    }
    return done;
  }

  double read_ms = 0, write_ms = 0;  // wall time of the host threads' copies each way

 private:
  static constexpr VkPipelineStageFlags copy_stages =
      VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  VkPipelineStageFlagBits copy_stage() const {
    return shader_copies_ ? VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT : VK_PIPELINE_STAGE_TRANSFER_BIT;
  }

  // Copies between staging and device memory: the DMA engine (vkCmdCopyBuffer), or a compute
  // shader reading and writing host memory through device addresses (HostPath::copy_engine).
  void record_copy(VkCommandBuffer cmd, const DeviceBuffer& from, uint64_t from_offset,
                   const DeviceBuffer& to, uint64_t to_offset, uint64_t bytes) {
    if (!shader_copies_) {
      VkBufferCopy region{from_offset, to_offset, bytes};
      vkCmdCopyBuffer(cmd, from.buffer(), to.buffer(), 1, &region);
      return;
    }
    constexpr uint32_t copy_workgroup = 256;
    const uint32_t words = uint32_t(bytes / 4);
    const uint32_t groups = std::max<uint32_t>(1, (words + copy_workgroup - 1) / copy_workgroup);
    Recorder rec(ctx_, cmd);
    rec.dispatch(
        Kernel::copy_elements, spec_constants(CopyElementsSpec{copy_workgroup, 1}), groups,
        CopyElementsPush{from.address() + from_offset, to.address() + to_offset, 0, words, groups});
  }

  // Runs move(piece, offset into it, staging memory there, bytes) over a batch's pieces, large
  // pieces split over the host threads; returns the wall time it took.
  using Move = std::function<void(const Piece&, uint64_t, char*, uint64_t)>;
  double over_pieces(uint32_t slot, const std::vector<Piece>& batch, const Move& move) {
    const auto began = clock::now();
    for (const Piece& p : batch) {
      char* staging = r_.slot(slot) + p.slot_offset;
      if (p.bytes < 2 * parallel_copy_bytes)
        move(p, 0, staging, p.bytes);
      else
        pool_.parallel_for(p.bytes, parallel_copy_bytes,
                           [&](uint64_t b, uint64_t e) { move(p, b, staging + b, e - b); });
    }
    return ms_between(began, clock::now());
  }

  Context::Impl& ctx_;
  HostPath::Resources& r_;
  HostThreads& pool_;
  const HostPath::Job& job_;
  const std::array<DeviceBuffer*, 4> device_;  // by HostPath::JobBuffer
  const bool shader_copies_, timestamps_;
};

}  // namespace

// The staging pipeline (host_path.hpp): the uploads batched into the slots in order, host threads
// filling one slot while the previous one is in flight, then the GPU work, then the downloads
// through the same slots; everything in one submission when it fits one slot each way.
void HostPath::run(const Job& job, SortTimings* timings) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  uint64_t up_total = 0, down_total = 0;
  for (const auto& u : job.uploads) up_total += job.bytes[size_t(u.first)];
  for (const auto& d : job.downloads) down_total += job.bytes[size_t(d.first)];
  if (timings) *timings = SortTimings{.bytes = std::max(up_total, down_total)};
  if (up_total == 0 && down_total == 0) return;

  auto r = acquire();
  struct GiveBack {  // whatever happens, nothing stays in flight and the set is kept
    HostPath* self;
    std::unique_ptr<Resources>& r;
    ~GiveBack() {
      r->wait_all();
      self->give_back(std::move(r));
    }
  } give_back_on_exit{this, r};

  // Slots are host-visible allocations: at most the largest allocation too.
  const uint64_t slot_cap = std::min(
      max_slot_bytes, std::bit_floor(std::max<uint64_t>(ctx_.info.max_allocation_bytes, 4096)));
  const uint64_t want_slot = std::min(
      slot_cap,
      std::bit_ceil(std::max<uint64_t>(std::max(up_total, down_total) + piece_alignment, 4096)));
  const uint64_t slot_bytes = std::max(want_slot, r->slot_bytes <= slot_cap ? r->slot_bytes : 0);
  const auto in_batches = plan_batches(job, job.uploads, slot_bytes);
  const auto out_batches = plan_batches(job, job.downloads, slot_bytes);
  {
    const std::array<DeviceBuffer*, 4> device{&r->keys, &r->values, &r->offsets, &r->indices};
    uint64_t made = r->ensure_slots(
        slot_bytes, std::max(slot_cap, want_slot),
        std::min<size_t>(slot_count, std::max(in_batches.size(), out_batches.size())));
    for (size_t b = 0; b < device.size(); ++b)
      if (job.bytes[b]) made += r->ensure(*device[b], job.bytes[b], MemoryKind::device_local);
    made +=
        r->ensure(r->scratch, std::max<uint64_t>(job.scratch_bytes, 256), MemoryKind::device_local);
    allocations_ += made;
  }

  StagedJob staged(ctx_, *r, threads(), job, copy_engine == CopyEngine::shader, timestamps_);
  const clock::time_point done = in_batches.size() <= 1 && out_batches.size() <= 1
                                     ? staged.run_at_once(in_batches, out_batches)
                                     : staged.run_pipelined(in_batches, out_batches);

  if (timings) {
    uint64_t ticks[2] = {0, 0};
    if (timestamps_)
      check(vkGetQueryPoolResults(ctx_.device, r->timestamps, 0, 2, sizeof(ticks), ticks,
                                  sizeof(uint64_t),
                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
            "vkGetQueryPoolResults");
    const auto end = clock::now();
    timings->sort_gpu_ms = double(ticks[1] - ticks[0]) * ctx_.info.timestamp_period_ns * 1e-6;
    timings->total_ms = ms_between(start, end);
    timings->download_ms = ms_between(done, end);
    timings->upload_ms = std::max(0.0, ms_between(start, done) - timings->sort_gpu_ms);
    timings->read_ms = staged.read_ms;
    timings->write_ms = staged.write_ms;
  }
}

// The Context's host path (context_impl.hpp): made here, where HostPath is known.
HostPath& Context::Impl::host_path() {
  std::lock_guard lock(host_path_mutex);
  if (!host_path_)
    host_path_ = {new HostPath(*this), [](HostPath* path) { delete path; }};
  return *host_path_;
}

void Context::release_cached_memory() {
  impl_->host_path().release_cached_memory();
}

}  // namespace gpusort
