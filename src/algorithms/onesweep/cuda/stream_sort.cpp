// Onesweep on a CUDA stream (stream_sort.hpp): the state block cleared, the histogram and plan
// (one cooperative kernel), one pass kernel per digit (a skipped pass's blocks return at once),
// the copy-back where the plan ran an odd number of passes and the sorted keys or u32 values are
// wanted (only those; none where the first pass reads the caller's keys and makes the values).
#include "algorithms/onesweep/cuda/stream_sort.hpp"

#include <algorithm>

#include "algorithms/onesweep/cuda/params.hpp"
#include "cuda/environment.hpp"

namespace gpusort::cuda {

namespace {

constexpr uint32_t max_lookback_slots = 1024;

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

// The histogram row: of the key width, one copy of the counters for 32-bit keys and two for
// 64-bit ones, or the v-th row of GPUSORT_CUDA_HISTOGRAM=v. (Two copies for i64, `bench_torch.py
// --dtypes i64 --min-log2 20 --max-log2 22 --samples 9` with 1 and 2 alternating twice in one run,
// H200, 2026-11-30, commit aed843e: sort with indices 0.1648 / 0.1667 -> 0.1622 / 0.1640 ms at
// 2^20, 0.2896 / 0.2938 -> 0.2843 / 0.2867 at 2^21, 0.4614 / 0.4728 -> 0.4604 / 0.4642 at 2^22.)
const CudaHistogramShape& histogram_row(const SortSpec& spec) {
  const uint32_t variant =
      std::max<uint32_t>(1, cuda_environment().histogram.value_or(spec.key_words == 2 ? 2 : 1));
  uint32_t seen = 0;
  for (const CudaHistogramShape& h : kCudaHistogramShapes)
    if (h.key_words == spec.key_words && ++seen == variant) return h;
  throw Error("no CUDA histogram kernel for this key width");
}

uint32_t groups_for(uint64_t items, uint64_t per_group, uint64_t cap) {
  return uint32_t(std::clamp<uint64_t>((items + per_group - 1) / per_group, 1, cap));
}

OnesweepLayout layout(const SortSpec& spec, uint64_t max_n) {
  const CudaPassShape& shape = kCudaPassShapes[pass_row(spec, max_n)];
  return onesweep_layout(spec, max_n, shape.threads * shape.items, max_lookback_slots);
}

}  // namespace

uint64_t onesweep_stream_scratch_bytes(const SortSpec& spec, uint64_t max_n) {
  return layout(spec, max_n).total;
}

bool onesweep_stream_fuses(const SortSpec& spec, uint64_t max_n) {
  return (kCudaPassShapes[pass_row(spec, max_n)].hints & kHintFusedVariant) != 0;
}

bool onesweep_stream_numpy_order(const SortSpec& spec, uint64_t max_n) {
  return (kCudaPassShapes[pass_row(spec, max_n)].hints & kHintNumpyOrder) != 0;
}

void onesweep_stream_sort(Module& module, const SortSpec& spec, const StreamTargets& t,
                          CUstream stream) {
  const OnesweepLayout l = layout(spec, t.n);
  const CudaPassShape& shape = kCudaPassShapes[pass_row(spec, t.n)];
  const OnesweepAddresses a{.keys = t.keys,
                            .values = t.values,
                            .count = t.count,
                            .scratch = t.scratch,
                            .n = t.n,
                            .keys_first = t.keys_first,
                            .values_wide = t.values_wide,
                            .values_iota = t.values_iota,
                            .canonical = t.canonical};

  const bool fused = a.fused() && (shape.hints & kHintFusedVariant) != 0;
  if (!fused && (t.values_iota || t.values_wide != 0 || t.canonical))
    throw Error(std::string("the CUDA face's Onesweep tile ") + shape.variant +
                " has no fused variant (onesweep_stream_fuses)");
  // The first pass reads the caller's keys and no values: the plan routes the passes so that the
  // last one writes keys and values, and no copy-back follows.
  const bool routed = fused && t.keys_first != 0 && (spec.value_words == 0 || t.values_iota);

  // 1-2. One cooperative launch: the state block cleared (digit counts, control words, look-back
  // table), every pass's digit counts in one read, then the plan (the last block). The
  // copy-back's command that the plan writes is not read here.
  const CudaHistogramShape& h = histogram_row(spec);
  OnesweepHistogramParams histogram =
      onesweep_histogram_params(spec, l, a, shape.threads * shape.items, 1, 1, 65535);
  histogram.state_words = uint32_t(l.state_bytes / 4);
  histogram.route_by_parity = routed ? 1u : 0u;
  const CUfunction histogram_function = module.function(h.kernel);
  launch_cooperative(histogram_function,
                     std::min(onesweep_histogram_grid(h, t.n, module.sm_count()),
                              module.resident_blocks(histogram_function, h.threads)),
                     h.threads, stream, histogram);

  // 3. One pass per digit (GPUSORT_CUDA_PREFETCH, for measurements: prefetch ahead;
  // GPUSORT_CUDA_REFUSAL_PERIOD, for tests: tiles that never publish).
  const CudaEnvironment environment = cuda_environment();
  OnesweepPassSwitches switches;
  switches.prefetch_tiles = environment.prefetch_tiles.value_or(0);
  switches.refusal_period = environment.refusal_period.value_or(0);
  const uint32_t order = cuda_key_order(spec.key_kind, spec.descending);
  const uint32_t shared = cuda_pass_dynamic_shared(shape);
  const CUfunction pass_function = module.function(
      std::string(shape.kernel) + cuda_face_order_suffix(order) + (fused ? kCudaFusedSuffix : ""),
      shared);
  const OnesweepFusedParams fused_params = onesweep_fused_params(a);
  // Each pass may begin while the kernel before it ends (its blocks wait in the kernel) where
  // there are more tiles than SMs: with fewer it cost 5-15 %, likely as the early blocks crowd the
  // SMs that the pass before left free (docs/design/cuda-face.md, "Passes that overlap").
  const bool overlap = l.tiles > module.sm_count();
  auto launch_pass = [&](const auto&... params) {
    if (overlap)
      launch_dependent(module, pass_function, uint32_t(l.tiles), shape.threads, shared, stream,
                       params...);
    else
      launch(pass_function, uint32_t(l.tiles), shape.threads, shared, stream, params...);
  };
  for (uint32_t pass = 0; pass < onesweep_passes(spec); ++pass) {
    OnesweepPassParams params = onesweep_pass_params(spec, l, a, pass, switches);
    // Unfused, keys_first is the first pass's keys_a, which the plan keeps active
    // (first_pass_always) and which no first pass writes: it reads the caller's keys in place.
    if (!fused && pass == 0 && t.keys_first != 0)
      params.keys_a = reinterpret_cast<void*>(t.keys_first);
    if (fused)
      launch_pass(params, fused_params);
    else
      launch_pass(params);
  }

  // 4. The copy-back, where the result lies in the scratch copies: the keys where they are wanted,
  // the values but widened ones, which the last pass wrote where they go (then, without the keys,
  // nothing is launched; routed, nothing lies there).
  if (routed || (fused && t.values_wide != 0 && t.keys_dropped)) return;
  const OnesweepCopyBackParams copy{
      .keys_b = reinterpret_cast<const void*>(t.scratch + l.keys_alt),
      .keys_a = reinterpret_cast<void*>(t.keys),
      .values_b = reinterpret_cast<const void*>(t.scratch + l.values_alt),
      .values_a = reinterpret_cast<void*>(t.values),
      .count = reinterpret_cast<const uint32_t*>(t.count),
      .control = reinterpret_cast<const uint32_t*>(t.scratch + l.control),
      .n = t.n,
      .key_words = t.keys_dropped ? 0 : spec.key_words,
      .value_words = t.values_wide != 0 ? 0 : spec.value_words};
  const uint64_t words = t.n * (copy.key_words + copy.value_words);
  launch(module.function(kCudaCopyBackKernel),
         groups_for(words, uint64_t(kCudaCopyBackThreads) * 4, 8ull * module.sm_count()),
         kCudaCopyBackThreads, 0, stream, copy);
}

}  // namespace gpusort::cuda
