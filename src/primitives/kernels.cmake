# Kernels of the primitives: scans, the element copy.
# One entry per kernel: name=source[:DEFINES], then the structs the host passes to it: its
# push-constant block and its specialization constants (cmake/EmbedShaders.cmake).
gpusort_kernels(
  scan_blocks_u32=scan_blocks.comp           push=ScanBlocksPush spec=ScanKernelSpec
  scan_blocks_u64=scan_blocks.comp:SCAN_U64  push=ScanBlocksPush spec=ScanKernelSpec
  scan_add_u32=scan_add.comp                 push=ScanAddPush spec=ScanKernelSpec
  scan_add_u64=scan_add.comp:SCAN_U64        push=ScanAddPush spec=ScanKernelSpec
  copy_elements=copy_elements.comp           push=CopyElementsPush spec=CopyElementsSpec
)
