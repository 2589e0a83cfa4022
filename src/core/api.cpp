// The public API: names, validation, the convenient face (sort_raw, scans) and Sorter.
#include "algorithms/scan.hpp"
#include "algorithms/sort_algorithm.hpp"
#include "vulkan/buffer.hpp"

#include <array>

namespace gpusort {

namespace {

constexpr std::array<const char*, 6> key_type_names{"u32", "i32", "f32", "u64", "i64", "f64"};
constexpr std::array<const char*, 5> algorithm_names{"automatic", "onesweep", "radix_reduce_scan",
                                                     "bitonic", "odd_even"};

template <size_t N> std::string joined(const std::array<const char*, N>& names) {
  std::string s;
  for (auto* n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

void check_count(uint64_t n) {
  if (n > max_elements)
    throw Error(std::to_string(n) + " elements: gpusort sorts at most " +
                std::to_string(max_elements) + " (2^31 - 1)");
}

}  // namespace

const char* to_string(KeyType type) { return key_type_names.at(size_t(type)); }
const char* to_string(Algorithm algorithm) { return algorithm_names.at(size_t(algorithm)); }

KeyType parse_key_type(const std::string& text) {
  for (size_t i = 0; i < key_type_names.size(); ++i)
    if (text == key_type_names[i]) return KeyType(i);
  throw Error("unknown key type '" + text + "' (expected one of " + joined(key_type_names) + ")");
}

Algorithm parse_algorithm(const std::string& text) {
  for (size_t i = 0; i < algorithm_names.size(); ++i)
    if (text == algorithm_names[i]) return Algorithm(i);
  throw Error("unknown algorithm '" + text + "' (expected one of " + joined(algorithm_names) + ")");
}

uint32_t key_bytes(KeyType type) {
  switch (type) {
    case KeyType::u32: case KeyType::i32: case KeyType::f32: return 4;
    case KeyType::u64: case KeyType::i64: case KeyType::f64: return 8;
  }
  throw Error("invalid KeyType value " + std::to_string(uint32_t(type)));
}

SortSpec make_sort_spec(KeyType key, uint32_t value_bytes, bool descending, uint32_t begin_bit,
                        uint32_t end_bit) {
  SortSpec s;
  s.key = key;
  s.key_words = key_bytes(key) / 4;
  switch (key) {
    case KeyType::u32: case KeyType::u64: s.key_kind = 0; break;
    case KeyType::i32: case KeyType::i64: s.key_kind = 1; break;
    case KeyType::f32: case KeyType::f64: s.key_kind = 2; break;
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

std::unique_ptr<SortAlgorithm> make_sort_algorithm(Context::Impl& ctx, const SortSpec& spec,
                                                   Algorithm requested) {
  switch (requested) {
    // Onesweep beats radix_reduce_scan at every size measured (bench/NOTES-onesweep.md).
    case Algorithm::automatic:
    case Algorithm::onesweep: return make_onesweep(ctx, spec);
    case Algorithm::radix_reduce_scan: return make_radix_reduce_scan(ctx, spec);
    default:
      throw Error(std::string("algorithm '") + to_string(requested) + "' is not available yet");
  }
}

void sort_raw(Context& ctx, KeyType key_type, void* keys, uint64_t n, void* values,
              uint32_t value_bytes, const SortOptions& options) {
  check_count(n);
  SortSpec spec = make_sort_spec(key_type, values ? value_bytes : 0, options.descending,
                                 options.begin_bit, options.end_bit);
  auto& impl = ctx.impl();
  auto algorithm = make_sort_algorithm(impl, spec, options.algorithm);
  if (n <= 1) return;
  const uint64_t key_size = n * key_bytes(key_type), value_size = n * spec.value_words * 4;
  DeviceBuffer key_buffer(impl, key_size, MemoryKind::device_local);
  DeviceBuffer value_buffer;
  if (spec.value_words) value_buffer = DeviceBuffer(impl, value_size, MemoryKind::device_local);
  DeviceBuffer scratch(impl, algorithm->scratch_bytes(n), MemoryKind::device_local);
  upload(impl, key_buffer, keys, key_size);
  if (spec.value_words) upload(impl, value_buffer, values, value_size);
  impl.submit([&](VkCommandBuffer cmd) {
    Recorder rec(impl, cmd);
    SortTargets t{key_buffer.address(), spec.value_words ? value_buffer.address() : 0,
                  scratch.address(), scratch.buffer(), 0, 0, n};
    algorithm->record(rec, t);
  });
  download(impl, key_buffer, keys, key_size);
  if (spec.value_words) download(impl, value_buffer, values, value_size);
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

struct Sorter::Impl {
  Context::Impl* ctx;
  SorterConfig config;
  SortSpec spec;
  std::unique_ptr<SortAlgorithm> algorithm;

  SortTargets targets(BufferRef keys, BufferRef values, BufferRef scratch) const {
    auto address = [&](BufferRef r, const char* what) -> VkDeviceAddress {
      if (!r.buffer) throw Error(std::string("Sorter::record: no ") + what + " buffer");
      if (r.offset % 16) throw Error(std::string("Sorter::record: ") + what + " offset is not a multiple of 16");
      return ctx->address_of(r.buffer) + r.offset;
    };
    SortTargets t;
    t.keys = address(keys, "keys");
    if (spec.value_words) t.values = address(values, "values");
    t.scratch = address(scratch, "scratch");
    t.scratch_buffer = scratch.buffer;
    t.scratch_offset = scratch.offset;
    return t;
  }
};

Sorter::Sorter(Context& ctx, const SorterConfig& config) : impl_(std::make_unique<Impl>()) {
  impl_->ctx = &ctx.impl();
  impl_->config = config;
  impl_->spec = make_sort_spec(config.key, config.value_bytes, config.descending, config.begin_bit,
                               config.end_bit);
  impl_->algorithm = make_sort_algorithm(ctx.impl(), impl_->spec, config.algorithm);
}
Sorter::~Sorter() = default;
Sorter::Sorter(Sorter&&) noexcept = default;
Sorter& Sorter::operator=(Sorter&&) noexcept = default;

const SorterConfig& Sorter::config() const { return impl_->config; }

uint64_t Sorter::scratch_bytes(uint64_t max_n) const {
  check_count(max_n);
  return impl_->algorithm->scratch_bytes(max_n);
}

void Sorter::record(VkCommandBuffer cmd, BufferRef keys, BufferRef values, BufferRef scratch,
                    uint64_t n) const {
  check_count(n);
  if (n <= 1) return;
  SortTargets t = impl_->targets(keys, values, scratch);
  t.n = n;
  Recorder rec(*impl_->ctx, cmd);
  impl_->algorithm->record(rec, t);
}

void Sorter::record_indirect(VkCommandBuffer cmd, BufferRef keys, BufferRef values,
                             BufferRef scratch, BufferRef count, uint64_t max_n) const {
  check_count(max_n);
  if (max_n <= 1) return;
  SortTargets t = impl_->targets(keys, values, scratch);
  if (!count.buffer) throw Error("Sorter::record_indirect: no count buffer");
  t.count_address = impl_->ctx->address_of(count.buffer) + count.offset;
  t.n = max_n;
  Recorder rec(*impl_->ctx, cmd);
  impl_->algorithm->record(rec, t);
}

}  // namespace gpusort
