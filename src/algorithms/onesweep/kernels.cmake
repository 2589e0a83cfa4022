# Onesweep.
# One entry per kernel: name=source[:DEFINES] (cmake/EmbedShaders.cmake).
gpusort_kernels(
  onesweep_clear=onesweep_clear.comp
  onesweep_histogram=onesweep_histogram.comp
  onesweep_pass=onesweep_pass.comp
  onesweep_copy_back=onesweep_copy_back.comp
)
