// The CUDA face (include/gpusort/cuda.hpp): arguments checked, the one place that chooses its
// kernels (the rank sort or one block for small arrays, Onesweep above), the scratch, and
// what it composes from the sorts: argsort and 8-byte values (a sort by u32 positions, then
// the values gathered), and NumPy's float order (primitives/cuda/float_order.hpp).
#include <gpusort/cuda.hpp>

#include <algorithm>
#include <initializer_list>

#include "algorithms/onesweep/cuda/stream_sort.hpp"
#include "algorithms/small_sort/cuda/stream_sort.hpp"
#include "api/cuda_call.hpp"
#include "primitives/cuda/elementwise.hpp"
#include "primitives/cuda/float_order.hpp"
#include "primitives/key_order.h"

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
  if (rank_sort_shape(spec, n)) return align_up(rank_sort_scratch_bytes(spec, n), 256);
  return block_sort_shape(spec, n) ? 0 : align_up(onesweep_stream_scratch_bytes(spec, n), 256);
}

// How the call sorts floats in NumPy's order (only over the full bit range): not at all (other
// keys, or totalOrder); in the pass kernels (`kernels_spec`: the keys kept as they are, each pass
// mapping them for its digits and loading its tile's again to stage them); or around the sort (the
// keys read canonical or made so, the original zeros and NaNs written back: NumpyOrder).
enum class NumpyOrderBy { none, kernels, around };

// The passes take NumPy's order where Onesweep sorts n on a row built for it (docs/design/
// cuda-face.md, "Fewer launches a call"). in_passes_pays false: the sort needs nothing around it
// (an argsort's fused first pass reads the keys canonical and no one reads the sorted keys), and
// the passes' second load of each tile costs it more than that.
NumpyOrderBy numpy_order(const SortSpec& spec, const Options& options, uint64_t n,
                         bool in_passes_pays = true) {
  if (!options.numpy_float_order || spec.key_kind != key_kind_float) return NumpyOrderBy::none;
  if (spec.begin_bit != 0 || spec.end_bit != spec.key_words * 32)
    throw Error("numpy_float_order sorts the full key, not bits [" +
                std::to_string(spec.begin_bit) + ", " + std::to_string(spec.end_bit) + ")");
  if (in_passes_pays && !rank_sort_shape(spec, n) && !block_sort_shape(spec, n) &&
      onesweep_stream_numpy_order(spec, n))
    return NumpyOrderBy::kernels;
  return NumpyOrderBy::around;
}

// The spec the kernels sort: NumPy's float order as its own key kind where they take it.
SortSpec kernels_spec(const SortSpec& spec, NumpyOrderBy numpy) {
  SortSpec kernels = spec;
  if (numpy == NumpyOrderBy::kernels) kernels.key_kind = key_kind_numpy_float;
  return kernels;
}

uint64_t float_order_records_bytes(uint64_t n) {
  return float_order_chunks(n) * sizeof(FloatOrderChunk) + sizeof(FloatOrderTotals);
}

// The scratch of one call: the sort's, then `extra` buffers of the given bytes, each aligned.
struct Scratch {
  uint64_t offsets[4] = {};
  uint64_t total = 0;
  Scratch(uint64_t sort_bytes, std::initializer_list<uint64_t> extra) : total(sort_bytes) {
    size_t i = 0;
    for (uint64_t bytes : extra) {
      offsets[i++] = total;
      total += align_up(bytes, 256);
    }
  }
};

// 8-byte values: positions, a copy of the values; NumPy order: the set-aside keys (none for a
// sorted copy, whose source stays), the records. The NumPy order's buffers are the last two.
Scratch sort_layout(const SortSpec& spec, uint32_t value_bytes, uint64_t n, bool numpy, bool copy) {
  const uint64_t aside = numpy && !copy ? n * spec.key_words * 4 : 0;
  const uint64_t records = numpy ? float_order_records_bytes(n) : 0;
  if (value_bytes == 8) return Scratch(sort_scratch(spec, n), {n * 4, n * 8, aside, records});
  return Scratch(sort_scratch(spec, n), {aside, records});
}

// The key copy (none where the caller gives sorted_keys), the u32 positions of u64 indices.
Scratch argsort_layout(const SortSpec& spec, uint32_t index_bytes, uint64_t n,
                       bool sorted_keys) {
  const uint64_t key_copy = sorted_keys ? 0 : n * spec.key_words * 4;
  if (index_bytes == 8) return Scratch(sort_scratch(spec, n), {key_copy, n * 4});
  return Scratch(sort_scratch(spec, n), {key_copy});
}

void check_n(uint64_t n) {
  if (n >= max_n)
    throw Error("the CUDA face sorts fewer than 2^32 elements, not " + std::to_string(n));
}

CUdeviceptr address(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

std::string float_suffix(const SortSpec& spec) {
  return spec.key_words == 1 ? "f32" : "f64";
}

// Keys (and 4-byte values) sorted: by ranks or in one block in their bands of small sizes, else
// Onesweep. The rank sort and Onesweep's fused kernels read t.keys_first, make the positions and
// widen them themselves; Onesweep's fused kernels also read NumPy's floats canonical
// (t.canonical); Onesweep's other kernels read t.keys_first; the steps a sort does not take run
// around it.
void sort_targets(Module& module, const SortSpec& spec, const StreamTargets& t,
                  const Options& options, CUstream stream) {
  const RankSortShape* rank = rank_sort_shape(spec, t.n);
  const BlockSortShape* block = rank ? nullptr : block_sort_shape(spec, t.n);
  const bool fuses = !rank && !block && onesweep_stream_fuses(spec, t.n);
  if (t.canonical && !fuses) {
    // The canonical copy made first, and sorted where it lies.
    elementwise(module, (kCanonicalCopy + float_suffix(spec)).c_str(),
                {reinterpret_cast<void*>(t.keys),
                 reinterpret_cast<const void*>(t.keys_first ? t.keys_first : t.keys), nullptr,
                 options.count, t.n},
                stream);
    StreamTargets copied = t;
    copied.keys_first = 0;
    copied.canonical = false;
    return sort_targets(module, spec, copied, options, stream);
  }
  if (rank) return rank_stream_sort(module, *rank, spec, t, stream);
  if (!block && (!t.fused() || fuses)) return onesweep_stream_sort(module, spec, t, stream);
  StreamTargets unfused{t.keys, t.values, t.count, t.scratch, t.n};
  if (!block)
    unfused.keys_first = t.keys_first;
  else if (t.keys_first)
    check(driver().memcpy_dtod_async(t.keys, t.keys_first, size_t(t.n * spec.key_words * 4),
                                     stream),
          "cuMemcpyDtoDAsync");
  if (t.values_iota)
    elementwise(module, kIotaKernel,
                {reinterpret_cast<void*>(t.values), nullptr, nullptr, options.count, t.n}, stream);
  if (block)
    block_stream_sort(module, *block, spec, unfused, stream);
  else
    onesweep_stream_sort(module, spec, unfused, stream);
  if (t.values_wide)
    elementwise(module, kWidenKernel,
                {reinterpret_cast<void*>(t.values_wide), reinterpret_cast<const void*>(t.values),
                 nullptr, options.count, t.n},
                stream);
}

// NumPy order around a sort: before() canonicalizes the keys (in place, setting the zeros and NaNs
// aside where any is not canonical; or as it copies them from options.keys_in), after() writes
// the original zeros and NaNs back over their runs (from the set-aside, or from keys_in).
class NumpyOrder {
 public:
  NumpyOrder(Module& module, const SortSpec& spec, CUdeviceptr keys, CUdeviceptr aside,
             CUdeviceptr records, const Options& options, uint64_t n, CUstream stream)
      : module_(module), suffix_(float_suffix(spec)), stream_(stream) {
    const uint32_t chunks = float_order_chunks(n);
    params_ = {reinterpret_cast<void*>(keys),
               options.keys_in,
               reinterpret_cast<void*>(aside),
               reinterpret_cast<FloatOrderChunk*>(records),
               reinterpret_cast<FloatOrderTotals*>(records + chunks * sizeof(FloatOrderChunk)),
               options.count,
               n,
               chunks,
               spec.descending ? 1u : 0u};
  }
  void before() const {
    launch(module_.function(kFloatOrderCount + suffix_), params_.chunk_count, kFloatOrderThreads,
           0, stream_, params_);
    if (params_.source != nullptr) return;
    launch(module_.function(kFloatOrderScan), 1, kFloatOrderMaxChunks, 0, stream_, params_);
    launch(module_.function(kFloatOrderSetAside + suffix_), params_.chunk_count,
           kFloatOrderThreads, 0, stream_, params_);
  }
  void after() const {
    if (params_.source != nullptr)
      return launch(module_.function(kFloatOrderRestoreCopy + suffix_), params_.chunk_count,
                    kFloatOrderThreads, 0, stream_, params_);
    const uint64_t groups = std::clamp<uint64_t>(
        (params_.n + kFloatOrderThreads - 1) / kFloatOrderThreads, 1, 2ull * module_.sm_count());
    launch(module_.function(kFloatOrderRestore + suffix_), uint32_t(groups), kFloatOrderThreads, 0,
           stream_, params_);
  }

 private:
  Module& module_;
  std::string suffix_;
  CUstream stream_;
  FloatOrderParams params_{};
};

}  // namespace

std::string unavailable_why() {
  return driver_unavailable_why();
}

uint64_t scratch_bytes(KeyType key_type, uint32_t value_bytes, uint64_t n,
                       const Options& options) {
  const SortSpec spec = kernel_spec(key_type, value_bytes, options);
  return sort_layout(spec, value_bytes, n, numpy_order(spec, options, n) == NumpyOrderBy::around,
                     options.keys_in != nullptr)
      .total;
}

uint64_t argsort_scratch_bytes(KeyType key_type, uint32_t index_bytes, uint64_t n,
                               const Options& options) {
  if (index_bytes != 4 && index_bytes != 8)
    throw Error("argsort indices are 4 or 8 bytes wide, not " + std::to_string(index_bytes));
  const SortSpec spec = kernel_spec(key_type, 4, options);
  numpy_order(spec, options, n);  // its argument checks
  return argsort_layout(spec, index_bytes, n, options.sorted_keys != nullptr).total;
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
  const NumpyOrderBy by = numpy_order(spec, options, n);
  const bool numpy = by == NumpyOrderBy::around;  // the passes around the sort
  const Scratch layout = sort_layout(spec, value_bytes, n, numpy, options.keys_in != nullptr);
  const CallScratch scratch(options, layout.total, stream, "", "this sort needs (scratch_bytes)");
  const int aside_buffer = value_bytes == 8 ? 2 : 0;
  const NumpyOrder order_pass(module, spec, address(keys), scratch.at(layout.offsets[aside_buffer]),
                              scratch.at(layout.offsets[aside_buffer + 1]), options, n, stream);
  if (numpy) order_pass.before();
  StreamTargets t{address(keys), address(values), address(options.count), scratch.at(0), n};
  // A sorted copy: the keys read from keys_in by the sort (in NumPy's order around the sort copied
  // canonical by the count pass, which reads them).
  if (!numpy) t.keys_first = address(options.keys_in);
  const SortSpec sorted = kernels_spec(spec, by);
  if (value_bytes != 8) {
    sort_targets(module, sorted, t, options, stream);
    if (numpy) order_pass.after();
    return;
  }
  // 8-byte values: sorted by their positions, then gathered from a copy.
  const CUdeviceptr positions = scratch.at(layout.offsets[0]), copy = scratch.at(layout.offsets[1]);
  check(driver().memcpy_dtod_async(copy, address(values), size_t(n * 8), stream),
        "cuMemcpyDtoDAsync");
  t.values = positions;
  t.values_iota = true;
  sort_targets(module, sorted, t, options, stream);
  elementwise(module, kGather64Kernel,
              {values, reinterpret_cast<const void*>(copy),
               reinterpret_cast<const uint32_t*>(positions), options.count, n},
              stream);
  if (numpy) order_pass.after();
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
  const NumpyOrderBy by =
      numpy_order(spec, options, n, options.sorted_keys || !onesweep_stream_fuses(spec, n));
  const bool numpy = by == NumpyOrderBy::around;  // read canonical, the sorted keys fixed after
  const Scratch layout = argsort_layout(spec, index_bytes, n, options.sorted_keys != nullptr);
  const CallScratch scratch(options, layout.total, stream, "", "this sort needs (scratch_bytes)");
  // The keys are sorted into a copy (the caller's sorted_keys, or scratch) with their positions
  // (u32: the indices themselves; u64: u32 ones in scratch, widened into the indices), read
  // where they are; in NumPy's order read canonical (sort_targets).
  const CUdeviceptr key_copy =
      options.sorted_keys ? address(options.sorted_keys) : scratch.at(layout.offsets[0]);
  const bool wide = index_bytes == 8;
  StreamTargets t{key_copy, wide ? scratch.at(layout.offsets[1]) : address(indices),
                  address(options.count), scratch.at(0), n};
  t.values_iota = true;
  if (wide) t.values_wide = address(indices);
  t.keys_first = address(keys);
  t.canonical = numpy;
  t.keys_dropped = !options.sorted_keys;
  sort_targets(module, kernels_spec(spec, by), t, options, stream);
  // The sorted keys returned: the original zeros and NaNs where canonical ones stand.
  if (numpy && options.sorted_keys)
    elementwise(module, (kFixSorted + float_suffix(spec)).c_str(),
                {options.sorted_keys, keys,
                 wide ? nullptr : static_cast<const uint32_t*>(indices), options.count, n,
                 wide ? static_cast<const unsigned long long*>(indices) : nullptr},
                stream);
}

}  // namespace gpusort::cuda
