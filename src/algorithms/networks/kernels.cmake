# The sorting networks: bitonic and odd-even transposition.
# One entry per kernel: name=source[:DEFINES] (cmake/EmbedShaders.cmake).
gpusort_kernels(
  bitonic_local=bitonic_local.comp
  bitonic_local_disperse=bitonic_local_disperse.comp
  bitonic_global=bitonic_global.comp
  odd_even=odd_even.comp
)
