# Onesweep.
# One entry per kernel: name=source[:DEFINES], then the structs the host passes to it: its
# push-constant block and its specialization constants (cmake/EmbedShaders.cmake).
gpusort_kernels(
  onesweep_clear=onesweep_clear.comp          push=OnesweepClearPush spec=WorkgroupSpec
  onesweep_histogram=onesweep_histogram.comp  push=OnesweepHistogramPush spec=OnesweepHistogramSpec
  onesweep_pass=onesweep_pass.comp            push=OnesweepPassPush spec=OnesweepPassSpec
  onesweep_copy_back=onesweep_copy_back.comp  push=OnesweepCopyBackPush spec=OnesweepCopyBackSpec
)
