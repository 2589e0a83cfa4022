# The small-array sort: one tile shader per keys-per-invocation (and bare-key variants), the
# merge by rank.
# One entry per kernel: name=source[:DEFINES], then the structs the host passes to it: its
# push-constant block and its specialization constants (cmake/EmbedShaders.cmake).
gpusort_kernels(
  small_sort_tile_i1=small_sort_tile.comp:LOG2_ITEMS=0
      push=SmallSortTilePush spec=SmallSortTileSpec
  small_sort_tile_i2=small_sort_tile.comp:LOG2_ITEMS=1
      push=SmallSortTilePush spec=SmallSortTileSpec
  small_sort_tile_i2_keys32=small_sort_tile.comp:LOG2_ITEMS=1,KEYS_ALONE=32
      push=SmallSortTilePush spec=SmallSortTileSpec
  small_sort_tile_i2_keys64=small_sort_tile.comp:LOG2_ITEMS=1,KEYS_ALONE=64
      push=SmallSortTilePush spec=SmallSortTileSpec
  small_sort_tile_i4=small_sort_tile.comp:LOG2_ITEMS=2
      push=SmallSortTilePush spec=SmallSortTileSpec
  small_sort_tile_i4_keys32=small_sort_tile.comp:LOG2_ITEMS=2,KEYS_ALONE=32
      push=SmallSortTilePush spec=SmallSortTileSpec
  small_sort_tile_i4_keys64=small_sort_tile.comp:LOG2_ITEMS=2,KEYS_ALONE=64
      push=SmallSortTilePush spec=SmallSortTileSpec
  small_sort_tile_i8=small_sort_tile.comp:LOG2_ITEMS=3
      push=SmallSortTilePush spec=SmallSortTileSpec
  small_sort_merge_r4=small_sort_merge.comp:TILES_PER_ROUND=4
      push=SmallSortMergePush spec=SmallSortMergeSpec
  small_sort_merge_r8=small_sort_merge.comp:TILES_PER_ROUND=8
      push=SmallSortMergePush spec=SmallSortMergeSpec
  small_sort_merge_r4_lanes=small_sort_merge.comp:TILES_PER_ROUND=4,LANES_PER_KEY
      push=SmallSortMergePush spec=SmallSortMergeSpec
)
