# LSD radix sort, reduce-then-scan.
# One entry per kernel: name=source[:DEFINES], then the structs the host passes to it: its
# push-constant block and its specialization constants (cmake/EmbedShaders.cmake).
gpusort_kernels(
  radix_count=radix_count.comp      push=RadixCountPush spec=RadixSpec
  radix_scatter=radix_scatter.comp  push=RadixScatterPush spec=RadixSpec
)
