# Kernels of the primitives: scans, the element copy.
# One entry per kernel: name=source[:DEFINES] (cmake/EmbedShaders.cmake).
gpusort_kernels(
  scan_blocks_u32=scan_blocks.comp
  scan_blocks_u64=scan_blocks.comp:SCAN_U64
  scan_add_u32=scan_add.comp
  scan_add_u64=scan_add.comp:SCAN_U64
  copy_elements=copy_elements.comp
)
