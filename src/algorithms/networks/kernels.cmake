# The sorting networks: bitonic and odd-even transposition.
# One entry per kernel: name=source[:DEFINES], then the structs the host passes to it: its
# push-constant block and its specialization constants (cmake/EmbedShaders.cmake).
gpusort_kernels(
  bitonic_local=bitonic_local.comp                    push=BitonicLocalPush spec=TileSpec
  bitonic_local_disperse=bitonic_local_disperse.comp  push=BitonicLocalPush spec=TileSpec
  bitonic_global=bitonic_global.comp                  push=BitonicGlobalPush spec=SortKeySpec
  odd_even=odd_even.comp                              push=OddEvenPush spec=TileSpec
)
