// gpusort on CUDA streams: sorts device memory that the caller owns, enqueued on the caller's
// stream, with no host synchronization: each call returns once the work is queued. No CUDA
// header or library is needed to build against it; the library opens the CUDA driver
// (libcuda.so.1) at run time. The stream's CUDA context (for the null stream: the calling
// thread's current one) gets the kernels the first time it sorts.
//
//   gpusort::cuda::sort(keys, n, stream);                  // uint32_t* keys on the device
//   gpusort::cuda::sort_by_key(keys, values, n, stream);
//   gpusort::cuda::argsort(keys, indices, n, stream);      // keys left as they are
//   gpusort::cuda::topk(keys, n, k, keys_out, stream);     // the k smallest, sorted
//   gpusort::cuda::segmented_sort(keys, n, offsets, segments, stream);  // each segment on its own
//
// The same results as the Vulkan faces: stable; floats by IEEE-754 totalOrder (or NumPy's order:
// Options::numpy_float_order); descending and bit ranges as SortOptions has them. Errors (no
// NVIDIA driver, a bad argument, a failed CUDA call) throw gpusort::Error with one line saying
// what.
#pragma once

#include <gpusort/gpusort.hpp>

struct CUstream_st;  // the CUDA driver's and runtime's stream type (cuda.h, driver_types.h)

namespace gpusort::cuda {

// A CUDA stream: a CUstream or cudaStream_t (the same handle); nullptr: the legacy default
// stream of the current context.
using Stream = ::CUstream_st*;

struct Options {
  bool descending = false;
  // Bits [begin_bit, end_bit) of the key's radix order (end_bit 0: the key's full width).
  uint32_t begin_bit = 0;
  uint32_t end_bit = 0;
  // A GPU-side count: a device address holding a uint32_t, read when the sort runs (clamped to
  // n, which is then the most the call sorts). nullptr: n.
  const uint32_t* count = nullptr;
  // Scratch device memory of at least scratch_bytes(...) bytes, the caller's; nullptr: the
  // call allocates it on the stream (cuMemAllocAsync, from the device's default memory pool)
  // and frees it there after the sort.
  void* scratch = nullptr;
  uint64_t scratch_size = 0;
  // Float keys in NumPy's order instead of IEEE totalOrder: -0.0 equal to +0.0, every NaN
  // (either sign, any payload) equal to every other and greater than +inf; equal keys keep their
  // input order and their bits (np.sort / np.argsort with kind="stable"; descending is the same
  // comparison reversed: NaNs first). The full bit range only; integer keys ignore it. Where
  // Onesweep sorts its passes take the order themselves (no launch of its own);
  // elsewhere it costs a read of the keys and a few small launches, and one more pass over them
  // where they hold a -0.0 or a NaN other than the default one (decided on the GPU: nothing waits
  // on the host).
  bool numpy_float_order = false;
  // argsort only: n device keys where the sorted keys go as well (overlapping neither the keys
  // nor the indices), the values of a sort that also returns its permutation; nullptr: the keys
  // are sorted in scratch and dropped.
  void* sorted_keys = nullptr;
  // sort only: n device keys read from here (overlapping neither keys nor values) and sorted into
  // keys, whose contents do not matter: a sorted copy without a copy of its own (in NumPy's
  // order around the sort the copy is made by the pass that reads the keys anyway; with a count,
  // keys beyond it are then left undefined); nullptr: keys sorted in place.
  const void* keys_in = nullptr;
};

// Whether the CUDA face can run in this process: "" where the driver loads, else why not. (The
// kernels themselves are loaded per context on first use.)
std::string unavailable_why();

// Scratch bytes a sort of up to n keys (value_bytes 0, 4 or 8) needs, and an argsort
// (index_bytes 4 or 8).
uint64_t scratch_bytes(KeyType key_type, uint32_t value_bytes, uint64_t n,
                       const Options& options = {});
uint64_t argsort_scratch_bytes(KeyType key_type, uint32_t index_bytes, uint64_t n,
                               const Options& options = {});

// Sorts n keys (and values: value_bytes 0, 4 or 8) in place.
void sort_raw(KeyType key_type, void* keys, void* values, uint32_t value_bytes, uint64_t n,
              Stream stream, const Options& options = {});
// Writes the stable sorting permutation of keys (left as they are) to indices (u32 or u64).
void argsort_raw(KeyType key_type, const void* keys, void* indices, uint32_t index_bytes,
                 uint64_t n, Stream stream, const Options& options = {});

template <class K> void sort(K* keys, uint64_t n, Stream stream, const Options& options = {}) {
  sort_raw(key_type_of<K>(), keys, nullptr, 0, n, stream, options);
}
template <class K, class V>
void sort_by_key(K* keys, V* values, uint64_t n, Stream stream, const Options& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "values are 4 or 8 bytes wide");
  sort_raw(key_type_of<K>(), keys, values, sizeof(V), n, stream, options);
}
template <class K, class I>
void argsort(const K* keys, I* indices, uint64_t n, Stream stream, const Options& options = {}) {
  static_assert(std::is_same_v<I, uint32_t> || std::is_same_v<I, uint64_t>,
                "argsort indices are uint32_t or uint64_t");
  argsort_raw(key_type_of<K>(), keys, indices, sizeof(I), n, stream, options);
}

// ---- Segmented sort ----
//
// Each of the S segments [offsets[s], offsets[s + 1]) of n keys sorted on its own, stably, with
// the options' order, bits and numpy_float_order: what sorting each segment alone with sort_raw
// gives. offsets: S + 1 CSR offsets in device memory (offset_bytes 4 or 8), 0 = offsets[0] <= ...
// <= offsets[S] = n, empty segments anywhere. The face does not read them back to check them
// (nothing waits on the host): offsets that are not CSR give an unspecified order, never a read
// or write outside the arrays. Composed from two argsorts, the keys' and then their segments' on
// the segment number's bits (docs/design/cuda-face.md, "The segmented sort"). options.count,
// keys_in and sorted_keys do not apply.
uint64_t segmented_scratch_bytes(KeyType key_type, uint32_t value_bytes, uint64_t n,
                                 uint64_t segments, const Options& options = {});
uint64_t segmented_argsort_scratch_bytes(KeyType key_type, uint32_t index_bytes, uint64_t n,
                                         uint64_t segments, const Options& options = {});
// Keys (and values: value_bytes 0, 4 or 8) sorted in place, each segment on its own.
void segmented_sort_raw(KeyType key_type, void* keys, void* values, uint32_t value_bytes,
                        uint64_t n, const void* offsets, uint32_t offset_bytes, uint64_t segments,
                        Stream stream, const Options& options = {});
// For i in segment s, indices[i] (u32 or u64) is the position in the whole array of the i-th
// element of segment s's sorted order; keys are left as they are.
void segmented_argsort_raw(KeyType key_type, const void* keys, void* indices,
                           uint32_t index_bytes, uint64_t n, const void* offsets,
                           uint32_t offset_bytes, uint64_t segments, Stream stream,
                           const Options& options = {});

template <class K, class O>
void segmented_sort(K* keys, uint64_t n, const O* offsets, uint64_t segments, Stream stream,
                    const Options& options = {}) {
  static_assert(std::is_same_v<O, uint32_t> || std::is_same_v<O, uint64_t>,
                "segment offsets are uint32_t or uint64_t");
  segmented_sort_raw(key_type_of<K>(), keys, nullptr, 0, n, offsets, sizeof(O), segments, stream,
                     options);
}
template <class K, class V, class O>
void segmented_sort_by_key(K* keys, V* values, uint64_t n, const O* offsets, uint64_t segments,
                           Stream stream, const Options& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "values are 4 or 8 bytes wide");
  static_assert(std::is_same_v<O, uint32_t> || std::is_same_v<O, uint64_t>,
                "segment offsets are uint32_t or uint64_t");
  segmented_sort_raw(key_type_of<K>(), keys, values, sizeof(V), n, offsets, sizeof(O), segments,
                     stream, options);
}
template <class K, class I, class O>
void segmented_argsort(const K* keys, I* indices, uint64_t n, const O* offsets, uint64_t segments,
                       Stream stream, const Options& options = {}) {
  static_assert(std::is_same_v<I, uint32_t> || std::is_same_v<I, uint64_t>,
                "argsort indices are uint32_t or uint64_t");
  static_assert(std::is_same_v<O, uint32_t> || std::is_same_v<O, uint64_t>,
                "segment offsets are uint32_t or uint64_t");
  segmented_argsort_raw(key_type_of<K>(), keys, indices, sizeof(I), n, offsets, sizeof(O),
                        segments, stream, options);
}

// ---- Top-k ----
//
// The k smallest keys of n (options.descending: the k largest), sorted, ties by position (first
// occurrences first): exactly the first k of the stable sort of the same keys with the same
// options (order, bit range, numpy_float_order), as gpusort::topk_raw on the Vulkan faces. A
// radix select finds the k-th key on the GPU, a stable compaction writes the keys before it and
// the first equal ones, and the face's sort orders those (docs/design/topk.md, "On the CUDA
// face"); nothing is read back. k from 0 to n (k = n: the whole sort; n = 0 or k = 0 does
// nothing); k > n is refused. With options.count, n is the most and the count is read on the
// GPU: the call then gives min(k, count) results and leaves the rest of the outputs as they were.
// Outputs (device memory, none overlapping the inputs): keys_out (k keys, or nullptr where only
// values or indices are wanted), values (n of value_bytes 4 or 8, or nullptr) with values_out
// (k), indices (nullptr, or k positions into keys, index_bytes 4 or 8). options.sorted_keys and
// keys_in do not apply.
uint64_t topk_scratch_bytes(KeyType key_type, uint64_t n, uint64_t k, const Options& options = {});
void topk_raw(KeyType key_type, const void* keys, uint64_t n, uint64_t k, void* keys_out,
              const void* values, void* values_out, uint32_t value_bytes, void* indices,
              uint32_t index_bytes, Stream stream, const Options& options = {});

template <class K>
void topk(const K* keys, uint64_t n, uint64_t k, K* keys_out, Stream stream,
          const Options& options = {}) {
  topk_raw(key_type_of<K>(), keys, n, k, keys_out, nullptr, nullptr, 0, nullptr, 0, stream,
           options);
}
template <class K, class V>
void topk_by_key(const K* keys, const V* values, uint64_t n, uint64_t k, K* keys_out,
                 V* values_out, Stream stream, const Options& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "values are 4 or 8 bytes wide");
  topk_raw(key_type_of<K>(), keys, n, k, keys_out, values, values_out, sizeof(V), nullptr, 0,
           stream, options);
}
// keys_out may be nullptr: the positions alone.
template <class K, class I>
void topk_indices(const K* keys, uint64_t n, uint64_t k, K* keys_out, I* indices, Stream stream,
                  const Options& options = {}) {
  static_assert(std::is_same_v<I, uint32_t> || std::is_same_v<I, uint64_t>,
                "top-k indices are uint32_t or uint64_t");
  topk_raw(key_type_of<K>(), keys, n, k, keys_out, nullptr, nullptr, 0, indices, sizeof(I),
           stream, options);
}

// Per segment: each of the S segments [offsets[s], offsets[s + 1]) (S + 1 CSR offsets, u32 or u64,
// in device memory, as the segmented sort's) gives the first min(k, its length) keys of its stable
// sort, with the same options as topk_raw; the segments' results one after another, segment s's
// from result_offsets[s]. result_offsets (S + 1 u32 in device memory, or nullptr) receives those
// places, the total last; outputs hold min(n, S k) elements. indices are positions in the whole
// array; n = 0 or k = 0 does nothing (result_offsets included). The offsets are not read back,
// so not checked (as the segmented sort's). This first version is the segmented argsort followed
// by a take of each segment's first results (docs/design/topk.md, "On the CUDA face").
// options.count, keys_in and sorted_keys do not apply.
uint64_t topk_segments_scratch_bytes(KeyType key_type, uint64_t n, uint64_t segments, uint64_t k,
                                     const Options& options = {});
void topk_segments_raw(KeyType key_type, const void* keys, uint64_t n, const void* offsets,
                       uint32_t offset_bytes, uint64_t segments, uint64_t k, void* keys_out,
                       const void* values, void* values_out, uint32_t value_bytes, void* indices,
                       uint32_t index_bytes, uint32_t* result_offsets, Stream stream,
                       const Options& options = {});
// Per row: `rows` rows of row_length keys one after another (a row-major matrix), each giving its
// first min(k, row_length) keys of its stable sort: outputs of rows x min(k, row_length)
// elements, row r's results from r min(k, row_length), indices positions within the row (as
// torch.topk's along the last dimension). Otherwise as topk_segments_raw. Rows take a block each
// (the scratch unused): those of up to 16384 keys where the device gives a block 208 KiB of shared
// memory (a select in shared memory), the others for k up to 1024 (a select within the block;
// fewer such rows than SMs, of at least 2^18 keys, a block per chunk of a row, their positions in
// the scratch); else the segmented argsort.
uint64_t topk_rows_scratch_bytes(KeyType key_type, uint64_t rows, uint64_t row_length, uint64_t k,
                                 const Options& options = {});
void topk_rows_raw(KeyType key_type, const void* keys, uint64_t rows, uint64_t row_length,
                   uint64_t k, void* keys_out, const void* values, void* values_out,
                   uint32_t value_bytes, void* indices, uint32_t index_bytes, Stream stream,
                   const Options& options = {});

}  // namespace gpusort::cuda
