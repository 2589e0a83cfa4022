# LSD radix sort, reduce-then-scan.
# One entry per kernel: name=source[:DEFINES] (cmake/EmbedShaders.cmake).
gpusort_kernels(
  radix_count=radix_count.comp
  radix_scatter=radix_scatter.comp
)
