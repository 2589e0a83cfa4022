// Onesweep on a CUDA stream (the CUDA face): the same kernels the Vulkan faces launch through
// VK_NVX_binary_import, launched through the driver on the caller's stream with what NVX cannot
// give them: the whole tile in dynamic shared memory (kHintWholeTile rows). Every step is
// enqueued; nothing waits on the host.
#pragma once

#include <cstdint>

#include "algorithms/sort_algorithm.hpp"
#include "cuda/module.hpp"

namespace gpusort::cuda {

// Where the sort works: device addresses (values 0 without), count 0 or a u32 GPU-side count;
// the keys read from keys_first and left there (0: keys sorted in place; keys only receives the
// result). Onesweep's fused steps, only where onesweep_stream_fuses: the keys at keys_first read
// as NumPy's floats (canonical: -0.0 as +0.0, every NaN as the canonical NaN; keys receives them
// so), the values made as the keys' positions (values_iota: values only receives them), the
// values written widened to u64 at values_wide (0: to values; else values holds only the passes'
// intermediate u32s). keys_dropped: no one reads the sorted keys (an argsort's scratch copy): the
// copy-back leaves them, and with values_wide is not launched.
struct StreamTargets {
  CUdeviceptr keys = 0, values = 0, count = 0, scratch = 0;
  uint64_t n = 0;  // max_n with a count
  CUdeviceptr keys_first = 0, values_wide = 0;
  bool values_iota = false, canonical = false, keys_dropped = false;
  bool fused() const { return keys_first != 0 || values_wide != 0 || values_iota || canonical; }
};

// Scratch bytes of a sort of up to max_n elements of `spec` (the key and value copies and the
// state block).
uint64_t onesweep_stream_scratch_bytes(const SortSpec& spec, uint64_t max_n);
// Whether the pass kernel of a sort of max_n elements of `spec` takes the fused steps (a row
// with kHintFusedVariant).
bool onesweep_stream_fuses(const SortSpec& spec, uint64_t max_n);
// Whether the pass kernel of a sort of max_n floats of `spec` is built for NumPy's float order (a
// row with kHintNumpyOrder), which onesweep_stream_sort then takes for spec.key_kind
// key_kind_numpy_float.
bool onesweep_stream_numpy_order(const SortSpec& spec, uint64_t max_n);
// Enqueues the sort on `stream` (the module's context current). spec.value_words is 0 or 1.
void onesweep_stream_sort(Module& module, const SortSpec& spec, const StreamTargets& t,
                          CUstream stream);

}  // namespace gpusort::cuda
