// gpusort: sorting on the GPU through Vulkan compute.
//
// Two faces:
//  - convenient: gpusort::sort(ctx, std::span<K>) and sort_by_key copy host data to the device,
//    sort, and copy back; they block until done.
//  - engine: gpusort::Sorter records into the caller's VkCommandBuffer on the caller's buffers,
//    with caller-owned scratch sized by scratch_bytes(max_n), and no host synchronization.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace gpusort {

enum class KeyType : uint32_t { u32, i32, f32, u64, i64, f64 };
// automatic: the small-array sort up to 2^17 keys, Onesweep above (stable). onesweep: Onesweep at
// every size. The rest are reference and experimental algorithms that automatic never picks:
// radix_reduce_scan (LSD radix, reduce-then-scan), bitonic (unstable), odd_even (one workgroup),
// partition (one MSD partition pass by the top digit, then every bucket sorted on its own by the
// segmented sort). Only automatic and onesweep are in the C API's stable enum.
enum class Algorithm : uint32_t { automatic, onesweep, radix_reduce_scan, bitonic, odd_even, partition };
// Every algorithm's name, in enumerator order.
std::vector<std::string> algorithm_names();
// Which kernels run Onesweep's digit passes (docs/API.md, "Which path runs where"):
//  - automatic: CUDA kernels launched through VK_NVX_binary_import where the device exposes that
//    extension (NVIDIA's driver), the library was built with nvcc, the sort's key class has a
//    CUDA kernel (32- or 64-bit keys, alone or with 4-byte values) and the device's tuning table
//    takes it for the size (NVIDIA: above 2^20 keys, 32-bit key pairs above 2^22, not 64-bit keys
//    with values); the SPIR-V pass elsewhere.
//    The environment variable GPUSORT_KERNELS (spirv, cuda or auto) decides where the option is
//    automatic.
//  - spirv: the SPIR-V pass (every device).
//  - cuda: the CUDA pass; gpusort::Error naming why where it is not available (key classes
//    without a CUDA kernel, 8-byte values, still take the SPIR-V pass).
// Every other kernel (clear, histogram, copy-back, the other algorithms) is SPIR-V on every path.
enum class KernelPath : uint32_t { automatic, spirv, cuda };
const char* to_string(KernelPath path);
// "auto" or "automatic", "spirv", "cuda"; throws gpusort::Error naming the text otherwise.
KernelPath parse_kernel_path(const std::string& text);

const char* to_string(KeyType type);
const char* to_string(Algorithm algorithm);
// Throws gpusort::Error naming the text when it is not a known name.
KeyType parse_key_type(const std::string& text);
Algorithm parse_algorithm(const std::string& text);
uint32_t key_bytes(KeyType type);

template <class K> constexpr KeyType key_type_of() {
  if constexpr (std::is_same_v<K, uint32_t>) return KeyType::u32;
  else if constexpr (std::is_same_v<K, int32_t>) return KeyType::i32;
  else if constexpr (std::is_same_v<K, float>) return KeyType::f32;
  else if constexpr (std::is_same_v<K, uint64_t>) return KeyType::u64;
  else if constexpr (std::is_same_v<K, int64_t>) return KeyType::i64;
  else if constexpr (std::is_same_v<K, double>) return KeyType::f64;
  else static_assert(sizeof(K) == 0, "gpusort keys are u32, i32, f32, u64, i64 or f64");
}

// Every failure is reported as this exception: what() names the operation and the VkResult
// (VK_SUCCESS when the problem is not a Vulkan call, e.g. an invalid argument).
class Error : public std::runtime_error {
 public:
  Error(const std::string& operation, VkResult result = VK_SUCCESS);
  VkResult result() const { return result_; }
  const std::string& operation() const { return operation_; }

 private:
  VkResult result_;
  std::string operation_;
};

struct DeviceInfo {
  uint32_t index = 0;  // position in vkEnumeratePhysicalDevices
  std::string name;
  std::string driver;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t vendor_id = 0;
  uint32_t api_version = 0;
  uint32_t subgroup_size = 0;
  uint32_t min_subgroup_size = 0, max_subgroup_size = 0;
  bool subgroup_size_control = false;
  uint32_t max_workgroup_subgroups = 0;  // maxComputeWorkgroupSubgroups (0: not reported)
  uint32_t shared_memory_bytes = 0;   // maxComputeSharedMemorySize
  uint64_t storage_buffer_range = 0;  // maxStorageBufferRange (gpusort uses device addresses, so it
                                      // is not a limit on n)
  uint32_t max_workgroup_count_x = 0;
  uint32_t max_workgroup_size = 0;
  // Streaming multiprocessors (VK_NV_shader_sm_builtins' shaderSMCount) or compute units
  // (VK_AMD_shader_core_properties); 0 where the device reports neither.
  uint32_t compute_units = 0;
  uint64_t device_local_bytes = 0;
  uint64_t max_allocation_bytes = 0;  // maxMemoryAllocationSize
  // The largest device-local buffer gpusort allocates itself: max_allocation_bytes, or, where it
  // binds one buffer to several allocations (sparse_binding), the device's memory (at most
  // maxBufferSize). Arrays up to this size sort in core; larger ones out of core.
  uint64_t max_buffer_bytes = 0;
  // sparseBinding on the queue family gpusort uses (Context::create enables it; false in a
  // wrapped Context's info, which cannot know what the caller's device enabled).
  bool sparse_binding = false;
  float timestamp_period_ns = 1.0f;
  // Whether Onesweep's CUDA pass can run here (KernelPath): an NVIDIA device exposing
  // VK_NVX_binary_import and a library built with nvcc; in a Context's info also that the
  // extension was enabled (wrap: by the caller). cuda_why says why not ("" where it can). The
  // kernels themselves are loaded by the first sort that runs them (Context::load_cuda_kernels).
  bool cuda_kernels = false;
  std::string cuda_why;
  bool usable = false;       // has everything gpusort needs
  std::string unusable_why;  // set when !usable
};

struct ContextOptions {
  // Index (decimal digits) or case-insensitive name substring; empty: GPUSORT_DEVICE, else the
  // best device (discrete GPU, then integrated, then virtual, then CPU such as lavapipe). One
  // that matches no device throws Error with VK_SUCCESS (an invalid argument).
  std::string device;
  // Enable the Khronos validation layer (also when GPUSORT_VALIDATION is 1, true, yes or on, in
  // any case). Messages are counted (validation_messages()) and printed to stderr.
  // GPUSORT_VALIDATION 0, false, no, off or empty adds nothing; any other value throws Error.
  bool validation = false;
  // Also enable synchronization validation (also when GPUSORT_VALIDATION=sync).
  bool synchronization_validation = false;
  // The kernels the Context's sorts may use for Onesweep's passes (KernelPath; automatic follows
  // GPUSORT_KERNELS). automatic and cuda enable VK_NVX_binary_import where the device can run
  // the CUDA pass, which makes creating the device slower (about 0.13 s on an NVIDIA H200: the
  // driver sets CUDA up); spirv leaves it off, for a program whose sorts stay below the sizes the
  // CUDA pass takes (the CLI does so for its smaller inputs).
  KernelPath kernels = KernelPath::automatic;
};

// Thread safety: one Context may be used from several threads at once. Its pipeline cache and
// its submissions are internally synchronized (each under a mutex), so sort, sort_by_key,
// sort_raw and the scans may be called concurrently on one Context (they take turns on its
// queue: concurrent calls are correct, not faster), as may the Sorter constructor and the
// accessors. Destroying, assigning or moving a Context while another thread uses it is not
// allowed (copies share one device and are destroyed with the last of them).

class Context {
 public:
  static Context create(const ContextOptions& options = {});
  // Wrap a caller's device. The device must have been created with bufferDeviceAddress
  // (Vulkan 1.2), shaderInt64 and shaderBufferInt64Atomics enabled (Onesweep's look-back uses
  // 64-bit atomics), and, where the device has them, the features Context::create enables:
  // shaderSharedInt64Atomics, vulkanMemoryModel and its device scope, storageBuffer8BitAccess,
  // shaderInt8, subgroupSizeControl with computeFullSubgroups; the caller keeps ownership. Onesweep's CUDA pass
  // (KernelPath) runs on it only where the caller also enabled VK_NVX_binary_import.
  // queue_family_index must be a queue family of physical_device with compute (else Error). Queue
  // use by the convenient face is serialized inside gpusort; the caller must not submit to the same
  // queue concurrently with it.
  static Context wrap(VkInstance instance, VkPhysicalDevice physical_device, VkDevice device,
                      VkQueue queue, uint32_t queue_family_index);
  static std::vector<DeviceInfo> list_devices();

  const DeviceInfo& device_info() const;
  VkDevice device() const;
  VkPhysicalDevice physical_device() const;
  VkQueue queue() const;
  uint32_t queue_family_index() const;
  // Validation messages (warnings and errors) seen since creation; 0 when validation is off.
  uint64_t validation_messages() const;
  // Onesweep's CUDA kernels (DeviceInfo::cuda_kernels) are loaded once per Context, by the first
  // sort that runs them (about 0.35 s on an H200, overlapped with that sort's upload). This loads
  // them now, for a program that would rather pay before its first sort, and returns what was
  // loaded ("cubin sm_90", "PTX compute_90 (JIT)"); where they cannot run, throws Error saying why.
  std::string load_cuda_kernels() const;
  // The convenient face keeps, between calls, the device buffers of its largest recent sort
  // (keys, values, scratch) and a pinned staging ring of at most 4 x 32 MiB, so that sorting
  // the same sizes again allocates nothing; this frees them (the next call allocates again).
  void release_cached_memory();

  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

// Where a convenient-face sort spent its time (SortOptions::timings), in milliseconds of wall
// time unless said otherwise. The stages overlap where they can: host copies into the staging
// memory run while the DMA of the previous chunk does.
struct SortTimings {
  double upload_ms = 0;    // host memory -> device, until the sort could start
  double read_ms = 0;      //   of which running the readers (filling the staging memory)
  double sort_gpu_ms = 0;  // GPU timestamps around the sort's dispatches
  double download_ms = 0;  // device -> host memory, from the sort's end
  double write_ms = 0;     //   of which running the writers (emptying the staging memory)
  double total_ms = 0;     // the whole call
  uint64_t bytes = 0;      // keys and values moved each way
  // Out of core (SortOptions::device_memory_limit): the stages above are summed over the runs,
  // and the CPU's merge of the sorted runs (into the caller's arrays or writers) is:
  double merge_ms = 0;
  uint64_t runs = 1;  // sorted on the device one after another (1: in core)
};

struct SortOptions {
  bool descending = false;
  Algorithm algorithm = Algorithm::automatic;
  // Only bits [begin_bit, end_bit) of the key's radix order take part (floats and signed
  // integers are first mapped to an unsigned order; descending inverts it). end_bit 0 means
  // the key's full width.
  uint32_t begin_bit = 0;
  uint32_t end_bit = 0;
  // When set, the convenient face writes its stage times here.
  SortTimings* timings = nullptr;
  // Device memory the convenient face may use for one sort (keys, values and the algorithm's
  // scratch), in bytes; 0: what the device has (its device-local heap and largest allocation).
  // An array beyond it is sorted out of core: cut into runs that fit, each run uploaded, sorted
  // and downloaded in turn, then the sorted runs merged on the CPU (several threads, stable:
  // equal keys keep their input order across runs too). sort_raw / sort / sort_by_key sort the
  // runs in the caller's arrays and merge them through a host buffer of the array's size;
  // sort_streamed keeps the sorted runs in such a buffer and merges them into the writers.
  // Buffers that an earlier, larger sort left cached beyond the limit are freed first. The
  // staging ring (pinned host memory) is not counted.
  uint64_t device_memory_limit = 0;
  // Onesweep's pass kernels (KernelPath; automatic: GPUSORT_KERNELS, else the device's best).
  KernelPath kernels = KernelPath::automatic;
};

// Keys: uint32_t, int32_t, float, uint64_t, int64_t, double. Floats order by IEEE-754
// totalOrder (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN). Radix sorts, odd-even and the
// small-array path are stable; bitonic is not.
void sort_raw(Context& ctx, KeyType key_type, void* keys, uint64_t n, void* values,
              uint32_t value_bytes, const SortOptions& options = {});

// Data that is not one host array (a file, a memory map, a network buffer) is streamed: the
// sort reads its input through `read(offset, destination, bytes)` and hands back the sorted
// output through `write(offset, source, bytes)`, byte offsets into the array, in pieces that go
// straight into and out of gpusort's staging memory. Both may be called from several threads at
// once, on disjoint ranges; each must transfer exactly `bytes` or throw (the sort then throws
// that exception, after the GPU is idle). Every byte is read before any is written, so both
// may name the same storage.
using HostReader = std::function<void(uint64_t offset, void* destination, uint64_t bytes)>;
using HostWriter = std::function<void(uint64_t offset, const void* source, uint64_t bytes)>;
struct HostStream {
  HostReader read;
  HostWriter write;
};
// value_bytes 0: keys only (values is ignored).
void sort_streamed(Context& ctx, KeyType key_type, uint64_t n, const HostStream& keys,
                   uint32_t value_bytes, const HostStream& values,
                   const SortOptions& options = {});

// ---- Out of core: the pieces, for callers that keep the sorted runs themselves ----
//
// How many of n elements the convenient face sorts in one piece under options.device_memory_limit
// (the algorithm's scratch and the key and value buffers counted): n when the array fits (in
// core), else the run length of an out-of-core sort. Throws Error when the limit cannot hold a
// useful run (more than 65536 runs would be needed).
uint64_t max_run_elements(Context& ctx, KeyType key_type, uint32_t value_bytes, uint64_t n,
                          const SortOptions& options = {});

// One run sorted by gpusort: n keys and (value_bytes != 0) n values, in host memory.
struct SortedRun {
  const void* keys = nullptr;
  const void* values = nullptr;
  uint64_t n = 0;
};
// Merges runs that gpusort sorted with the same key type, value width, order and bit range
// (options.descending, begin_bit, end_bit; the rest is ignored) into one sorted sequence, on up
// to 16 host threads, each merging its own range of the output (found by multi-sequence
// selection). Stable: equal keys come out run by run, in the order of `runs`. The output goes
// to keys_out / values_out in pieces (byte offsets into the merged arrays), called from several
// threads at once on disjoint ranges.
void merge_sorted_runs(KeyType key_type, uint32_t value_bytes, std::span<const SortedRun> runs,
                       const HostWriter& keys_out, const HostWriter& values_out,
                       const SortOptions& options = {});

template <class K> void sort(Context& ctx, std::span<K> keys, const SortOptions& options = {}) {
  sort_raw(ctx, key_type_of<K>(), keys.data(), keys.size(), nullptr, 0, options);
}

// Values are 4 or 8 bytes wide, carried along with their keys. Stable (equal keys keep their
// input order, values with them) except with Algorithm::bitonic: bitonic's sort_by_key is NOT
// stable, the values of equal keys may come out in any order. Algorithm::odd_even sorts only
// arrays that fit one workgroup's shared memory (a few thousand keys) and throws Error beyond.
template <class K, class V>
void sort_by_key(Context& ctx, std::span<K> keys, std::span<V> values,
                 const SortOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "values are 4 or 8 bytes wide");
  if (keys.size() != values.size())
    throw Error("sort_by_key: " + std::to_string(keys.size()) + " keys but " +
                std::to_string(values.size()) + " values");
  sort_raw(ctx, key_type_of<K>(), keys.data(), keys.size(), values.data(), sizeof(V), options);
}

// ---- Segmented sort and argsort ----
//
// Segments are given CSR-style: S + 1 offsets, non-decreasing, the first 0 and the last n;
// segment s is [offsets[s], offsets[s + 1]). Each segment is sorted on its own (order and bit
// range as in SortOptions), stably; empty segments are allowed anywhere. The convenient face
// checks the offsets on the host and throws gpusort::Error naming the first problem (no offsets,
// first not 0, last not n, decreasing at index i, more than max_elements segments). Argsort
// writes the stable sorting permutation: indices[i] is the input position of the i-th element of
// the sorted order (per segment: positions in the whole array), as u32 or u64. Every algorithm
// but bitonic (not stable: refused) may be requested; it sorts inside.
struct SegmentOffsets {
  const void* data = nullptr;
  uint32_t bytes = 0;  // 4 (u32 offsets) or 8 (u64); 0: no segments, the whole array is one
  uint64_t count = 0;  // entries: S + 1
};
// Throws the convenient face's one-line Error for offsets that are not S + 1 CSR offsets of n
// keys (what sort_segments_* check first; callers that stage data may check before that).
void check_segment_offsets(const SegmentOffsets& offsets, uint64_t n);
// The general form: keys are read through keys.read and, when keys.write is set, written back
// sorted (else the keys are only read: argsort); values (value_bytes 0, 4 or 8) are carried
// along; when `indices` is set it receives the permutation as index_bytes (4 or 8) wide integers
// (byte offsets into that array). Streams as in sort_streamed.
void sort_segments_streamed(Context& ctx, KeyType key_type, uint64_t n, const HostStream& keys,
                            uint32_t value_bytes, const HostStream& values,
                            const SegmentOffsets& offsets, const HostWriter& indices,
                            uint32_t index_bytes, const SortOptions& options = {});
// Host arrays: keys_out may be keys_in (sorted in place) or nullptr (not written); values (in
// place) and indices may be nullptr.
void sort_segments_raw(Context& ctx, KeyType key_type, uint64_t n, const void* keys_in,
                       void* keys_out, uint32_t value_bytes, void* values,
                       const SegmentOffsets& offsets, void* indices, uint32_t index_bytes,
                       const SortOptions& options = {});

template <class O> SegmentOffsets segment_offsets(std::span<O> offsets) {
  using T = std::remove_const_t<O>;
  static_assert(std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>,
                "segment offsets are uint32_t or uint64_t");
  return {offsets.data(), uint32_t(sizeof(T)), offsets.size()};
}

template <class K, class O>
void sort_segments(Context& ctx, std::span<K> keys, std::span<O> offsets,
                   const SortOptions& options = {}) {
  sort_segments_raw(ctx, key_type_of<K>(), keys.size(), keys.data(), keys.data(), 0, nullptr,
                    segment_offsets(offsets), nullptr, 0, options);
}

template <class K, class V, class O>
void sort_segments_by_key(Context& ctx, std::span<K> keys, std::span<V> values,
                          std::span<O> offsets, const SortOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "values are 4 or 8 bytes wide");
  if (keys.size() != values.size())
    throw Error("sort_segments_by_key: " + std::to_string(keys.size()) + " keys but " +
                std::to_string(values.size()) + " values");
  sort_segments_raw(ctx, key_type_of<K>(), keys.size(), keys.data(), keys.data(), sizeof(V),
                    values.data(), segment_offsets(offsets), nullptr, 0, options);
}

// The stable sorting permutation of keys (left unmodified): sorted[i] = keys[indices[i]]. I is
// uint32_t or uint64_t. Costs about one sort_by_key with u32 values (the indices are made on the
// GPU; only the keys go up and only the indices come down).
template <class K, class I>
void argsort(Context& ctx, std::span<K> keys, std::span<I> indices,
             const SortOptions& options = {}) {
  static_assert(std::is_same_v<I, uint32_t> || std::is_same_v<I, uint64_t>,
                "argsort indices are uint32_t or uint64_t");
  if (keys.size() != indices.size())
    throw Error("argsort: " + std::to_string(keys.size()) + " keys but " +
                std::to_string(indices.size()) + " indices");
  sort_segments_raw(ctx, key_type_of<std::remove_const_t<K>>(), keys.size(), keys.data(), nullptr,
                    0, nullptr, SegmentOffsets{}, indices.data(), sizeof(I), options);
}

// The same per segment: for i in segment s, indices[i] is the position, in the whole array, of
// the i-th element of segment s's sorted order (so it lies inside segment s).
template <class K, class O, class I>
void argsort_segments(Context& ctx, std::span<K> keys, std::span<O> offsets,
                      std::span<I> indices, const SortOptions& options = {}) {
  static_assert(std::is_same_v<I, uint32_t> || std::is_same_v<I, uint64_t>,
                "argsort indices are uint32_t or uint64_t");
  if (keys.size() != indices.size())
    throw Error("argsort_segments: " + std::to_string(keys.size()) + " keys but " +
                std::to_string(indices.size()) + " indices");
  sort_segments_raw(ctx, key_type_of<std::remove_const_t<K>>(), keys.size(), keys.data(), nullptr,
                    0, nullptr, segment_offsets(offsets), indices.data(), sizeof(I), options);
}

// ---- Top-k ----
//
// The k smallest keys of an array (options.descending: the k largest), in sorted order, ties by
// position (first occurrences win): exactly the first k of the stable sort of the same keys with
// the same options (order, bit range [begin_bit, end_bit), float order). k from 0 to n (k = n is
// the whole sort; n = 0 and k = 0 do nothing); k > n is refused. A radix select finds the k-th
// key, so the device reads the keys a few times and sorts only the k (docs/design/topk.md).
// Host arrays: keys_out (k keys; may be nullptr when only indices are wanted), values (n values
// of value_bytes 4 or 8, or nullptr) with values_out (k values), indices_out (nullptr, or k
// positions into keys, index_bytes 4 or 8 wide). options.algorithm is the sort of the k survivors
// (stable: bitonic is refused).
void topk_raw(Context& ctx, KeyType key_type, uint64_t n, const void* keys, uint64_t k,
              void* keys_out, uint32_t value_bytes, const void* values, void* values_out,
              void* indices_out, uint32_t index_bytes, const SortOptions& options = {});

// k = keys_out.size().
template <class K>
void topk(Context& ctx, std::span<const K> keys, std::span<K> keys_out,
          const SortOptions& options = {}) {
  topk_raw(ctx, key_type_of<K>(), keys.size(), keys.data(), keys_out.size(), keys_out.data(), 0,
           nullptr, nullptr, nullptr, 0, options);
}
// The k smallest (largest: options.descending) as a new vector.
template <class K>
std::vector<K> topk(Context& ctx, std::span<const K> keys, uint64_t k,
                    const SortOptions& options = {}) {
  if (k > keys.size())
    throw Error("topk: k = " + std::to_string(k) + " is more than the " +
                std::to_string(keys.size()) + " keys");
  std::vector<K> out(k);
  topk(ctx, keys, std::span<K>(out), options);
  return out;
}
// With values: k = keys_out.size() = values_out.size().
template <class K, class V>
void topk_by_key(Context& ctx, std::span<const K> keys, std::span<const V> values,
                 std::span<K> keys_out, std::span<V> values_out, const SortOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "values are 4 or 8 bytes wide");
  if (keys.size() != values.size())
    throw Error("topk_by_key: " + std::to_string(keys.size()) + " keys but " +
                std::to_string(values.size()) + " values");
  if (keys_out.size() != values_out.size())
    throw Error("topk_by_key: " + std::to_string(keys_out.size()) + " output keys but " +
                std::to_string(values_out.size()) + " output values");
  topk_raw(ctx, key_type_of<K>(), keys.size(), keys.data(), keys_out.size(), keys_out.data(),
           sizeof(V), values.data(), values_out.data(), nullptr, 0, options);
}
// With the positions: k = indices.size(); keys_out is empty (not written) or of k keys.
// keys[indices[i]] is the i-th of the k. I is uint32_t or uint64_t.
template <class K, class I>
void topk_indices(Context& ctx, std::span<const K> keys, std::span<K> keys_out,
                  std::span<I> indices, const SortOptions& options = {}) {
  static_assert(std::is_same_v<I, uint32_t> || std::is_same_v<I, uint64_t>,
                "top-k indices are uint32_t or uint64_t");
  if (!keys_out.empty() && keys_out.size() != indices.size())
    throw Error("topk_indices: " + std::to_string(keys_out.size()) + " output keys but " +
                std::to_string(indices.size()) + " indices");
  topk_raw(ctx, key_type_of<K>(), keys.size(), keys.data(), indices.size(),
           keys_out.empty() ? nullptr : keys_out.data(), 0, nullptr, nullptr, indices.data(),
           sizeof(I), options);
}

// Per segment (S + 1 CSR offsets, as the segmented sort; rows of equal length are the offsets
// 0, len, 2 len, ...): each segment's min(k, its length) first keys of its stable sort, the
// segments' results one after another (segment s's from the sum of min(k, length) over the
// segments before it; topk_segments_count gives the total). indices are positions in the whole
// array, as argsort_segments'. Outputs and values as topk_raw's.
uint64_t topk_segments_count(const SegmentOffsets& offsets, uint64_t k);
void topk_segments_raw(Context& ctx, KeyType key_type, uint64_t n, const void* keys,
                       const SegmentOffsets& offsets, uint64_t k, void* keys_out,
                       uint32_t value_bytes, const void* values, void* values_out,
                       void* indices_out, uint32_t index_bytes, const SortOptions& options = {});

// Prefix scans of u32 / u64 arrays (wrapping arithmetic), any length; in and out may alias.
void exclusive_scan(Context& ctx, std::span<const uint32_t> in, std::span<uint32_t> out);
void inclusive_scan(Context& ctx, std::span<const uint32_t> in, std::span<uint32_t> out);
void exclusive_scan(Context& ctx, std::span<const uint64_t> in, std::span<uint64_t> out);
void inclusive_scan(Context& ctx, std::span<const uint64_t> in, std::span<uint64_t> out);

// ---- Engine face ----
//
// A Sorter records a sort into the caller's command buffer, on the caller's buffers, with
// caller-owned scratch: record() allocates no device memory, submits nothing and never waits.
// The command buffer must be in the recording state, outside a render pass, on a queue family
// with compute.

// A place in a caller's buffer. Every buffer handed to a Sorter must have been created with
// VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT (scratch also
// with VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, reserved for algorithms that read dispatch sizes
// from it) and bound to memory allocated with VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT, on the
// Context's device.
// Keys, values and scratch offsets are multiples of 16, the count's a multiple of 4. From the
// offset on, keys hold max_n keys, values max_n values, scratch scratch_bytes(max_n) bytes
// (max_n = n for record()); these ranges and the count must not overlap.
struct BufferRef {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
};

struct SorterConfig {
  KeyType key = KeyType::u32;
  uint32_t value_bytes = 0;  // 0 (keys only), 4 or 8
  Algorithm algorithm = Algorithm::automatic;
  bool descending = false;
  uint32_t begin_bit = 0;
  uint32_t end_bit = 0;  // 0: the key's full width
  // record_indirect()'s count: a u32 (4) or a u64 (8; 0 means 4). A u64 count costs one more
  // dispatch and barrier (it is clamped to max_n into a u32 slot of scratch) and 256 bytes of
  // scratch; a count of 2^32 or more is clamped like any count above max_n.
  uint32_t count_bytes = 4;
  // Onesweep's pass kernels (KernelPath; automatic: GPUSORT_KERNELS, else the device's best).
  // The CUDA path needs VK_NVX_binary_import enabled on a wrapped device.
  KernelPath kernels = KernelPath::automatic;
};

// Synchronization contract of record() / record_indirect():
//  - Before: every access by the compute shaders of the sort is at
//    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT; keys, values and scratch are read and written
//    (VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT), the count is only read
//    (VK_ACCESS_SHADER_READ_BIT). The caller records the barrier that makes its earlier writes of
//    any of them (keys, values, count, and scratch if it touched it) available and visible to
//    those accesses, and orders its earlier reads of them before the sort (e.g. srcStage TRANSFER
//    / srcAccess TRANSFER_WRITE after a vkCmdCopyBuffer that produced the keys, or COMPUTE_SHADER
//    / SHADER_WRITE after a compute pass that did).
//  - During: gpusort records compute dispatches and its own barriers between them.
//  - After: the recorded sequence always ends with a barrier from COMPUTE_SHADER (SHADER_WRITE |
//    SHADER_READ) to COMPUTE_SHADER (SHADER_READ | SHADER_WRITE). So a later compute dispatch
//    may use the sorted keys and values directly, and a later sort may reuse the same scratch
//    with no barrier of the caller's. Any other consumer (indirect dispatch or draw arguments,
//    transfer, vertex or fragment shaders, the host) needs the caller's barrier from
//    COMPUTE_SHADER / SHADER_WRITE. The count may be rewritten only after the sort (an
//    execution dependency from COMPUTE_SHADER).
// Scratch needs no initialization and holds garbage afterwards. The result is in keys/values.
//
// Thread safety: a Sorter is immutable after construction; record() and record_indirect() may be
// called from several threads at once on different command buffers (the pipeline cache they
// share is mutex-protected), as long as sorts that may execute at the same time on the GPU use
// distinct scratch. Any number of Sorters (any configurations) may share one Context and one
// command buffer. A Sorter keeps its Context's device alive; it must be destroyed before a
// wrapped device is. Pipelines are created in the constructor (which records the plans of a few
// sizes up to 65536 elements, direct and indirect, on temporary buffers into a command buffer it
// never submits), so record() of those sizes compiles nothing; a plan that needs one more
// pipeline creates it once, on first use (measured on lavapipe: first record() 30-47 ms without
// this, 0.02 ms with it; construction then takes 40-90 ms).
//
// Invalid arguments (null or misaligned buffers, values given or missing for the config,
// overlapping ranges, n > max_elements()) throw gpusort::Error before anything is recorded.
class Sorter {
 public:
  Sorter(Context& ctx, const SorterConfig& config);
  ~Sorter();
  Sorter(Sorter&&) noexcept;
  Sorter& operator=(Sorter&&) noexcept;

  // Scratch bytes for sorts of up to max_n elements (record() with n <= max_n, or
  // record_indirect() with this max_n). Never 0, so a scratch buffer can always be created.
  uint64_t scratch_bytes(uint64_t max_n) const;
  // The largest n this Sorter's algorithm takes on this device (odd_even: what fits one
  // workgroup's shared memory; onesweep and automatic: max_onesweep_elements; the others:
  // gpusort::max_elements).
  uint64_t max_elements() const;
  // Whether equal keys keep their input order (all algorithms but bitonic).
  bool stable() const;
  // The kernels a recording of up to max_n elements runs (KernelPath): "spirv", or "cuda
  // <tile>" where Onesweep's passes are CUDA kernels launched through VK_NVX_binary_import.
  std::string kernel_path(uint64_t max_n) const;
  // Sorts n elements; n is known when recording. `values` is {} when config.value_bytes == 0.
  void record(VkCommandBuffer cmd, BufferRef keys, BufferRef values, BufferRef scratch,
              uint64_t n) const;
  // Sorts n elements where n is the u32 (config.count_bytes = 4) or u64 (8) at `count`, read
  // when the GPU executes the sort and clamped to max_n (0 and 1 leave keys and values as they
  // are). Elements from n to max_n are neither read nor written. A u64 count's offset is a
  // multiple of 8.
  void record_indirect(VkCommandBuffer cmd, BufferRef keys, BufferRef values, BufferRef scratch,
                       BufferRef count, uint64_t max_n) const;
  const SorterConfig& config() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// A SegmentedSorter records a segmented sort (and, optionally, its permutation) into the caller's
// command buffer: the same rules as Sorter (buffers, alignment, no allocation, no submission,
// thread safety, invalid arguments refused before anything is recorded), with:
//  - offsets: S + 1 CSR offsets (u32 or u64 as configured; offset a multiple of offset_bytes),
//    only read; indices: {} or n u32 receiving the permutation (indices[i] = input position of
//    output i); keys and values are sorted in place, each segment on its own, stably.
//  - record(): n and S known when recording; offsets[S] must be n. record_indirect(): S is the
//    u32 at segment_count (clamped to max_segments) and n is offsets[S] (clamped to max_n), both
//    read when the GPU executes the sort; elements from n to max_n are neither read nor written.
//    Offsets that are not CSR (decreasing, first not 0, last not n) give an unspecified order of
//    the n elements but no access outside the buffers' stated ranges.
//  - Synchronization contract: Sorter's, word for word, with offsets and segment_count in the
//    role of the count (only read, at COMPUTE_SHADER / SHADER_READ; rewritten only after the
//    sort) and indices in the role of the values (read and written).
//  - scratch_bytes(max_n, max_segments) covers any record() with n <= max_n and S <= max_segments,
//    and record_indirect() with these maxima. Scratch needs no initialization.
//  - Pipelines are created in the constructor for plans of n = 1000 and 65536 (any segment
//    count, direct and indirect); another plan creates what it lacks once, on first use.
struct SegmentedSorterConfig {
  KeyType key = KeyType::u32;
  uint32_t value_bytes = 0;   // 0 (keys only), 4 or 8
  uint32_t offset_bytes = 4;  // 4 (u32 offsets) or 8 (u64)
  Algorithm algorithm = Algorithm::automatic;  // of the inner sorts; bitonic is refused
  bool descending = false;
  uint32_t begin_bit = 0;
  uint32_t end_bit = 0;  // 0: the key's full width
};

class SegmentedSorter {
 public:
  SegmentedSorter(Context& ctx, const SegmentedSorterConfig& config);
  ~SegmentedSorter();
  SegmentedSorter(SegmentedSorter&&) noexcept;
  SegmentedSorter& operator=(SegmentedSorter&&) noexcept;

  // Never 0. max_segments: S (offsets hold S + 1 entries).
  uint64_t scratch_bytes(uint64_t max_n, uint64_t max_segments) const;
  void record(VkCommandBuffer cmd, BufferRef keys, BufferRef values, BufferRef offsets,
              BufferRef indices, BufferRef scratch, uint64_t n, uint64_t segments) const;
  void record_indirect(VkCommandBuffer cmd, BufferRef keys, BufferRef values, BufferRef offsets,
                       BufferRef indices, BufferRef scratch, BufferRef segment_count,
                       uint64_t max_n, uint64_t max_segments) const;
  const SegmentedSorterConfig& config() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// A TopKSelector records a top-k (the k smallest keys, or the k largest, sorted, ties by
// position; as topk_raw) into the caller's command buffer: the same rules as Sorter (buffers,
// alignment, no allocation, no submission, thread safety, invalid arguments refused before
// anything is recorded), with:
//  - keys (n keys) and values (n values; {} without) are only read; keys_out receives min(k, n)
//    keys, values_out their values ({} without values), indices ({} or min(k, n) u32) their
//    positions in keys.
//  - record(): n known when recording. record_indirect(): n is the u32 at `count` (clamped to
//    max_n), read when the GPU executes; outputs from min(k, n) to k are left as they are.
//  - Synchronization contract: Sorter's, with keys and values only read and keys_out, values_out
//    and indices in the role of the sorted arrays.
//  - scratch_bytes(max_n, k) covers record() with n <= max_n and that k (or less), and
//    record_indirect() with these. Scratch needs no initialization.
//  - record_segments(): per segment (S + 1 CSR offsets of config.offset_bytes, as
//    SegmentedSorter's, only read; offsets[S] = n), each segment's min(k, its length) first keys,
//    one segment after another (from the sum of min(k, length) over the segments before it, as
//    topk_segments_raw); outputs hold min(n, S k) elements (the count is computed on the GPU;
//    topk_segments_count gives it on the host); indices are positions in the whole array. Its
//    scratch: segments_scratch_bytes(max_n, max_segments, k).
//  - Pipelines are created in the constructor for plans of n = 1000 and 65536 (direct and
//    indirect) and of 64 segments; another plan creates what it lacks once, on first use.
struct TopKConfig {
  KeyType key = KeyType::u32;
  uint32_t value_bytes = 0;  // 0 (keys only), 4 or 8
  bool largest = false;      // the k largest (the first k of the descending sort)
  uint32_t begin_bit = 0;
  uint32_t end_bit = 0;  // 0: the key's full width
  Algorithm algorithm = Algorithm::automatic;  // the k survivors' sort; bitonic is refused
  uint32_t offset_bytes = 4;  // record_segments' offsets: 4 (u32) or 8 (u64)
};

class TopKSelector {
 public:
  TopKSelector(Context& ctx, const TopKConfig& config);
  ~TopKSelector();
  TopKSelector(TopKSelector&&) noexcept;
  TopKSelector& operator=(TopKSelector&&) noexcept;

  // Never 0.
  uint64_t scratch_bytes(uint64_t max_n, uint64_t k) const;
  void record(VkCommandBuffer cmd, BufferRef keys, BufferRef values, BufferRef keys_out,
              BufferRef values_out, BufferRef indices, BufferRef scratch, uint64_t n,
              uint64_t k) const;
  void record_indirect(VkCommandBuffer cmd, BufferRef keys, BufferRef values, BufferRef keys_out,
                       BufferRef values_out, BufferRef indices, BufferRef scratch,
                       BufferRef count, uint64_t max_n, uint64_t k) const;
  // Never 0.
  uint64_t segments_scratch_bytes(uint64_t max_n, uint64_t max_segments, uint64_t k) const;
  void record_segments(VkCommandBuffer cmd, BufferRef keys, BufferRef values, BufferRef offsets,
                       BufferRef keys_out, BufferRef values_out, BufferRef indices,
                       BufferRef scratch, uint64_t n, uint64_t segments, uint64_t k) const;
  const TopKConfig& config() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The largest n every algorithm accepts in one device sort (the segmented sort and argsort too).
inline constexpr uint64_t max_elements = (uint64_t(1) << 31) - 1;
// The largest n Onesweep (and automatic, which takes Onesweep there) sorts in one device sort,
// where the device holds the buffers (DeviceInfo::max_buffer_bytes): element indices are u32,
// addresses 64-bit. record_indirect's max_n stays below 2^32 (its count is clamped into a u32).
// The convenient face sorts larger arrays out of core, in runs.
inline constexpr uint64_t max_onesweep_elements = uint64_t(1) << 32;

}  // namespace gpusort
