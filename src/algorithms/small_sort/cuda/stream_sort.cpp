// The small-array sort on a CUDA stream (stream_sort.hpp).
#include "algorithms/small_sort/cuda/stream_sort.hpp"

#include <string>

#include "cuda/environment.hpp"

namespace gpusort::cuda {

const BlockSortShape* block_sort_shape(const SortSpec& spec, uint64_t max_n) {
  const std::string named = cuda_environment().face_block;
  const BlockSortShape* first = nullptr;
  for (const BlockSortShape& shape : kBlockSortShapes) {
    const uint64_t capacity = uint64_t(shape.threads) * shape.items;
    if (shape.key_words != spec.key_words || shape.value_words != spec.value_words ||
        max_n > capacity || (first && capacity != uint64_t(first->threads) * first->items))
      continue;
    if (!first) first = &shape;
    if (named == std::to_string(shape.threads) + "x" + std::to_string(shape.items) + "r" +
                     std::to_string(shape.radix_bits))
      return &shape;
  }
  return first;
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
