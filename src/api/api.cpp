// The public API: names, validation, the convenient face (sort_raw, scans) and Sorter.
#include <array>
#include <cstring>

#include "algorithms/onesweep/cuda/cuda_pass.hpp"
#include "algorithms/sort_algorithm.hpp"
#include "api/buffer_refs.hpp"
#include "api/push.h"
#include "dispatch/dispatch.hpp"
#include "host/host_path.hpp"
#include "host/out_of_core.hpp"
#include "primitives/glsl/spec_constants.h"
#include "primitives/scan.hpp"
#include "vulkan/buffer.hpp"

namespace gpusort {

namespace {

constexpr std::array<const char*, 6> key_type_names{"u32", "i32", "f32", "u64", "i64", "f64"};

template <size_t N>
std::string joined(const std::array<const char*, N>& names) {
  std::string s;
  for (auto* n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

void check_count(uint64_t n, uint64_t limit = max_elements) {
  if (n > limit)
    throw Error(std::to_string(n) + " elements: gpusort sorts at most " + std::to_string(limit) +
                (limit == max_elements ? " (2^31 - 1)" : "") + " in one device sort");
}

}  // namespace

const char* to_string(KeyType type) {
  return key_type_names.at(size_t(type));
}

KeyType parse_key_type(const std::string& text) {
  for (size_t i = 0; i < key_type_names.size(); ++i)
    if (text == key_type_names[i]) return KeyType(i);
  throw Error("unknown key type '" + text + "' (expected one of " + joined(key_type_names) + ")");
}

uint32_t key_bytes(KeyType type) {
  switch (type) {
    case KeyType::u32:
    case KeyType::i32:
    case KeyType::f32:
      return 4;
    case KeyType::u64:
    case KeyType::i64:
    case KeyType::f64:
      return 8;
  }
  throw Error("invalid KeyType value " + std::to_string(uint32_t(type)));
}

SortSpec make_sort_spec(KeyType key, uint32_t value_bytes, bool descending, uint32_t begin_bit,
                        uint32_t end_bit) {
  check_kernel_environment();
  SortSpec s;
  s.key = key;
  s.key_words = key_bytes(key) / 4;
  switch (key) {
    case KeyType::u32:
    case KeyType::u64:
      s.key_kind = 0;
      break;
    case KeyType::i32:
    case KeyType::i64:
      s.key_kind = 1;
      break;
    case KeyType::f32:
    case KeyType::f64:
      s.key_kind = 2;
      break;
  }
  if (value_bytes != 0 && value_bytes != 4 && value_bytes != 8)
    throw Error("values must be 0, 4 or 8 bytes wide, not " + std::to_string(value_bytes));
  s.value_words = value_bytes / 4;
  s.descending = descending;
  uint32_t width = 32 * s.key_words;
  s.begin_bit = begin_bit;
  s.end_bit = end_bit == 0 ? width : end_bit;
  if (s.end_bit > width || s.begin_bit >= s.end_bit)
    throw Error("bit range [" + std::to_string(begin_bit) + ", " + std::to_string(s.end_bit) +
                ") is empty or beyond the " + std::to_string(width) + "-bit " + to_string(key) +
                " key");
  return s;
}

namespace {

// The convenient face's sorts: in core when the array fits the device budget, else out of core
// (core/out_of_core.hpp). Returns the run length (n: in core, checked against the limit of one
// device sort; below max_elements an algorithm's own limit, odd_even's, is its to report by name).
uint64_t plan_runs(Context::Impl& ctx, const SortSpec& spec, uint64_t n,
                   const SortOptions& options) {
  if (options.device_memory_limit)
    ctx.host_path().release_cached_beyond(options.device_memory_limit);
  const uint64_t run = run_elements(ctx, spec, options.algorithm, n, options.device_memory_limit);
  if (run == n)
    check_count(n, std::max(max_elements, ctx.host_path().max_elements(spec, options.algorithm)));
  return run;
}

}  // namespace

void sort_raw(Context& ctx, KeyType key_type, void* keys, uint64_t n, void* values,
              uint32_t value_bytes, const SortOptions& options) {
  SortSpec spec = make_sort_spec(key_type, values ? value_bytes : 0, options.descending,
                                 options.begin_bit, options.end_bit);
  spec.kernels = requested_kernel_path(options.kernels);
  const uint64_t run = plan_runs(ctx.impl(), spec, n, options);
  if (run < n)
    return sort_arrays_out_of_core(ctx.impl(), spec, options.algorithm, n, keys, values, run,
                                   options.timings);
  auto memory = [](void* array) { return HostStream{memory_reader(array), memory_writer(array)}; };
  ctx.impl().host_path().sort(spec, options.algorithm, n, memory(keys), memory(values),
                              options.timings);
}

void sort_streamed(Context& ctx, KeyType key_type, uint64_t n, const HostStream& keys,
                   uint32_t value_bytes, const HostStream& values, const SortOptions& options) {
  SortSpec spec =
      make_sort_spec(key_type, value_bytes, options.descending, options.begin_bit, options.end_bit);
  spec.kernels = requested_kernel_path(options.kernels);
  if (!keys.read || !keys.write || (value_bytes && (!values.read || !values.write)))
    throw Error("sort_streamed: every stream needs a reader and a writer");
  // Beyond max_elements only out of core (runs of at most max_elements).
  const uint64_t run = plan_runs(ctx.impl(), spec, n, options);
  if (run < n)
    return sort_streamed_out_of_core(ctx.impl(), spec, options.algorithm, n, keys, values, run,
                                     options.timings);
  ctx.impl().host_path().sort(spec, options.algorithm, n, keys, values, options.timings);
}

uint64_t max_run_elements(Context& ctx, KeyType key_type, uint32_t value_bytes, uint64_t n,
                          const SortOptions& options) {
  SortSpec spec =
      make_sort_spec(key_type, value_bytes, options.descending, options.begin_bit, options.end_bit);
  spec.kernels = requested_kernel_path(options.kernels);
  return run_elements(ctx.impl(), spec, options.algorithm, n, options.device_memory_limit);
}

void merge_sorted_runs(KeyType key_type, uint32_t value_bytes, std::span<const SortedRun> runs,
                       const HostWriter& keys_out, const HostWriter& values_out,
                       const SortOptions& options) {
  const SortSpec spec =
      make_sort_spec(key_type, value_bytes, options.descending, options.begin_bit, options.end_bit);
  if (!keys_out || (value_bytes && !values_out))
    throw Error("merge_sorted_runs: keys_out" + std::string(value_bytes ? " and values_out" : "") +
                " must be set");
  for (size_t r = 0; r < runs.size(); ++r)
    if (runs[r].n && (!runs[r].keys || (value_bytes && !runs[r].values)))
      throw Error("merge_sorted_runs: run " + std::to_string(r) + " has no " +
                  (runs[r].keys ? "values" : "keys"));
  merge_runs(spec, runs, MergeTarget{nullptr, nullptr, &keys_out, &values_out});
}

namespace {

template <class T>
void scan_host(Context& ctx, std::span<const T> in, std::span<T> out, bool inclusive) {
  if (in.size() != out.size())
    throw Error("scan: input has " + std::to_string(in.size()) + " elements but output has " +
                std::to_string(out.size()));
  check_count(in.size());
  if (in.empty()) return;
  auto& impl = ctx.impl();
  ScanSpec spec{sizeof(T) == 8, inclusive};
  DeviceBuffer data(impl, in.size_bytes(), MemoryKind::device_local);
  DeviceBuffer scratch(impl, scan_scratch_bytes(in.size(), spec), MemoryKind::device_local);
  upload(impl, data, in.data(), in.size_bytes());
  impl.submit([&](VkCommandBuffer cmd) {
    Recorder rec(impl, cmd);
    record_scan(rec, data.address(), data.address(), in.size(), spec, scratch.address());
  });
  download(impl, data, out.data(), out.size_bytes());
}

}  // namespace

void exclusive_scan(Context& ctx, std::span<const uint32_t> in, std::span<uint32_t> out) {
  scan_host(ctx, in, out, false);
}
void inclusive_scan(Context& ctx, std::span<const uint32_t> in, std::span<uint32_t> out) {
  scan_host(ctx, in, out, true);
}
void exclusive_scan(Context& ctx, std::span<const uint64_t> in, std::span<uint64_t> out) {
  scan_host(ctx, in, out, false);
}
void inclusive_scan(Context& ctx, std::span<const uint64_t> in, std::span<uint64_t> out) {
  scan_host(ctx, in, out, true);
}

// ---- Sorter ----

namespace {

// Sizes whose plans the Sorter records once at construction (into a command buffer that is never
// submitted) so that their pipelines exist before the first record(): a direct sort of a few
// workgroups, one of many workgroups, and an indirect one, whose plan covers every n up to it.
constexpr uint64_t warm_up_small_n = 1000;
constexpr uint64_t warm_up_large_n = uint64_t(1) << 16;

}  // namespace

struct Sorter::Impl {
  Context context;  // a copy: keeps the device and the pipeline cache alive
  SorterConfig config;
  SortSpec spec;
  std::unique_ptr<SortAlgorithm> algorithm;

  // A u64 count is narrowed (count_narrow.comp) into a u32 slot at the start of scratch; the
  // algorithm's scratch follows it.
  bool wide_count() const { return config.count_bytes == 8; }
  uint64_t count_slot_bytes() const { return wide_count() ? 256 : 0; }
  uint64_t scratch_bytes(uint64_t max_n) const {
    return count_slot_bytes() + algorithm->scratch_bytes(max_n);
  }
  // The algorithm's targets, and the caller's u64 count when count_narrow runs first (then
  // sort.count_address is the slot it writes).
  struct Resolved {
    SortTargets sort;
    VkDeviceAddress wide_count = 0;
  };

  // Resolves the caller's buffers to addresses, checking everything the host can check.
  Resolved resolve(const char* call, BufferRef keys, BufferRef values, BufferRef scratch,
                   const BufferRef* count, uint64_t max_n) const {
    auto& ctx = context.impl();
    auto fail = [&](const std::string& why) { throw Error(std::string(call) + ": " + why); };
    auto address = [&](BufferRef r, const char* what, VkDeviceSize alignment) {
      return resolve_buffer(ctx, call, r, what, alignment);
    };
    SortTargets t;
    t.keys = address(keys, "keys", 16);
    if (spec.value_words == 0 && values.buffer)
      fail("values given, but the Sorter was configured with value_bytes = 0");
    if (spec.value_words != 0 && !values.buffer)
      fail("values.buffer is VK_NULL_HANDLE, but the Sorter was configured with value_bytes = " +
           std::to_string(config.value_bytes));
    if (spec.value_words) t.values = address(values, "values", 16);
    t.scratch = address(scratch, "scratch", 16);
    t.scratch_buffer = scratch.buffer;
    t.scratch_offset = scratch.offset;
    const uint64_t count_bytes = count ? (wide_count() ? 8 : 4) : 0;
    if (count) t.count_address = address(*count, "count", count_bytes);
    t.n = max_n;

    refuse_overlaps(call,
                    {{"keys", t.keys, t.keys + max_n * spec.key_words * 4},
                     {"values", t.values, t.values + max_n * spec.value_words * 4},
                     {"scratch", t.scratch, t.scratch + scratch_bytes(max_n)},
                     {"count", t.count_address, t.count_address + count_bytes}},
                    std::to_string(max_n) + " elements");
    if (!wide_count()) return {t, 0};
    // The algorithm's scratch after the slot; with a count it reads the slot as its count.
    Resolved r{t, t.count_address};
    if (count) r.sort.count_address = t.scratch;
    r.sort.scratch += count_slot_bytes();
    r.sort.scratch_offset += count_slot_bytes();
    return r;
  }

  void record(VkCommandBuffer cmd, const Resolved& r) const {
    const SortTargets& t = r.sort;
    if (!cmd) throw Error("Sorter::record: command buffer is VK_NULL_HANDLE");
    Recorder rec(context.impl(), cmd);
    // At most one element (whatever the count says): nothing to sort.
    if (t.n <= 1) {
      rec.compute_barrier();
      return;
    }
    if (r.wide_count) {
      rec.dispatch(Kernel::count_narrow, spec_constants(WorkgroupSpec{64}), 1,
                   CountNarrowPush{r.wide_count, t.count_address, uint32_t(t.n)});
      rec.compute_barrier();
    }
    algorithm->record(rec, t);
    // The contract's closing barrier (gpusort.hpp): algorithms end with one; recorded here where
    // nothing was (n <= 1), never twice.
    if (!rec.ends_with_barrier()) rec.compute_barrier();
  }

  // Records the plans of warm_up_* sizes into a command buffer that is never submitted, on
  // temporary buffers, so that their pipelines are created now rather than in record().
  void create_pipelines() const {
    auto& ctx = context.impl();
    const uint64_t n = std::min(warm_up_large_n, algorithm->max_elements());
    DeviceBuffer keys(ctx, n * spec.key_words * 4, MemoryKind::device_local);
    DeviceBuffer values;
    if (spec.value_words)
      values = DeviceBuffer(ctx, n * spec.value_words * 4, MemoryKind::device_local);
    DeviceBuffer scratch(ctx, scratch_bytes(n), MemoryKind::device_local);
    DeviceBuffer count(ctx, 8, MemoryKind::device_local);
    BufferRef value_ref = spec.value_words ? values.ref() : BufferRef{};
    BufferRef count_ref = count.ref();
    ctx.record_unsubmitted([&](VkCommandBuffer cmd) {
      record(cmd, resolve("Sorter", keys.ref(), value_ref, scratch.ref(), nullptr,
                          std::min(warm_up_small_n, n)));
      record(cmd, resolve("Sorter", keys.ref(), value_ref, scratch.ref(), nullptr, n));
      record(cmd, resolve("Sorter", keys.ref(), value_ref, scratch.ref(), &count_ref, n));
    });
  }
};

Sorter::Sorter(Context& ctx, const SorterConfig& config) : impl_(std::make_unique<Impl>()) {
  impl_->context = ctx;
  impl_->config = config;
  impl_->spec = make_sort_spec(config.key, config.value_bytes, config.descending, config.begin_bit,
                               config.end_bit);
  impl_->spec.kernels = config.kernels;
  if (impl_->config.count_bytes == 0) impl_->config.count_bytes = 4;
  if (impl_->config.count_bytes != 4 && impl_->config.count_bytes != 8)
    throw Error("Sorter: count_bytes is " + std::to_string(config.count_bytes) +
                ": record_indirect's count is a u32 (4) or a u64 (8)");
  impl_->algorithm = make_sort_algorithm(ctx.impl(), impl_->spec, config.algorithm);
  impl_->create_pipelines();
}
Sorter::~Sorter() = default;
Sorter::Sorter(Sorter&&) noexcept = default;
Sorter& Sorter::operator=(Sorter&&) noexcept = default;

namespace {
const Sorter::Impl& valid(const std::unique_ptr<Sorter::Impl>& impl) {
  if (!impl) throw Error("Sorter: used after being moved from");
  return *impl;
}
}  // namespace

const SorterConfig& Sorter::config() const {
  return valid(impl_).config;
}

uint64_t Sorter::scratch_bytes(uint64_t max_n) const {
  check_count(max_n, max_elements());
  constexpr uint64_t min_scratch_bytes = 256;
  return std::max(valid(impl_).scratch_bytes(max_n), min_scratch_bytes);
}

uint64_t Sorter::max_elements() const {
  return valid(impl_).algorithm->max_elements();
}

bool Sorter::stable() const {
  return valid(impl_).algorithm->stable();
}

std::string Sorter::kernel_path(uint64_t max_n) const {
  return valid(impl_).algorithm->kernel_path(max_n);
}

void Sorter::record(VkCommandBuffer cmd, BufferRef keys, BufferRef values, BufferRef scratch,
                    uint64_t n) const {
  const Impl& impl = valid(impl_);
  check_count(n, impl.algorithm->max_elements());
  impl.record(cmd, impl.resolve("Sorter::record", keys, values, scratch, nullptr, n));
}

void Sorter::record_indirect(VkCommandBuffer cmd, BufferRef keys, BufferRef values,
                             BufferRef scratch, BufferRef count, uint64_t max_n) const {
  const Impl& impl = valid(impl_);
  // The count is clamped to max_n into a u32 on the GPU.
  check_count(max_n, std::min(impl.algorithm->max_elements(), uint64_t(UINT32_MAX)));
  impl.record(cmd, impl.resolve("Sorter::record_indirect", keys, values, scratch, &count, max_n));
}

// Onesweep's CUDA pass is the one user of the Context's CUDA kernels (cuda_pass.hpp).
std::string Context::load_cuda_kernels() const {
  if (!cuda_kernels_loaded(*impl_))
    throw Error("the CUDA kernels cannot run on " + impl_->info.name + ": " +
                impl_->cuda_unavailable_why());
  return impl_->nvx.loaded;
}

}  // namespace gpusort
