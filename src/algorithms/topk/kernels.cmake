# Top-k: the radix select (init, a histogram per digit, each selecting from the ones before), the
# stable compaction of the k (count, write), the values' gather. The k survivors are sorted by the sorts' kernels.
# One entry per kernel: name=source[:DEFINES], then the structs the host passes to it: its
# push-constant block and its specialization constants (cmake/EmbedShaders.cmake).
gpusort_kernels(
  topk_init=topk_init.comp
      push=TopKInitPush spec=WorkgroupSpec
  topk_histogram=topk_histogram.comp
      push=TopKHistogramPush spec=TopKKeySpec
  topk_count=topk_count.comp
      push=TopKCountPush spec=TopKKeySpec
  topk_write=topk_write.comp
      push=TopKWritePush spec=TopKKeySpec
  topk_gather=topk_gather.comp
      push=TopKGatherPush spec=TopKGatherSpec
  topk_segment_sizes=topk_segment_sizes.comp
      push=TopKSegmentSizesPush spec=TopKSegmentSizesSpec
  topk_segment=topk_segment.comp
      push=TopKSegmentPush spec=TopKSegmentSpec
)
