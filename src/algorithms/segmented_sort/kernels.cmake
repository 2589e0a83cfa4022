# The segmented sort.
# One entry per kernel: name=source[:DEFINES], then the structs the host passes to it: its
# push-constant block and its specialization constants (cmake/EmbedShaders.cmake).
gpusort_kernels(
  segment_iota=segment_iota.comp
      push=SegmentIotaPush spec=WorkgroupSpec
  segment_ids=segment_ids.comp
      push=SegmentIdsPush spec=SegmentOffsetsSpec
  segment_gather=segment_gather.comp
      push=SegmentGatherPush spec=SegmentGatherSpec
  segment_count=segment_count.comp
      push=SegmentCountPush spec=SegmentOffsetsSpec
  segment_classify=segment_classify.comp
      push=SegmentClassifyPush spec=SegmentClassifySpec
  segment_plan=segment_plan.comp
      push=SegmentPlanPush spec=SegmentPlanSpec
  segment_sort_tile_i2=segment_sort_tile.comp:LOG2_ITEMS=1
      push=SegmentSortTilePush spec=SegmentSortTileSpec
  segment_sort_tile_i4=segment_sort_tile.comp:LOG2_ITEMS=2
      push=SegmentSortTilePush spec=SegmentSortTileSpec
  segment_sort_tile_i8=segment_sort_tile.comp:LOG2_ITEMS=3
      push=SegmentSortTilePush spec=SegmentSortTileSpec
  segment_merge_r4=segment_merge.comp:TILES_PER_ROUND=4
      push=SegmentMergePush spec=SegmentMergeSpec
  segment_merge_r8=segment_merge.comp:TILES_PER_ROUND=8
      push=SegmentMergePush spec=SegmentMergeSpec
  segment_bucket=segment_bucket.comp
      push=SegmentBucketPush spec=SegmentBucketSpec
  segment_large_scan=segment_large_scan.comp
      push=SegmentLargeScanPush spec=WorkgroupSpec
  segment_large_compact=segment_large_compact.comp
      push=SegmentLargeCompactPush spec=SegmentLargeSpec
  segment_large_gather=segment_large_gather.comp
      push=SegmentLargeGatherPush spec=SegmentLargeSpec
)
