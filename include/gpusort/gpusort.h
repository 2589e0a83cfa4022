/* gpusort C API: the same two faces as gpusort.hpp, for C and for FFI users.
 *
 *  - convenient: gpusort_sort / gpusort_sort_by_key sort host arrays (copy in, sort, copy out;
 *    they block until done).
 *  - engine: a gpusort_sorter records into the caller's VkCommandBuffer on the caller's buffers;
 *    see the synchronization contract, buffer requirements and thread-safety rules of
 *    gpusort::Sorter in gpusort.hpp, which hold here word for word.
 *
 * Every function that can fail returns a gpusort_status; GPUSORT_OK is 0. The message of the
 * last call made on the calling thread ("" after a success) is gpusort_last_error(); it is
 * thread-local, so threads do not see each other's errors. It is one line: the function's name and
 * the problem, naming the parameter at fault ("gpusort_sort_segments: offsets is NULL, but
 * offset_count is 4"). No function throws or aborts. A count of host array elements (n,
 * offset_count) whose array would exceed PTRDIFF_MAX bytes is GPUSORT_ERROR_INVALID_ARGUMENT.
 *
 * A static libgpusort needs the C++ runtime: the CMake package and gpusort.pc bring it, so a C
 * program links with its C compiler (cc app.c $(pkg-config --cflags --libs gpusort)).
 */
#ifndef GPUSORT_GPUSORT_H
#define GPUSORT_GPUSORT_H

#include <stdint.h>
#include <vulkan/vulkan.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gpusort_status {
  GPUSORT_OK = 0,
  GPUSORT_ERROR_INVALID_ARGUMENT = 1, /* a null pointer, bad size, bad buffer, bad option */
  GPUSORT_ERROR_NOT_AVAILABLE = 2,    /* the requested algorithm is not in this build */
  GPUSORT_ERROR_VULKAN = 3,           /* a Vulkan call failed: gpusort_last_vk_result() */
  GPUSORT_ERROR_OUT_OF_MEMORY = 4,    /* host or device memory */
  GPUSORT_ERROR_UNKNOWN = 5
} gpusort_status;

/* Same values as gpusort::KeyType and gpusort::Algorithm. */
typedef enum gpusort_key_type {
  GPUSORT_KEY_U32 = 0,
  GPUSORT_KEY_I32 = 1,
  GPUSORT_KEY_F32 = 2,
  GPUSORT_KEY_U64 = 3,
  GPUSORT_KEY_I64 = 4,
  GPUSORT_KEY_F64 = 5
} gpusort_key_type;

/* The stable algorithms. The reference and experimental ones (radix_reduce_scan, bitonic,
 * odd_even, partition; gpusort_algorithm_name lists them all) have no enumerator: their values
 * are not part of the ABI, gpusort_algorithm_from_name gives them. */
typedef enum gpusort_algorithm {
  GPUSORT_ALGORITHM_AUTOMATIC = 0,
  GPUSORT_ALGORITHM_ONESWEEP = 1
} gpusort_algorithm;

typedef struct gpusort_context gpusort_context; /* opaque */
typedef struct gpusort_sorter gpusort_sorter;   /* opaque */

typedef struct gpusort_context_options {
  const char* device; /* index or name substring; NULL or "": GPUSORT_DEVICE, else best;
                         one matching no device: GPUSORT_ERROR_INVALID_ARGUMENT */
  int validation;     /* nonzero: Khronos validation layer (also GPUSORT_VALIDATION=1) */
  int synchronization_validation; /* nonzero: also synchronization validation */
} gpusort_context_options;

typedef struct gpusort_sort_options {
  int descending;
  gpusort_algorithm algorithm;
  uint32_t begin_bit; /* bits [begin_bit, end_bit) of the key's radix order; */
  uint32_t end_bit;   /* end_bit 0 means the key's full width */
} gpusort_sort_options;

typedef struct gpusort_sorter_config {
  gpusort_key_type key;
  uint32_t value_bytes; /* 0 (keys only), 4 or 8 */
  gpusort_algorithm algorithm;
  int descending;
  uint32_t begin_bit;
  uint32_t end_bit;     /* 0: the key's full width */
  uint32_t count_bytes; /* record_indirect's count: 4 (u32; 0 means 4) or 8 (u64) */
} gpusort_sorter_config;

/* A place in a caller's buffer (requirements: gpusort::BufferRef in gpusort.hpp). */
typedef struct gpusort_buffer_ref {
  VkBuffer buffer;
  VkDeviceSize offset;
} gpusort_buffer_ref;

/* ---- Context ---- */

/* options may be NULL (defaults). */
gpusort_status gpusort_context_create(const gpusort_context_options* options,
                                      gpusort_context** out_context);
/* Wraps a caller's device (bufferDeviceAddress and shaderInt64 enabled); the caller keeps it.
 * queue_family_index must be one of physical_device's queue families, with compute (else
 * GPUSORT_ERROR_INVALID_ARGUMENT). A context may be used from several threads at once (see
 * Context in gpusort.hpp), but not destroyed while another thread uses it. */
gpusort_status gpusort_context_wrap(VkInstance instance, VkPhysicalDevice physical_device,
                                    VkDevice device, VkQueue queue, uint32_t queue_family_index,
                                    gpusort_context** out_context);
/* NULL is allowed. Sorters keep the device alive: contexts and sorters may be destroyed in any
 * order. */
void gpusort_context_destroy(gpusort_context* context);

VkInstance gpusort_context_instance(const gpusort_context* context);
VkPhysicalDevice gpusort_context_physical_device(const gpusort_context* context);
VkDevice gpusort_context_device(const gpusort_context* context);
VkQueue gpusort_context_queue(const gpusort_context* context);
uint32_t gpusort_context_queue_family_index(const gpusort_context* context);
/* Validation messages (warnings and errors) seen since creation; 0 when validation is off. */
uint64_t gpusort_context_validation_messages(const gpusort_context* context);
/* Frees the pinned staging memory and device buffers the convenient face keeps between calls
   (Context::release_cached_memory); the next sort allocates them again. NULL is allowed. */
void gpusort_context_release_cached_memory(gpusort_context* context);

/* ---- Convenient face: host arrays ---- */

/* keys: n elements of the key type. options may be NULL (ascending, automatic). */
gpusort_status gpusort_sort(gpusort_context* context, gpusort_key_type key_type, void* keys,
                            uint64_t n, const gpusort_sort_options* options);
/* values: n elements of value_bytes (4 or 8) each, carried along with their keys. */
gpusort_status gpusort_sort_by_key(gpusort_context* context, gpusort_key_type key_type, void* keys,
                                   void* values, uint32_t value_bytes, uint64_t n,
                                   const gpusort_sort_options* options);

/* ---- Segmented sort and argsort (gpusort::sort_segments_raw in gpusort.hpp) ---- */

/* Sorts each segment of keys on its own, stably. offsets: offset_count = S + 1 CSR offsets of
 * offset_bytes (4 or 8) each, non-decreasing, the first 0 and the last n (checked: a bad one is
 * GPUSORT_ERROR_INVALID_ARGUMENT naming the problem); NULL with offset_count 0: the whole array is
 * one segment. keys are read; keys_out receives them sorted (keys itself: in place) or is NULL
 * (keys only read). values: NULL, or n values of value_bytes (4 or 8), sorted in place. indices:
 * NULL, or n integers of index_bytes (4 or 8) receiving the stable sorting permutation
 * (indices[i]: input position of output i). For n > 0, at least one of keys_out, values and
 * indices is given. options may be NULL. bitonic is refused (unstable). */
gpusort_status gpusort_sort_segments(gpusort_context* context, gpusort_key_type key_type,
                                     uint64_t n, const void* keys, void* keys_out, void* values,
                                     uint32_t value_bytes, const void* offsets,
                                     uint32_t offset_bytes, uint64_t offset_count, void* indices,
                                     uint32_t index_bytes, const gpusort_sort_options* options);
/* The stable sorting permutation of n keys (left unmodified) into indices (index_bytes 4 or 8). */
gpusort_status gpusort_argsort(gpusort_context* context, gpusort_key_type key_type,
                               const void* keys, uint64_t n, void* indices, uint32_t index_bytes,
                               const gpusort_sort_options* options);

/* ---- Engine face: the caller's command buffer and buffers ---- */

gpusort_status gpusort_sorter_create(gpusort_context* context, const gpusort_sorter_config* config,
                                     gpusort_sorter** out_sorter);
void gpusort_sorter_destroy(gpusort_sorter* sorter); /* NULL is allowed */
gpusort_status gpusort_sorter_scratch_bytes(const gpusort_sorter* sorter, uint64_t max_n,
                                            uint64_t* out_bytes);
/* values: {VK_NULL_HANDLE, 0} when the sorter has value_bytes 0. */
gpusort_status gpusort_sorter_record(const gpusort_sorter* sorter, VkCommandBuffer command_buffer,
                                     gpusort_buffer_ref keys, gpusort_buffer_ref values,
                                     gpusort_buffer_ref scratch, uint64_t n);
/* n is the u32 (count_bytes 4) or u64 (8) at count, read when the GPU executes the sort, clamped
 * to max_n. */
gpusort_status gpusort_sorter_record_indirect(const gpusort_sorter* sorter,
                                              VkCommandBuffer command_buffer,
                                              gpusort_buffer_ref keys, gpusort_buffer_ref values,
                                              gpusort_buffer_ref scratch, gpusort_buffer_ref count,
                                              uint64_t max_n);

/* A segmented sorter (gpusort::SegmentedSorter: its contract holds here word for word). */
typedef struct gpusort_segmented_sorter gpusort_segmented_sorter; /* opaque */
typedef struct gpusort_segmented_sorter_config {
  gpusort_key_type key;
  uint32_t value_bytes;  /* 0 (keys only), 4 or 8 */
  uint32_t offset_bytes; /* 4 (u32 offsets) or 8 (u64) */
  gpusort_algorithm algorithm;
  int descending;
  uint32_t begin_bit;
  uint32_t end_bit; /* 0: the key's full width */
} gpusort_segmented_sorter_config;

gpusort_status gpusort_segmented_sorter_create(gpusort_context* context,
                                               const gpusort_segmented_sorter_config* config,
                                               gpusort_segmented_sorter** out_sorter);
void gpusort_segmented_sorter_destroy(gpusort_segmented_sorter* sorter); /* NULL is allowed */
gpusort_status gpusort_segmented_sorter_scratch_bytes(const gpusort_segmented_sorter* sorter,
                                                      uint64_t max_n, uint64_t max_segments,
                                                      uint64_t* out_bytes);
/* values / indices: {VK_NULL_HANDLE, 0} for none. offsets hold segments + 1 entries. */
gpusort_status gpusort_segmented_sorter_record(
    const gpusort_segmented_sorter* sorter, VkCommandBuffer command_buffer, gpusort_buffer_ref keys,
    gpusort_buffer_ref values, gpusort_buffer_ref offsets, gpusort_buffer_ref indices,
    gpusort_buffer_ref scratch, uint64_t n, uint64_t segments);
/* S is the u32 at segment_count (clamped to max_segments), n = offsets[S] (clamped to max_n). */
gpusort_status gpusort_segmented_sorter_record_indirect(
    const gpusort_segmented_sorter* sorter, VkCommandBuffer command_buffer, gpusort_buffer_ref keys,
    gpusort_buffer_ref values, gpusort_buffer_ref offsets, gpusort_buffer_ref indices,
    gpusort_buffer_ref scratch, gpusort_buffer_ref segment_count, uint64_t max_n,
    uint64_t max_segments);

/* ---- Top-k (gpusort::topk_raw / topk_segments_raw in gpusort.hpp) ---- */

/* The k smallest keys (options->descending: the k largest), sorted, ties by position: the first k
 * of the stable sort with the same options. offsets NULL with offset_count 0: the whole array,
 * k from 0 to n (k > n is GPUSORT_ERROR_INVALID_ARGUMENT); else S + 1 CSR offsets as
 * gpusort_sort_segments' and each segment's first min(k, its length), the segments' results one
 * after another (gpusort_topk_segments_count gives the total). keys are only read. keys_out:
 * NULL or the results' keys; values (n values of value_bytes 4 or 8) with values_out: NULL or the
 * results' values; indices: NULL or the results' positions in keys (index_bytes 4 or 8). For
 * k > 0 and n > 0, at least one of keys_out, values_out and indices is given. options may be
 * NULL. bitonic is refused (unstable). */
gpusort_status gpusort_topk(gpusort_context* context, gpusort_key_type key_type, uint64_t n,
                            const void* keys, uint64_t k, void* keys_out, const void* values,
                            void* values_out, uint32_t value_bytes, const void* offsets,
                            uint32_t offset_bytes, uint64_t offset_count, void* indices,
                            uint32_t index_bytes, const gpusort_sort_options* options);
/* The results of gpusort_topk over segments: the sum of min(k, length) over the segments. */
gpusort_status gpusort_topk_segments_count(const void* offsets, uint32_t offset_bytes,
                                           uint64_t offset_count, uint64_t k,
                                           uint64_t* out_count);

/* A top-k selector (gpusort::TopKSelector: its contract holds here word for word). */
typedef struct gpusort_topk_selector gpusort_topk_selector; /* opaque */
typedef struct gpusort_topk_config {
  gpusort_key_type key;
  uint32_t value_bytes; /* 0 (keys only), 4 or 8 */
  int largest;          /* nonzero: the k largest */
  uint32_t begin_bit;
  uint32_t end_bit; /* 0: the key's full width */
  gpusort_algorithm algorithm; /* the k survivors' sort; bitonic is refused */
  uint32_t offset_bytes;       /* record_segments' offsets: 4 (u32; 0 means 4) or 8 (u64) */
} gpusort_topk_config;

gpusort_status gpusort_topk_selector_create(gpusort_context* context,
                                            const gpusort_topk_config* config,
                                            gpusort_topk_selector** out_selector);
void gpusort_topk_selector_destroy(gpusort_topk_selector* selector); /* NULL is allowed */
gpusort_status gpusort_topk_selector_scratch_bytes(const gpusort_topk_selector* selector,
                                                   uint64_t max_n, uint64_t k,
                                                   uint64_t* out_bytes);
/* values / values_out / indices: {VK_NULL_HANDLE, 0} for none. */
gpusort_status gpusort_topk_selector_record(
    const gpusort_topk_selector* selector, VkCommandBuffer command_buffer, gpusort_buffer_ref keys,
    gpusort_buffer_ref values, gpusort_buffer_ref keys_out, gpusort_buffer_ref values_out,
    gpusort_buffer_ref indices, gpusort_buffer_ref scratch, uint64_t n, uint64_t k);
/* Per segment (offsets: segments + 1 entries; TopKSelector::record_segments): outputs of
 * min(n, segments * k) elements, scratch of gpusort_topk_selector_segments_scratch_bytes. */
gpusort_status gpusort_topk_selector_segments_scratch_bytes(const gpusort_topk_selector* selector,
                                                            uint64_t max_n, uint64_t max_segments,
                                                            uint64_t k, uint64_t* out_bytes);
gpusort_status gpusort_topk_selector_record_segments(
    const gpusort_topk_selector* selector, VkCommandBuffer command_buffer, gpusort_buffer_ref keys,
    gpusort_buffer_ref values, gpusort_buffer_ref offsets, gpusort_buffer_ref keys_out,
    gpusort_buffer_ref values_out, gpusort_buffer_ref indices, gpusort_buffer_ref scratch,
    uint64_t n, uint64_t segments, uint64_t k);
/* n is the u32 at count, read when the GPU executes, clamped to max_n. */
gpusort_status gpusort_topk_selector_record_indirect(
    const gpusort_topk_selector* selector, VkCommandBuffer command_buffer, gpusort_buffer_ref keys,
    gpusort_buffer_ref values, gpusort_buffer_ref keys_out, gpusort_buffer_ref values_out,
    gpusort_buffer_ref indices, gpusort_buffer_ref scratch, gpusort_buffer_ref count,
    uint64_t max_n, uint64_t k);

/* ---- The CUDA face: device memory on the caller's CUDA stream (gpusort/cuda.hpp) ----
 *
 * Enqueued on the stream, no host synchronization: each call returns once the work is queued.
 * The library opens the CUDA driver (libcuda.so.1) at run time; without it each call fails with
 * GPUSORT_ERROR_NOT_AVAILABLE and a one-line message. n below 2^32. */
typedef struct CUstream_st* gpusort_cuda_stream; /* a CUstream or cudaStream_t; NULL: the legacy
                                                    default stream of the current context */
typedef struct gpusort_cuda_options {
  int descending;
  uint32_t begin_bit, end_bit; /* end_bit 0: the key's full width */
  const uint32_t* count;       /* device address of a GPU-side count (clamped to n), or NULL */
  void* scratch;               /* device memory of scratch_size bytes, or NULL: allocated on the
                                  stream (cuMemAllocAsync) and freed after the sort */
  uint64_t scratch_size;
} gpusort_cuda_options;

/* Scratch bytes of a sort of up to n keys with value_bytes (0, 4, 8) values, or of an argsort
 * with index_bytes (4, 8) indices. options may be NULL. */
gpusort_status gpusort_cuda_scratch_bytes(gpusort_key_type key_type, uint32_t value_bytes,
                                          uint64_t n, const gpusort_cuda_options* options,
                                          uint64_t* bytes);
gpusort_status gpusort_cuda_argsort_scratch_bytes(gpusort_key_type key_type, uint32_t index_bytes,
                                                  uint64_t n, const gpusort_cuda_options* options,
                                                  uint64_t* bytes);
/* Sorts n keys (and values, unless NULL) in place on the stream. */
gpusort_status gpusort_cuda_sort(gpusort_key_type key_type, void* keys, void* values,
                                 uint32_t value_bytes, uint64_t n, gpusort_cuda_stream stream,
                                 const gpusort_cuda_options* options);
/* The stable sorting permutation of keys (left as they are) into indices (4 or 8 bytes). */
gpusort_status gpusort_cuda_argsort(gpusort_key_type key_type, const void* keys, void* indices,
                                    uint32_t index_bytes, uint64_t n, gpusort_cuda_stream stream,
                                    const gpusort_cuda_options* options);
/* Segmented sort and argsort (gpusort::cuda::segmented_sort_raw, segmented_argsort_raw): each of
 * the segments [offsets[s], offsets[s + 1]) sorted on its own, stably; offsets: segments + 1 CSR
 * offsets in device memory (offset_bytes 4 or 8), not read back. options->count must be NULL.
 * Scratch: gpusort_cuda_segmented_scratch_bytes, gpusort_cuda_segmented_argsort_scratch_bytes. */
gpusort_status gpusort_cuda_segmented_scratch_bytes(gpusort_key_type key_type, uint32_t value_bytes,
                                                    uint64_t n, uint64_t segments,
                                                    const gpusort_cuda_options* options,
                                                    uint64_t* bytes);
gpusort_status gpusort_cuda_segmented_argsort_scratch_bytes(gpusort_key_type key_type,
                                                            uint32_t index_bytes, uint64_t n,
                                                            uint64_t segments,
                                                            const gpusort_cuda_options* options,
                                                            uint64_t* bytes);
gpusort_status gpusort_cuda_segmented_sort(gpusort_key_type key_type, void* keys, void* values,
                                           uint32_t value_bytes, uint64_t n, const void* offsets,
                                           uint32_t offset_bytes, uint64_t segments,
                                           gpusort_cuda_stream stream,
                                           const gpusort_cuda_options* options);
gpusort_status gpusort_cuda_segmented_argsort(gpusort_key_type key_type, const void* keys,
                                              void* indices, uint32_t index_bytes, uint64_t n,
                                              const void* offsets, uint32_t offset_bytes,
                                              uint64_t segments, gpusort_cuda_stream stream,
                                              const gpusort_cuda_options* options);
/* Top-k (gpusort::cuda::topk_raw): the k smallest keys (options->descending: the k largest),
 * sorted, ties by position: the first k of the stable sort. k from 0 to n; k > n is refused.
 * keys_out (k keys) may be NULL where values_out or indices are given; values (n of value_bytes
 * 4 or 8) with values_out (k), or both NULL; indices (k positions, index_bytes 4 or 8) or NULL.
 * With options->count, min(k, count) results. Scratch: gpusort_cuda_topk_scratch_bytes. */
gpusort_status gpusort_cuda_topk_scratch_bytes(gpusort_key_type key_type, uint64_t n, uint64_t k,
                                               const gpusort_cuda_options* options,
                                               uint64_t* bytes);
gpusort_status gpusort_cuda_topk(gpusort_key_type key_type, const void* keys, uint64_t n,
                                 uint64_t k, void* keys_out, const void* values, void* values_out,
                                 uint32_t value_bytes, void* indices, uint32_t index_bytes,
                                 gpusort_cuda_stream stream, const gpusort_cuda_options* options);
/* Top-k per segment (gpusort::cuda::topk_segments_raw): each of the `segments` CSR segments
 * (segments + 1 offsets of offset_bytes 4 or 8 in device memory) gives its first min(k, length)
 * keys of its stable sort, the segments' results one after another; result_offsets (segments + 1
 * u32, or NULL) receives where each segment's start, the total last. Outputs hold min(n,
 * segments k) elements; indices are positions in the whole array. Scratch:
 * gpusort_cuda_topk_segments_scratch_bytes. */
gpusort_status gpusort_cuda_topk_segments_scratch_bytes(gpusort_key_type key_type, uint64_t n,
                                                        uint64_t segments, uint64_t k,
                                                        const gpusort_cuda_options* options,
                                                        uint64_t* bytes);
gpusort_status gpusort_cuda_topk_segments(gpusort_key_type key_type, const void* keys, uint64_t n,
                                          const void* offsets, uint32_t offset_bytes,
                                          uint64_t segments, uint64_t k, void* keys_out,
                                          const void* values, void* values_out,
                                          uint32_t value_bytes, void* indices,
                                          uint32_t index_bytes, uint32_t* result_offsets,
                                          gpusort_cuda_stream stream,
                                          const gpusort_cuda_options* options);
/* Top-k per row (gpusort::cuda::topk_rows_raw): rows x row_length keys, row after row, each row's
 * first min(k, row_length) of its stable sort: outputs of rows x min(k, row_length) elements,
 * indices positions within the row. Scratch: gpusort_cuda_topk_rows_scratch_bytes. */
gpusort_status gpusort_cuda_topk_rows_scratch_bytes(gpusort_key_type key_type, uint64_t rows,
                                                    uint64_t row_length, uint64_t k,
                                                    const gpusort_cuda_options* options,
                                                    uint64_t* bytes);
gpusort_status gpusort_cuda_topk_rows(gpusort_key_type key_type, const void* keys, uint64_t rows,
                                      uint64_t row_length, uint64_t k, void* keys_out,
                                      const void* values, void* values_out, uint32_t value_bytes,
                                      void* indices, uint32_t index_bytes,
                                      gpusort_cuda_stream stream,
                                      const gpusort_cuda_options* options);

/* ---- Errors ---- */

/* The message of the last gpusort call on this thread; "" when it succeeded. Valid until the
 * thread's next gpusort call. */
const char* gpusort_last_error(void);
/* The VkResult of the last gpusort call on this thread (VK_SUCCESS unless GPUSORT_ERROR_VULKAN
 * or a device-memory GPUSORT_ERROR_OUT_OF_MEMORY). */
VkResult gpusort_last_vk_result(void);
const char* gpusort_status_name(gpusort_status status);

/* ---- Algorithms by name ---- */

/* The algorithm named `name` ("automatic", "onesweep", "bitonic", ...) into *algorithm;
 * GPUSORT_ERROR_INVALID_ARGUMENT, naming the known ones, when there is none of that name. */
gpusort_status gpusort_algorithm_from_name(const char* name, gpusort_algorithm* algorithm);
/* The name of algorithm value `index` (0, 1, ... in order), or NULL past the last one. */
const char* gpusort_algorithm_name(uint32_t index);

#ifdef __cplusplus
}
#endif

#endif /* GPUSORT_GPUSORT_H */
