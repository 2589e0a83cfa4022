// Onesweep on a CUDA stream (stream_sort.hpp): zero the state block, the histogram and plan
// (one kernel), one pass kernel per digit (a skipped pass's blocks return at once), the
// copy-back where the plan ran an odd number of passes.
#include "algorithms/onesweep/cuda/stream_sort.hpp"

#include <algorithm>
#include <bit>

#include "algorithms/onesweep/cuda/cuda_kernels.hpp"
#include "algorithms/onesweep/state.h"
#include "cuda/environment.hpp"

namespace gpusort::cuda {

namespace {

constexpr uint32_t radix = ONESWEEP_RADIX;
constexpr uint32_t digit_bits = ONESWEEP_DIGIT_BITS;
constexpr uint32_t max_lookback_slots = 1024;
constexpr uint32_t spin_limit = 64;  // OnesweepOptions::spin_limit's default

// The CUDA face's pass row for a sort of max_n (kCudaFaceTiles), or the one
// GPUSORT_CUDA_FACE_TILE names.
uint32_t pass_row(const SortSpec& spec, uint64_t max_n) {
  const uint32_t key_class = cuda_key_class(spec.key_words, spec.value_words);
  std::string named = cuda_environment().face_tile;
  if (named.empty())
    for (const CudaFaceTile& band : kCudaFaceTiles)
      if (band.key_class == key_class && max_n <= band.max_n) {
        named = band.variant;
        break;
      }
  for (uint32_t row = 0; row < kCudaPassShapeCount; ++row) {
    const CudaPassShape& s = kCudaPassShapes[row];
    if (s.key_words == spec.key_words && s.value_words == spec.value_words &&
        (s.hints & kHintWholeTile) != 0 && named == s.variant)
      return row;
  }
  throw Error("the CUDA face has no Onesweep tile '" + named + "' for " +
              std::to_string(spec.key_words * 32) + "-bit keys with " +
              std::to_string(spec.value_words * 4) + "-byte values (GPUSORT_CUDA_FACE_TILE)");
}

// The histogram row: the first of the key width (one copy of the counters), or the v-th of
// GPUSORT_CUDA_HISTOGRAM=v.
const CudaHistogramShape& histogram_row(const SortSpec& spec) {
  const uint32_t variant = std::max<uint32_t>(1, cuda_environment().histogram.value_or(1));
  uint32_t seen = 0;
  for (const CudaHistogramShape& h : kCudaHistogramShapes)
    if (h.key_words == spec.key_words && ++seen == variant) return h;
  throw Error("no CUDA histogram kernel for this key width");
}

uint32_t groups_for(uint64_t items, uint64_t per_group, uint64_t cap) {
  return uint32_t(std::clamp<uint64_t>((items + per_group - 1) / per_group, 1, cap));
}

struct Layout {
  uint64_t keys_alt, values_alt, dispatch, digit_counts, control, lookback, total;
  uint32_t tiles, slots;
};

Layout layout(const SortSpec& spec, uint64_t max_n) {
  const CudaPassShape& shape = kCudaPassShapes[pass_row(spec, max_n)];
  const uint64_t tile = uint64_t(shape.threads) * shape.items;
  Layout l{};
  l.tiles = uint32_t(std::max<uint64_t>(1, (max_n + tile - 1) / tile));
  l.slots = uint32_t(std::min<uint64_t>(max_lookback_slots, std::bit_ceil(uint64_t(l.tiles))));
  l.keys_alt = 0;
  l.values_alt = align_up(max_n * spec.key_words * 4, 256);
  l.dispatch = l.values_alt + align_up(max_n * spec.value_words * 4, 256);
  l.digit_counts = l.dispatch + 256;  // ONESWEEP_DISPATCH_COMMANDS x 12 bytes, unused here
  l.control = l.digit_counts + ONESWEEP_MAX_PASSES * radix * 4;
  l.lookback = align_up(l.control + ONESWEEP_CONTROL_WORDS * 4, 256);
  l.total = l.lookback + uint64_t(l.slots) * radix * ONESWEEP_LOOKBACK_ENTRY_BYTES;
  return l;
}

}  // namespace

uint64_t onesweep_stream_scratch_bytes(const SortSpec& spec, uint64_t max_n) {
  return layout(spec, max_n).total;
}

void onesweep_stream_sort(Module& module, const SortSpec& spec, const StreamTargets& t,
                          CUstream stream) {
  const Driver& d = driver();
  const Layout l = layout(spec, t.n);
  const uint32_t row = pass_row(spec, t.n);
  const CudaPassShape& shape = kCudaPassShapes[row];
  const uint32_t passes = (spec.end_bit - spec.begin_bit + digit_bits - 1) / digit_bits;
  const auto* count = reinterpret_cast<const uint32_t*>(t.count);

  // 1. The state block: digit counts, control words and the look-back table.
  check(d.memset_d32_async(t.scratch + l.digit_counts, 0,
                           size_t((l.total - l.digit_counts) / 4), stream),
        "cuMemsetD32Async");

  // 2. Every pass's digit counts in one read, then the plan (the last block).
  const CudaHistogramShape& h = histogram_row(spec);
  const OnesweepHistogramParams histogram{
      .keys = reinterpret_cast<const void*>(t.keys),
      .count = count,
      .n = t.n,
      .digit_counts = reinterpret_cast<uint32_t*>(t.scratch + l.digit_counts),
      .control = reinterpret_cast<uint32_t*>(t.scratch + l.control),
      .dispatch = reinterpret_cast<uint32_t*>(t.scratch + l.dispatch),
      .begin_bit = spec.begin_bit,
      .end_bit = spec.end_bit,
      .pass_count = passes,
      .key_kind = spec.key_kind,
      .descending = spec.descending ? 1u : 0u,
      .copy_group_count = 1,
      .copy_keys_per_round = 1,
      .max_groups_x = 65535,
      .tile = shape.threads * shape.items,
      .pass_group_cap = 0};
  const uint32_t histogram_grid =
      groups_for(t.n, uint64_t(h.threads) * h.vectors * (4 / h.key_words),
                 uint64_t(h.blocks_per_sm) * std::max<uint32_t>(module.sm_count(), 16));
  launch(module.function(h.kernel), histogram_grid, h.threads, 0, stream, histogram);

  // 3. One pass per digit.
  const uint32_t order = cuda_key_order(spec.key_kind, spec.descending);
  const uint32_t shared = cuda_pass_dynamic_shared(shape);
  const CUfunction pass_function =
      module.function(std::string(shape.kernel) + kCudaKeyOrderSuffixes[order], shared);
  for (uint32_t pass = 0; pass < passes; ++pass) {
    const uint32_t bit = spec.begin_bit + pass * digit_bits;
    const OnesweepPassParams params{
        .keys_a = reinterpret_cast<void*>(t.keys),
        .keys_b = reinterpret_cast<void*>(t.scratch + l.keys_alt),
        .values_a = reinterpret_cast<void*>(t.values),
        .values_b = reinterpret_cast<void*>(spec.value_words ? t.scratch + l.values_alt : 0),
        .count = count,
        .digit_offsets =
            reinterpret_cast<const uint32_t*>(t.scratch + l.digit_counts + pass * radix * 4),
        .control = reinterpret_cast<uint32_t*>(t.scratch + l.control),
        .lookback = reinterpret_cast<unsigned long long*>(t.scratch + l.lookback),
        .n = t.n,
        .pass = pass,
        .bit = bit,
        .digit_bits = std::min(digit_bits, spec.end_bit - bit),
        .first_tag = 1 + pass * l.tiles,
        .slot_mask = l.slots - 1,
        .key_kind = spec.key_kind,
        .descending = spec.descending ? 1u : 0u,
        .spin_limit = spin_limit,
        .refusal_period = 0,
        .claim_by_id = 0,
        .prefetch_tiles = 0};
    launch(pass_function, l.tiles, shape.threads, shared, stream, params);
  }

  // 4. The copy-back, where the result lies in the scratch copies.
  const OnesweepCopyBackParams copy{
      .keys_b = reinterpret_cast<const void*>(t.scratch + l.keys_alt),
      .keys_a = reinterpret_cast<void*>(t.keys),
      .values_b = reinterpret_cast<const void*>(t.scratch + l.values_alt),
      .values_a = reinterpret_cast<void*>(t.values),
      .count = count,
      .control = reinterpret_cast<const uint32_t*>(t.scratch + l.control),
      .n = t.n,
      .key_words = spec.key_words,
      .value_words = spec.value_words};
  const uint64_t words = t.n * (spec.key_words + spec.value_words);
  launch(module.function(kCudaCopyBackKernel),
         groups_for(words, uint64_t(kCudaCopyBackThreads) * 4, 8ull * module.sm_count()),
         kCudaCopyBackThreads, 0, stream, copy);
}

}  // namespace gpusort::cuda
