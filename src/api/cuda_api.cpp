// The CUDA face (include/gpusort/cuda.hpp): arguments checked, the one place that chooses its
// kernels (one block up to the small-array sort's capacity, Onesweep above), the scratch, and
// what it composes from the sorts: argsort and 8-byte values (a sort by u32 positions, then
// the values gathered).
#include <gpusort/cuda.hpp>

#include <algorithm>
#include <initializer_list>

#include "algorithms/onesweep/cuda/stream_sort.hpp"
#include "algorithms/small_sort/cuda/stream_sort.hpp"
#include "primitives/cuda/elementwise.hpp"

namespace gpusort::cuda {

namespace {

// Element positions are u32 in the kernels.
constexpr uint64_t max_n = uint64_t(1) << 32;

// The sort the kernels run: keys with no values or 4-byte ones.
SortSpec kernel_spec(KeyType key_type, uint32_t value_bytes, const Options& options) {
  if (value_bytes != 0 && value_bytes != 4 && value_bytes != 8)
    throw Error("values must be 0, 4 or 8 bytes wide, not " + std::to_string(value_bytes));
  return make_sort_spec(key_type, value_bytes == 0 ? 0 : 4, options.descending, options.begin_bit,
                        options.end_bit);
}

uint64_t sort_scratch(const SortSpec& spec, uint64_t n) {
  return block_sort_shape(spec, n) ? 0 : align_up(onesweep_stream_scratch_bytes(spec, n), 256);
}

// The scratch of one call: the sort's, then `extra` buffers of the given bytes, each aligned.
struct Scratch {
  uint64_t offsets[3] = {};
  uint64_t total = 0;
  Scratch(uint64_t sort_bytes, std::initializer_list<uint64_t> extra) : total(sort_bytes) {
    size_t i = 0;
    for (uint64_t bytes : extra) {
      offsets[i++] = total;
      total += align_up(bytes, 256);
    }
  }
};

Scratch sort_layout(const SortSpec& spec, uint32_t value_bytes, uint64_t n) {
  if (value_bytes == 8) return Scratch(sort_scratch(spec, n), {n * 4, n * 8});  // positions, copy
  return Scratch(sort_scratch(spec, n), {});
}

Scratch argsort_layout(const SortSpec& spec, uint32_t index_bytes, uint64_t n) {
  const uint64_t key_copy = n * spec.key_words * 4;
  if (index_bytes == 8) return Scratch(sort_scratch(spec, n), {key_copy, n * 4});
  return Scratch(sort_scratch(spec, n), {key_copy});
}

void check_n(uint64_t n) {
  if (n >= max_n)
    throw Error("the CUDA face sorts fewer than 2^32 elements, not " + std::to_string(n));
}

// The caller's scratch, or one allocated on the stream for this call.
class CallScratch {
 public:
  CallScratch(const Options& options, uint64_t bytes, CUstream stream) : stream_(stream) {
    if (bytes == 0) return;
    if (options.scratch) {
      if (options.scratch_size < bytes)
        throw Error("scratch of " + std::to_string(options.scratch_size) + " bytes is below the " +
                    std::to_string(bytes) + " this sort needs (scratch_bytes)");
      base_ = reinterpret_cast<CUdeviceptr>(options.scratch);
      return;
    }
    check(driver().mem_alloc_async(&base_, size_t(bytes), stream), "cuMemAllocAsync");
    owned_ = true;
  }
  ~CallScratch() {
    if (owned_) driver().mem_free_async(base_, stream_);
  }
  CUdeviceptr at(uint64_t offset) const { return base_ + offset; }

 private:
  CUstream stream_;
  CUdeviceptr base_ = 0;
  bool owned_ = false;
};

// Keys (and 4-byte values) sorted in place: one block where it holds them, else Onesweep.
void sort_in_place(Module& module, const SortSpec& spec, const StreamTargets& t, CUstream stream) {
  if (const BlockSortShape* shape = block_sort_shape(spec, t.n))
    block_stream_sort(module, *shape, spec, t, stream);
  else
    onesweep_stream_sort(module, spec, t, stream);
}

void elementwise(Module& module, const char* kernel, const ElementwiseParams& params,
                 CUstream stream) {
  const uint64_t groups =
      std::clamp<uint64_t>((params.n + kElementwiseThreads - 1) / kElementwiseThreads, 1,
                           8ull * module.sm_count());
  launch(module.function(kernel), uint32_t(groups), kElementwiseThreads, 0, stream, params);
}

CUdeviceptr address(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

}  // namespace

std::string unavailable_why() {
  return driver_unavailable_why();
}

uint64_t scratch_bytes(KeyType key_type, uint32_t value_bytes, uint64_t n,
                       const Options& options) {
  return sort_layout(kernel_spec(key_type, value_bytes, options), value_bytes, n).total;
}

uint64_t argsort_scratch_bytes(KeyType key_type, uint32_t index_bytes, uint64_t n,
                               const Options& options) {
  if (index_bytes != 4 && index_bytes != 8)
    throw Error("argsort indices are 4 or 8 bytes wide, not " + std::to_string(index_bytes));
  return argsort_layout(kernel_spec(key_type, 4, options), index_bytes, n).total;
}

void sort_raw(KeyType key_type, void* keys, void* values, uint32_t value_bytes, uint64_t n,
              Stream stream, const Options& options) {
  if (!values) value_bytes = 0;
  const SortSpec spec = kernel_spec(key_type, value_bytes, options);
  check_n(n);
  if (n == 0) return;
  if (!keys) throw Error("keys is null");
  const StreamContext context(stream);
  Module& module = module_for(context.context());
  const Scratch layout = sort_layout(spec, value_bytes, n);
  const CallScratch scratch(options, layout.total, stream);
  StreamTargets t{address(keys), address(values), address(options.count), scratch.at(0), n};
  if (value_bytes != 8) return sort_in_place(module, spec, t, stream);
  // 8-byte values: sorted by their positions, then gathered from a copy.
  const CUdeviceptr positions = scratch.at(layout.offsets[0]), copy = scratch.at(layout.offsets[1]);
  check(driver().memcpy_dtod_async(copy, address(values), size_t(n * 8), stream),
        "cuMemcpyDtoDAsync");
  elementwise(module, kIotaKernel,
              {reinterpret_cast<void*>(positions), nullptr, nullptr, options.count, n}, stream);
  t.values = positions;
  sort_in_place(module, spec, t, stream);
  elementwise(module, kGather64Kernel,
              {values, reinterpret_cast<const void*>(copy),
               reinterpret_cast<const uint32_t*>(positions), options.count, n},
              stream);
}

void argsort_raw(KeyType key_type, const void* keys, void* indices, uint32_t index_bytes,
                 uint64_t n, Stream stream, const Options& options) {
  if (index_bytes != 4 && index_bytes != 8)
    throw Error("argsort indices are 4 or 8 bytes wide, not " + std::to_string(index_bytes));
  const SortSpec spec = kernel_spec(key_type, 4, options);
  check_n(n);
  if (n == 0) return;
  if (!keys || !indices) throw Error(!keys ? "keys is null" : "indices is null");
  const StreamContext context(stream);
  Module& module = module_for(context.context());
  const Scratch layout = argsort_layout(spec, index_bytes, n);
  const CallScratch scratch(options, layout.total, stream);
  // The keys are sorted in a copy, with their positions.
  const CUdeviceptr key_copy = scratch.at(layout.offsets[0]);
  check(driver().memcpy_dtod_async(key_copy, address(keys), size_t(n * spec.key_words * 4), stream),
        "cuMemcpyDtoDAsync");
  const CUdeviceptr positions =
      index_bytes == 4 ? address(indices) : scratch.at(layout.offsets[1]);
  elementwise(module, kIotaKernel,
              {reinterpret_cast<void*>(positions), nullptr, nullptr, options.count, n}, stream);
  sort_in_place(module, spec, {key_copy, positions, address(options.count), scratch.at(0), n},
                stream);
  if (index_bytes == 8)
    elementwise(module, kWidenKernel,
                {indices, reinterpret_cast<const void*>(positions), nullptr, options.count, n},
                stream);
}

}  // namespace gpusort::cuda
