// Every CUDA kernel of the library, compiled by nvcc as one module (cmake/CudaKernels.cmake) and
// embedded: the algorithms' kernels, each in its algorithm's folder.
#include "algorithms/onesweep/cuda/onesweep_pass.cu"
#include "algorithms/small_sort/cuda/block_sort.cu"
#include "algorithms/small_sort/cuda/rank_sort.cu"
#include "primitives/cuda/elementwise.cu"
#include "primitives/cuda/float_order.cu"
#include "algorithms/topk/cuda/topk_select.cu"
#include "algorithms/topk/cuda/topk_segments.cu"
