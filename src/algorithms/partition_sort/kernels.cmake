# The partition sort (its passes are onesweep_pass in its PARTITION_PASS mode).
# One entry per kernel: name=source[:DEFINES] (cmake/EmbedShaders.cmake).
gpusort_kernels(
  partition_plan=partition_plan.comp
)
