# The segmented sort.
# One entry per kernel: name=source[:DEFINES] (cmake/EmbedShaders.cmake).
gpusort_kernels(
  segment_iota=segment_iota.comp
  segment_ids=segment_ids.comp
  segment_gather=segment_gather.comp
  segment_count=segment_count.comp
  segment_classify=segment_classify.comp
  segment_plan=segment_plan.comp
  segment_sort_tile_i2=segment_sort_tile.comp:LOG2_ITEMS=1
  segment_sort_tile_i4=segment_sort_tile.comp:LOG2_ITEMS=2
  segment_sort_tile_i8=segment_sort_tile.comp:LOG2_ITEMS=3
  segment_merge_r4=segment_merge.comp:TILES_PER_ROUND=4
  segment_merge_r8=segment_merge.comp:TILES_PER_ROUND=8
  segment_bucket=segment_bucket.comp
  segment_large_scan=segment_large_scan.comp
  segment_large_compact=segment_large_compact.comp
  segment_large_gather=segment_large_gather.comp
)
