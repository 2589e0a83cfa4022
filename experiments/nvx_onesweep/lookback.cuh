// The look-back the kernels of onesweep.cu run: the library's own CUDA look-back
// (src/algorithms/onesweep/cuda/lookback.cuh, one definition for both), named in this
// experiment's namespace. Lookback::run(s, keys_in, ...) recounts raw keys by bits
// [p.bit, p.bit + 8) as before.
#pragma once

#include "algorithms/onesweep/cuda/lookback.cuh"
#include "layout.hpp"

namespace nvx_onesweep {

using gpusort::cuda::Lookback;
using gpusort::cuda::LookbackEntry;
using gpusort::cuda::LookbackParams;
static_assert(gpusort::cuda::kLookbackRadix == kRadix, "one digit width");
static_assert(gpusort::cuda::lookback_entry(3, true, 7) == lookback_entry(3, true, 7),
              "one entry format");

}  // namespace nvx_onesweep
