// The small-array sorts on a CUDA stream (stream_sort.hpp).
#include "algorithms/small_sort/cuda/stream_sort.hpp"

#include <algorithm>
#include <iterator>
#include <string>

#include "cuda/environment.hpp"

namespace gpusort::cuda {

namespace {

// The sizes each rank-sort row takes, n in (above, up_to], in kRankSortShapes's order (none for
// 32-bit keys alone); the block sort takes the sizes below, Onesweep those above. Chosen by
// `cub_baseline --gpusort` at 2^6-2^13 on the H200 with GPUSORT_CUDA_RANK_SORT_MAX_N
// (docs/design/cuda-face.md, "The rank sort"): the rank sort in place pays a copy first, and one
// block was as fast or faster up to 2,048 32-bit keys and for 32-bit keys alone throughout.
struct RankSortBand {
  uint32_t above, up_to;
};
constexpr RankSortBand kRankSortBands[] = {{0, 0}, {2048, 8192}, {0, 4096}, {0, 4096}};
static_assert(std::size(kRankSortBands) == std::size(kRankSortShapes));

}  // namespace

const RankSortShape* rank_sort_shape(const SortSpec& spec, uint64_t max_n) {
  const std::optional<uint32_t> bound = cuda_environment().rank_sort_max_n;
  for (size_t row = 0; row < std::size(kRankSortShapes); ++row) {
    const RankSortShape& shape = kRankSortShapes[row];
    if (shape.key_words != spec.key_words || shape.value_words != spec.value_words) continue;
    const RankSortBand band = kRankSortBands[row];
    const bool take = bound ? max_n <= std::min(*bound, shape.capacity)
                            : max_n > band.above && max_n <= band.up_to;
    return take ? &shape : nullptr;
  }
  return nullptr;
}

uint64_t rank_sort_scratch_bytes(const SortSpec& spec, uint64_t max_n) {
  return max_n * (spec.key_words + spec.value_words) * 4;
}

void rank_stream_sort(Module& module, const RankSortShape& shape, const SortSpec& spec,
                      const StreamTargets& t, CUstream stream) {
  const uint64_t blocks = (t.n + kRankSortKeysPerBlock - 1) / kRankSortKeysPerBlock;
  // In place in one launch where every block fits on the GPU at once (it then reads the keys and
  // values where they are); else in place (no keys_first), or with values given, the sort reads
  // copies in scratch.
  CUfunction one_launch = nullptr;
  if (t.keys_first == 0 && !cuda_environment().rank_sort_copy) {
    one_launch = module.function(std::string(shape.kernel) + kRankSortInPlaceSuffix);
    if (blocks > module.resident_blocks(one_launch, kRankSortThreads)) one_launch = nullptr;
  }
  const CUdeviceptr keys_in = t.keys_first != 0 ? t.keys_first : one_launch ? t.keys : t.scratch;
  const CUdeviceptr values_in = t.values == 0 || t.values_iota ? 0
                                : one_launch                   ? t.values
                                                               : t.scratch + t.n * spec.key_words * 4;
  const RankSortParams params{
      .keys_in = reinterpret_cast<const void*>(keys_in),
      .keys_out = reinterpret_cast<void*>(t.keys),
      .values_in = reinterpret_cast<const void*>(values_in),
      .values_out = reinterpret_cast<void*>(t.values),
      .values_wide = reinterpret_cast<unsigned long long*>(t.values_wide),
      .count = reinterpret_cast<const uint32_t*>(t.count),
      .n = uint32_t(t.n),
      .key_kind = spec.key_kind,
      .descending = spec.descending ? 1u : 0u,
      .begin_bit = spec.begin_bit,
      .end_bit = spec.end_bit,
      .values_iota = t.values_iota ? 1u : 0u};
  if (one_launch)
    return launch_cooperative(one_launch, uint32_t(blocks), kRankSortThreads, stream, params);
  if (values_in != 0) {
    RankSortParams copy = params;
    if (t.keys_first != 0) copy.keys_in = nullptr;  // read where they are
    launch(module.function(std::string(shape.kernel) + kRankSortCopySuffix),
           uint32_t((t.n + kRankSortCopyThreads - 1) / kRankSortCopyThreads), kRankSortCopyThreads,
           0, stream, copy);
  } else if (t.keys_first == 0) {
    check(driver().memcpy_dtod_async(keys_in, t.keys, size_t(t.n * spec.key_words * 4), stream),
          "cuMemcpyDtoDAsync");
  }
  launch(module.function(shape.kernel), uint32_t(blocks), kRankSortThreads, 0, stream, params);
}

std::vector<std::string> small_sort_function_names() {
  std::vector<std::string> names;
  for (const RankSortShape& shape : kRankSortShapes) {
    names.emplace_back(shape.kernel);
    names.push_back(std::string(shape.kernel) + kRankSortInPlaceSuffix);
    if (shape.value_words != 0) names.push_back(std::string(shape.kernel) + kRankSortCopySuffix);
  }
  for (const BlockSortShape& shape : kBlockSortShapes) names.emplace_back(shape.kernel);
  return names;
}

const BlockSortShape* block_sort_shape(const SortSpec& spec, uint64_t max_n) {
  for (const BlockSortShape& shape : kBlockSortShapes)
    if (shape.key_words == spec.key_words && shape.value_words == spec.value_words &&
        max_n <= uint64_t(shape.threads) * shape.items)
      return &shape;
  return nullptr;
}

void block_stream_sort(Module& module, const BlockSortShape& shape, const SortSpec& spec,
                       const StreamTargets& t, CUstream stream) {
  const BlockSortParams params{.keys = reinterpret_cast<void*>(t.keys),
                               .values = reinterpret_cast<void*>(t.values),
                               .count = reinterpret_cast<const uint32_t*>(t.count),
                               .n = uint32_t(t.n),
                               .key_kind = spec.key_kind,
                               .descending = spec.descending ? 1u : 0u,
                               .begin_bit = spec.begin_bit,
                               .end_bit = spec.end_bit};
  launch(module.function(shape.kernel), 1, shape.threads, 0, stream, params);
}

}  // namespace gpusort::cuda
