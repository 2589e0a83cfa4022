// The small-array sort on a CUDA stream (stream_sort.hpp).
#include "algorithms/small_sort/cuda/stream_sort.hpp"

namespace gpusort::cuda {

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
