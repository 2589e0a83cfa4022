# The API's own kernel: a 64-bit GPU-side count narrowed for the sorts.
# One entry per kernel: name=source[:DEFINES], then the structs the host passes to it: its
# push-constant block and its specialization constants (cmake/EmbedShaders.cmake).
gpusort_kernels(
  count_narrow=count_narrow.comp  push=CountNarrowPush spec=WorkgroupSpec
)
