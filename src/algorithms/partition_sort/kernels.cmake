# The partition sort (its passes are onesweep_pass in its PARTITION_PASS mode).
# One entry per kernel: name=source[:DEFINES], then the structs the host passes to it: its
# push-constant block and its specialization constants (cmake/EmbedShaders.cmake).
gpusort_kernels(
  partition_plan=partition_plan.comp  push=PartitionPlanPush spec=KeySpec
)
