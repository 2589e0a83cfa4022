# The API's own kernel: a 64-bit GPU-side count narrowed for the sorts.
# One entry per kernel: name=source[:DEFINES] (cmake/EmbedShaders.cmake).
gpusort_kernels(
  count_narrow=count_narrow.comp
)
